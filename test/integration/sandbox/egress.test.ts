// Egress of namespaced processes, hostile and loopback only: a Python process
// tool reaches an allowed 127.0.0.1:PORT through the host's proxy (plain HTTP
// and a CONNECT tunnel), and nothing else: not another port, not another
// loopback service, not the metadata address, ::1, ::ffff:127.0.0.1, a name
// that resolves to loopback, or a decimal or octal spelling; raw TCP to other
// ports, UDP and DNS have no route; a read_only tool's POST is refused; a CONNECT flood is
// bounded. Names resolve through a resolver given to the proxy (no DNS here).
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import { openEgressGrant } from '../../../src/runner/bwrap/egress-grant.js';
import { createProcessRunner } from '../../../src/runner/process/process-runner.js';
import type { RunSpec } from '../../../src/runner/types.js';
import type { EgressAttempt, RunOutcome } from '../../../src/runner/run-types.js';
import { join } from 'node:path';
import { FIXTURES_DIR, probeSpec, runSandboxed, waitForNoMarkedProcessesOrKill, type ProbeResult } from '../../helpers/sandbox-run.js';
import { newMarker } from '../../helpers/proc-scan.js';
import { runOptions } from '../../helpers/run-options.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

interface Served {
  readonly server: HttpServer;
  port: number;
  readonly requests: string[];
}

async function serve(name: string): Promise<Served> {
  const served: Served = { server: createHttpServer(), port: 0, requests: [] };
  served.server.on('request', (request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      served.requests.push(`${request.method ?? ''} ${request.url ?? ''}`);
      response.end(`${name}:${request.method ?? ''}:${body}`);
    });
  });
  await new Promise<void>((resolve) => served.server.listen(0, '127.0.0.1', resolve));
  const address = served.server.address();
  served.port = typeof address === 'object' && address !== null ? address.port : 0;
  return served;
}

// Names the proxy resolves in these tests: one to loopback, one to nothing.
const RESOLVER = async (host: string): Promise<string[]> => (host === 'loopback.test' ? ['127.0.0.1'] : []);

let allowed: Served;
let other: Served;

beforeAll(async () => {
  allowed = await serve('allowed');
  other = await serve('other');
});

afterAll(async () => {
  for (const served of [allowed, other]) {
    served.server.closeAllConnections();
    await new Promise((resolve) => served.server.close(resolve));
  }
});

let marker = newMarker('sandbox');
afterEach(async () => {
  expect(await waitForNoMarkedProcessesOrKill(marker)).toEqual([]);
  marker = newMarker('sandbox');
});

async function callProbe(spec: RunSpec, ops: Record<string, unknown>[], limits?: Record<string, number>): Promise<{ results: ProbeResult[]; attempts: EgressAttempt[] }> {
  const runner = createProcessRunner(spec, { logger: createSilentLogger(), services, preparedAhead: 0, egress: { resolve: RESOLVER, ...(limits ? { limits } : {}) } });
  const attempts: EgressAttempt[] = [];
  try {
    const outcome: RunOutcome = await runner.run({ callId: `egress-${marker}`, args: { ops } }, runOptions({ timeoutMs: 60_000, onEgress: (attempt) => attempts.push(attempt) }));
    if (!outcome.ok) throw new Error(`the call failed: ${outcome.code} ${JSON.stringify(outcome.details)}`);
    if (outcome.output.type !== 'json') throw new Error('expected JSON');
    return { results: JSON.parse(outcome.output.json) as ProbeResult[], attempts };
  } finally {
    await runner.close();
  }
}

