// stdout's file descriptor 1 is not the protocol channel (SPEC section 3.1): a
// first-party worker tool that writes a forged JSON-RPC response to fd 1 (and
// through process.stdout) cannot reach the client. Proven with a real client,
// whose own next request id the forgery answers, and with raw pipes, where
// stdout must hold protocol lines only and the forgery lands on stderr. With a
// real client, stderr is a socket: fd 1 then discards (a socket cannot be reopened).
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { MARKER_ENV, makeHostDirs, startClient, stopClient, until, waitForExit, type HostClient, type HostDirs, type RawHost } from '../helpers/host-session.js';

const FIXTURES = join(REPO_ROOT, 'test/e2e/fixtures/fd1');
const POLICY = `kind: Policy
name: fd1
trust:
  firstParty: ["${FIXTURES}/**"]
sandbox:
  community: [isolate, process_namespace]
`;

beforeAll(() => ensureBuilt(), 300_000);

let dirs: HostDirs | undefined;
let client: HostClient | undefined;
let raw: RawHost | undefined;
afterEach(async () => {
  if (client && dirs) await stopClient(client, dirs);
  raw?.kill('SIGKILL');
  dirs?.cleanup();
  client = undefined;
  raw = undefined;
  dirs = undefined;
});

describe('a worker tool writing to fd 1', () => {
  it("never reaches a real client: the call gets the host's own answer", async () => {
    dirs = makeHostDirs({ policy: POLICY, manifests: [FIXTURES] });
    client = await startClient(dirs, { kind: 'v2-legacy' });
    // The SDK numbers requests from 0: initialize, tools/call is the next.
    const result = await client.callTool({ name: 'forge_fd1', arguments: { id: 1 } });
    expect(result['isError']).not.toBe(true);
    expect(JSON.parse((result['content'] as Array<{ text: string }>)[0]?.text ?? '')).toEqual({ wrote: true });
    await (client.raw as unknown as { ping(): Promise<unknown> }).ping();
  });

  it('leaves stdout holding protocol lines only; the forged lines land on stderr (a file here)', async () => {
    dirs = makeHostDirs({ policy: POLICY, manifests: [FIXTURES] });
    // stderr as a file: a socket cannot be reopened, and fd 1 would then discard instead.
    const stderrFile = join(dirs.root, 'stderr.log');
    // Appending, like the host's second descriptor for it (reopened through /proc).
    const stderrFd = openSync(stderrFile, 'a');
    const host = spawn(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'serve', ...dirs.args], {
      env: { ...process.env, [MARKER_ENV]: dirs.marker },
      stdio: ['pipe', 'pipe', stderrFd],
    });
    closeSync(stderrFd);
    raw = host as unknown as RawHost;
    const output = { lines: [] as string[] };
    let partial = '';
    host.stdout?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      output.lines.push(...parts);
    });
    const stderrText = () => readFileSync(stderrFile, 'utf8');
    const send = (message: unknown) => host.stdin?.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await until(() => output.lines.length > 0, 'the initialize answer');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'forge_fd1', arguments: { id: 2 } } });
    await until(() => output.lines.some((line) => (JSON.parse(line) as { id?: unknown }).id === 2), 'the call answer', 20_000);
    await until(() => stderrText().includes('FORGED via process.stdout'), 'the forged lines on stderr', 10_000);
    host.stdin?.end();
    expect(await waitForExit(raw)).toEqual({ code: 0, signal: null });
    const messages = output.lines.map((line) => JSON.parse(line) as { id?: unknown; result?: { content?: Array<{ text?: string }> } });
    expect(messages.every((message) => !JSON.stringify(message).includes('FORGED'))).toBe(true);
    const answer = messages.find((message) => message.id === 2);
    expect(JSON.parse(answer?.result?.content?.[0]?.text ?? '')).toEqual({ wrote: true });
    expect(stderrText()).toContain('"text":"FORGED"');
  });
});
