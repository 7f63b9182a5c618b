// The console over real HTTP, in process, on a real SQLite journal (SPEC
// section 7.4): who may see it (sign-in with the token file, bearer tokens,
// --no-auth), how a decision is made and refused (CSRF token, Origin,
// Sec-Fetch-Site, a missing operator name, a second decision), the headers of
// every response, the live feed's events, and the audit search.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Journal, NewApproval } from '../../../src/audit/journal.js';
import { hashArgs } from '../../../src/audit/hash.js';
import { openJournal } from '../../../src/audit/open-journal.js';
import { openSqliteStore, type SqliteStore } from '../../../src/audit/sqlite/sqlite-store.js';
import { createConsole, type ConsoleHandler } from '../../../src/console/console-server.js';
import { serveConsoleHttp, type ConsoleHttpServer } from '../../../src/console/console-http.js';
import type { ChainVerifier, ConsoleTools } from '../../../src/console/console-data.js';
import { createSilentLogger } from '../../../src/log.js';
import { noAuthentication, type Authenticator } from '../../../src/protocol/auth/authenticator.js';
import { hashToken, tokenAuthenticator } from '../../../src/protocol/auth/token-file.js';

const TOKEN = 'ops-token-0123456789abcdef';
const NO_TOOLS: ConsoleTools = { list: () => [], detail: () => undefined, problems: () => [] };

let root: string;
let host: SqliteStore;
let reader: Journal;
let consoleHandler: ConsoleHandler;
let server: ConsoleHttpServer;

async function start(authenticator: Authenticator = tokenAuthenticator([{ principal: 'ops', hash: Buffer.from(hashToken(TOKEN), 'hex') }]), chain?: ChainVerifier): Promise<void> {
  reader = await openJournal({ stateDir: join(root, 'state'), asHost: false });
  consoleHandler = createConsole({ journal: reader, authenticator, tools: NO_TOOLS, logger: createSilentLogger(), feedIntervalMs: 50, ...(chain ? { chain } : {}) });
  server = await serveConsoleHttp({ console: consoleHandler, host: '127.0.0.1', port: 0, logger: createSilentLogger() });
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'toolhost-console-'));
  host = openSqliteStore(join(root, 'state'));
});
afterEach(async () => {
  await server?.close();
  await reader?.close();
  await host.close();
  rmSync(root, { recursive: true, force: true });
});

function pending(overrides: Partial<NewApproval> = {}): NewApproval {
  const now = Date.now();
  return {
    id: `approval-${Math.random().toString(16).slice(2)}`,
    tool: 'write_file',
    argsHash: hashArgs({ path: 'a.md' }),
    sideEffect: 'local_mutation',
    rule: 'policies/org.yaml:4 sideEffects.requireApproval',
    principal: 'agent',
    sessionId: 's-1',
    callId: 'c-asked',
    createdAt: now,
    expiresAt: now + 600_000,
    arguments: { path: 'a.md', text: 'new text' },
    effects: [
      { argument: 'path', path: '/ws/a.md', where: 'writable_root', summary: 'creates a new file (+1 -0 lines)', diff: '--- /dev/null\n+++ b/a.md\n@@ -0,0 +1 @@\n+new text' },
    ],
    ...overrides,
  };
}

interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

