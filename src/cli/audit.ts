// `toolhost audit`: reads the journal of a state folder, filtered, as a table
// or as JSON (the --json shape is documented in the README and stable).
import { formatAuditTable, toAuditJson } from '../audit/audit-format.js';
import { CALL_STATUSES, type CallStatus } from '../audit/call-record.js';
import { parseSince } from '../audit/since.js';
import { tableOptionsFor } from '../terminal/table.js';
import { CONFIG_FLAG_HELP, hostFlagsFrom, parseCommandArgs, UsageError } from './args.js';
import { JOURNAL_FLAG, JOURNAL_FLAG_HELP, openOperatorJournal } from './journal-flag.js';

const DEFAULT_LIMIT = 100;

const HELP = `Usage: toolhost audit [--state DIR] [--journal URL] [--tool T] [--status S] [--since T] [--limit N] [--json]

Reads the journal: one record per call, newest first.

Options:
  --state DIR   the state folder (default: .toolhost)
${CONFIG_FLAG_HELP}
${JOURNAL_FLAG_HELP}
  --tool T      only calls of tool T
  --status S    only calls with status S: ${CALL_STATUSES.join(', ')}
  --since T     only calls started since T: ISO 8601 (2026-11-29, 2026-11-29T13:00:00Z)
                or a duration back from now (30s, 15m, 1h, 2d, 1w)
  --limit N     at most N records (default ${DEFAULT_LIMIT}; 0 means all)
  --json        a JSON array of records (shape in the README)
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    {
      tool: { type: 'string' },
      status: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
      ...JOURNAL_FLAG,
    },
    0,
  );
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const { stateDir } = hostFlagsFrom(values);
  const status = values.status;
  if (status !== undefined && !CALL_STATUSES.includes(status as CallStatus)) {
    throw new UsageError(`--status must be one of ${CALL_STATUSES.join(', ')}; got "${status}"`);
  }
  const since = values.since === undefined ? undefined : parseSince(values.since);
  if (values.since !== undefined && since === undefined) {
    throw new UsageError(`--since takes an ISO 8601 time or a duration such as 30s, 15m, 1h, 2d, 1w; got "${values.since}"`);
  }
  const limit = parseLimit(values.limit);

  const journal = await openOperatorJournal('audit', values, stateDir);
  if (journal === undefined) return 1;
  let records;
  try {
    records = await journal.query({
      ...(values.tool !== undefined ? { tool: values.tool } : {}),
      ...(status !== undefined ? { status } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(limit > 0 ? { limit } : {}),
    });
  } finally {
    await journal.close();
  }
  process.stdout.write(values.json ? `${JSON.stringify(records.map(toAuditJson), null, 2)}\n` : formatAuditTable(records, tableOptionsFor(process.stdout)));
  return 0;
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--limit takes a whole number; got "${text}"`);
  return Number(text);
}
