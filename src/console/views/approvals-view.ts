// The approvals pages: the list (pending ones, or every one with who decided),
// and one approval with everything a person needs to judge it: tool, class,
// rule, who asked from which host, the arguments as a tree, the projected
// effect with its diff, age and expiry, and the form that decides it (a
// required operator name, an optional note, the session's CSRF token).
import { formatExpiry, formatSpan } from '../../audit/approval-format.js';
import type { ApprovalRecord } from '../../audit/approval-record.js';
import { html, type SafeHtml } from '../html.js';
import { writeView } from './diff-view.js';
import { notice, page, timeAt, type PageContext } from './layout.js';
import { valueTree } from './value-tree.js';

/** Longest operator name and note the form accepts (as `toolhost approve --as` and `--note`). */
export const MAX_OPERATOR_NAME_CHARS = 128;
export const MAX_NOTE_CHARS = 1000;

export function approvalsPage(ctx: PageContext, approvals: readonly ApprovalRecord[], all: boolean): string {
  const link = (a: ApprovalRecord) => html`<a href="${ctx.base}/approvals/${encodeURIComponent(a.id)}">${a.tool}</a>`;
  const rows = approvals.map(
    (a) => html`<tr>
<td>${link(a)}</td>
<td><span class="state s-${a.state}">${a.state}</span></td>
<td>${a.sideEffect ?? 'unclassified'}</td>
<td>${a.principal ?? html`<span class="muted">stdio session</span>`}</td>
<td>${writesSummary(a)}</td>
<td>${formatSpan(ctx.now - a.createdAt)}</td>
<td>${a.state === 'pending' ? formatExpiry(a.expiresAt, ctx.now) : '—'}</td>
${all ? html`<td>${a.decidedBy === null ? '—' : html`${a.state === 'denied' ? 'denied' : 'approved'} by ${a.decidedBy}`}</td>` : ''}
</tr>`,
  );
  const toggle = all
    ? html`<p><a href="${ctx.base}/approvals">Show pending approvals only</a></p>`
    : html`<p><a href="${ctx.base}/approvals?all=1">Show every approval, with who decided</a></p>`;
  const table =
    approvals.length === 0
      ? notice('status', all ? 'No approvals in this journal.' : 'No approvals are waiting. Calls that need an operator appear here.')
      : html`<table>
<caption>${all ? 'Every approval, newest first' : 'Approvals waiting for an operator, newest first'}</caption>
<thead><tr><th scope="col">Tool</th><th scope="col">State</th><th scope="col">Class</th><th scope="col">Asked by</th><th scope="col">Writes</th><th scope="col">Age</th><th scope="col">Expires</th>${all ? html`<th scope="col">Decided</th>` : ''}</tr></thead>
<tbody>${rows}</tbody>
</table>`;
  return page(ctx, 'approvals', all ? 'Approvals' : 'Pending approvals', html`${toggle}${table}`);
}

export interface DecisionFeedback {
  readonly kind: 'status' | 'alert';
  readonly text: string;
}

export function approvalPage(ctx: PageContext, a: ApprovalRecord, feedback?: DecisionFeedback, form: { name?: string; note?: string } = {}): string {
  const decidable = a.state === 'pending' && a.expiresAt > ctx.now;
  const facts = html`<dl class="facts">
<dt>Tool</dt><dd><a href="${ctx.base}/tools/${encodeURIComponent(a.tool)}">${a.tool}</a> <span class="muted">(${a.sideEffect ?? 'unclassified'})</span></dd>
<dt>State</dt><dd><span class="state s-${a.state}">${a.state}</span></dd>
<dt>Rule</dt><dd><code>${a.rule ?? '(built-in)'}</code></dd>
<dt>Asked by</dt><dd>${a.principal ?? html`<span class="muted">a stdio session</span>`}</dd>
<dt>Host</dt><dd>${a.hostId === null ? html`<span class="muted">not recorded</span>` : html`<code>${a.hostId}</code>`}</dd>
<dt>Session, call</dt><dd><code>${a.sessionId}</code>, <a href="${ctx.base}/audit/${encodeURIComponent(a.callId)}"><code>${a.callId}</code></a></dd>
<dt>Asked</dt><dd>${timeAt(a.createdAt, ctx.now)}</dd>
<dt>Expires</dt><dd>${timeAt(a.expiresAt, ctx.now)}</dd>
<dt>Argument hash</dt><dd><code class="hash">${a.argsHash}</code></dd>
${a.decidedBy === null ? '' : html`<dt>Decided</dt><dd>${a.state === 'denied' ? 'denied' : 'approved'} by <strong>${a.decidedBy}</strong> ${timeAt(a.decidedAt, ctx.now)}${a.decidedVia ? html` <span class="muted">(${a.decidedVia})</span>` : ''}</dd>`}
${a.note === null ? '' : html`<dt>Note</dt><dd>${a.note}</dd>`}
${a.spentBy === null ? '' : html`<dt>Ran as</dt><dd><a href="${ctx.base}/audit/${encodeURIComponent(a.spentBy)}"><code>${a.spentBy}</code></a> ${timeAt(a.spentAt, ctx.now)}</dd>`}
</dl>`;
  const args = html`<section aria-labelledby="args-h"><h2 id="args-h">Arguments</h2>
<p class="muted">Redacted and bounded as the journal keeps them; the argument hash names them exactly.</p>
${a.arguments === null ? notice('status', 'The arguments were not kept for this approval.') : valueTree(a.arguments)}</section>`;
  const effects =
    a.effects === null || a.effects.length === 0
      ? html`<section aria-labelledby="effect-h"><h2 id="effect-h">Projected effect</h2><p class="muted">The tool declares no written paths (manifest effects.writes).</p></section>`
      : html`<section aria-labelledby="effect-h"><h2 id="effect-h">Projected effect</h2>${a.effects.map(writeView)}</section>`;
  return page(
    ctx,
    'approvals',
    `Approval for ${a.tool}`,
    html`${feedback === undefined ? '' : notice(feedback.kind, feedback.text)}${facts}${args}${effects}${decidable ? decisionForm(ctx, a, form) : ''}`,
  );
}

function decisionForm(ctx: PageContext, a: ApprovalRecord, form: { name?: string; note?: string }): SafeHtml {
  return html`<section aria-labelledby="decide-h"><h2 id="decide-h">Decide</h2>
<form class="decide" method="post" action="${ctx.base}/approvals/${encodeURIComponent(a.id)}">
<input type="hidden" name="csrf" value="${ctx.csrfToken ?? ''}">
<p><label for="operator">Your name <span class="muted">(recorded as the operator who decided)</span></label>
<input id="operator" name="operator" required maxlength="${MAX_OPERATOR_NAME_CHARS}" autocomplete="name" value="${form.name ?? ''}"></p>
<p><label for="note">Note <span class="muted">(optional, recorded with the decision)</span></label>
<textarea id="note" name="note" rows="3" maxlength="${MAX_NOTE_CHARS}">${form.note ?? ''}</textarea></p>
<p class="buttons"><button type="submit" name="decision" value="approve" class="approve">Approve this call once</button>
<button type="submit" name="decision" value="deny" class="deny">Deny</button></p>
</form></section>`;
}

function writesSummary(a: ApprovalRecord): SafeHtml | string {
  if (a.effects === null || a.effects.length === 0) return '—';
  return html`${a.effects.map((write, index) => html`${index > 0 ? ', ' : ''}<code>${write.path ?? write.argument}</code>`)}`;
}
