// A host killed mid-call (SIGKILL: no cleanup at all) leaves a journaled,
// non-read-only call behind. The next host on the same state folder finds it
// interrupted, and a repeat of that idempotency key is refused with
// interrupted_side_effect until an operator reconciles it (SPEC section 7).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/mcp-clients.js';
import { waitForMarkedProcesses, waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { collectOutput, makeHostDirs, spawnRawHost, startClient, stopClient, until, waitForExit, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

describe('a host killed mid-call', () => {
  let dirs: HostDirs;
  beforeAll(async () => {
    await ensureBuilt();
    dirs = makeHostDirs();
  }, 300_000);
  afterAll(() => dirs.cleanup());

  it('the next host refuses the same idempotency key with interrupted_side_effect', async () => {
    const marker = `${dirs.marker}-writer`;
    const args = { marker };
    const first = spawnRawHost(dirs);
    const output = collectOutput(first);
    first.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`,
    );
    await until(() => output.lines.length > 0, 'the initialize answer');
    first.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    first.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_writer', arguments: args, _meta: { idempotencyKey: 'deploy-1' } } })}\n`,
    );
    expect((await waitForMarkedProcesses(marker, 2)).length).toBe(2);
    first.kill('SIGKILL');
    await waitForExit(first);
    // The sandbox dies with its host: nothing of the call survives.
    expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);

    const client = await startClient(dirs, { kind: 'v2-legacy' });
    try {
      const error = wireErrorOf(await client.callTool({ name: 'slow_writer', arguments: args, _meta: { idempotencyKey: 'deploy-1' } }));
      expect(error.code).toBe('interrupted_side_effect');
      expect(await waitForNoMarkedProcesses(marker, 1_000)).toEqual([]);
    } finally {
      await stopClient(client, dirs);
    }
  });
});
