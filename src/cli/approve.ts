// `toolhost approve ID [--deny] [--as NAME]`: an operator's decision on a
// pending approval (SPEC section 7.2), recorded with who and when. With a
// fleet journal it may be given from any machine.
import { userInfo } from 'node:os';
import { isJournalError } from '../audit/journal.js';
import { CONFIG_FLAG_HELP, hostFlagsFrom, parseCommandArgs, UsageError } from './args.js';
import { JOURNAL_FLAG, JOURNAL_FLAG_HELP, openOperatorJournal } from './journal-flag.js';

const HELP = `Usage: toolhost approve ID [--deny] [--as NAME] [--note TEXT] [--state DIR] [--journal URL]

Approves (or, with --deny, refuses) a pending approval listed by \`toolhost approvals\`.
An approved ID lets the caller's repeat of that call (same tool, same arguments,
_meta["toolhost/approvalId"] = ID) run once; a denied one is approval_denied.

  --deny        refuse instead of approve
  --as NAME     who decides, for the record (default: the OS user)
  --note TEXT   why, for the record (at most 1000 characters)
  --state DIR   the state folder (default: .toolhost)
${CONFIG_FLAG_HELP}
${JOURNAL_FLAG_HELP}

Exit 1 when ID is unknown, expired or already decided.
`;

const MAX_NAME_CHARS = 128;
/** Longest note an operator may give with a decision. */
const MAX_NOTE_CHARS = 1000;

export async function run(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { deny: { type: 'boolean' }, as: { type: 'string' }, note: { type: 'string' }, ...JOURNAL_FLAG }, 1);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const id = positionals[0];
  if (id === undefined) throw new UsageError('missing the approval ID (see `toolhost approvals`)');
  const by = typeof values.as === 'string' ? values.as : operatorName();
  if (by.length === 0 || by.length > MAX_NAME_CHARS || /[\u0000-\u001f\u007f]/.test(by)) throw new UsageError(`--as takes a name of 1 to ${MAX_NAME_CHARS} printable characters`);
  const note = typeof values.note === 'string' && values.note !== '' ? values.note : null;
  if (note !== null && note.length > MAX_NOTE_CHARS) throw new UsageError(`--note takes at most ${MAX_NOTE_CHARS} characters`);
  const decision = values.deny === true ? 'denied' : 'approved';

  const { stateDir } = hostFlagsFrom(values);
  const journal = await openOperatorJournal('approve', values, stateDir);
  if (journal === undefined) return 1;
  try {
    const approval = await journal.decideApproval(id, decision, by, { note, via: 'cli' });
    process.stdout.write(
      `approval ${approval.id} (${approval.tool}, ${approval.sideEffect ?? 'unclassified'}): ${approval.state} by ${by}.` +
        (approval.state === 'approved' ? ` The caller may now repeat the call with _meta["toolhost/approvalId"] = "${approval.id}"; it runs once.\n` : '\n'),
    );
    return 0;
  } catch (error) {
    if (isJournalError(error) && ['unknown_approval', 'approval_expired', 'approval_decided'].includes(error.code)) {
      process.stderr.write(`toolhost approve: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await journal.close();
  }
}

function operatorName(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}
