// `toolhost fuzz TOOL [--count N]`: valid arguments and near misses generated
// from the tool's input schema, sent through the real supervisor. Valid ones
// must reach the tool (whatever it then answers); near misses must be refused
// with invalid_arguments by the very check tools/call uses. The tool runs for
// real, so by default it runs against a scratch workspace that holds only a
// copy of the workspace's policies/.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { createHost } from '../host.js';
import { serverOfTool } from '../host-servers.js';
import { createSilentLogger } from '../log.js';
import { generateCases } from '../fuzz/generate.js';
import { CallControl } from '../supervisor/call-control.js';
import { SessionCounters } from '../supervisor/session-counters.js';
import type { ApprovalChannel, CallOutcome } from '../supervisor/types.js';
import { HOST_FLAGS_HELP, hostFlagsFrom, parseCommandArgs, UsageError, type HostFlags } from './args.js';

const HELP = `Usage: toolhost fuzz TOOL [--count N] [--seed S] [--approve] [--in-place] [--json] [host flags]

Generates N valid argument sets (default 50) and near misses (missing required,
extra property, wrong type, out of enum, one past a length or range boundary)
from TOOL's input schema and sends each through the supervisor.
  --approve    approve calls the policy asks approval for (otherwise they stop there)
  --in-place   run against the real --workspace instead of a scratch copy
  --json       print the report as JSON
Exit 0 when every valid set reached the tool and every near miss was refused
with invalid_arguments; 1 otherwise.

${HOST_FLAGS_HELP}
`;

/**
 * Outcomes that prove the call got past every check and ran. `model_error` is the tool
 * itself refusing (SPEC 5.1): it reached the tool as surely as a result did.
 */
const REACHED_TOOL = new Set(['model_error', 'timeout', 'memory_limit', 'output_limit', 'tool_error', 'tool_crashed', 'invalid_output']);

interface FuzzReport {
  readonly tool: string;
  readonly seed: number;
  readonly valid: { readonly total: number; readonly reached: number };
  readonly invalid: { readonly total: number; readonly refused: number };
  readonly failures: readonly { readonly kind: 'valid' | 'invalid'; readonly args: unknown; readonly mutation?: string; readonly outcome: string }[];
}

export async function run(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    { count: { type: 'string' }, seed: { type: 'string' }, approve: { type: 'boolean' }, 'in-place': { type: 'boolean' }, json: { type: 'boolean' } },
    1,
  );
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [tool] = positionals;
  if (tool === undefined) throw new UsageError('missing TOOL');
  const count = positiveInt(values.count, 50, '--count');
  const seed = positiveInt(values.seed, 1, '--seed');
  const flags = hostFlagsFrom(values);
  const scratch = mkdtempSync(join(tmpdir(), 'toolhost-fuzz-'));
  // Trust is decided from where a manifest lives relative to the workspace, so
  // the scratch workspace mirrors the policies/ folder and every manifest
  // folder inside the workspace at the same relative paths.
  const target = values['in-place'] ? { ...flags } : mirrorWorkspace(flags, join(scratch, 'workspace'));
  try {
    const report = await fuzzTool({ ...target, stateDir: join(scratch, 'state') }, tool, count, seed, values.approve === true);
    if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else printReport(report);
    return report.failures.length === 0 ? 0 : 1;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Runs the generated cases through a real host and classifies each outcome. */
export async function fuzzTool(
  flags: { manifestDirs: readonly string[]; policyFiles: readonly string[]; workspace: string; stateDir: string },
  tool: string,
  count: number,
  seed: number,
  approve: boolean,
): Promise<FuzzReport> {
  const host = await createHost({ ...flags, logger: createSilentLogger(), onlyServers: serverOfTool(tool) });
  try {
    const view = host.config.tools.get(tool);
    if (!view) throw new UsageError(`unknown tool "${tool}"; available: ${[...host.config.tools.keys()].join(', ')}`);
    const cases = generateCases(view.manifest.input, count, seed);
    if (cases.ungenerated.length > 0) {
      throw new UsageError(`cannot generate a value for required ${cases.ungenerated.join(', ')} (a pattern or format): add "examples" to its schema`);
    }
    const approval: ApprovalChannel = approve ? { kind: 'elicitation', elicit: async () => ({ action: 'accept', content: { approve: true } }) } : { kind: 'none' };
    // Each case is its own session: a terminal tool's success, or a run of failures, must
    // not turn the cases after it into call_limit refusals (SPEC 5.2).
    const call = (args: unknown) =>
      host.supervisor
        .callTool({ name: tool, args, meta: {}, control: new CallControl(), approval, caller: { principal: null, counters: new SessionCounters() } })
        .then(describeOutcome);
    const failures: FuzzReport['failures'][number][] = [];
    let reached = 0;
    for (const args of cases.valid) {
      const outcome = await call(args);
      if (outcome === 'result' || REACHED_TOOL.has(outcome)) reached++;
      else failures.push({ kind: 'valid', args, outcome });
    }
    let refused = 0;
    for (const miss of cases.invalid) {
      const outcome = await call(miss.args);
      if (outcome === 'invalid_arguments') refused++;
      else failures.push({ kind: 'invalid', args: miss.args, mutation: miss.mutation, outcome });
    }
    return { tool, seed, valid: { total: cases.valid.length, reached }, invalid: { total: cases.invalid.length, refused }, failures };
  } finally {
    await host.close();
  }
}

/** A scratch workspace with the same policies and manifest folders at the same relative paths. */
export function mirrorWorkspace(flags: HostFlags, workspace: string): HostFlags {
  mkdirSync(workspace, { recursive: true });
  const copyInside = (path: string): string => {
    const inside = relative(flags.workspace, path);
    if (inside.startsWith('..') || isAbsolute(inside) || !existsSync(path)) return path;
    cpSync(path, join(workspace, inside), { recursive: true });
    return join(workspace, inside);
  };
  copyInside(join(flags.workspace, 'policies'));
  return { ...flags, workspace, manifestDirs: flags.manifestDirs.map(copyInside) };
}

/** `result`, `input_required`, `model_error` (a tool_error the tool chose), or the error code. */
export function describeOutcome(outcome: CallOutcome): string {
  if (outcome.kind === 'result') return 'result';
  if (outcome.kind === 'input_required') return 'input_required';
  if (outcome.error.code === 'tool_error' && outcome.error.details['modelError'] === true) return 'model_error';
  return outcome.error.code;
}

function printReport(report: FuzzReport): void {
  const out = process.stdout;
  out.write(`fuzz ${report.tool} (seed ${report.seed})\n`);
  out.write(`  valid:       ${report.valid.reached}/${report.valid.total} reached the tool\n`);
  out.write(`  near misses: ${report.invalid.refused}/${report.invalid.total} refused with invalid_arguments\n`);
  for (const failure of report.failures.slice(0, 20)) {
    const what = failure.kind === 'valid' ? 'valid arguments stopped' : `near miss (${failure.mutation}) not refused`;
    out.write(`  FAIL ${what}: ${failure.outcome} ${JSON.stringify(failure.args).slice(0, 200)}\n`);
  }
  if (report.failures.length > 20) out.write(`  … and ${report.failures.length - 20} more\n`);
}

function positiveInt(value: unknown, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new UsageError(`${flag} must be a positive integer`);
  return number;
}
