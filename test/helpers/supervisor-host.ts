// Builds real hosts (real runners, real SQLite) on temporary folders around the
// fixture manifests of test/fixtures/supervisor, with a generated organisation
// policy that makes the fixtures first party.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { waitForNoMarkedProcesses } from './proc-scan.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHost, type Host, type HostOptions } from '../../src/host.js';
import { createSilentLogger } from '../../src/log.js';
import { CallControl } from '../../src/supervisor/call-control.js';
import type { ApprovalChannel, CallOutcome, CallRequest } from '../../src/supervisor/types.js';

export const FIXTURE_MANIFESTS = fileURLToPath(new URL('../fixtures/supervisor/manifests', import.meta.url));

export interface TestHost extends Host {
  readonly root: string;
  readonly workspace: string;
  readonly stateDir: string;
  /** One call with sensible defaults (no approval channel, a fresh signal). */
  call(name: string, args?: unknown, extra?: Partial<CallRequest>): Promise<CallOutcome>;
}

export interface TestHostOptions {
  /** Extra YAML lines for the organisation policy (after kind, name and trust). */
  readonly policy?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly host?: Partial<HostOptions>;
  /** Reuse these folders (a second host on the same state). */
  readonly root?: string;
  /** Tags every process the fixtures start (env SUPERVISOR_TEST_MARKER), for the /proc scan. */
  readonly marker?: string;
  /** More organisation policy files (full YAML text each), after the generated one. */
  readonly extraPolicies?: readonly string[];
  /** Manifest folders instead of the supervisor fixtures; they are first party too. */
  readonly manifestDirs?: readonly string[];
}

const live = new Set<TestHost>();

/** A host over the fixture manifests in a fresh temporary folder. */
export async function startHost(options: TestHostOptions = {}): Promise<TestHost> {
  const root = options.root ?? mkdtempSync(join(tmpdir(), 'toolhost-supervisor-'));
  const workspace = join(root, 'ws');
  const stateDir = join(root, 'state');
  mkdirSync(workspace, { recursive: true });
  const manifestDirs = options.manifestDirs ?? [FIXTURE_MANIFESTS];
  const policyFile = join(root, 'org.yaml');
  writeFileSync(
    policyFile,
    [
      'kind: Policy',
      'name: supervisor-tests',
      'trust:',
      `  firstParty: [${manifestDirs.map((dir) => `"${dir}/**"`).join(', ')}]`,
      'tools:',
      '  deny: ["forbidden"]',
      'env:',
      '  allow: [PATH, SUPERVISOR_TEST_MARKER]',
      options.policy ?? '',
      '',
    ].join('\n'),
  );
  const extraFiles = (options.extraPolicies ?? []).map((text, index) => {
    const file = join(root, `extra-${index}.yaml`);
    writeFileSync(file, text);
    return file;
  });
  const host = await createHost({
    manifestDirs: [...manifestDirs],
    policyFiles: [policyFile, ...extraFiles],
    workspace,
    stateDir,
    logger: createSilentLogger(),
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      ...(options.marker !== undefined ? { SUPERVISOR_TEST_MARKER: options.marker } : {}),
      ...options.env,
    },
    ...options.host,
  });
  const testHost: TestHost = {
    ...host,
    root,
    workspace,
    stateDir,
    call: (name, args = {}, extra = {}) => host.supervisor.callTool({ name, args, meta: {}, control: new CallControl(), approval: NONE, ...extra }),
    close: async () => {
      live.delete(testHost);
      await host.close();
    },
  };
  live.add(testHost);
  return testHost;
}

/** Closes every host still open and removes its folder. */
export async function closeAllHosts(): Promise<void> {
  const hosts = [...live];
  live.clear();
  await Promise.all(hosts.map((host) => host.close()));
  for (const host of hosts) rmSync(host.root, { recursive: true, force: true });
}

export const NONE: ApprovalChannel = { kind: 'none' };

/** The error of an outcome, failing the test when it is not one. */
export function errorOf(outcome: CallOutcome) {
  if (outcome.kind !== 'error') throw new Error(`expected an error outcome, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

/** The result of an outcome, failing the test when it is not one. */
export function resultOf(outcome: CallOutcome) {
  if (outcome.kind !== 'result') {
    const why = outcome.kind === 'error' ? `${outcome.error.code}: ${outcome.error.message} ${JSON.stringify(outcome.error.details)}` : outcome.kind;
    throw new Error(`expected a result, got ${why}`);
  }
  return outcome;
}

/** The text of the first content block. */
export function textOf(outcome: CallOutcome): string {
  const block = resultOf(outcome).content[0];
  if (block?.type !== 'text') throw new Error('first block is not text');
  return block.text;
}

/** Polls until no process carries the marker (in its environment or argv), or the deadline passes; returns the survivors' pids. */
export async function waitForNoProcesses(marker: string, deadlineMs = 15_000): Promise<number[]> {
  return (await waitForNoMarkedProcesses(marker, deadlineMs)).map((found) => found.pid);
}
