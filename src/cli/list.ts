// `toolhost list [--json]`: every tool with its class, sandbox, trust and the
// policy's decision. A table on a terminal, tab-separated columns in a pipe,
// or the documented JSON array with --json.
import { HOST_FLAGS_HELP, parseCommandArgs } from './args.js';
import { loadConfigWithServersFromFlags, printProblems } from './host-config-flags.js';
import { formatServerReports, serverProblems } from './server-report.js';
import { formatTable, tableOptionsFor, type Column } from '../terminal/table.js';
import { classLabel, sandboxLabel, summarizeTool, type ToolSummary } from './tool-summary.js';
import { describeMemory, machineMemoryHold } from './memory-hold.js';

const HELP = `Usage: toolhost list [--json] [host flags]

Every tool that loaded, in name order, with its side-effect class, sandbox,
trust, whether tools/list shows it, and the policy's decision with its rule.
Excluded and denied tools are shown too (LISTED no). An upstream server's tools
come from toolhost.lock's pins when pinning is in force, else from starting it.

  --json   a JSON array, one object per tool (fields documented in docs/cli.md:
           name, file, sideEffect, mode, isolation, trust, listed, excluded,
           decision, code, rule, reason, shadow, limits, memory, terminal,
           upstream)

Exit status: 0, or 1 when a manifest or policy file has a problem (printed on
stderr; the tools that did load are still listed), 2 bad usage.

${HOST_FLAGS_HELP}
`;

const COLUMNS: readonly Column[] = [
  { header: 'NAME' },
  { header: 'CLASS' },
  { header: 'SANDBOX' },
  { header: 'TRUST', optional: true },
  { header: 'LISTED', optional: true },
  { header: 'DECISION' },
  { header: 'RULE', wrap: true },
];

export async function run(argv: readonly string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { json: { type: 'boolean' } }, 0);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const config = await loadConfigWithServersFromFlags(values);
  const unavailable = serverProblems(config.servers);
  printProblems(config.problems);
  printProblems(unavailable);
  const hold = machineMemoryHold();
  const summaries = [...config.tools.values()].map((view) => summarizeTool(view, hold));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(summaries, null, 2)}\n`);
  } else {
    process.stdout.write(formatTable(COLUMNS, summaries.map(toRow), tableOptionsFor(process.stdout)));
    // Where no memory controller can be used, memoryMb means something else: say so for the tools it affects.
    const capped = summaries.filter((summary) => summary.memory.heldBy === 'address_space').map((summary) => summary.name);
    if (capped.length > 0) process.stdout.write(`\nmemoryMb of ${capped.join(', ')}: ${describeMemory(hold)}\n`);
    if (config.servers.length > 0) process.stdout.write(`\n${formatServerReports(config.servers)}`);
  }
  return config.problems.length + unavailable.length > 0 ? 1 : 0;
}

function toRow(summary: ToolSummary): string[] {
  const decision = summary.excluded ? 'excluded' : summary.code ? `deny (${summary.code})` : summary.decision;
  const shadow = summary.shadow ? `; shadow would ${summary.shadow.decision}: ${summary.shadow.rule}` : '';
  return [
    summary.name,
    classLabel(summary),
    sandboxLabel(summary),
    summary.trust === 'first_party' ? 'first party' : 'community',
    summary.listed ? 'yes' : 'no',
    decision,
    `${summary.rule ?? '-'}${shadow}`,
  ];
}
