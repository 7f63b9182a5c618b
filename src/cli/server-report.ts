// How validate and list show upstream servers (SPEC section 2.1): per server,
// each tool with its listed name, class and the `tools:` entry it came from,
// the server's own annotations as unverified hints, and every excluded tool
// with its reason; or why the server could not be started, with the last
// lines of its stderr (redacted and bounded where they were read).
import type { Problem } from '../config/problem.js';
import type { ServerReport } from '../registry/server-tools.js';
import { formatStderrLines } from '../runner/index.js';

/** Lines for people, one block per server. */
export function formatServerReports(reports: readonly ServerReport[]): string {
  let out = '';
  for (const report of reports) {
    out += `server ${report.server} (${report.displayFile})`;
    if (report.unavailable !== undefined) {
      out += `${report.isExcludedByPolicy === true ? ': excluded by the policy' : ': not available'}: ${report.unavailable}${stderrBlock(report)}\n`;
      continue;
    }
    out += `: ${report.tools.filter((tool) => tool.excluded === undefined).length} of ${report.tools.length} tools offered${report.truncated ? ' (listing cut: the server lists too many tools)' : ''}\n`;
    for (const tool of report.tools) {
      const name = tool.listed ?? `(${tool.upstream})`;
      const origin = tool.entry !== undefined ? `tools: "${tool.entry}"` : 'no tools: entry';
      const hints = tool.hints ? `; server hints (unverified): ${JSON.stringify(tool.hints)}` : '';
      out += tool.excluded !== undefined ? `  ${name}  excluded: ${tool.excluded}${hints}\n` : `  ${name}  ${tool.sideEffect ?? 'unclassified'} (${origin})${hints}\n`;
    }
  }
  return out;
}

/** A server that could not be started is a load problem naming its manifest (validate fails on it). */
export function serverProblems(reports: readonly ServerReport[]): Problem[] {
  return reports.flatMap((report) =>
    // A server the policy excludes is in the exclusions already, with its rule.
    report.unavailable !== undefined && report.isExcludedByPolicy !== true
      ? [{ file: report.displayFile, line: 1, col: 1, reason: `server "${report.server}" is not available: ${report.unavailable}${stderrBlock(report)}` }]
      : [],
  );
}

/**
 * Every upstream tool that is not offered for a reason other than `hidden: true` (its name
 * does not fit or collides, its schema is unsafe, its name holds a secret): validate fails
 * on these, at the tools: entry that matched it, so a tool never disappears unnoticed.
 */
export function excludedToolProblems(reports: readonly ServerReport[]): Problem[] {
  return reports.flatMap((report) =>
    report.tools.flatMap((tool) =>
      tool.excluded !== undefined && tool.isHidden !== true
        ? [
            {
              file: report.displayFile,
              line: tool.line,
              col: tool.col,
              reason: `server "${report.server}": tool "${tool.upstream}" is not offered: ${tool.excluded} (if that is meant, say so with hidden: true in its tools: entry)`,
            },
          ]
        : [],
    ),
  );
}

// The last lines of its stderr, indented under the sentence that says it did not start.
function stderrBlock(report: ServerReport): string {
  const lines = report.stderrLines ?? [];
  return lines.length === 0 ? '' : `; the last lines of its stderr:${formatStderrLines(lines)}`;
}
