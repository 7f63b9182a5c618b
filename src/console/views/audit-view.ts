// The audit search (the filters of `toolhost audit`), with the chain's verify
// status, and one record in full: every field of `audit --json`, who approved
// it, and the result kept for replay when the call had an idempotency key.
import { toAuditJson } from '../../audit/audit-format.js';
import type { ApprovalRecord } from '../../audit/approval-record.js';
import { CALL_STATUSES, type CallRecord } from '../../audit/call-record.js';
import type { AuditSearchResult, ChainVerdict } from '../console-data.js';
import { html, multiline, type SafeHtml } from '../html.js';
import { callsTable, type ApprovalsByCall } from './calls-view.js';
import { notice, page, timeAt, type PageContext } from './layout.js';

export const DECISIONS = ['allow', 'deny', 'ask', 'would_deny'] as const;

/** The search form's values as given (echoed back as text). */
export type AuditQuery = Readonly<Partial<Record<'tool' | 'status' | 'principal' | 'decision' | 'code' | 'rule' | 'since' | 'until' | 'limit', string>>>;

export function chainStatus(verdict: ChainVerdict | 'unavailable'): SafeHtml {
  if (verdict === 'unavailable') return notice('alert', 'Chain: the verification could not run (the journal did not answer).');
  if (verdict.ok) return notice('status', 'Chain: verified. Every record and checkpoint checks out.');
  return notice('alert', html`Chain: broken at record <code>${verdict.recordId}</code> (${verdict.kind}).`);
}

export function auditPage(ctx: PageContext, query: AuditQuery, result: AuditSearchResult | { readonly error: string }, approvals: ApprovalsByCall, chain: SafeHtml): string {
  const field = (name: keyof AuditQuery, label: string, hint: string) =>
    html`<p><label for="f-${name}">${label}</label> <input id="f-${name}" name="${name}" value="${query[name] ?? ''}" aria-describedby="h-${name}"> <span id="h-${name}" class="muted">${hint}</span></p>`;
  const select = (name: 'status' | 'decision', label: string, values: readonly string[]) =>
    html`<p><label for="f-${name}">${label}</label> <select id="f-${name}" name="${name}"><option value="">any</option>${values.map(
      (value) => html`<option${query[name] === value ? html` selected` : ''}>${value}</option>`,
    )}</select></p>`;
  const form = html`<form class="search" method="get" action="${ctx.base}/audit" role="search">
${field('tool', 'Tool', 'exact name')}
${field('principal', 'Principal', 'exact name')}
${select('status', 'Status', CALL_STATUSES)}
${select('decision', 'Decision', DECISIONS)}
${field('code', 'Error code', 'e.g. policy_denied')}
${field('rule', 'Rule', 'part of file:line key')}
${field('since', 'Since', 'ISO time or 30s, 15m, 1h, 2d, 1w')}
${field('until', 'Until', 'ISO time or a duration back')}
${field('limit', 'Limit', 'at most this many (default 100)')}
<p><button type="submit">Search</button> <a href="${ctx.base}/audit">Clear</a></p>
</form>`;
  const results =
    'error' in result
      ? notice('alert', result.error)
      : html`
${result.records.length === 0 ? notice('status', 'No calls match.') : callsTable(ctx.base, `${result.records.length} calls, newest first`, result.records, approvals)}`;
  return page(ctx, 'audit', 'Audit', html`${chain}${form}${results}`);
}

interface RecordContext {
  readonly record: CallRecord;
  /** The operator approval that let this call run, and the ones it asked for. */
  readonly approvedBy?: ApprovalRecord;
  readonly asked: readonly ApprovalRecord[];
  /** The result kept for replay (calls with an idempotency key), as stored. */
  readonly replay?: string;
}

export function recordPage(ctx: PageContext, facts: RecordContext): string {
  const json = toAuditJson(facts.record) as unknown as Record<string, unknown>;
  const rows = Object.entries(json).map(
    ([key, value]) =>
      html`<dt>${key}</dt><dd>${value === null ? html`<span class="muted">null</span>` : typeof value === 'object' ? html`<code>${JSON.stringify(value)}</code>` : html`<code>${String(value)}</code>`}</dd>`,
  );
  const approved =
    facts.approvedBy === undefined
      ? ''
      : html`<section aria-labelledby="approved-h"><h2 id="approved-h">Approved by an operator</h2>
<p><a href="${ctx.base}/approvals/${encodeURIComponent(facts.approvedBy.id)}">Approval <code>${facts.approvedBy.id}</code></a>: approved by <strong>${facts.approvedBy.decidedBy ?? '?'}</strong> ${timeAt(facts.approvedBy.decidedAt, ctx.now)}${facts.approvedBy.decidedVia ? html` <span class="muted">(${facts.approvedBy.decidedVia})</span>` : ''}${facts.approvedBy.note ? html`: “${facts.approvedBy.note}”` : ''}</p></section>`;
  const asked = facts.asked.map(
    (a) => html`<p>This call asked for <a href="${ctx.base}/approvals/${encodeURIComponent(a.id)}">approval <code>${a.id}</code></a> (${a.state}).</p>`,
  );
  const replay =
    facts.replay === undefined
      ? ''
      : html`<section aria-labelledby="result-h"><h2 id="result-h">Result kept for replay</h2><p class="muted">The call had an idempotency key; this is the result a repeat gets.</p>${resultView(facts.replay)}</section>`;
  return page(ctx, 'audit', `Call ${facts.record.tool}`, html`<dl class="facts">${rows}</dl>${approved}${asked}${replay}`);
}

/** Largest stored result shown, in characters. */
const MAX_RESULT_CHARS = 64 * 1024;

// The text blocks of an MCP result, as text; anything else as its JSON.
function resultView(serialized: string): SafeHtml {
  let parsed: unknown;
  try {
    parsed = JSON.parse(serialized);
  } catch {
    return html`<pre>${multiline(serialized.slice(0, MAX_RESULT_CHARS))}</pre>`;
  }
  const content = typeof parsed === 'object' && parsed !== null ? (parsed as { content?: unknown }).content : undefined;
  if (!Array.isArray(content)) return html`<pre>${multiline(JSON.stringify(parsed, null, 2).slice(0, MAX_RESULT_CHARS))}</pre>`;
  return html`${content.map((block: unknown) => {
    const text = typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'text' ? (block as { text?: unknown }).text : undefined;
    return typeof text === 'string'
      ? html`<pre class="result">${multiline(text.slice(0, MAX_RESULT_CHARS))}</pre>`
      : html`<pre class="result">${multiline(JSON.stringify(block).slice(0, MAX_RESULT_CHARS))}</pre>`;
  })}`;
}