describe('egress proxy: a namespaced Python tool', () => {
  it('reaches an allowed 127.0.0.1:PORT through HTTP_PROXY, plainly and through a CONNECT tunnel', async () => {
    allowed.requests.length = 0;
    const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${allowed.port}`] });
    const { results, attempts } = await callProbe(spec, [
      { op: 'env' },
      { op: 'http', url: `http://127.0.0.1:${allowed.port}/plain`, method: 'POST', body: 'sent' },
      { op: 'tunnel', host: '127.0.0.1', port: allowed.port, path: '/tunnelled' },
    ]);
    const env = (results[0] as { ok: Record<string, string> }).ok;
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) expect(env[name]).toBe('http://127.0.0.1:3128');
    expect(results.slice(1)).toEqual([{ ok: { status: 200, body: 'allowed:POST:sent' } }, { ok: { status: 200, body: 'allowed:GET:' } }]);
    expect(allowed.requests).toEqual(['POST /plain', 'GET /tunnelled']);
    expect(attempts).toEqual([
      { kind: 'http', host: '127.0.0.1', port: allowed.port, method: 'POST', admitted: true, reason: null, address: '127.0.0.1' },
      { kind: 'connect', host: '127.0.0.1', port: allowed.port, method: null, admitted: true, reason: null, address: '127.0.0.1' },
    ]);
  });

  it('refuses every other target, however it is spelled, and reaches none of them', async () => {
    allowed.requests.length = 0;
    other.requests.length = 0;
    const port = allowed.port;
    // loopback.test is even in the allow list: a name that resolves to 127.0.0.1 is refused all the same.
    const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${port}`, `loopback.test:${port}`] });
    const targets: Array<[string, number, string]> = [
      ['127.0.0.1', other.port, 'host_not_allowed'], // the host's other loopback service
      ['127.0.0.1', 22, 'host_not_allowed'],
      ['169.254.169.254', 80, 'host_not_allowed'],
      ['[::1]', port, 'host_not_allowed'],
      ['[::ffff:127.0.0.1]', port, 'non_canonical_host'],
      ['[::ffff:7f00:1]', port, 'host_not_allowed'],
      ['loopback.test', port, 'address_loopback'],
      ['2130706433', port, 'non_canonical_host'],
      ['0177.0.0.1', port, 'non_canonical_host'],
      ['0x7f.0.0.1', port, 'non_canonical_host'],
      ['127.1', port, 'non_canonical_host'],
    ];
    const ops = targets.flatMap(([host, targetPort]) => [
      { op: 'http', url: `http://${host}:${targetPort}/x` },
      { op: 'tunnel', host: host.replace(/^\[(.*)\]$/, '$1'), port: targetPort },
    ]);
    const { results, attempts } = await callProbe(spec, ops);
    targets.forEach(([host, , reason], index) => {
      expect({ host, plain: results[index * 2] }).toEqual({ host, plain: { error: 'HTTP403', refusal: reason } });
      expect({ host, tunnel: results[index * 2 + 1] }).toMatchObject({ host, tunnel: { error: 'tunnel_refused' } });
    });
    expect(attempts.filter((attempt) => attempt.admitted)).toEqual([]);
    expect(attempts.map((attempt) => attempt.reason)).toEqual(targets.flatMap(([, , reason]) => [reason, reason]));
    expect([...allowed.requests, ...other.requests]).toEqual([]);
  });

  it('gives raw TCP to anything but the allowed host:port, UDP and DNS no route out', async () => {
    const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${allowed.port}`] });
    const { results, attempts } = await callProbe(spec, [
      // The sandbox's own loopback: another port of the host's has no listener there.
      { op: 'connect', host: '127.0.0.1', port: other.port },
      // TEST-NET-1 (never routed): the namespace has no route at all, nothing is sent.
      { op: 'connect', host: '192.0.2.1', port: 80 },
      { op: 'udp_send', host: '192.0.2.1', port: 53 },
      { op: 'resolve', name: 'example.com' },
    ]);
    expect(results).toEqual([{ error: 'ECONNREFUSED' }, { error: 'ENETUNREACH' }, { error: 'ENETUNREACH' }, { error: 'gaierror' }]);
    expect(attempts).toEqual([]);
  });

  it('holds a read_only tool to GET, HEAD and OPTIONS on plain HTTP', async () => {
    allowed.requests.length = 0;
    const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${allowed.port}`], sideEffect: 'read_only' });
    const { results, attempts } = await callProbe(spec, [
      { op: 'http', url: `http://127.0.0.1:${allowed.port}/write`, method: 'POST', body: 'x' },
      { op: 'http', url: `http://127.0.0.1:${allowed.port}/delete`, method: 'DELETE' },
      { op: 'http', url: `http://127.0.0.1:${allowed.port}/read` },
    ]);
    expect(results).toEqual([
      { error: 'HTTP403', refusal: 'method_not_allowed_for_class' },
      { error: 'HTTP403', refusal: 'method_not_allowed_for_class' },
      { ok: { status: 200, body: 'allowed:GET:' } },
    ]);
    expect(allowed.requests).toEqual(['GET /read']);
    expect(attempts.map((attempt) => [attempt.method, attempt.admitted])).toEqual([
      ['POST', false],
      ['DELETE', false],
      ['GET', true],
    ]);
  });

  it('bounds a CONNECT flood: concurrent tunnels, attempts, and the host stays small', async () => {
    const held = new Set<Socket>();
    let open = 0;
    let mostOpen = 0;
    const sink: TcpServer = createTcpServer((socket) => {
      open++;
      mostOpen = Math.max(mostOpen, open);
      held.add(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => open--);
      socket.resume();
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const sinkPort = (sink.address() as { port: number }).port;
    const rssBefore = process.memoryUsage().rss;
    try {
      const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${sinkPort}`] });
      const { results, attempts } = await callProbe(spec, [{ op: 'flood', host: '127.0.0.1', port: sinkPort, count: 60 }], { maxConcurrent: 8, maxAttempts: 40 });
      const answers = (results[0] as { ok: Record<string, number> }).ok;
      expect(Object.values(answers).reduce((sum, count) => sum + count, 0)).toBe(60);
      // At most 8 tunnels at once (more are admitted as the probe closes the first ones);
      // the rest refused, and past 40 attempts closed unanswered and unlogged.
      expect(answers['200'] ?? 0).toBeGreaterThan(0);
      expect((answers['403'] ?? 0) + (answers['closed'] ?? 0)).toBeGreaterThan(0);
      expect(mostOpen).toBeLessThanOrEqual(8);
      expect(attempts.length).toBeLessThanOrEqual(40);
      expect(attempts.length).toBeGreaterThan(8);
      expect(attempts.filter((attempt) => !attempt.admitted).every((attempt) => attempt.reason === 'too_many_connections')).toBe(true);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => sink.close(resolve));
    }
  });
});

describe('egress proxy: a persistent namespaced tool', () => {
  it('attributes each call its own attempts, on the same process', async () => {
    const spec = probeSpec(marker, {
      networkAllow: [`127.0.0.1:${allowed.port}`],
      command: ['python3', join(FIXTURES_DIR, 'fetch_persistent.py')],
      persistent: true,
      poolSize: 1,
    });
    const runner = createProcessRunner(spec, { logger: createSilentLogger(), services });
    try {
      const perCall: EgressAttempt[][] = [];
      for (const url of [`http://127.0.0.1:${allowed.port}/one`, `http://127.0.0.1:${other.port}/two`, `http://127.0.0.1:${allowed.port}/three`]) {
        const attempts: EgressAttempt[] = [];
        const outcome = await runner.run({ callId: `p-${perCall.length}`, args: { url } }, runOptions({ timeoutMs: 30_000, onEgress: (attempt) => attempts.push(attempt) }));
        expect(outcome.ok).toBe(true);
        perCall.push(attempts);
      }
      expect(perCall.map((attempts) => attempts.map((attempt) => [attempt.port, attempt.admitted]))).toEqual([
        [[allowed.port, true]],
        [[other.port, false]],
        [[allowed.port, true]],
      ]);
    } finally {
      await runner.close();
    }
  });
});

