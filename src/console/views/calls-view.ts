// Call records for people: the rows of the live feed and of the audit search
// (the same columns, so a call reads alike in both), and the feed's row as
// data for its event stream, whose script fills cells with textContent only.
import type { ApprovalRecord } from '../../audit/approval-record.js';
import type { CallRecord } from '../../audit/call-record.js';
import { escapeInvisible } from '../../config/escape-text.js';
import { html, type SafeHtml } from '../html.js';

const CALL_COLUMNS = ['Started (UTC)', 'Tool', 'Principal', 'Status', 'Code', 'Decision', 'Approval', 'ms'] as const;

/** A feed row as the event stream sends it: display strings only (escaped), and the record's link. */
export interface FeedRow {
  readonly id: string;
  readonly href: string;
  readonly cells: readonly string[];
}

/** Who approved each call that an operator's approval let run, by the call's id. */
export type ApprovalsByCall = ReadonlyMap<string, ApprovalRecord>;

/** The cells of one call, as text. */
function callCells(record: CallRecord, approvals: ApprovalsByCall): string[] {
  const operator = approvals.get(record.id);
  const approval = operator?.decidedBy ? `${record.approval ?? 'approved'} by ${operator.decidedBy}` : (record.approval ?? '');
  return [
    new Date(record.startedAt).toISOString().replace('T', ' ').slice(0, 19),
    record.tool,
    record.principal ?? 'stdio',
    record.status,
    record.errorCode ?? '',
    record.decision,
    approval === 'not_needed' ? '' : approval,
    record.endedAt === null ? '' : String(record.endedAt - record.startedAt),
  ].map((cell) => escapeInvisible(cell).slice(0, 200));
}

export function feedRow(base: string, record: CallRecord, approvals: ApprovalsByCall): FeedRow {
  return { id: record.id, href: `${base}/audit/${encodeURIComponent(record.id)}`, cells: callCells(record, approvals) };
}

/** A table of calls; the first cell links to the record. */
export function callsTable(base: string, caption: string, records: readonly CallRecord[], approvals: ApprovalsByCall, bodyAttributes: SafeHtml | string = ''): SafeHtml {
  const rows = records.map((record) => {
    const [started, ...rest] = callCells(record, approvals);
    return html`<tr><td><a href="${base}/audit/${encodeURIComponent(record.id)}">${started}</a></td>${rest.map((cell) => html`<td>${cell}</td>`)}</tr>`;
  });
  return html`<table class="calls">
<caption>${caption}</caption>
<thead><tr>${CALL_COLUMNS.map((column) => html`<th scope="col">${column}</th>`)}</tr></thead>
<tbody ${bodyAttributes}>${rows}</tbody>
</table>`;
}

/** Approvals by the call each let run. */
export function approvalsByCall(approvals: readonly ApprovalRecord[]): Map<string, ApprovalRecord> {
  const byCall = new Map<string, ApprovalRecord>();
  for (const approval of approvals) if (approval.spentBy !== null) byCall.set(approval.spentBy, approval);
  return byCall;
}
