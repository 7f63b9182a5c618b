// The operator's web console (SPEC section 7.4): server-rendered pages over the
// journal's own operations, served under a path prefix by `serve --http …
// --console` or by `toolhost console`. Each request meets, in order: its
// route and method; the session (a cookie from signing in with the same
// token file or JWT as `serve --http`, or a bearer token per request); for a
// POST, the same-origin checks and the CSRF token; then the page. Decisions go
// through Journal.decideApproval, as `toolhost approve`'s do, so the waiting
// caller's repeat runs once.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isJournalError, type Journal } from '../audit/journal.js';
import { parseSince } from '../audit/since.js';
import { CALL_STATUSES } from '../audit/call-record.js';
import type { Logger } from '../log.js';
import { bearerTokenOf, type Authenticator } from '../protocol/auth/authenticator.js';
import { CONSOLE_CSS } from './assets/console-css.js';
import { FEED_SCRIPT } from './assets/feed-script.js';
import { journalAuditSearch } from './audit-search.js';
import { journalChainVerifier } from './chain-verifier.js';
import type { AuditSearch, ChainVerifier, ConsoleTools } from './console-data.js';
import { FeedHub } from './feed-hub.js';
import { readForm } from './form-body.js';
import { html } from './html.js';
import { checkSameOrigin, header, redirect, send, tokensMatch } from './security.js';
import { ConsoleSessions, sessionCookie, type ConsoleSession } from './sessions.js';
import { approvalPage, approvalsPage, MAX_NOTE_CHARS, MAX_OPERATOR_NAME_CHARS, type DecisionFeedback } from './views/approvals-view.js';
import { auditPage, chainStatus, DECISIONS, recordPage, type AuditQuery } from './views/audit-view.js';
import { approvalsByCall } from './views/calls-view.js';
import { feedPage } from './views/feed-view.js';
import { notice, page, type PageContext } from './views/layout.js';
import { signInPage } from './views/sign-in-view.js';
import { toolPage, toolsPage } from './views/tools-view.js';

/** Where the console lives under an HTTP server. */
export const CONSOLE_BASE = '/console';
/** Most calls one audit search shows. */
export const MAX_AUDIT_LIMIT = 1000;
const DEFAULT_AUDIT_LIMIT = 100;
const FEED_PAGE_ROWS = 50;

export interface ConsoleOptions {
  /** A reader of the journal the hosts write (`openJournal({asHost: false})`). */
  readonly journal: Journal;
  /** The same authentication as `serve --http`. */
  readonly authenticator: Authenticator;
  readonly tools: ConsoleTools;
  readonly logger: Logger;
  /** Verifies the hash chain; default: `toolhost audit verify` over the journal. */
  readonly chain?: ChainVerifier;
  /** The audit search; default: over journal.query. */
  readonly search?: AuditSearch;
  /** Cookies marked Secure: when the console is reached over HTTPS (a --public-url of https). */
  readonly secureCookies?: boolean;
  /** Origins besides the Host header's that pages of this console are served from (a reverse proxy's). */
  readonly publicOrigins?: readonly string[];
  /** How often the live feed reads the journal, in ms; default 1000. */
  readonly feedIntervalMs?: number;
  readonly now?: () => number;
}

export interface ConsoleHandler {
  readonly base: string;
  /** Answers a request whose path is under `base`. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Ends live feeds; the journal is the caller's to close. */
  close(): void;
}

/** Builds the console's request handler. */
export function createConsole(options: ConsoleOptions): ConsoleHandler {
  return new Console(options);
}

type Handled = Promise<void>;

class Console implements ConsoleHandler {
  readonly base = CONSOLE_BASE;
  readonly #o: ConsoleOptions;
  readonly #sessions: ConsoleSessions;
  readonly #feed: FeedHub;
  readonly #search: AuditSearch;
  readonly #chain: ChainVerifier;
  readonly #now: () => number;

