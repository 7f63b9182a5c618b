// The proxy's request-head reader: CONNECT targets (IPv6 with or without
// brackets), absolute plain-HTTP URLs rewritten to origin form with the hop
// headers dropped and Connection: close, and what is not a proxy request.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_EGRESS_LIMITS, EgressProxy, MAX_LOOKUPS_IN_FLIGHT, parseRequestHead } from '../../../../src/runner/bwrap/egress-proxy.js';
import type { EgressAttempt } from '../../../../src/runner/wire.js';
import { until } from '../../../helpers/wait.js';

describe('parseRequestHead', () => {
  it('reads CONNECT targets', () => {
    expect(parseRequestHead('CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443')).toEqual({ ok: true, kind: 'connect', host: 'api.github.com', port: 443 });
    expect(parseRequestHead('CONNECT [::1]:8080 HTTP/1.1')).toEqual({ ok: true, kind: 'connect', host: '[::1]', port: 8080 });
    expect(parseRequestHead('CONNECT ::1:8080 HTTP/1.0')).toEqual({ ok: true, kind: 'connect', host: '[::1]', port: 8080 });
    expect(parseRequestHead('CONNECT host HTTP/1.1')).toEqual({ ok: false, reason: 'malformed_request' });
  });

  it('rewrites a plain-HTTP request for the origin and drops what belongs to the hop', () => {
    const head = parseRequestHead('POST http://127.0.0.1:8080/a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\nContent-Length: 3');
    expect(head).toMatchObject({ ok: true, kind: 'http', method: 'POST', host: '127.0.0.1', port: 8080, hasBody: true });
    if (!head.ok || head.kind !== 'http') return;
    expect(head.forwardHead.toString('latin1')).toBe('POST /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 3\r\nConnection: close\r\n\r\n');
    const bare = parseRequestHead('GET http://example.com HTTP/1.1');
    expect(bare).toMatchObject({ ok: true, host: 'example.com', port: 80, hasBody: false });
    if (bare.ok && bare.kind === 'http') expect(bare.forwardHead.toString('latin1')).toBe('GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n');
  });

  it.each([
    ['GET /relative HTTP/1.1', 'not_a_proxy_request'],
    ['GET https://example.com/ HTTP/1.1', 'not_a_proxy_request'],
    ['GET http://user@example.com/ HTTP/1.1', 'not_a_proxy_request'],
    ['get http://example.com/ HTTP/1.1', 'malformed_request'],
    ['GET http://example.com/ HTTP/2', 'malformed_request'],
    ['GET http://example.com/ HTTP/1.1\r\nno colon here', 'malformed_request'],
  ])('refuses %j as %s', (head, reason) => {
    expect(parseRequestHead(head)).toEqual({ ok: false, reason });
  });
});

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

  it('counts an attempt when it is accepted: connections still being admitted cannot pass maxAttempts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-proxy-unit-'));
    // Every lookup is held, so all ten connections are accepted and read before the first attempt is recorded.
    const held: Array<() => void> = [];
    const resolve = async (): Promise<string[]> => {
      await new Promise<void>((done) => held.push(done));
      return ['10.0.0.1'];
    };
    const attempts: EgressAttempt[] = [];
    const limits = { ...DEFAULT_EGRESS_LIMITS, maxAttempts: 4, maxConcurrent: 16 };
    const proxy = new EgressProxy({ rules: { allow: ['n.test:80'], resolve }, limits, onAttempt: (attempt) => attempts.push(attempt) });
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
              socket.write('GET http://n.test/ HTTP/1.1\r\nHost: n.test\r\n\r\n');
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