async function request(path: string, init: { method?: string; cookie?: string; headers?: Record<string, string>; form?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(init.cookie ? { cookie: init.cookie } : {}), ...init.headers };
  const body = init.form === undefined ? undefined : new URLSearchParams(init.form).toString();
  if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  const response = await fetch(`${server.url}${path}`, {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    redirect: 'manual',
    ...(body !== undefined ? { body } : {}),
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** Signs in through the form, as a browser on the console's own page does; returns the cookie. */
async function signIn(): Promise<string> {
  const reply = await request('/console/sign-in', { form: { token: TOKEN }, headers: { origin: server.url, 'sec-fetch-site': 'same-origin' } });
  expect(reply.status).toBe(303);
  const cookie = reply.headers.get('set-cookie') ?? '';
  expect(cookie).toMatch(/^toolhost_console=[\w-]{43}; Path=\/console; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
  return cookie.split(';')[0] ?? '';
}

function csrfOf(markup: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(markup);
  if (!match?.[1]) throw new Error('no CSRF token on the page');
  return match[1];
}

describe('signing in', () => {
  it('nothing but the sign-in page without a session; a wrong token is refused; the right one opens a session', async () => {
    await start();
    expect((await request('/console/approvals')).status).toBe(303);
    expect((await request('/console/approvals')).headers.get('location')).toBe('/console/sign-in');
    expect((await request('/console/feed/events')).status).toBe(401);
    expect((await request('/console/approvals', { cookie: 'toolhost_console=forged' })).status).toBe(303);
    const wrong = await request('/console/sign-in', { form: { token: 'not-the-token' }, headers: { origin: server.url } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).not.toContain('not-the-token');
    const cookie = await signIn();
    expect((await request('/console/approvals', { cookie })).status).toBe(200);
    // A bearer token on the request works too (scripts), without a cookie.
    expect((await request('/console/approvals', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect((await request('/console/approvals', { headers: { authorization: 'Bearer wrong' } })).status).toBe(303);
  });

  it('a sign-in posted from another site is refused', async () => {
    await start();
    const reply = await request('/console/sign-in', { form: { token: TOKEN }, headers: { origin: 'http://127.0.0.1:1', 'sec-fetch-site': 'same-site' } });
    expect(reply.status).toBe(403);
    expect(reply.headers.get('set-cookie')).toBeNull();
  });

  it('sign-out ends the session (with the CSRF token)', async () => {
    await start();
    const cookie = await signIn();
    const page = await request('/console/approvals', { cookie });
    expect((await request('/console/sign-out', { cookie, form: { csrf: 'wrong' } })).status).toBe(403);
    expect((await request('/console/sign-out', { cookie, form: { csrf: csrfOf(page.body) } })).status).toBe(303);
    expect((await request('/console/approvals', { cookie })).status).toBe(303);
  });

  it('--no-auth (loopback only) opens a session for "anonymous" at once', async () => {
    await start(noAuthentication());
    const first = await request('/console/approvals');
    expect(first.status).toBe(200);
    expect(first.body).toContain('Signed in as <strong>anonymous</strong>');
    expect(first.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
  });
});

describe('every response', () => {
  it('carries the CSP, no-framing and no-sniff headers: pages, assets, redirects, refusals, not-found', async () => {
    await start();
    const cookie = await signIn();
    const replies = await Promise.all([
      request('/console/approvals', { cookie }),
      request('/console/assets/console.css'),
      request('/console/assets/feed.js'),
      request('/console/approvals'),
      request('/console/nothing', { cookie }),
      request('/console/sign-in', { form: { token: 'x' }, headers: { origin: 'http://evil.example:1' } }),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 303, 404, 403]);
    for (const reply of replies) {
      expect(reply.headers.get('content-security-policy')).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      expect(reply.headers.get('x-frame-options')).toBe('DENY');
      expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
      expect(reply.headers.get('cache-control')).toBe('no-store');
    }
    expect(replies[2]?.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    // No page holds inline script or style: the CSP could not allow it.
    expect(replies[0]?.body).not.toMatch(/<script(?![^>]*\ssrc=)|\sstyle=|\son[a-z]+=/i);
  });

  it('a foreign Host is refused before anything runs (DNS rebinding)', async () => {
    await start();
    const status = await new Promise<number>((resolve, reject) => {
      const target = new URL(server.url);
      const sent = httpRequest({ host: target.hostname, port: target.port, path: '/console/sign-in', headers: { host: 'evil.example' } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      sent.on('error', reject);
      sent.end();
    });
    expect(status).toBe(403);
  });
});

describe('deciding an approval', () => {
  it('refused without the CSRF token, from another origin or site, or without a name; recorded once with name, note and origin', async () => {
    await start();
    const asked = await host.createApproval(pending());
    const cookie = await signIn();
    const detail = await request(`/console/approvals/${asked.id}`, { cookie });
    expect(detail.status).toBe(200);
    expect(detail.body).toContain('+new text');
    const csrf = csrfOf(detail.body);
    const decide = (form: Record<string, string>, headers: Record<string, string> = { origin: server.url, 'sec-fetch-site': 'same-origin' }) =>
      request(`/console/approvals/${asked.id}`, { cookie, form, headers });
    const good = { csrf, decision: 'approve', operator: 'alice', note: 'checked <b>twice</b>' };
    const refusals = [
      await decide({ ...good, csrf: '' }),
      await decide({ ...good, csrf: 'A'.repeat(43) }),
      await decide(good, { origin: 'http://127.0.0.1:1' }),
      await decide(good, { 'sec-fetch-site': 'cross-site' }),
      await decide(good, { 'sec-fetch-site': 'same-site', origin: server.url }),
      await decide({ ...good, operator: '' }),
      await decide({ ...good, operator: 'a\u202eb' }),
      await decide({ ...good, decision: 'maybe' }),
    ];
    expect(refusals.map((reply) => reply.status)).toEqual([403, 403, 403, 403, 403, 400, 400, 400]);
    expect((await host.getApproval(asked.id))?.state).toBe('pending');

    const done = await decide(good);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/console/approvals/${asked.id}?decided=approved`);
    expect(await host.getApproval(asked.id)).toMatchObject({ state: 'approved', decidedBy: 'alice', note: 'checked <b>twice</b>', decidedVia: 'console (principal ops)' });
    const again = await decide({ ...good, decision: 'deny', operator: 'mallory' });
    expect(again.status).toBe(409);
    expect((await host.getApproval(asked.id))?.decidedBy).toBe('alice');
    const shown = await request(`/console/approvals/${asked.id}`, { cookie });
    expect(shown.body).toContain('checked &lt;b&gt;twice&lt;/b&gt;');
    expect(shown.body).not.toContain('name="decision"');
  });

  it('an expired approval cannot be decided from the console either', async () => {
    await start();
    const past = Date.now() - 10_000;
    const stale = await host.createApproval(pending({ createdAt: past, expiresAt: past + 1 }));
    const cookie = await signIn();
    const csrf = csrfOf((await request('/console/approvals', { cookie })).body);
    const reply = await request(`/console/approvals/${stale.id}`, { cookie, form: { csrf, decision: 'approve', operator: 'alice' }, headers: { origin: server.url } });
    expect(reply.status).toBe(409);
    expect((await host.getApproval(stale.id))?.state).toBe('pending');
  });
});

describe('the live feed', () => {
  it('sends the newest calls at once, then each new call as it is journaled', async () => {
    await start();
    const now = Date.now();
    await host.record(callStart('c-old', now - 1000), callFinish(now - 900));
    const cookie = await signIn();
    const response = await fetch(`${server.url}/console/feed/events`, { headers: { cookie } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const reader = response.body!.getReader();
    const seen = new Set<string>();
    let buffer = '';
    const waitFor = async (id: string): Promise<void> => {
      while (!seen.has(id)) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += Buffer.from(value).toString('utf8');
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(event)?.[1];
          if (event.startsWith('event: call') && data) seen.add((JSON.parse(data) as { id: string }).id);
        }
      }
    };
    await waitFor('c-old');
    await host.record(callStart('c-new', Date.now(), '"><img src=x onerror=alert(1)>'), callFinish(Date.now()));
    await waitFor('c-new');
    await reader.cancel();
  });
});

describe('the audit search', () => {
  it('filters as toolhost audit does, shows the chain status, and a record in full with its kept result as text', async () => {
    await start();
    const now = Date.now();
    await host.record(callStart('c-ci', now - 2000, 'ci-bot'), callFinish(now - 1900));
    await host.record({ ...callStart('c-ops', now - 1000, 'ops'), decision: 'deny' }, { ...callFinish(now - 900), status: 'denied', errorCode: 'policy_denied' });
    await host.record(
      { ...callStart('c-keyed', now - 500, 'ops'), idempotencyKey: 'k-1' },
      { ...callFinish(now - 400), replay: JSON.stringify({ content: [{ type: 'text', text: '<script>alert(1)</script>' }] }) },
    );
    const cookie = await signIn();
    const ids = (markup: string) => [...markup.matchAll(/href="\/console\/audit\/([^"]+)"/g)].map((match) => match[1]);
    expect(ids((await request('/console/audit?principal=ci-bot', { cookie })).body)).toEqual(['c-ci']);
    expect(ids((await request('/console/audit?decision=deny', { cookie })).body)).toEqual(['c-ops']);
    expect(ids((await request('/console/audit?code=policy_denied&principal=ops', { cookie })).body)).toEqual(['c-ops']);
    expect(ids((await request('/console/audit?limit=2', { cookie })).body)).toEqual(['c-keyed', 'c-ops']);
    expect((await request('/console/audit', { cookie })).body).toContain('Chain: verified.');
    // An edit made behind the journal's back, as someone with the database file could.
    const db = new Database(host.location.slice('sqlite:'.length));
    db.prepare(`UPDATE calls SET result_hash = ? WHERE id = 'c-ci'`).run('b'.repeat(64));
    db.close();
    expect((await request('/console/audit', { cookie })).body).toContain('Chain: broken at record <code>c-ci</code> (edited).');
    expect((await request('/console/audit?status=bogus', { cookie })).status).toBe(400);
    expect((await request('/console/audit?since=yesterday', { cookie })).status).toBe(400);
    const record = await request('/console/audit/c-keyed', { cookie });
    expect(record.status).toBe(200);
    expect(record.body).toContain('<pre class="result">&lt;script&gt;alert(1)&lt;/script&gt;</pre>');
    expect((await request('/console/audit/unknown', { cookie })).status).toBe(404);
  });
});

function callStart(id: string, startedAt: number, principal: string | null = null) {
  return {
    id,
    sessionId: 's-1',
    principal,
    tool: 'echo',
    argsHash: hashArgs({ id }),
    sideEffect: 'read_only',
    decision: 'allow' as const,
    rule: null,
    approval: 'not_needed' as const,
    idempotencyKey: null,
    startedAt,
  };
}

function callFinish(endedAt: number) {
  return { status: 'completed' as const, errorCode: null, resultHash: 'a'.repeat(64), resultBytes: 10, replay: null, endedAt };
}
