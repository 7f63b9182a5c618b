// Floods the host must not absorb (SPEC sections 2.1 and 3.1): a server whose
// listing grows to about 10 MB after tools/list_changed. The host lists it
// again, checks and classifies it, and puts its tools in force, while `ping`
// goes on being answered: the worst ping round trip during the flood is a
// liveness check with a generous bound, not a benchmark.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { countToolListChanges, makeHostDirs, startClient, stopClient, until, type HostClient, type HostDirs } from '../helpers/host-session.js';

beforeAll(() => ensureBuilt(), 300_000);

const FIXTURES = join(REPO_ROOT, 'test/e2e/fixtures/floods');
/** Generous: a liveness bound on a shared, loaded machine, far above the listing's JSON.parse and far below a host that checks the listing in one turn. */
const MAX_PING_MS = 2_000;

describe('a 10 MB listing after tools/list_changed', () => {
  let dirs: HostDirs;
  let client: HostClient | undefined;

  beforeAll(() => {
    dirs = makeHostDirs({ manifests: [FIXTURES], policy: 'kind: Policy\nname: floods\n' });
  });
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
  }, 60_000);

  it('is listed and classified while ping keeps being answered', async () => {
    client = await startClient(dirs, { kind: 'v2-legacy' });
    expect((await client.listTools()).tools.map((tool) => tool['name'])).toEqual(['flood__grow']);
    const changes = await countToolListChanges(client);
    const raw = client.raw as { ping(): Promise<unknown> };
    const pings: number[] = [];
    let isFlooding = true;
    const pinging = (async () => {
      while (isFlooding) {
        const sentMs = performance.now();
        await raw.ping();
        pings.push(performance.now() - sentMs);
      }
    })();
    await client.callTool({ name: 'flood__grow', arguments: {} });
    await until(() => changes() > 0, 'notifications/tools/list_changed', 120_000);
    isFlooding = false;
    await pinging;
    const names = (await client.listTools()).tools.map((tool) => String(tool['name']));
    expect(names).toContain('flood__t_359');
    expect(names).toHaveLength(361);
    expect(pings.length).toBeGreaterThan(0);
    expect(Math.max(...pings)).toBeLessThan(MAX_PING_MS);
  }, 180_000);
});