describe('egress grant API (what upstream servers and isolate processes use)', () => {
  it('gives a process started with buildSandboxArgv and a grant its hosts and nothing else, counted per call', async () => {
    allowed.requests.length = 0;
    const grant = await openEgressGrant({ allow: [`127.0.0.1:${allowed.port}`], readOnly: false, logger: createSilentLogger() });
    const attempts: EgressAttempt[] = [];
    grant.attach((attempt) => attempts.push(attempt));
    try {
      const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${allowed.port}`] });
      const ops = [
        { op: 'http', url: `http://127.0.0.1:${allowed.port}/upstream` },
        { op: 'http', url: `http://127.0.0.1:${other.port}/upstream` },
      ];
      const run = await runSandboxed(spec, { cwd: spec.manifestDir, egress: grant }, JSON.stringify({ ops }));
      expect(JSON.parse(run.stdout)).toEqual([{ ok: { status: 200, body: 'allowed:GET:' } }, { error: 'HTTP403', refusal: 'host_not_allowed' }]);
      expect(grant.counts()).toMatchObject({ admitted: 1, refused: 1 });
      expect(attempts).toHaveLength(2);
    } finally {
      await grant.close();
    }
    // Closed: the socket is gone with its private folder.
    await expect(import('node:fs/promises').then((fs) => fs.stat(grant.socketPath))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('without a grant, a tool with an allow list has no network at all (fail closed)', async () => {
    const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${allowed.port}`] });
    const run = await runSandboxed(spec, { cwd: spec.manifestDir }, JSON.stringify({ ops: [{ op: 'connect', host: '127.0.0.1', port: allowed.port }, { op: 'env' }] }));
    const [connect, env] = JSON.parse(run.stdout) as [ProbeResult, { ok: Record<string, string> }];
    expect(connect).toEqual({ error: 'ECONNREFUSED' });
    expect(env.ok['HTTP_PROXY']).toBeUndefined();
  });
});
