// Every allowed host:port is reachable by ordinary TCP clients, through the
// same admission as the proxy: a namespaced tool connects by address or by
// name, with no proxy settings (Python sockets, curl --noproxy), and reaches
// the host's listener only where its allow list says so. Each connection is
// an attempt of the call (`tcp`); an allowed name resolves, in the sandbox, to
// a loopback address of its own and is resolved and checked again by the host
// (a name that resolves to loopback is refused and counted); an address
// literal that is not loopback (this machine's own eth0 addresses) is added to
// the sandbox's loopback by the host before the tool starts; other ports,
// names, UDP and DNS still have no route. Names resolve on the host through a
// resolver given to the proxy (no DNS here).
import { createServer, type Server } from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import { createProcessRunner } from '../../../src/runner/process/process-runner.js';
import type { RunSpec } from '../../../src/runner/types.js';
import type { EgressAttempt } from '../../../src/runner/run-types.js';
import { MARKER_VARIABLE, probeSpec, waitForNoMarkedProcessesOrKill, type ProbeResult } from '../../helpers/sandbox-run.js';
import { newMarker } from '../../helpers/proc-scan.js';
import { runOptions } from '../../helpers/run-options.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();
const RESOLVER = async (host: string): Promise<string[]> => (host === 'loopback.test' ? ['127.0.0.1'] : []);

// An HTTP listener on every address of the host (loopback and eth0), answering with what it was asked.
let listener: Server;
let port = 0;
const requests: string[] = [];

beforeAll(async () => {
  listener = createServer((request, response) => {
    requests.push(`${request.method ?? ''} ${request.url ?? ''}`);
    response.end(`seen:${request.method ?? ''}:${request.url ?? ''}`);
  });
  await new Promise<void>((resolve) => listener.listen(0, '::', resolve));
  const address = listener.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
});

afterAll(async () => {
  listener.closeAllConnections();
  await new Promise((resolve) => listener.close(resolve));
});

let marker = newMarker('sandbox');
afterEach(async () => {
  expect(await waitForNoMarkedProcessesOrKill(marker)).toEqual([]);
  marker = newMarker('sandbox');
});

async function callTool(spec: RunSpec, args: Record<string, unknown>): Promise<{ output: string; attempts: EgressAttempt[] }> {
  const runner = createProcessRunner(spec, { logger: createSilentLogger(), services, preparedAhead: 0, egress: { resolve: RESOLVER } });
  const attempts: EgressAttempt[] = [];
  try {
    const outcome = await runner.run({ callId: `direct-${marker}`, args }, runOptions({ timeoutMs: 60_000, onEgress: (attempt) => attempts.push(attempt) }));
    if (!outcome.ok) throw new Error(`the call failed: ${outcome.code} ${JSON.stringify(outcome.details)}`);
    if (outcome.output.type === 'json') return { output: outcome.output.json, attempts };
    if (outcome.output.type === 'text') return { output: Buffer.from(outcome.output.bytes).toString('utf8'), attempts };
    throw new Error('unexpected output');
  } finally {
    await runner.close();
  }
}

const get = (host: string, path: string) => ({ op: 'raw', host, port, send: `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n` });
const bodyOf = (result: ProbeResult | undefined) => ('ok' in (result ?? {}) ? String((result as { ok: string }).ok).split('\r\n\r\n')[1] : result);

