// How an operator reads approvals (SPEC section 7.2): the stable `--json`
// shape of `toolhost approvals`, and its text for people: a header row per
// approval, then what it is for, the arguments one line each and the projected
// effect, every value escaped (control and invisible characters shown as
// escapes) and bounded, since callers and files control them.
import { escapeInvisible } from '../config/escape-text.js';
import type { ApprovalRecord, ProjectedWrite } from './approval-record.js';

/** Characters of one argument line. */
const MAX_ARGUMENT_LINE_CHARS = 200;
/** Diff lines shown per written path in the terminal (the console and --json hold the whole bounded diff). */
const MAX_TERMINAL_DIFF_LINES = 40;

/** The stable --json shape of one approval (documented in docs/audit.md). Times are ISO 8601. */
export function toApprovalJson(approval: ApprovalRecord): Record<string, unknown> {
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
    hostId: approval.hostId,
    arguments: approval.arguments,
    effects: approval.effects,
    note: approval.note,
    decidedVia: approval.decidedVia,
  };
}

/** One line per top-level argument, `name: JSON value`, escaped and bounded. */
export function argumentLines(args: unknown): string[] {
  if (args === null || args === undefined) return ['(not kept: approvals journaled before arguments were)'];
  if (typeof args !== 'object' || Array.isArray(args)) return [bounded(JSON.stringify(args) ?? 'null')];
  const entries = Object.entries(args as Record<string, unknown>);
  if (entries.length === 0) return ['(none)'];
  return entries.map(([name, value]) => bounded(`${escapeInvisible(name)}: ${escapeInvisible(JSON.stringify(value) ?? 'null')}`));
}

/** How long ago `thenMs` was, or how long until it, in whole units: `45s`, `3m`, `2h 5m`, `4d 1h`. */
export function formatSpan(ms: number): string {
  const seconds = Math.max(0, Math.floor(Math.abs(ms) / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours}h` : `${hours}h ${minutes % 60}m`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days}d` : `${days}d ${hours % 24}h`;
}

/** `in 57m`, or `expired 3m ago`. */
export function formatExpiry(expiresAt: number, now: number): string {
  return expiresAt > now ? `in ${formatSpan(expiresAt - now)}` : `expired ${formatSpan(now - expiresAt)} ago`;
}

/** The lines of one projected write for a terminal: the path and summary, then the diff, escaped, at most MAX_TERMINAL_DIFF_LINES. */
function effectTextLines(write: ProjectedWrite, maxDiffLines = MAX_TERMINAL_DIFF_LINES): string[] {
  const lines = [bounded(`${escapeInvisible(write.path ?? `(${write.argument})`)}: ${escapeInvisible(write.summary)}`)];
  if (write.diff === null) return lines;
  const diff = write.diff.split('\n');
  for (const line of diff.slice(0, maxDiffLines)) lines.push(bounded(escapeInvisible(line)));
  if (diff.length > maxDiffLines) lines.push(`… ${diff.length - maxDiffLines} more lines of the diff (toolhost approvals --json, or the console)`);
  return lines;
}

/**
 * The approvals for a terminal: a header row, one row per approval, then a block
 * per approval with its rule, arguments, projected effect, decision and the
 * command that decides it. `journalFlags` go into that command.
 */
export function formatApprovalsText(approvals: readonly ApprovalRecord[], options: { readonly now: number; readonly all: boolean; readonly journalFlags: string }): string {
  if (approvals.length === 0) return options.all ? 'no approvals\n' : 'no pending approvals\n';
  const headers = ['ID', 'STATE', 'TOOL', 'CLASS', 'PRINCIPAL', 'AGE', 'EXPIRES', ...(options.all ? ['DECIDED'] : [])];
  const rows = approvals.map((a) =>
    [
      a.id,
      a.state,
      a.tool,
      a.sideEffect ?? 'unclassified',
      a.principal ?? '-',
      formatSpan(options.now - a.createdAt),
      a.state === 'pending' ? formatExpiry(a.expiresAt, options.now) : '-',
      ...(options.all ? [a.decidedBy === null ? '-' : `${a.state === 'denied' ? 'denied' : 'approved'} by ${a.decidedBy}`] : []),
    ].map(cell),
  );
  const blocks = approvals.map((a) => detailBlock(a, options));
  return `${alignedTable(headers, rows)}\n${blocks.join('\n')}`;
}

function detailBlock(a: ApprovalRecord, options: { readonly now: number; readonly journalFlags: string }): string {
  const lines: string[] = [`${a.id}  ${cell(a.tool)} (${cell(a.sideEffect ?? 'unclassified')}), ${a.state}`];
  const field = (name: string, values: readonly string[]): void => {
    values.forEach((value, index) => lines.push(`  ${(index === 0 ? name : '').padEnd(10)} ${value}`));
  };
  field('rule', [cell(a.rule ?? '(built-in)')]);
  field('asked by', [`${cell(a.principal ?? 'a stdio session')} (session ${cell(a.sessionId)}${a.hostId ? `, host ${cell(a.hostId)}` : ''}, call ${cell(a.callId)})`]);
  field('asked', [`${iso(a.createdAt)} (${formatSpan(options.now - a.createdAt)} ago), expires ${iso(a.expiresAt)} (${formatExpiry(a.expiresAt, options.now)})`]);
  field('arguments', argumentLines(a.arguments));
  field('sha256', [a.argsHash]);
  if (a.effects !== null && a.effects.length > 0)
    field(
      'writes',
      a.effects.flatMap((write) => effectTextLines(write)),
    );
  if (a.decidedBy !== null && a.decidedAt !== null) {
    const note = a.note ? `: "${bounded(escapeInvisible(a.note))}"` : '';
    field('decided', [`${a.state === 'denied' ? 'denied' : 'approved'} by ${cell(a.decidedBy)} at ${iso(a.decidedAt)}${a.decidedVia ? ` (${cell(a.decidedVia)})` : ''}${note}`]);
  }
  if (a.spentBy !== null && a.spentAt !== null) field('ran', [`call ${cell(a.spentBy)} at ${iso(a.spentAt)}`]);
  if (a.state === 'pending' && a.expiresAt > options.now) {
    const flags = options.journalFlags === '' ? '' : ` ${options.journalFlags}`;
    field('decide', [`toolhost approve ${a.id}${flags} --as NAME   (or --deny)`]);
  }
  return `${lines.join('\n')}\n`;
}

function alignedTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (row: readonly string[]): string =>
    row
      .map((value, column) => value.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return `${[headers, ...rows].map(line).join('\n')}\n`;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

// A table cell: escaped and short.
function cell(value: string): string {
  const escaped = escapeInvisible(value);
  return escaped.length > 64 ? `${escaped.slice(0, 63)}…` : escaped;
}

function bounded(text: string): string {
  return text.length > MAX_ARGUMENT_LINE_CHARS ? `${text.slice(0, MAX_ARGUMENT_LINE_CHARS - 1)}…` : text;
}