  constructor(options: ConsoleOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#sessions = new ConsoleSessions(this.#now);
    this.#search = options.search ?? journalAuditSearch(options.journal);
    this.#chain = options.chain ?? journalChainVerifier(options.journal);
    this.#feed = new FeedHub(
      {
        read: async (limit) => {
          const [records, approvals] = await Promise.all([options.journal.query({ limit }), options.journal.listApprovals()]);
          return { records, approvals: approvalsByCall(approvals) };
        },
      },
      { base: this.base, intervalMs: options.feedIntervalMs ?? 1000, logger: options.logger, now: this.#now },
    );
  }

  close(): void {
    this.#feed.close();
  }

  async handle(req: IncomingMessage, res: ServerResponse): Handled {
    try {
      await this.#route(req, res);
    } catch (error) {
      const unavailable = isJournalError(error);
      this.#o.logger.error({ err: error instanceof Error ? error.message : String(error), path: pathOf(req) }, 'console request failed');
      const ctx = { base: this.base, now: this.#now() };
      send(
        res,
        unavailable ? 503 : 500,
        'text/html; charset=utf-8',
        page(
          ctx,
          'none',
          unavailable ? 'Journal unavailable' : 'Something went wrong',
          notice('alert', unavailable ? 'The journal did not answer; try again shortly.' : 'The console could not answer this request; the host log says why.'),
        ),
      );
    }
  }

  async #route(req: IncomingMessage, res: ServerResponse): Handled {
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const path = url.pathname.slice(this.base.length) || '/';
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    if (method === 'GET' && path === '/assets/console.css') return send(res, 200, 'text/css; charset=utf-8', CONSOLE_CSS);
    if (method === 'GET' && path === '/assets/feed.js') return send(res, 200, 'text/javascript; charset=utf-8', FEED_SCRIPT);
    if (path === '/sign-in') {
      if (method === 'GET') return this.#signInForm(req, res);
      if (method === 'POST') return this.#signIn(req, res);
      return methodNotAllowed(res, 'GET, POST');
    }

    const session = await this.#sessionOf(req, res);
    if (session === undefined) {
      if (method === 'GET' && path !== '/feed/events') return redirect(res, `${this.base}/sign-in`);
      return send(res, 401, 'text/plain; charset=utf-8', 'Sign in first.\n');
    }
    const ctx: PageContext = { base: this.base, principal: session.principal, csrfToken: session.csrfToken, now: this.#now() };
    if (method === 'POST') {
      const refused = this.#refuseCrossSite(req, res, ctx);
      if (refused) return;
    }

    if (path === '/' || path === '') return method === 'GET' ? redirect(res, `${this.base}/approvals`) : methodNotAllowed(res, 'GET');
    if (path === '/sign-out') return method === 'POST' ? this.#signOut(req, res, session) : methodNotAllowed(res, 'POST');
    if (path === '/approvals') return method === 'GET' ? this.#approvals(res, ctx, url) : methodNotAllowed(res, 'GET');
    const approval = /^\/approvals\/([^/]+)$/.exec(path);
    if (approval) {
      const id = decodePart(approval[1]);
      if (method === 'GET') return this.#approval(res, ctx, id, url);
      if (method === 'POST') return this.#decide(req, res, ctx, session, id);
      return methodNotAllowed(res, 'GET, POST');
    }
    if (method !== 'GET') return methodNotAllowed(res, 'GET');
    if (path === '/feed') return this.#feedPage(res, ctx);
    if (path === '/feed/events') {
      await this.#feed.listen(res);
      return;
    }
    if (path === '/audit') return this.#audit(res, ctx, url);
    const record = /^\/audit\/([^/]+)$/.exec(path);
    if (record) return this.#record(res, ctx, decodePart(record[1]));
    if (path === '/tools') return sendPage(res, 200, toolsPage(ctx, this.#o.tools.list(), this.#o.tools.problems()));
    const tool = /^\/tools\/([^/]+)$/.exec(path);
    if (tool) {
      const detail = this.#o.tools.detail(decodePart(tool[1]));
      return detail === undefined ? notFound(res, ctx, 'No such tool.') : sendPage(res, 200, toolPage(ctx, detail));
    }
    return notFound(res, ctx, 'There is no page here.');
  }

  // A cookie session; else a bearer token on this request (scripts, curl); else, under
  // --no-auth (loopback only), a session opened at once for the anonymous principal.
  async #sessionOf(req: IncomingMessage, res: ServerResponse): Promise<ConsoleSession | undefined> {
    const found = this.#sessions.find(req);
    if (found !== undefined) return found;
    const token = bearerTokenOf(header(req, 'authorization'));
    if (typeof token === 'string') {
      const auth = await this.#o.authenticator.authenticate(token);
      // Not stored: a bearer request carries its own credentials, and no cookie reaches a browser.
      return auth.ok ? { id: '', principal: auth.principal, csrfToken: '', expiresAt: this.#now() + 1 } : undefined;
    }
    if (this.#o.authenticator.kind !== 'none') return undefined;
    const auth = await this.#o.authenticator.authenticate(undefined);
    if (!auth.ok) return undefined;
    const session = this.#sessions.open(auth.principal);
    res.setHeader('set-cookie', this.#cookieFor(session));
    return session;
  }

  // Every POST: the browser's own word that the page is ours, and (for a cookie session) the form's CSRF token.
  #refuseCrossSite(req: IncomingMessage, res: ServerResponse, ctx: PageContext): boolean {
    const origin = checkSameOrigin(req, this.#o.publicOrigins ?? []);
    if (!origin.ok) {
      this.#o.logger.warn({ reason: origin.reason, origin: header(req, 'origin'), site: header(req, 'sec-fetch-site') }, 'console: cross-site request refused');
      sendPage(res, 403, page(ctx, 'none', 'Request refused', notice('alert', 'This request came from another site and was refused. Use the console’s own pages.')));
      req.resume();
      return true;
    }
    return false;
  }

  #signInForm(req: IncomingMessage, res: ServerResponse): Handled {
    const ctx = { base: this.base, now: this.#now() };
    if (this.#o.authenticator.kind === 'none' || this.#sessions.find(req) !== undefined) return Promise.resolve(redirect(res, `${this.base}/approvals`));
    return Promise.resolve(sendPage(res, 200, signInPage(ctx, this.#o.authenticator.kind === 'jwt' ? 'jwt' : 'tokens')));
  }

  async #signIn(req: IncomingMessage, res: ServerResponse): Handled {
    const ctx = { base: this.base, now: this.#now() };
    if (this.#refuseCrossSite(req, res, ctx)) return;
    const form = await readForm(req);
    if (!form.ok) return send(res, form.status, 'text/plain; charset=utf-8', 'The form could not be read.\n');
    const token = form.fields.get('token')?.trim() ?? '';
    const kind = this.#o.authenticator.kind === 'jwt' ? 'jwt' : 'tokens';
    const auth = token === '' || token.length > 16_384 ? undefined : await this.#o.authenticator.authenticate(token);
    if (auth === undefined || !auth.ok) {
      this.#o.logger.info({ reason: auth?.ok === false ? auth.description : 'empty', remote: req.socket.remoteAddress }, 'console sign-in refused');
      return sendPage(res, 401, signInPage(ctx, kind, 'That token was not accepted.'));
    }
    const session = this.#sessions.open(auth.principal, auth.expiresAt === undefined ? undefined : auth.expiresAt * 1000);
    this.#o.logger.info({ principal: auth.principal }, 'console: signed in');
    redirect(res, `${this.base}/approvals`, { 'set-cookie': this.#cookieFor(session) });
  }

  async #signOut(req: IncomingMessage, res: ServerResponse, session: ConsoleSession): Handled {
    const form = await readForm(req);
    if (session.id !== '' && (!form.ok || !tokensMatch(form.fields.get('csrf') ?? undefined, session.csrfToken))) return this.#csrfRefused(res);
    this.#sessions.close(session.id);
    redirect(res, `${this.base}/sign-in`, { 'set-cookie': sessionCookie('', 0, this.base, this.#o.secureCookies === true) });
  }

  async #approvals(res: ServerResponse, ctx: PageContext, url: URL): Handled {
    const all = url.searchParams.get('all') === '1';
    const approvals = await this.#o.journal.listApprovals({ pendingOnly: !all, now: ctx.now });
    sendPage(res, 200, approvalsPage(ctx, approvals, all));
  }

  async #approval(res: ServerResponse, ctx: PageContext, id: string, url: URL): Handled {
    const approval = await this.#o.journal.getApproval(id);
    if (approval === undefined) return notFound(res, ctx, 'No such approval.');
    const decided = url.searchParams.get('decided');
    const feedback: DecisionFeedback | undefined =
      decided === 'approved'
        ? { kind: 'status', text: `Approved. The caller may now repeat the call with _meta["toolhost/approvalId"] = "${approval.id}"; it runs once.` }
        : decided === 'denied'
          ? { kind: 'status', text: 'Denied. A repeat of the call is refused with approval_denied.' }
          : undefined;
    sendPage(res, 200, approvalPage(ctx, approval, feedback));
  }

  async #decide(req: IncomingMessage, res: ServerResponse, ctx: PageContext, session: ConsoleSession, id: string): Handled {
    const form = await readForm(req);
    if (!form.ok) return send(res, form.status, 'text/plain; charset=utf-8', 'The form could not be read.\n');
    if (session.id !== '' && !tokensMatch(form.fields.get('csrf') ?? undefined, session.csrfToken)) return this.#csrfRefused(res);
    const approval = await this.#o.journal.getApproval(id);
    if (approval === undefined) return notFound(res, ctx, 'No such approval.');
    const decision = form.fields.get('decision');
    const name = (form.fields.get('operator') ?? '').trim();
    const note = (form.fields.get('note') ?? '').trim();
    const again = { name, note };
    const invalid =
      decision !== 'approve' && decision !== 'deny'
        ? 'Choose Approve or Deny.'
        : name === '' || name.length > MAX_OPERATOR_NAME_CHARS || /[\p{Cc}\p{Cf}]/u.test(name)
          ? `Give your name (1 to ${MAX_OPERATOR_NAME_CHARS} printable characters): it is recorded as the operator who decided.`
          : note.length > MAX_NOTE_CHARS
            ? `The note may hold at most ${MAX_NOTE_CHARS} characters.`
            : undefined;
    if (invalid !== undefined) return sendPage(res, 400, approvalPage(ctx, approval, { kind: 'alert', text: invalid }, again));
    try {
      const decided = await this.#o.journal.decideApproval(id, decision === 'approve' ? 'approved' : 'denied', name, {
        note: note === '' ? null : note,
        via: `console (principal ${session.principal})`,
      });
      this.#o.logger.info({ approvalId: id, state: decided.state, by: name, principal: session.principal }, 'console: approval decided');
      redirect(res, `${this.base}/approvals/${encodeURIComponent(id)}?decided=${decided.state}`);
    } catch (error) {
      if (!isJournalError(error) || !['unknown_approval', 'approval_expired', 'approval_decided'].includes(error.code)) throw error;
      const now = (await this.#o.journal.getApproval(id)) ?? approval;
      sendPage(res, 409, approvalPage(ctx, now, { kind: 'alert', text: error.message }));
    }
  }

  async #feedPage(res: ServerResponse, ctx: PageContext): Handled {
    const [records, approvals] = await Promise.all([this.#o.journal.query({ limit: FEED_PAGE_ROWS }), this.#o.journal.listApprovals()]);
    sendPage(res, 200, feedPage(ctx, records, approvalsByCall(approvals)));
  }

  async #audit(res: ServerResponse, ctx: PageContext, url: URL): Handled {
    const query: Record<string, string> = {};
    for (const key of ['tool', 'status', 'principal', 'decision', 'code', 'rule', 'since', 'until', 'limit'] as const) {
      const value = url.searchParams.get(key)?.trim();
      if (value) query[key] = value.slice(0, 512);
    }
    const chain = chainStatus(await this.#chain.verify().catch(() => 'unavailable' as const));
    const approvals = approvalsByCall(await this.#o.journal.listApprovals());
    const parsed = parseAuditQuery(query, this.#now());
    if ('error' in parsed) return sendPage(res, 400, auditPage(ctx, query as AuditQuery, parsed, approvals, chain));
    sendPage(res, 200, auditPage(ctx, query as AuditQuery, await this.#search.search(parsed), approvals, chain));
  }

  async #record(res: ServerResponse, ctx: PageContext, id: string): Handled {
    const record = await this.#o.journal.get(id);
    if (record === undefined) return notFound(res, ctx, 'No call with this id in the journal.');
    const approvals = await this.#o.journal.listApprovals();
    const approvedBy = approvals.find((approval) => approval.spentBy === id);
    const asked = approvals.filter((approval) => approval.callId === id);
    let replay: string | undefined;
    if (record.idempotencyKey !== null) {
      const holder = await this.#o.journal.findByIdempotencyKey(record.tool, record.idempotencyKey);
      if (holder?.id === id && holder.replay !== null) replay = holder.replay;
    }
    sendPage(res, 200, recordPage(ctx, { record, ...(approvedBy ? { approvedBy } : {}), asked, ...(replay !== undefined ? { replay } : {}) }));
  }

  #csrfRefused(res: ServerResponse): void {
    const ctx = { base: this.base, now: this.#now() };
    sendPage(
      res,
      403,
      page(
        ctx,
        'none',
        'Request refused',
        notice('alert', html`The form’s security token did not match your session. <a href="${this.base}/approvals">Reload the page</a> and try again.`),
      ),
    );
  }

  #cookieFor(session: ConsoleSession): string {
    return sessionCookie(session.id, (session.expiresAt - this.#now()) / 1000, this.base, this.#o.secureCookies === true);
  }
}

/** The audit filters of a query, checked as `toolhost audit` checks its flags. */
export function parseAuditQuery(query: Readonly<Record<string, string>>, now: number): import('./console-data.js').AuditFilter | { readonly error: string } {
  const { tool, status, principal, decision, code, rule, since, until, limit } = query;
  if (status !== undefined && !(CALL_STATUSES as readonly string[]).includes(status)) return { error: `Status must be one of ${CALL_STATUSES.join(', ')}.` };
  if (decision !== undefined && !(DECISIONS as readonly string[]).includes(decision)) return { error: `Decision must be one of ${DECISIONS.join(', ')}.` };
  const sinceMs = since === undefined ? undefined : parseSince(since, now);
  if (since !== undefined && sinceMs === undefined) return { error: 'Since takes an ISO 8601 time or a duration such as 30s, 15m, 1h, 2d, 1w.' };
  const untilMs = until === undefined ? undefined : parseSince(until, now);
  if (until !== undefined && untilMs === undefined) return { error: 'Until takes an ISO 8601 time or a duration such as 30s, 15m, 1h, 2d, 1w.' };
  const count = limit === undefined ? DEFAULT_AUDIT_LIMIT : /^\d{1,6}$/.test(limit) ? Number(limit) : NaN;
  if (!Number.isInteger(count) || count < 1 || count > MAX_AUDIT_LIMIT) return { error: `Limit takes a whole number from 1 to ${MAX_AUDIT_LIMIT}.` };
  return {
    ...(tool !== undefined ? { tool } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(principal !== undefined ? { principal } : {}),
    ...(decision !== undefined ? { decision } : {}),
    ...(code !== undefined ? { code } : {}),
    ...(rule !== undefined ? { rule } : {}),
    ...(sinceMs !== undefined ? { since: sinceMs } : {}),
    ...(untilMs !== undefined ? { until: untilMs } : {}),
    limit: count,
  };
}

function sendPage(res: ServerResponse, status: number, markup: string): void {
  send(res, status, 'text/html; charset=utf-8', markup);
}

function notFound(res: ServerResponse, ctx: PageContext, text: string): void {
  sendPage(res, 404, page(ctx, 'none', 'Not found', notice('alert', text)));
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  send(res, 405, 'text/plain; charset=utf-8', 'Method not allowed.\n', { allow });
}

function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'http://console.invalid').pathname;
}

// A path segment as text; a malformed escape names nothing (a 404, not a failure).
function decodePart(segment: string | undefined): string {
  try {
    return decodeURIComponent(segment ?? '');
  } catch {
    return '';
  }
}
