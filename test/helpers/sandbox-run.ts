// Runs real bubblewrap argvs from buildSandboxArgv, tags every process with a
// marker in its environment, and proves with /proc scans that none survive.
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect } from 'vitest';
import { runToCompletion } from '../../src/runner/process/spawn.js';
import { findMarkedProcesses, newMarker, waitForNoMarkedProcesses, type MarkedProcess } from './proc-scan.js';
import { makeTempDir, type TempDir } from './temp-dir.js';
import type { RunSpec } from '../../src/runner/types.js';
import { buildSandboxArgv, type SandboxArgvOptions } from '../../src/runner/bwrap/argv.js';
import { runSpec } from './run-spec.js';
import { useProcessServices } from './process-services.js';

export const FIXTURES_DIR = realpathSync(fileURLToPath(new URL('../fixtures/tools/sandbox/', import.meta.url)));
export const PROBE_PY = join(FIXTURES_DIR, 'probe.py');
export const STORM_SH = join(FIXTURES_DIR, 'storm.sh');
export const MARKER_VARIABLE = 'TOOLHOST_TEST_MARKER';

/** The sandbox services of the test file importing this harness (closed after its tests). */
export const sandboxServices = useProcessServices();

/** How a test asks for a sandbox: the argv options, with this file's services unless it names others. */
export type SandboxRunOptions = Omit<SandboxArgvOptions, 'services'> & { readonly services?: SandboxArgvOptions['services'] };

/** A process-tool spec running the probe fixture with the host's PATH (pyenv's python3 here). */
export function probeSpec(marker: string, overrides: Partial<RunSpec> = {}): RunSpec {
  return runSpec({
    name: 'sandbox_probe',
    mode: 'process',
    manifestDir: FIXTURES_DIR,
    command: ['python3', PROBE_PY],
    memoryMb: 512,
    isolation: 'namespace',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C.UTF-8', [MARKER_VARIABLE]: marker },
    ...overrides,
  });
}

export interface SandboxRun {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `[...buildSandboxArgv(spec, opts), ...spec.command]` the way the runner does:
 * through the spawner, its own process group, three pipes, and spec.env as bubblewrap's whole environment.
 */
export function runSandboxed(spec: RunSpec, opts: SandboxRunOptions, stdin = ''): Promise<SandboxRun> {
  return runPrefix(buildSandboxArgv(spec, { services: sandboxServices, ...opts }), spec, stdin);
}

/** Runs an already built prefix followed by spec.command, through the spawner and the start gate. */
export async function runPrefix(prefix: readonly string[], spec: RunSpec, stdin = ''): Promise<SandboxRun> {
  const run = await runToCompletion([...prefix, ...(spec.command ?? [])], spec.env, '/', stdin, 120_000, sandboxServices);
  if (run.exit.kind === 'spawn_failed') throw new Error(`spawn failed: ${run.exit.errorCode}`);
  return { exitCode: run.exit.exitCode, signal: run.exit.signal, stdout: run.stdout, stderr: run.stderr };
}

export type ProbeResult = { ok: unknown } | { error: string };

/** Runs the probe fixture with `ops` and returns one result per op. */
export async function runProbe(spec: RunSpec, opts: SandboxRunOptions, ops: readonly Record<string, unknown>[]): Promise<ProbeResult[]> {
  const run = await runSandboxed(spec, opts, JSON.stringify({ ops }));
  if (run.exitCode !== 0) throw new Error(`probe exited ${String(run.exitCode)}/${String(run.signal)}: ${run.stderr}`);
  return JSON.parse(run.stdout) as ProbeResult[];
}

/** Pids of live processes whose environment or command line carries `marker` (this process excluded). */
export function findMarkedPids(marker: string): number[] {
  return findMarkedProcesses(marker).map((found) => found.pid);
}

/** Polls until no process carries `marker` (bounded, 10 s by default); returns the survivors, SIGKILLed, if any. */
export function waitForNoMarkedProcessesOrKill(marker: string, deadlineMs = 10_000): Promise<MarkedProcess[]> {
  return waitForNoMarkedProcesses(marker, deadlineMs, { killSurvivors: true });
}

/** One sandbox test's marker and workspace, both fresh for each test. */
export interface SandboxTest {
  readonly marker: string;
  /** A real, symlink-resolved temporary folder. */
  readonly workspace: { readonly path: string };
}

/**
 * The hooks of a sandbox test: a new marker and workspace (named by `workspacePrefix`) before
 * each test, and with `hostSecret` that variable set to `secret-<marker>` in the host's own
 * environment (a secret no tool may see); after it, the variable and workspace go and no process
 * carrying the marker may be left (bounded poll; survivors are SIGKILLed, so a failure does not
 * leak into the next test).
 */
export function useSandboxTest(workspacePrefix: string, options: { readonly hostSecret?: string } = {}): SandboxTest {
  let marker = newMarker('sandbox');
  let workspace: TempDir | undefined;
  beforeEach(() => {
    marker = newMarker('sandbox');
    workspace = makeTempDir(workspacePrefix);
    if (options.hostSecret !== undefined) process.env[options.hostSecret] = `secret-${marker}`;
  });
  afterEach(async () => {
    if (options.hostSecret !== undefined) delete process.env[options.hostSecret];
    workspace?.remove();
    workspace = undefined;
    expect(await waitForNoMarkedProcessesOrKill(marker)).toEqual([]);
  });
  return {
    get marker() {
      return marker;
    },
    get workspace() {
      if (workspace === undefined) throw new Error('the sandbox workspace exists only inside a test');
      return workspace;
    },
  };
}
