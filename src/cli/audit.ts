// `toolhost audit`: reads the journal of a state folder, filtered, as a table
// or as JSON (the --json shape is documented in docs/audit.md and stable);
// `audit verify` checks its chains (SPEC section 7.3) and `audit export`
// writes every chain entry as JSON Lines or CSV.
import { readFileSync, writeFileSync } from 'node:fs';
import { AuditFilterError, DECISIONS, searchAudit, type AuditSearchInput } from '../audit/audit-search.js';
import { EXPORT_FORMATS, formatExport, readExport, type ExportFormat } from '../audit/audit-export.js';
import { formatAuditTable, toAuditJson } from '../audit/audit-format.js';
import { CALL_STATUSES } from '../audit/call-record.js';
import { formatVerifyReport } from '../audit/verify-format.js';
import { verifyJournal, verifySnapshot, type VerifyReport } from '../audit/verify-journal.js';
import { tableOptionsFor } from '../terminal/table.js';
import { CONFIG_FLAG_HELP, hostFlagsFrom, parseCommandArgs, UsageError } from './args.js';
import { JOURNAL_FLAG, JOURNAL_FLAG_HELP, openOperatorJournal } from './journal-flag.js';

const DEFAULT_LIMIT = 100;

const HELP = `Usage: toolhost audit [--state DIR] [--journal URL] [filters] [--limit N] [--json]
       toolhost audit verify [--state DIR] [--journal URL | FILE] [--trust-key KEY]... [--json]
       toolhost audit export --format jsonl|csv [--state DIR] [--journal URL] [--out FILE]

Reads the journal: one record per call, newest first.

Options:
  --state DIR       the state folder (default: .toolhost)
${CONFIG_FLAG_HELP}
${JOURNAL_FLAG_HELP}
  --tool T          only calls of tool T
  --status S        only calls with status S: ${CALL_STATUSES.join(', ')}
  --principal P     only calls of principal P (serve --http)
  --decision D      only calls the policy decided D: ${DECISIONS.join(', ')}
  --code C          only calls that ended with error code C (SPEC section 5)
  --rule TEXT       only calls whose rule contains TEXT (a file, a line, a key)
  --since T         only calls started at or after T, and
  --until T         before T: ISO 8601 (2026-11-29, 2026-11-29T13:00:00Z)
                    or a duration back from now (30s, 15m, 1h, 2d, 1w)
  --limit N         at most N records (default ${DEFAULT_LIMIT}; 0 means all)
  --json            a JSON array of records (shape in docs/audit.md)

verify: checks every chain of the journal (or of an export FILE) and its
checkpoints, and that every record is the latest chained fact about it; exit 1
naming the first break (edited, deleted, reordered, truncated, checkpoint_invalid,
untrusted_key, inserted, malformed). --trust-key KEY (repeatable: a base64url
public key or a key id) makes a chain signed by any other key a break.

export: every chain entry with every chain field, so the file verifies on its own
(\`toolhost audit verify FILE\`); --out FILE writes there instead of stdout.
`;

export async function run(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'verify') return runVerify(argv.slice(1));
  if (argv[0] === 'export') return runExport(argv.slice(1));
  const { values } = parseCommandArgs(
    argv,
    {
      tool: { type: 'string' },
      status: { type: 'string' },
      principal: { type: 'string' },
      decision: { type: 'string' },
      code: { type: 'string' },
      rule: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
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
  const input: AuditSearchInput = { ...values, limit: parseLimit(values.limit) };
  const journal = await openOperatorJournal('audit', values, stateDir);
  if (journal === undefined) return 1;
  let records;
  try {
    records = await searchAudit(journal, input);
  } catch (error) {
    if (error instanceof AuditFilterError) throw new UsageError(error.message);
    throw error;
  } finally {
    await journal.close();
  }
  process.stdout.write(values.json ? `${JSON.stringify(records.map(toAuditJson), null, 2)}\n` : formatAuditTable(records, tableOptionsFor(process.stdout)));
  return 0;
}

async function runVerify(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' }, 'trust-key': { type: 'string', multiple: true }, ...JOURNAL_FLAG }, 1);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const file = positionals[0];
  if (file !== undefined && values.journal !== undefined) throw new UsageError('give either an export FILE or --journal URL, not both');
  const options = values['trust-key'] !== undefined ? { trustedKeys: values['trust-key'] } : {};
  let report: VerifyReport;
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      process.stderr.write(`toolhost audit verify: cannot read ${file} (${(error as Error).message})\n`);
      return 1;
    }
    try {
      report = verifySnapshot(readExport(text), options);
    } catch (error) {
      process.stderr.write(`toolhost audit verify: ${file} is not a journal export (${(error as Error).message})\n`);
      return 1;
    }
  } else {
    // Verifying writes nothing: no dead host's calls are marked, nothing is signed.
    const journal = await openOperatorJournal('audit verify', values, hostFlagsFrom(values).stateDir, { recover: false });
    if (journal === undefined) return 1;
    try {
      report = await verifyJournal(journal, options);
    } finally {
      await journal.close();
    }
  }
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatVerifyReport(report));
  return report.ok ? 0 : 1;
}

async function runExport(argv: readonly string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { format: { type: 'string' }, out: { type: 'string' }, ...JOURNAL_FLAG }, 0);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const format = values.format;
  if (format === undefined || !EXPORT_FORMATS.includes(format as ExportFormat)) throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}`);
  const journal = await openOperatorJournal('audit export', values, hostFlagsFrom(values).stateDir, { recover: false });
  if (journal === undefined) return 1;
  let text: string;
  try {
    text = formatExport((await journal.readSnapshot()).entries, format as ExportFormat);
  } finally {
    await journal.close();
  }
  if (values.out !== undefined) writeFileSync(values.out, text, { mode: 0o600 });
  else process.stdout.write(text);
  return 0;
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--limit takes a whole number; got "${text}"`);
  return Number(text);
}
