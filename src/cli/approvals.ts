// `toolhost approvals [--json]`: the pending operator approvals of a journal
// (SPEC section 7.2), newest first; with a fleet journal, of every host.
import type { ApprovalRecord } from '../audit/approval-record.js';
import { CONFIG_FLAG_HELP, hostFlagsFrom, parseCommandArgs } from './args.js';
import { formatTable, tableOptionsFor, type Column, type TableOptions } from '../terminal/table.js';
import { JOURNAL_FLAG, JOURNAL_FLAG_HELP, openOperatorJournal } from './journal-flag.js';

const HELP = `Usage: toolhost approvals [--state DIR] [--journal URL] [--all] [--json]

Lists the approvals waiting for an operator: calls refused with approval_required
(the client could not be asked, or the policy says approvals: {by: operator}).
Decide one with \`toolhost approve ID\` (or --deny); the caller then repeats the
call with _meta["toolhost/approvalId"] set to ID, and it runs once.

  --all         every approval, decided, spent and expired ones too
  --json        a JSON array of approvals (shape in the README)
  --state DIR   the state folder (default: .toolhost)
${CONFIG_FLAG_HELP}
${JOURNAL_FLAG_HELP}
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { json: { type: 'boolean' }, all: { type: 'boolean' }, ...JOURNAL_FLAG }, 0);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const { stateDir } = hostFlagsFrom(values);
  const journal = await openOperatorJournal('approvals', values, stateDir);
  if (journal === undefined) return 1;
  let approvals: ApprovalRecord[];
  try {
    approvals = await journal.listApprovals({ pendingOnly: values.all !== true });
  } finally {
    await journal.close();
  }
  process.stdout.write(values.json ? `${JSON.stringify(approvals.map(toApprovalJson), null, 2)}\n` : formatApprovals(approvals, tableOptionsFor(process.stdout)));
  return 0;
}

/** The stable --json shape of one approval (README). Times are ISO 8601. */
export function toApprovalJson(approval: ApprovalRecord): Record<string, unknown> {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: approval.id,
    state: approval.state,
    tool: approval.tool,
    argsHash: approval.argsHash,
    sideEffect: approval.sideEffect,
    rule: approval.rule,
    principal: approval.principal,
    sessionId: approval.sessionId,
    callId: approval.callId,
    createdAt: iso(approval.createdAt),
    expiresAt: iso(approval.expiresAt),
    decidedBy: approval.decidedBy,
    decidedAt: iso(approval.decidedAt),
    spentBy: approval.spentBy,
    spentAt: iso(approval.spentAt),
  };
}

const APPROVAL_COLUMNS: readonly Column[] = [
  { header: 'ID' },
  { header: 'STATE' },
  { header: 'TOOL' },
  { header: 'CLASS' },
  { header: 'PRINCIPAL' },
  { header: 'RULE', wrap: true },
  { header: 'EXPIRES' },
  { header: 'ARGS' },
];

function formatApprovals(approvals: readonly ApprovalRecord[], options: TableOptions): string {
  if (approvals.length === 0) return 'no pending approvals\n';
  const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const rows = approvals.map((a) => [a.id, a.state, a.tool, a.sideEffect ?? '-', a.principal ?? '-', a.rule ?? '(built-in)', iso(a.expiresAt), a.argsHash.slice(0, 12)]);
  return formatTable(APPROVAL_COLUMNS, rows, options);
}
