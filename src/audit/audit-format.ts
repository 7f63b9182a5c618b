// How `toolhost audit` prints call records: a stable JSON shape (documented in
// docs/audit.md) and an aligned table for people.
import type { CallRecord } from './call-record.js';
import { formatTable, type Column, type TableOptions } from '../terminal/table.js';

/** One record of `toolhost audit --json`; times are ISO 8601 UTC. Stable: documented in docs/audit.md. */
export interface AuditJsonRecord {
  id: string;
  sessionId: string;
  /** The authenticated principal over HTTP; null on stdio. */
  principal: string | null;
  hostId: string;
  tool: string;
  argsHash: string;
  sideEffect: string | null;
  decision: string;
  rule: string | null;
  approval: string | null;
  idempotencyKey: string | null;
  status: string;
  errorCode: string | null;
  resultHash: string | null;
  resultBytes: number | null;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
  reconciliation: string | null;
  reconciledAt: string | null;
  /** Network attempts of the call (egress proxy, ctx.fetch); null for records older than the count. */
  egress: { admitted: number; refused: number } | null;
  /** sha256 hex of the merged policy in force; null for records older than the field. */
  policyDigest: string | null;
  /** sha256 hex of the tool's definition; null for an unknown tool and older records. */
  definitionDigest: string | null;
  /** Who approved the call: `client`, `operator` (see approverName), or null (nobody). */
  approvedBy: string | null;
  approverName: string | null;
  /** The redacted, bounded arguments (JSON text) under `journal.arguments: redacted`; else null. */
  arguments: string | null;
}

/** The --json form of a record. */
export function toAuditJson(record: CallRecord): AuditJsonRecord {
  return {
    id: record.id,
    sessionId: record.sessionId,
    principal: record.principal,
    hostId: record.hostId,
    tool: record.tool,
    argsHash: record.argsHash,
    sideEffect: record.sideEffect,
    decision: record.decision,
    rule: record.rule,
    approval: record.approval,
    idempotencyKey: record.idempotencyKey,
    status: record.status,
    errorCode: record.errorCode,
    resultHash: record.resultHash,
    resultBytes: record.resultBytes,
    startedAt: new Date(record.startedAt).toISOString(),
    endedAt: record.endedAt === null ? null : new Date(record.endedAt).toISOString(),
    durationMs: record.endedAt === null ? null : record.endedAt - record.startedAt,
    reconciliation: record.reconciliation,
    reconciledAt: record.reconciledAt === null ? null : new Date(record.reconciledAt).toISOString(),
    egress: record.egressAdmitted === null || record.egressRefused === null ? null : { admitted: record.egressAdmitted, refused: record.egressRefused },
    policyDigest: record.policyDigest,
    definitionDigest: record.definitionDigest,
    approvedBy: record.approvedBy,
    approverName: record.approverName,
    arguments: record.arguments,
  };
}

// RULE is free text that wraps on a narrow terminal; ids and names are never cut.
const COLUMNS: readonly Column[] = [
  { header: 'STARTED' },
  { header: 'ID' },
  { header: 'PRINCIPAL' },
  { header: 'TOOL' },
  { header: 'STATUS' },
  { header: 'CODE' },
  { header: 'DECISION' },
  { header: 'RULE', wrap: true },
  { header: 'MS', align: 'right' },
];

/** A table of calls, newest first: aligned on a terminal (default), tab-separated in a pipe. */
export function formatAuditTable(records: readonly CallRecord[], options: TableOptions = { tty: true }): string {
  if (records.length === 0) return '(no calls match)\n';
  const rows = records.map((record) =>
    [
      new Date(record.startedAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      record.id,
      record.principal ?? '-',
      record.tool,
      record.reconciliation === 'rerun' ? 'interrupted (rerun)' : record.status,
      record.errorCode ?? '',
      record.decision + (record.approval === 'approved' ? ` (approved by ${record.approverName ?? record.approvedBy ?? 'client'})` : ''),
      record.rule ?? '',
      record.endedAt === null ? '' : String(record.endedAt - record.startedAt),
    ].map(cell),
  );
  return formatTable(COLUMNS, rows, options);
}

// Cells come from manifests, policies and callers: no control characters reach the terminal.
function cell(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}
