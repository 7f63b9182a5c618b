// `toolhost doctor`: which sandboxes this machine supports, and why not
// (SPEC section 8). Every check runs the real thing; exit 0 when everything the
// bundled tools need works, 1 otherwise. The --json shape is stable (docs/sandboxing.md).
import { createRequire } from 'node:module';
import { parseCommandArgs } from './args.js';
import { checkIsolateProcess, runSandboxChecks, type DoctorCheck } from '../runner/index.js';

/** The stable `--json` document. */
interface DoctorReport {
  /** True when no check failed (warnings allowed): the exit code is 0. */
  readonly ok: boolean;
  readonly checks: readonly DoctorCheck[];
}

const HELP = `Usage: toolhost doctor [--json] [--bwrap PATH]

Checks which sandboxes this machine supports: isolated-vm and the isolate
process (isolate tools run there: it starts, has namespaces of its own, its
memory cap),
bubblewrap with pid/ipc/uts/net/mount/user namespaces, prlimit and a pids
cgroup (resource limits), the memory cgroup that holds memoryMb (or the
address-space fallback, and why), python3 inside the namespace sandbox, the
seccomp filter in force there (and the calls it refuses), and the egress
bridge (socat) to the host's egress proxy.
Exit 0 when everything the bundled tools need works, 1 otherwise.

Options:
  --json         print the report as one JSON document
  --bwrap PATH   check this bubblewrap binary instead of bwrap on PATH
  -h, --help     show this help
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { json: { type: 'boolean' }, bwrap: { type: 'string' } }, 0, { config: false });
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const report = await buildDoctorReport(typeof values.bwrap === 'string' ? values.bwrap : undefined);
  process.stdout.write(values.json === true ? `${JSON.stringify(report, null, 2)}\n` : renderReport(report));
  return report.ok ? 0 : 1;
}

/** All checks: isolated-vm first, then the OS sandbox. */
export async function buildDoctorReport(bwrapPath?: string): Promise<DoctorReport> {
  const checks = [await checkIsolatedVm(), await checkIsolateProcess(bwrapPath), ...(await runSandboxChecks(bwrapPath === undefined ? {} : { bwrapPath }))];
  return { ok: checks.every((check) => check.status !== 'fail'), checks };
}

function renderReport(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((check) => check.name.length));
  const lines = report.checks.map((check) => `  ${check.status.padEnd(4)}  ${check.name.padEnd(width)}  ${check.detail}`);
  const verdict = report.ok ? 'Every sandbox the bundled tools need works here.' : 'Some sandboxes do not work here: tools that need them fail with sandbox_unavailable.';
  return `toolhost doctor\n${lines.join('\n')}\n${verdict}\n`;
}

// Loads the addon and runs code in a tiny isolate: a build that loads but cannot run is no use.
async function checkIsolatedVm(): Promise<DoctorCheck> {
  let version: string | null = null;
  try {
    const require = createRequire(import.meta.url);
    version = (require('isolated-vm/package.json') as { version?: string }).version ?? null;
    const ivm = (await import('isolated-vm')).default;
    const isolate = new ivm.Isolate({ memoryLimit: 8 });
    try {
      const context = await isolate.createContext();
      const result: unknown = await context.eval('6 * 7', { timeout: 1000 });
      if (result !== 42) throw new Error(`an isolate computed ${String(result)}`);
    } finally {
      isolate.dispose();
    }
    return { name: 'isolated-vm', status: 'ok', detail: `isolated-vm ${version ?? '?'} loads and runs code (isolate tools work)`, facts: { loads: true, version } };
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    const hint = /snapshot/i.test(reason ?? '') ? ' (start node with --no-node-snapshot)' : ' (rebuild it: npm rebuild isolated-vm; needs python3, make and a C++ compiler)';
    return { name: 'isolated-vm', status: 'fail', detail: `isolate tools cannot run: ${reason ?? 'unknown error'}${hint}`, facts: { loads: false, version } };
  }
}
