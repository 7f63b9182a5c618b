// `toolhost audit export --format jsonl|csv` (SPEC section 7.3): every chain
// entry of the journal, with every chain field, so an exported file verifies on
// its own (readExport + verifySnapshot) and a SIEM can ingest it as it is. One
// entry per line (JSON Lines) or per row (CSV, RFC 4180 via csv-stringify); a
// call's or approval's fields are also spread into readable CSV columns, and
// the `record` column keeps the exact canonical text the hash covers.
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { canonicalJson } from '../config/canonical-json.js';
import type { ChainEntry, ChainEntryKind } from './chain/chain-entry.js';
import type { JournalSnapshot } from './chain/journal-snapshot.js';

export type ExportFormat = 'jsonl' | 'csv';

export const EXPORT_FORMATS: readonly ExportFormat[] = ['jsonl', 'csv'];

/** The CSV columns: the chain fields, readable fields of the record, and the record itself. */
const CSV_COLUMNS = ['chain', 'seq', 'prev', 'hash', 'kind', 'ref', 'rev', 'at', 'time', 'tool', 'principal', 'status', 'decision', 'error_code', 'rule', 'record'] as const;

/** The exported text of a journal's entries, in chain order, one entry per line. */
export function formatExport(entries: readonly ChainEntry[], format: ExportFormat): string {
  if (format === 'jsonl') return entries.map((entry) => `${JSON.stringify({ ...entry, record: JSON.parse(entry.record) as unknown })}\n`).join('');
  const rows = entries.map((entry) => {
    const record = JSON.parse(entry.record) as Record<string, unknown>;
    const text = (value: unknown): string => (typeof value === 'string' ? value : '');
    return [
      entry.chain,
      entry.seq,
      entry.prev ?? '',
      entry.hash,
      entry.kind,
      entry.ref,
      entry.rev,
      entry.at,
      new Date(entry.at).toISOString(),
      text(record['tool']),
      text(record['principal']),
      text(record['status'] ?? record['state']),
      text(record['decision']),
      text(record['errorCode']),
      text(record['rule']),
      entry.record,
    ];
  });
  return stringify([[...CSV_COLUMNS], ...rows]);
}

/** An export file read back as a snapshot to verify (entries only: an export holds no tables). */
export function readExport(text: string): JournalSnapshot {
  const trimmed = text.trimStart();
  const entries = trimmed.startsWith('{') ? readJsonLines(text) : readCsv(text);
  return { entries, chainedSince: null };
}

function readJsonLines(text: string): ChainEntry[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => {
      const value = JSON.parse(line) as Record<string, unknown>;
      return toEntry(value, value['record'] === undefined ? '' : canonicalJson(value['record']), index + 1);
    });
}

function readCsv(text: string): ChainEntry[] {
  const rows = parse(text, { columns: true, skip_empty_lines: true }) as Record<string, string>[];
  return rows.map((row, index) =>
    toEntry({ ...row, seq: Number(row['seq']), rev: Number(row['rev']), at: Number(row['at']), prev: row['prev'] === '' ? null : row['prev'] }, row['record'] ?? '', index + 2),
  );
}

function toEntry(value: Record<string, unknown>, record: string, line: number): ChainEntry {
  const text = (name: string): string => {
    const field = value[name];
    if (typeof field !== 'string') throw new SyntaxError(`line ${line}: "${name}" is missing or not text`);
    return field;
  };
  const number = (name: string): number => {
    const field = value[name];
    if (typeof field !== 'number' || !Number.isFinite(field)) throw new SyntaxError(`line ${line}: "${name}" is missing or not a number`);
    return field;
  };
  const prev = value['prev'];
  if (prev !== null && typeof prev !== 'string') throw new SyntaxError(`line ${line}: "prev" is not text or null`);
  return {
    chain: text('chain'),
    seq: number('seq'),
    prev,
    hash: text('hash'),
    kind: text('kind') as ChainEntryKind,
    ref: text('ref'),
    rev: number('rev'),
    at: number('at'),
    record,
  };
}
