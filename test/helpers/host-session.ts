// Shared setup of the e2e tests: a temporary workspace and state folder, an
// organisation policy, and the built host started with the e2e fixture
// manifests. Every host is tagged with a unique marker in its environment so
// a test can prove, from /proc, that nothing it started outlives it.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { BUILT_MAIN, REPO_ROOT, connectStdioClient, type ClientOptions, type TestClient } from './mcp-clients.js';
import { findMarkedProcesses, newMarker, waitForNoMarkedProcesses } from './proc-scan.js';

export const FIXTURE_MANIFESTS = join(REPO_ROOT, 'test/e2e/fixtures/manifests');
export const MARKER_ENV = 'TOOLHOST_E2E_MARKER';

/** The e2e organisation policy: `forbidden_*` tools are denied by name. */
export const E2E_POLICY = `kind: Policy
name: e2e
tools:
  deny: ["forbidden_*"]
`;

export interface HostDirs {
  readonly root: string;
  readonly workspace: string;
  readonly stateDir: string;
  readonly policyFile: string;
  /** A unique string in the host's environment. */
  readonly marker: string;
  readonly args: readonly string[];
  cleanup(): void;
}

/** A fresh workspace, state folder and policy for one host. */
export function makeHostDirs(options: { policy?: string; manifests?: readonly string[]; extraArgs?: readonly string[] } = {}): HostDirs {
  const root = mkdtempSync(join(tmpdir(), 'toolhost-e2e-'));
  const workspace = join(root, 'workspace');
  const stateDir = join(root, 'state');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'notes.txt'), 'first line\nsecond line\n');
  const policyFile = join(root, 'org-policy.yaml');
  writeFileSync(policyFile, options.policy ?? E2E_POLICY);
  const manifests = options.manifests ?? [FIXTURE_MANIFESTS];
  return {
    root,
    workspace,
    stateDir,
    policyFile,
    marker: newMarker('e2e'),
    args: [...manifests.flatMap((dir) => ['--manifests', dir]), '--policy', policyFile, '--workspace', workspace, '--state', stateDir, ...(options.extraArgs ?? [])],
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export type HostClient = TestClient & { pid: number | null; stderrText: () => string };

/** The built host over real stdio, driven by a real SDK client. */
export async function startClient(dirs: HostDirs, options: ClientOptions): Promise<HostClient> {
  return connectStdioClient({ args: dirs.args, env: { [MARKER_ENV]: dirs.marker } }, options);
}

/** Closes the client (which ends the host's stdin) and proves the host and its children are gone. */
export async function stopClient(client: HostClient | undefined, dirs: HostDirs): Promise<void> {
  await client?.close().catch(() => undefined);
  const left = await waitForNoMarkedProcesses(dirs.marker);
  if (left.length > 0) {
    for (const { pid } of left) killQuietly(pid);
    throw new Error(`processes outlived the host: ${left.map((entry) => `${entry.pid} ${entry.cmdline}`).join('; ')}`);
  }
}

export type RawHost = ChildProcessByStdio<Writable, Readable, Readable>;

/** Spawns the built host with plain pipes, for tests that speak raw lines. */
export function spawnRawHost(dirs: HostDirs): RawHost {
  return spawn(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'serve', ...dirs.args], {
    env: { ...process.env, [MARKER_ENV]: dirs.marker },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Collects stdout as complete lines and stderr as text. */
export function collectOutput(host: RawHost): { lines: string[]; stderr: () => string; rawStdout: () => Buffer } {
  const lines: string[] = [];
  const chunks: Buffer[] = [];
  let partial = '';
  let stderr = '';
  host.stdout.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    partial += chunk.toString('utf8');
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  host.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return { lines, stderr: () => stderr, rawStdout: () => Buffer.concat(chunks) };
}

/** Resolves with the exit code (or signal) once the process has exited. */
export function waitForExit(child: RawHost): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

export { until } from './wait.js';

export { findMarkedProcesses, waitForNoMarkedProcesses };

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Counts the notifications/tools/list_changed the client receives; read the count with the returned function. */
export async function countToolListChanges(client: HostClient): Promise<() => number> {
  let changes = 0;
  const raw = client.raw as { setNotificationHandler: (...args: unknown[]) => void };
  if (client.kind === 'v1-legacy') {
    const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    raw.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
  } else {
    raw.setNotificationHandler('notifications/tools/list_changed', () => void changes++);
  }
  return () => changes;
}
