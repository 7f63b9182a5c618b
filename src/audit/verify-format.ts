// How `toolhost audit verify` prints its report for people: the verdict first,
// then the first break, the chains and what an auditor should know.
import type { VerifyReport } from './verify-journal.js';

/** The report as lines of text. */
export function formatVerifyReport(report: VerifyReport): string {
  const lines: string[] = [];
  const { counts } = report;
  if (report.firstBreak === null) {
    lines.push(`ok: ${report.chains.length} chains, ${counts.entries} entries, ${counts.calls} calls and ${counts.approvals} approvals verify`);
  } else {
    const found = report.firstBreak;
    const where = found.chain === null ? '' : ` (chain ${found.chain}${found.seq === null ? '' : `, entry ${found.seq}`})`;
    lines.push(`BROKEN: ${found.kind}: record ${found.recordId ?? '(unknown)'}${where}`);
    lines.push(`  ${found.detail}`);
    if (report.breaks.length > 1) lines.push(`  and ${report.breaks.length - 1} more break(s); --json lists them`);
  }
  if (counts.gaps > 0) lines.push(`gaps: ${counts.gaps} gap records say ${counts.lostRecords} records could not be written`);
  for (const chain of report.chains) {
    lines.push(
      `chain ${chain.id} (${chain.role ?? 'unknown'}, key ${chain.keyId ?? 'none'}): ${chain.entries} entries, ${chain.checkpoints} checkpoints, ${chain.closed ? 'closed' : 'open'}`,
    );
  }
  for (const warning of report.warnings) lines.push(`note: ${warning}`);
  return `${lines.map(clean).join('\n')}\n`;
}

// Details quote record ids a caller chose: no control characters reach the terminal.
function clean(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}
