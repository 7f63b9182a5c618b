// The egress proxy's per-call byte bound (SPEC 3.2, limits.maxBytes): through a
// real grant on its Unix socket and loopback servers, a call whose tunnelled
// traffic passes the bound is cut, in either direction; the bytes are counted,
// the limit is logged once per call, later connections of that call get
// nothing through, and the next call starts with a fresh budget.
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEgressGrant, type EgressGrant } from '../../../../src/runner/bwrap/egress-grant.js';
import type { EgressAttempt } from '../../../../src/runner/run-types.js';
import { recordingLogger, type RecordingLogger } from '../../../helpers/recording-logger.js';
import { pollUntil } from '../../../helpers/wait.js';

const MAX_BYTES = 256 * 1024;
const FLOOD_BYTES = 4 * 1024 * 1024;
const ESTABLISHED = 'HTTP/1.1 200 Connection Established\r\n\r\n';

interface Served {
  server: Server;
  port: number;
  /** Bytes each accepted connection received, and whether it was closed. */
  connections: Array<{ received: number; isClosed: boolean }>;
  sockets: Set<Socket>;
}

/** A loopback server; `onSocket` gives each connection its behaviour. */
async function serve(onSocket: (socket: Socket) => void): Promise<Served> {
  const connections: Served['connections'] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const entry = { received: 0, isClosed: false };
    connections.push(entry);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => (entry.received += chunk.length));
    socket.on('close', () => (entry.isClosed = true));
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, connections, sockets };
}

interface Tunnel {
  socket: Socket;
  /** Bytes after the proxy's 200 head. */
  received(): number;
  established(): boolean;
  closed(): boolean;
}

function openTunnel(socketPath: string, port: number): Tunnel {
  const socket = connect(socketPath);
  let text = Buffer.alloc(0);
  let isClosed = false;
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => (text = Buffer.concat([text, chunk])));
  socket.on('close', () => (isClosed = true));
  socket.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  const established = () => text.subarray(0, ESTABLISHED.length).toString('latin1') === ESTABLISHED;
  return { socket, established, received: () => (established() ? text.length - ESTABLISHED.length : 0), closed: () => isClosed };
}

const waitFor = (what: () => boolean): Promise<boolean> => pollUntil(() => ({ done: what(), value: what() }), 30_000);

describe('the egress proxy bounds the bytes of a call (maxBytes)', () => {
  let flood: Served;
  let echo: Served;
  let sink: Served;
  let grant: EgressGrant;
  let log: RecordingLogger;
  const attempts: EgressAttempt[] = [];
  const open: Socket[] = [];

  beforeEach(async () => {
    // Writes far more than the bound as soon as a connection arrives.
    flood = await serve((socket) => socket.write(Buffer.alloc(FLOOD_BYTES, 0x61)));
    echo = await serve((socket) => socket.pipe(socket));
    sink = await serve(() => undefined);
    log = recordingLogger('info');
    attempts.length = 0;
    grant = await openEgressGrant({
      allow: [`127.0.0.1:${flood.port}`, `127.0.0.1:${echo.port}`, `127.0.0.1:${sink.port}`],
      readOnly: false,
      logger: log.logger,
      limits: { maxBytes: MAX_BYTES },
    });
    grant.attach((attempt) => attempts.push(attempt));
  });

  afterEach(async () => {
    for (const socket of open.splice(0)) socket.destroy();
    await grant.close();
    for (const served of [flood, echo, sink]) {
      for (const socket of served.sockets) socket.destroy();
      await new Promise((resolve) => served.server.close(resolve));
    }
  });

  const tunnel = (port: number): Tunnel => {
    const opened = openTunnel(grant.socketPath, port);
    open.push(opened.socket);
    return opened;
  };
  const byteLimitLines = () => log.lines().filter((line) => line['egressLimit'] === 'bytes');

  it('cuts a download past the bound: the client gets at most maxBytes, the upstream is closed, the limit is logged once', { timeout: 120_000 }, async () => {
    const down = tunnel(flood.port);
    expect(await waitFor(() => down.closed())).toBe(true);
    expect(down.established()).toBe(true);
    expect(down.received()).toBeLessThanOrEqual(MAX_BYTES);
    expect(await waitFor(() => flood.connections[0]?.isClosed === true)).toBe(true);
    const counts = grant.counts();
    expect(counts.admitted).toBe(1);
    // The chunk that crossed the bound is counted, not forwarded.
    expect(counts.bytesIn + counts.bytesOut).toBeGreaterThan(MAX_BYTES);
    expect(counts.bytesIn).toBeLessThan(FLOOD_BYTES);
    expect(byteLimitLines()).toHaveLength(1);
    expect(byteLimitLines()[0]).toMatchObject({ level: 40, limits: { maxBytes: MAX_BYTES } });

    // The call's budget is spent: another tunnel of the same call is admitted but carries nothing.
    const again = tunnel(echo.port);
    expect(await waitFor(() => again.established())).toBe(true);
    again.socket.write('ping');
    expect(await waitFor(() => again.closed())).toBe(true);
    expect(again.received()).toBe(0);
    expect(echo.connections[0]?.received ?? 0).toBe(0);
    expect(byteLimitLines()).toHaveLength(1);
    expect(attempts.map((attempt) => [attempt.kind, attempt.port, attempt.admitted])).toEqual([
      ['connect', flood.port, true],
      ['connect', echo.port, true],
    ]);

    // The next call gets a budget of its own.
    grant.attach((attempt) => attempts.push(attempt));
    expect(grant.counts()).toEqual({ admitted: 0, refused: 0, bytesOut: 0, bytesIn: 0 });
    const fresh = tunnel(echo.port);
    expect(await waitFor(() => fresh.established())).toBe(true);
    fresh.socket.write('ping');
    expect(await waitFor(() => fresh.received() === 4)).toBe(true);
    expect(fresh.closed()).toBe(false);
    expect(grant.counts()).toMatchObject({ admitted: 1, bytesOut: 4, bytesIn: 4 });
  });

  it('cuts an upload past the bound: the upstream receives at most maxBytes and the tunnel is closed', { timeout: 120_000 }, async () => {
    const up = tunnel(sink.port);
    expect(await waitFor(() => up.established())).toBe(true);
    up.socket.write(Buffer.alloc(1024 * 1024, 0x62));
    expect(await waitFor(() => up.closed())).toBe(true);
    expect(await waitFor(() => sink.connections[0]?.isClosed === true)).toBe(true);
    expect(sink.connections[0]!.received).toBeLessThanOrEqual(MAX_BYTES);
    const counts = grant.counts();
    expect(counts.bytesOut).toBeGreaterThan(MAX_BYTES);
    expect(counts.bytesIn).toBe(0);
    expect(byteLimitLines()).toHaveLength(1);
  });
});
