// Live reload by watching files (issue 8.3): a change to a manifest folder or a
// policy file swaps the tools and the policy and sends
// notifications/tools/list_changed; a change that does not load keeps the old
// ones and logs why; a call in flight finishes under the definition it started
// with. Driven through the built host and real SDK clients.
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/mcp-clients.js';
import { E2E_POLICY, FIXTURE_MANIFESTS, countToolListChanges, makeHostDirs, startClient, stopClient, until, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

// Waits in the workspace (its working directory) until the test releases it, then names its version.
const GATE_PY = `import json, os, sys, time
json.load(sys.stdin)
with open("gate-started", "w") as handle:
    handle.write("1")
deadline = time.time() + 15
while not os.path.exists("gate-release") and time.time() < deadline:
    time.sleep(0.02)
print(json.dumps({"version": sys.argv[1]}))
`;

function gateYaml(version: string): string {
  return `name: gate
description: Gate ${version}.
sideEffect: local_mutation
timeoutMs: 20000
sandbox:
  mode: process
  command: ["python3", "./gate.py", "${version}"]
  stdout: json
  isolation: namespace
workspace:
  roots:
    - path: \${WORKSPACE}
      access: read_write
input: { type: object, additionalProperties: false }
`;
}

describe.each(['v1-legacy', 'v2-legacy', 'v2-modern'] as const)('reload by watching files, with a %s client', (kind) => {
  let dirs: HostDirs;
  let client: HostClient;
  let manifests: string;
  let logDir: string;
  let logFile: string;
  let changes: () => number = () => 0;

  const names = async (): Promise<string[]> => (await client.listTools()).tools.map((tool) => String(tool['name']));
  const descriptionOf = async (name: string): Promise<unknown> => (await client.listTools()).tools.find((tool) => tool['name'] === name)?.['description'];
  const nextChange = async (what: string): Promise<void> => {
    const before = changes();
    await until(() => changes() > before, `notifications/tools/list_changed after ${what}`, 15_000);
  };

  beforeAll(async () => {
    await ensureBuilt();
    manifests = mkdtempSync(join(tmpdir(), 'toolhost-e2e-watch-'));
    logDir = mkdtempSync(join(tmpdir(), 'toolhost-e2e-watch-log-'));
    logFile = join(logDir, 'host.log');
    for (const file of ['echo.yaml', 'echo.js']) cpSync(join(FIXTURE_MANIFESTS, file), join(manifests, file));
    writeFileSync(join(manifests, 'gate.yaml'), gateYaml('v1'));
    writeFileSync(join(manifests, 'gate.py'), GATE_PY);
    dirs = makeHostDirs({ manifests: [manifests], extraArgs: ['--log-file', logFile] });
    try {
      client = await startClient(dirs, { kind });
      changes = await countToolListChanges(client);
      // The 2026-07-28 era delivers change notifications only on a subscriptions/listen stream.
      if (kind === 'v2-modern') {
        const subscription = await (client.raw as { listen: (filter: Record<string, unknown>) => Promise<{ honoredFilter: unknown }> }).listen({ toolsListChanged: true });
        expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
      }
    } catch (error) {
      // Once seen on a loaded machine ("Connection closed" while connecting): the host's log says why.
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-6000) : '(no log written)';
      throw new Error(`the ${kind} client could not start: ${error instanceof Error ? error.message : String(error)}\nthe host's log ends:\n${log}`, { cause: error });
    }
  }, 300_000);
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
    rmSync(manifests, { recursive: true, force: true });
    rmSync(logDir, { recursive: true, force: true });
  });

  it('an edited description is announced and listed', async () => {
    expect(await names()).toEqual(['echo', 'gate']);
    const changed = nextChange('editing echo.yaml');
    writeFileSync(
      join(manifests, 'echo.yaml'),
      readFileSync(join(FIXTURE_MANIFESTS, 'echo.yaml'), 'utf8').replace('description: Return the arguments.', 'description: Echo, edited while serving.'),
    );
    await changed;
    expect(await descriptionOf('echo')).toBe('Echo, edited while serving.');
  });

  it('a new manifest file is listed and callable', async () => {
    const changed = nextChange('adding echo_again.yaml');
    writeFileSync(
      join(manifests, 'echo_again.yaml'),
      'name: echo_again\ndescription: Echo, added while serving.\nsideEffect: read_only\ntimeoutMs: 20000\nsandbox:\n  mode: isolate\nentry: ./echo.js\ninput: { type: object }\n',
    );
    await changed;
    expect(await names()).toEqual(['echo', 'echo_again', 'gate']);
    const result = await client.callTool({ name: 'echo_again', arguments: { x: 1 } });
    expect(result['structuredContent']).toEqual({ echo: { x: 1 } });
  });

  it('an invalid manifest is refused: no notification, the old tools still served, the reason logged', async () => {
    const before = changes();
    writeFileSync(join(manifests, 'broken.yaml'), 'name: broken\nunknownKey: true\n');
    const logged = (): boolean =>
      existsSync(logFile) &&
      readFileSync(logFile, 'utf8')
        .split('\n')
        .some((line) => line.includes('configuration problem') && line.includes('broken.yaml'));
    await until(logged, 'the refused reload in the log file', 15_000);
    // stderr is another pipe: its copy of the problem may arrive after the log line.
    await until(() => /broken\.yaml:\d+:\d+: /.test(client.stderrText()), 'the refused reload on stderr', 15_000);
    const problem = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes('broken.yaml'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)[0];
    expect(problem).toMatchObject({ msg: 'configuration problem', line: expect.any(Number), reason: expect.any(String) });
    expect(await names()).toEqual(['echo', 'echo_again', 'gate']);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'still' } }))['structuredContent']).toEqual({ echo: { text: 'still' } });
    expect(changes()).toBe(before);
    // Fixing it reloads again.
    const changed = nextChange('removing broken.yaml');
    unlinkSync(join(manifests, 'broken.yaml'));
    await changed;
    expect(await names()).toEqual(['echo', 'echo_again', 'gate']);
  });

  it('a call in flight during a reload finishes under its old definition', async () => {
    const started = join(dirs.workspace, 'gate-started');
    const release = join(dirs.workspace, 'gate-release');
    rmSync(started, { force: true });
    rmSync(release, { force: true });
    const inFlight = client.callTool({ name: 'gate', arguments: {} }, { timeout: 30_000 });
    await until(() => existsSync(started), 'the gate tool to start', 15_000);
    const changed = nextChange('editing gate.yaml');
    writeFileSync(join(manifests, 'gate.yaml'), gateYaml('v2'));
    await changed;
    expect(await descriptionOf('gate')).toBe('Gate v2.');
    writeFileSync(release, '1');
    expect((await inFlight)['structuredContent']).toEqual({ version: 'v1' });
    expect((await client.callTool({ name: 'gate', arguments: {} }, { timeout: 30_000 }))['structuredContent']).toEqual({ version: 'v2' });
  });

  it('a tightened policy file takes a tool off the list and its calls are policy_denied', async () => {
    const changed = nextChange('denying echo_again in the organisation policy');
    writeFileSync(dirs.policyFile, E2E_POLICY.replace('deny: ["forbidden_*"]', 'deny: ["forbidden_*", "echo_again"]'));
    await changed;
    expect(await names()).toEqual(['echo', 'gate']);
    const error = wireErrorOf(await client.callTool({ name: 'echo_again', arguments: {} }));
    expect(error.code).toBe('policy_denied');
    expect(String(error['rule'])).toContain('tools.deny');
  });
});
