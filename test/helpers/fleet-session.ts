// Shared setup of the fleet e2e tests: N built hosts ("machines") that share
// one workspace (so a tool's effects can be counted in one file) and one
// PostgreSQL journal, each with a state folder of its own.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILT_MAIN, REPO_ROOT, connectStdioClient, type ClientKind, type ClientOptions } from './mcp-clients.js';
import { newMarker, waitForNoMarkedProcesses } from './proc-scan.js';
import { E2E_POLICY, FIXTURE_MANIFESTS, MARKER_ENV, type HostClient, type RawHost } from './host-session.js';

export const FLEET_MANIFESTS = join(REPO_ROOT, 'test/e2e/fixtures/fleet-manifests');

export interface Fleet {
  readonly root: string;
  readonly workspace: string;
  readonly marker: string;
  /** serve args of host `name` on `journalUrl` (its own state folder). */
  argsFor(name: string, journalUrl: string, extra?: readonly string[]): string[];
  /** Connects a client to a new host process. */
  start(
    name: string,
    journalUrl: string,
    options?: { env?: Record<string, string>; kind?: ClientKind; extra?: readonly string[] } & Pick<ClientOptions, 'elicit' | 'elicitations'>,
  ): Promise<HostClient>;
  /** A host with raw pipes (for SIGKILL tests). */
  spawnRaw(name: string, journalUrl: string, env?: Record<string, string>): RawHost;
  /** Runs the built CLI (audit, reconcile, approvals, approve) and returns its output. */
  cli(args: readonly string[], env?: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }>;
  cleanup(): Promise<void>;
}

/** A workspace, a policy and a marker for hosts that share one journal. */
export function makeFleet(policy = E2E_POLICY): Fleet {
  const root = mkdtempSync(join(tmpdir(), 'toolhost-fleet-'));
  const workspace = join(root, 'workspace');
  mkdirSync(workspace);
  const policyFile = join(root, 'org-policy.yaml');
  writeFileSync(policyFile, policy);
  const marker = newMarker('fleet');
  const clients: HostClient[] = [];
  const raws: RawHost[] = [];
  const argsFor = (name: string, journalUrl: string, extra: readonly string[] = []) => [
    '--manifests',
    FIXTURE_MANIFESTS,
    '--manifests',
    FLEET_MANIFESTS,
    '--policy',
    policyFile,
    '--workspace',
    workspace,
    '--state',
    join(root, `state-${name}`),
    '--journal',
    journalUrl,
    '--no-watch',
    ...extra,
  ];
  return {
    root,
    workspace,
    marker,
    argsFor,
    async start(name, journalUrl, options = {}) {
      const client = await connectStdioClient(
        { args: argsFor(name, journalUrl, options.extra), env: { [MARKER_ENV]: marker, ...options.env } },
        {
          kind: options.kind ?? 'v2-legacy',
          ...(options.elicit ? { elicit: options.elicit } : {}),
          ...(options.elicitations ? { elicitations: options.elicitations } : {}),
        },
      );
      clients.push(client);
      return client;
    },
    spawnRaw(name, journalUrl, env = {}) {
      const child = spawn(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'serve', ...argsFor(name, journalUrl)], {
        env: { ...process.env, [MARKER_ENV]: marker, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      raws.push(child);
      return child;
    },
    cli(args, env = {}) {
      return new Promise((resolve) => {
        const child = spawn(process.execPath, ['--no-node-snapshot', BUILT_MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.once('exit', (code) => resolve({ code, stdout, stderr }));
      });
    },
    async cleanup() {
      for (const client of clients.splice(0)) await client.close().catch(() => undefined);
      for (const raw of raws.splice(0)) if (raw.exitCode === null && raw.signalCode === null) raw.kill('SIGKILL');
      const left = await waitForNoMarkedProcesses(marker);
      rmSync(root, { recursive: true, force: true });
      if (left.length > 0) throw new Error(`processes outlived the fleet: ${left.map((entry) => `${entry.pid} ${entry.cmdline}`).join('; ')}`);
    },
  };
}

/** Sends the legacy opening of a raw session (initialize, initialized). */
export function openRawSession(host: RawHost): void {
  host.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`,
  );
  host.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
}
