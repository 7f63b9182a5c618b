// `toolhost reconcile ID --rerun|--skip`: an operator's decision on a call
// interrupted by a host that died while it ran (SPEC section 7).
import { isJournalError } from '../audit/journal.js';
import { CONFIG_FLAG_HELP, hostFlagsFrom, parseCommandArgs, UsageError } from './args.js';
import { JOURNAL_FLAG, JOURNAL_FLAG_HELP, openOperatorJournal } from './journal-flag.js';

const HELP = `Usage: toolhost reconcile ID --rerun|--skip [--state DIR] [--journal URL]

Decides what an interrupted call (its host died while it ran) means. Until then,
a repeat of its idempotency key is refused with interrupted_side_effect.

  --rerun       the effect did not happen (or may happen twice): the key runs again
  --skip        the effect happened: the key counts as done; a repeat does not run
                the tool again (there is no recorded result to replay)
  --state DIR   the state folder (default: .toolhost)
${CONFIG_FLAG_HELP}
${JOURNAL_FLAG_HELP}

Exit 1 when ID is unknown or is not an unreconciled interrupted call.
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { rerun: { type: 'boolean' }, skip: { type: 'boolean' }, ...JOURNAL_FLAG }, 1);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const id = positionals[0];
  if (id === undefined) throw new UsageError('missing the call ID (see `toolhost audit --status interrupted`)');
  if (values.rerun === values.skip) throw new UsageError('give exactly one of --rerun and --skip');
  const action = values.rerun ? 'rerun' : 'skip';

  const { stateDir } = hostFlagsFrom(values);
  const journal = await openOperatorJournal('reconcile', values, stateDir);
  if (journal === undefined) return 1;
  try {
    const record = await journal.reconcile(id, action);
    const key = record.idempotencyKey === null ? 'It had no idempotency key.' : `Idempotency key "${record.idempotencyKey}" of ${record.tool}`;
    const effect =
      action === 'rerun' ? (record.idempotencyKey === null ? '' : ' may run again.') : record.idempotencyKey === null ? '' : ' counts as done; a repeat will not run the tool.';
    process.stdout.write(`call ${record.id} (${record.tool}): interrupted, reconciled --${action}. ${key}${effect}\n`);
    return 0;
  } catch (error) {
    if (isJournalError(error) && (error.code === 'unknown_call' || error.code === 'not_interrupted')) {
      process.stderr.write(`toolhost reconcile: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await journal.close();
  }
}
