// `toolhost approvals [--all] [--json]`: the approvals of a journal (SPEC
// section 7.2), newest first, with what each is for: tool, class, principal,
// the arguments one line each, the projected effect, age and expiry, and with
// --all who decided and when. With a fleet journal, of every host.
import { formatApprovalsText, toApprovalJson } from '../audit/approval-format.js';
import type { ApprovalRecord } from '../audit/approval-record.js';
import { journalFlagsFor } from '../audit/journal-url.js';
import { journalUrlFrom } from '../audit/open-journal.js';
import { CONFIG_FLAG_HELP, hostFlagsFrom, parseCommandArgs } from './args.js';
import { JOURNAL_FLAG, JOURNAL_FLAG_HELP, journalFlagFrom, openOperatorJournal } from './journal-flag.js';

const HELP = `Usage: toolhost approvals [--state DIR] [--journal URL] [--all] [--json]

Lists the approvals waiting for an operator: calls refused with approval_required
(the client could not be asked, or the policy says approvals: {by: operator}).
Each shows the tool, its class, who asked, the arguments (redacted, bounded, one
line each), what the call would write (for tools that declare effects.writes: each
path and a diff), its age and expiry, and the command that decides it.
Decide one with \`toolhost approve ID\` (or --deny), or in \`toolhost console\`; the
caller then repeats the call with _meta["toolhost/approvalId"] set to ID, and it runs once.

  --all         every approval, decided, spent and expired ones too, with who decided and when
  --json        a JSON array of approvals (shape in docs/audit.md)
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
  if (values.json) {
    process.stdout.write(`${JSON.stringify(approvals.map(toApprovalJson), null, 2)}\n`);
    return 0;
  }
  const journalFlags = journalFlagsFor(journalUrlFrom(journalFlagFrom(values)), stateDir);
  process.stdout.write(formatApprovalsText(approvals, { now: Date.now(), all: values.all === true, journalFlags }));
  return 0;
}
