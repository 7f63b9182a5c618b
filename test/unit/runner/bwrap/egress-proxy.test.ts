// The egress proxy on a real Unix socket: name lookups bounded, answers that
// are not public refused; with call tokens (an isolate process), requests
// without an open call's token refused, counts per call, the token echoed in
// refusals, and a closed call's tunnels cut.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_EGRESS_LIMITS, EgressProxy, MAX_LOOKUPS_IN_FLIGHT } from '../../../../src/runner/bwrap/egress-proxy.js';
import { pollUntil } from '../../../helpers/wait.js';
import type { EgressAttempt } from '../../../../src/runner/run-types.js';
import { until } from '../../../helpers/wait.js';

describe('EgressProxy', () => {
  it('runs at most MAX_LOOKUPS_IN_FLIGHT name lookups at once, and refuses each answer that is not public', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-proxy-unit-'));
    // Lookups are held until the test lets them go, so all six requests are waiting at once.
    const held: Array<() => void> = [];
    let mostInFlight = 0;
    const resolve = async (): Promise<string[]> => {
      await new Promise<void>((done) => {
        held.push(done);
        mostInFlight = Math.max(mostInFlight, held.length);
      });
      return ['10.0.0.1'];
    };
    const turns = async (count: number): Promise<void> => {
      for (let i = 0; i < count; i++) await new Promise((done) => setImmediate(done));
    };
    const attempts: EgressAttempt[] = [];
    const names = Array.from({ length: 6 }, (_, index) => `n${index}.test`);
    const proxy = new EgressProxy({ rules: { allow: names.map((name) => `${name}:80`), resolve }, limits: DEFAULT_EGRESS_LIMITS, onAttempt: (attempt) => attempts.push(attempt) });
    try {
      await proxy.listen(join(dir, 'proxy.sock'));
      const answered = Promise.all(
        names.map(
          (name) =>
            new Promise<string>((done) => {
              const socket = connect(join(dir, 'proxy.sock'));
              let text = '';
              socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
              socket.on('close', () => done(text));
              socket.write(`GET http://${name}/ HTTP/1.1\r\nHost: ${name}\r\n\r\n`);
            }),
        ),
      );
      // Release the held lookups a pair at a time, once every request had many turns to start one.
      let released = 0;
      while (released < names.length) {
        for (let i = 0; i < 1000 && held.length === 0; i++) await turns(1);
        await turns(50);
        expect(held.length).toBeLessThanOrEqual(MAX_LOOKUPS_IN_FLIGHT);
        released += held.length;
        for (const done of held.splice(0)) done();
      }
      const answers = await answered;
      expect(answers.every((text) => text.startsWith('HTTP/1.1 403') && text.includes('X-Toolhost-Refusal: address_private'))).toBe(true);
      expect(mostInFlight).toBe(MAX_LOOKUPS_IN_FLIGHT);
      expect(attempts.map((attempt) => attempt.reason)).toEqual(names.map(() => 'address_private'));
      expect(proxy.counts).toMatchObject({ admitted: 0, refused: 6 });
    } finally {
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['the default ledger', false],
    ["a call's ledger (requests naming its token)", true],
  ])('counts an attempt of %s before the head is admitted: connections still being admitted cannot pass maxAttempts', async (_, withToken) => {
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-proxy-unit-'));
    // Every lookup is held, so all ten connections are accepted and read before the first attempt is recorded.
    const held: Array<() => void> = [];
    const resolve = async (): Promise<string[]> => {
      await new Promise<void>((done) => held.push(done));
      return ['10.0.0.1'];
    };
    const attempts: EgressAttempt[] = [];
    const limits = { ...DEFAULT_EGRESS_LIMITS, maxAttempts: 4, maxConcurrent: 16 };
    const token = 'b'.repeat(32);
    const proxy = new EgressProxy({ rules: { allow: ['n.test:80'], resolve }, limits, onAttempt: (attempt) => attempts.push(attempt), requireCallToken: withToken });
    if (withToken) proxy.openCall(token, (attempt) => attempts.push(attempt));
    const authorization = withToken ? `Proxy-Authorization: Toolhost ${token}\r\n` : '';
    try {
      await proxy.listen(join(dir, 'proxy.sock'));
      let closed = 0;
      const answers = Promise.all(
        Array.from(
          { length: 10 },
          () =>
            new Promise<string>((done) => {
              const socket = connect(join(dir, 'proxy.sock'));
              let text = '';
              socket.on('error', () => undefined);
              socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
              socket.on('close', () => {
                closed++;
                done(text);
              });
              socket.write(`GET http://n.test/ HTTP/1.1\r\nHost: n.test\r\n${authorization}\r\n`);
            }),
        ),
      );
      // Past the limit, connections are closed unanswered while the first four wait for their lookups.
      await until(() => closed === 6 && held.length > 0, 'six connections closed unanswered');
      while (closed < 10) {
        for (const done of held.splice(0)) done();
        await new Promise((done) => setImmediate(done));
      }
      const texts = await answers;
      expect(texts.filter((text) => text.includes('X-Toolhost-Refusal: address_private'))).toHaveLength(4);
      expect(texts.filter((text) => text === '')).toHaveLength(6);
      expect(attempts).toHaveLength(4);
    } finally {
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('EgressProxy with call tokens (an isolate process: several calls at once)', () => {
  const TOKEN = 'a'.repeat(32);

  /** Sends `head` on a new connection; resolves with everything the proxy answered once it closes. */
  function exchange(path: string, head: string): Promise<string> {
    return new Promise((done) => {
      const socket = connect(path);
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => done(text));
      socket.write(head);
    });
  }

  it("refuses a request without an open call's token, counts each call apart, echoes the token, and cuts a closed call's tunnels", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-proxy-token-'));
    const sink = createServer((socket) => socket.on('error', () => undefined).resume());
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const port = (sink.address() as AddressInfo).port;
    const fallback: EgressAttempt[] = [];
    const ofCall: EgressAttempt[] = [];
    const proxy = new EgressProxy({
      rules: { allow: [`127.0.0.1:${port}`] },
      limits: DEFAULT_EGRESS_LIMITS,
      onAttempt: (attempt) => fallback.push(attempt),
      requireCallToken: true,
    });
    const path = join(dir, 'proxy.sock');
    try {
      await proxy.listen(path);
      const without = await exchange(path, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
      expect(without).toContain('X-Toolhost-Refusal: unknown_call');
      expect(fallback.map((attempt) => attempt.reason)).toEqual(['unknown_call']);

      proxy.openCall(TOKEN, (attempt) => ofCall.push(attempt));
      const refused = await exchange(path, `CONNECT 127.0.0.1:${port + 1 > 65535 ? port - 1 : port + 1} HTTP/1.1\r\nProxy-Authorization: Toolhost ${TOKEN}\r\n\r\n`);
      expect(refused).toContain('X-Toolhost-Refusal: host_not_allowed');
      expect(refused).toContain(`X-Toolhost-Call: ${TOKEN}`);

      // An admitted tunnel, held open, is cut when its call closes.
      const tunnel = connect(path);
      tunnel.on('error', () => undefined);
      let answer = '';
      let isClosed = false;
      tunnel.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      tunnel.on('close', () => (isClosed = true));
      tunnel.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nProxy-Authorization: Toolhost ${TOKEN}\r\n\r\n`);
      expect(await pollUntil(() => ({ done: answer.includes('200'), value: answer }), 10_000)).toContain('200 Connection Established');
      expect(proxy.callCounts(TOKEN)).toMatchObject({ admitted: 1, refused: 1 });
      proxy.closeCall(TOKEN);
      expect(await pollUntil(() => ({ done: isClosed, value: isClosed }), 10_000)).toBe(true);
      expect(ofCall.map((attempt) => [attempt.kind, attempt.admitted, attempt.reason])).toEqual([
        ['connect', false, 'host_not_allowed'],
        ['connect', true, null],
      ]);

      // Closed: the token is refused like none at all, on the fallback's count.
      expect(await exchange(path, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nProxy-Authorization: Toolhost ${TOKEN}\r\n\r\n`)).toContain('X-Toolhost-Refusal: unknown_call');
      expect(fallback).toHaveLength(2);
      expect(ofCall).toHaveLength(2);
    } finally {
      await proxy.close();
      await new Promise((resolve) => sink.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('EgressProxy direct destinations (a TCP client bridged from the sandbox)', () => {
  it('tunnels each connection to its one destination as a tcp attempt, and refuses past the concurrency cap by closing, never with HTTP bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-proxy-direct-'));
    const held = new Set<import('node:net').Socket>();
    const sink = createServer((socket) => {
      held.add(socket);
      socket.on('error', () => undefined);
      socket.write('hello from the destination\n');
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const port = (sink.address() as AddressInfo).port;
    const attempts: EgressAttempt[] = [];
    const limits = { ...DEFAULT_EGRESS_LIMITS, maxConcurrent: 2 };
    const proxy = new EgressProxy({ rules: { allow: [`127.0.0.1:${port}`] }, limits, onAttempt: (attempt) => attempts.push(attempt) });
    const path = join(dir, 'd0.sock');
    const clients: Array<import('node:net').Socket> = [];
    try {
      await proxy.listenDirect(path, { host: '127.0.0.1', port });
      const open = (): Promise<{ text: string; closed: () => boolean }> =>
        new Promise((done) => {
          const socket = connect(path);
          clients.push(socket);
          let text = '';
          let isClosed = false;
          socket.on('error', () => undefined);
          socket.on('data', (chunk: Buffer) => {
            text += chunk.toString('latin1');
            done({ text, closed: () => isClosed });
          });
          socket.on('close', () => {
            isClosed = true;
            done({ text, closed: () => isClosed });
          });
        });
      const first = await open();
      const second = await open();
      expect([first.text, second.text]).toEqual(['hello from the destination\n', 'hello from the destination\n']);
      // Two held open: the third is over the cap, and closed without a byte.
      const third = await open();
      expect(third.text).toBe('');
      expect(third.closed()).toBe(true);
      expect(attempts.map((attempt) => [attempt.kind, attempt.host, attempt.port, attempt.admitted, attempt.reason])).toEqual([
        ['tcp', '127.0.0.1', port, true, null],
        ['tcp', '127.0.0.1', port, true, null],
        ['tcp', '127.0.0.1', port, false, 'too_many_connections'],
      ]);
    } finally {
      for (const socket of [...clients, ...held]) socket.destroy();
      await proxy.close();
      await new Promise((resolve) => sink.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
