// serve answers `initialize` before its host is built (src/cli/serve.ts), shown
// on the built binary with a journal that cannot open: a PostgreSQL URL whose
// "server" accepts the connection and never says a word. Until it hangs up, the
// host cannot be ready (it opens its journal before it serves anything), so an
// `initialize` answered meanwhile was answered first: the order is shown, not
// timed. When it hangs up the host fails to start: the requests held get an
// error that says so, a cancelled one nothing, and serve exits 1 as it always
// did, with the same words on stderr.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, connectStdioClient, type ClientKind } from '../helpers/mcp-clients.js';
import { MARKER_ENV, collectOutput, makeHostDirs, spawnRawHost, until, waitForExit, type HostDirs } from '../helpers/host-session.js';
import { waitForNoMarkedProcesses } from '../helpers/proc-scan.js';

beforeAll(() => ensureBuilt(), 300_000);

/** A TCP server that takes connections and never answers. */
interface SilentServer {
  readonly port: number;
  readonly sockets: Socket[];
  /** Hangs up on every connection. */
  hangUp(): void;
  close(): Promise<void>;
}

async function startSilentServer(): Promise<SilentServer> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    socket.on('error', () => undefined);
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    sockets,
    hangUp: () => sockets.forEach((socket) => socket.destroy()),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let silent: SilentServer | undefined;
let dirs: HostDirs | undefined;
afterEach(async () => {
  silent?.hangUp();
  await silent?.close();
  if (dirs) await waitForNoMarkedProcesses(dirs.marker);
  dirs?.cleanup();
  silent = undefined;
  dirs = undefined;
});

function hostWithSilentJournal(server: SilentServer): HostDirs {
  return makeHostDirs({ extraArgs: ['--journal', `postgres://toolhost@127.0.0.1:${server.port}/toolhost`] });
}

type Message = { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };

describe('serve with a journal that never opens', () => {
  it('a raw client: initialize answered, the held requests answered with the failure (a cancelled one not), exit 1', async () => {
    silent = await startSilentServer();
    dirs = hostWithSilentJournal(silent);
    const host = spawnRawHost(dirs);
    const output = collectOutput(host);
    const parsed = () => output.lines.map((line) => JSON.parse(line) as Message);
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } },
    ];
    host.stdin.write(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    await until(() => parsed().length > 0, 'the initialize answer', 60_000);
    expect(parsed()[0]).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18', serverInfo: { name: 'toolhost' } } });
    // The host is opening its journal, which has not answered: nothing else can have been answered.
    await until(() => silent!.sockets.length > 0, 'the journal connection', 60_000);
    expect(parsed()).toHaveLength(1);
    silent.hangUp();
    expect((await waitForExit(host)).code).toBe(1);
    const messages = parsed();
    expect(messages.map((message) => message.id)).toEqual([1, 2]);
    expect(messages[1]!.error).toMatchObject({ code: -32603, data: { code: 'internal', reason: 'host_not_started' } });
    expect(messages[1]!.error!.message).toContain('toolhost did not start');
    expect(output.stderr()).toContain('Cannot use the PostgreSQL journal');
  }, 120_000);

  it.each<ClientKind>(['v1-legacy', 'v2-legacy', 'v2-modern'])(
    'a %s client: connected before the host is ready (legacy), then refused',
    async (kind) => {
      silent = await startSilentServer();
      dirs = hostWithSilentJournal(silent);
      const connecting = connectStdioClient({ args: dirs.args, env: { [MARKER_ENV]: dirs.marker } }, { kind });
      if (kind === 'v2-modern') {
        // server/discover is the SDK's to answer: it waits for the host, and gets the failure (the client reports its own words).
        connecting.catch(() => undefined);
        await until(() => silent!.sockets.length > 0, 'the journal connection', 60_000);
        silent.hangUp();
        await expect(connecting).rejects.toThrow();
        return;
      }
      const client = await connecting;
      try {
        const listing = client.listTools();
        listing.catch(() => undefined);
        await until(() => silent!.sockets.length > 0, 'the journal connection', 60_000);
        silent.hangUp();
        await expect(listing).rejects.toThrow(/did not start/);
      } finally {
        await client.close().catch(() => undefined);
      }
    },
    120_000,
  );
});
