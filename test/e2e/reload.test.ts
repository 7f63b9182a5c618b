// SIGHUP reloads manifests and policies while serving: the client hears
// notifications/tools/list_changed and lists the new set; a configuration that
// does not load is refused and the previous tools stay in force. With
// --no-watch, files changed without a SIGHUP change nothing (watching is
// tested in watch-reload.test.ts).
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/mcp-clients.js';
import { FIXTURE_MANIFESTS, countToolListChanges, makeHostDirs, startClient, stopClient, until, type HostClient, type HostDirs } from '../helpers/host-session.js';

describe.each(['v1-legacy', 'v2-legacy'] as const)('reload on SIGHUP (--no-watch) with a %s client', (kind) => {
  let dirs: HostDirs;
  let client: HostClient;
  let manifests: string;
  let changes: () => number = () => 0;

  beforeAll(async () => {
    await ensureBuilt();
    manifests = mkdtempSync(join(tmpdir(), 'toolhost-e2e-manifests-'));
    for (const file of ['echo.yaml', 'echo.js']) cpSync(join(FIXTURE_MANIFESTS, file), join(manifests, file));
    dirs = makeHostDirs({ manifests: [manifests], extraArgs: ['--no-watch'] });
    client = await startClient(dirs, { kind });
    changes = await countToolListChanges(client);
  }, 300_000);
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
    rmSync(manifests, { recursive: true, force: true });
  });

  it('a new manifest is listed after SIGHUP and notifications/tools/list_changed, not before', async () => {
    expect((await client.listTools()).tools.map((tool) => tool['name'])).toEqual(['echo']);
    const before = changes();
    writeFileSync(
      join(manifests, 'echo_again.yaml'),
      'name: echo_again\ndescription: Echo, added while serving.\nsideEffect: read_only\ntimeoutMs: 20000\nsandbox:\n  mode: isolate\nentry: ./echo.js\ninput: { type: object }\n',
    );
    expect((await client.listTools()).tools.map((tool) => tool['name'])).toEqual(['echo']);
    process.kill(client.pid!, 'SIGHUP');
    await until(() => changes() > before, 'notifications/tools/list_changed', 15_000);
    expect((await client.listTools()).tools.map((tool) => tool['name'])).toEqual(['echo', 'echo_again']);
    const result = await client.callTool({ name: 'echo_again', arguments: { x: 1 } });
    expect(result['structuredContent']).toEqual({ echo: { x: 1 } });
  });

  it('a policy that denies a tool, added to the workspace, takes it off the list', async () => {
    const before = changes();
    mkdirSync(join(dirs.workspace, 'policies'), { recursive: true });
    writeFileSync(join(dirs.workspace, 'policies/deny.yaml'), 'kind: Policy\nname: deny-again\ntools:\n  deny: ["echo_again"]\n');
    process.kill(client.pid!, 'SIGHUP');
    await until(() => changes() > before, 'notifications/tools/list_changed', 15_000);
    expect((await client.listTools()).tools.map((tool) => tool['name'])).toEqual(['echo']);
  });

  it('a change that does not load is refused: the previous tools stay', async () => {
    writeFileSync(join(manifests, 'broken.yaml'), 'name: broken\nunknownKey: true\n');
    process.kill(client.pid!, 'SIGHUP');
    // The refused reload reports the file's problems on stderr, as startup does.
    await until(() => /broken\.yaml:\d+:\d+: /.test(client.stderrText()), 'the refused reload', 15_000);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'still' } });
    expect(result['structuredContent']).toEqual({ echo: { text: 'still' } });
    expect((await client.listTools()).tools.map((tool) => tool['name'])).toEqual(['echo']);
  });
});