describe('ordinary TCP clients reach exactly the allowed host:port', () => {
  it('by address: a raw socket reaches 127.0.0.1:PORT, counted as a tcp attempt; another port finds nothing', async () => {
    requests.length = 0;
    const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${port}`] });
    const { output, attempts } = await callTool(spec, { ops: [get('127.0.0.1', '/raw'), { op: 'connect', host: '127.0.0.1', port: port === 65535 ? port - 1 : port + 1 }] });
    const results = JSON.parse(output) as ProbeResult[];
    expect(bodyOf(results[0])).toBe('seen:GET:/raw');
    expect(results[1]).toEqual({ error: 'ECONNREFUSED' });
    expect(attempts).toEqual([{ kind: 'tcp', host: '127.0.0.1', port, method: null, admitted: true, reason: null, address: '127.0.0.1' }]);
    expect(requests).toEqual(['GET /raw']);
  });

  it('by name: an allowed name resolves to a loopback address of its own, and the host checks it again (a name for loopback is refused and counted)', async () => {
    requests.length = 0;
    const spec = probeSpec(marker, { networkAllow: [`loopback.test:${port}`] });
    const { output, attempts } = await callTool(spec, {
      ops: [{ op: 'resolve', name: 'loopback.test' }, get('loopback.test', '/named'), { op: 'resolve', name: 'other.test' }, { op: 'read', path: '/etc/hosts' }],
    });
    const results = JSON.parse(output) as ProbeResult[];
    expect(results[0]).toEqual({ ok: ['127.77.0.1'] });
    // Accepted by the bridge, closed by the host unanswered: nothing reached the listener.
    expect(results[1]).toEqual({ ok: '' });
    expect(results[2]).toEqual({ error: 'gaierror' });
    expect((results[3] as { ok: string }).ok).toBe('127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.77.0.1\tloopback.test\n');
    expect(attempts).toEqual([{ kind: 'tcp', host: 'loopback.test', port, method: null, admitted: false, reason: 'address_loopback', address: '127.0.0.1' }]);
    expect(requests).toEqual([]);
  });

  it("by an address literal that is not loopback (this machine's own), added to the sandbox's loopback: IPv4 and IPv6", async () => {
    requests.length = 0;
    const own = Object.values(networkInterfaces())
      .flatMap((entries) => entries ?? [])
      .filter((entry) => !entry.internal && !entry.address.startsWith('fe80'));
    const v4 = own.find((entry) => entry.family === 'IPv4')?.address;
    const v6 = own.find((entry) => entry.family === 'IPv6')?.address;
    if (v4 === undefined || v6 === undefined) throw new Error('this test needs a non-loopback IPv4 and IPv6 address on the host');
    const spec = probeSpec(marker, { networkAllow: [`${v4}:${port}`, `[${v6}]:${port}`] });
    const { output, attempts } = await callTool(spec, { ops: [get(v4, '/v4'), get(v6, '/v6'), { op: 'connect', host: v4, port: port === 65535 ? port - 1 : port + 1 }] });
    const results = JSON.parse(output) as ProbeResult[];
    expect([bodyOf(results[0]), bodyOf(results[1])]).toEqual(['seen:GET:/v4', 'seen:GET:/v6']);
    expect(results[2]).toEqual({ error: 'ECONNREFUSED' });
    expect(attempts.map((attempt) => [attempt.kind, attempt.host, attempt.admitted, attempt.address])).toEqual([
      ['tcp', v4, true, v4],
      ['tcp', v6, true, v6],
    ]);
  });

  it('curl without proxy settings reaches an allowed address, and HTTP_PROXY still works beside it', async () => {
    requests.length = 0;
    const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', [MARKER_VARIABLE]: marker };
    const url = `http://127.0.0.1:${port}/curl`;
    const direct = probeSpec(marker, { networkAllow: [`127.0.0.1:${port}`], command: ['curl', '-sS', '--noproxy', '*', url], stdout: 'text', env });
    const proxied = probeSpec(marker, { networkAllow: [`127.0.0.1:${port}`], command: ['curl', '-sS', url], stdout: 'text', env });
    const first = await callTool(direct, {});
    const second = await callTool(proxied, {});
    expect([first.output, second.output]).toEqual(['seen:GET:/curl', 'seen:GET:/curl']);
    expect([first.attempts.map((attempt) => attempt.kind), second.attempts.map((attempt) => attempt.kind)]).toEqual([['tcp'], ['http']]);
  });
});
