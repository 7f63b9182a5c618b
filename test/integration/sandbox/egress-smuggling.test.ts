// Header smuggling through the egress proxy, hostile: a read_only namespaced
// Python tool writes raw request heads to the proxy (HTTP_PROXY's address in
// its sandbox) for a real Python http.server on an allowed loopback port, a
// server that reads bare LF as a line end and so would run a POST smuggled
// in a header value (test/fixtures/egress-server/recording_server.py prints
// every request it ran). The proxy's strict parser refuses the request; the
// refusal is one refused attempt of the call with the parser's code; the
// origin runs nothing. On a kept-alive connection the second request is held
// to the read-only methods like the first.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import { createProcessRunner } from '../../../src/runner/process/process-runner.js';
import type { RunSpec } from '../../../src/runner/types.js';
import type { EgressAttempt } from '../../../src/runner/run-types.js';
import { probeSpec, waitForNoMarkedProcessesOrKill, type ProbeResult } from '../../helpers/sandbox-run.js';
import { newMarker } from '../../helpers/proc-scan.js';
import { runOptions } from '../../helpers/run-options.js';
import { useProcessServices } from '../../helpers/process-services.js';
import { pollUntil } from '../../helpers/wait.js';

const services = useProcessServices();
const RECORDER = fileURLToPath(new URL('../../fixtures/egress-server/recording_server.py', import.meta.url));

let origin: ChildProcess;
let port = 0;
const ran: string[] = [];

beforeAll(async () => {
  origin = spawn('python3', [RECORDER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: origin.stdout! });
  port = await new Promise<number>((resolve) => lines.once('line', (line) => resolve(Number(line))));
  lines.on('line', (line) => ran.push(line));
});

afterAll(() => {
  origin.kill('SIGKILL');
});

let marker = newMarker('sandbox');
afterEach(async () => {
  expect(await waitForNoMarkedProcessesOrKill(marker)).toEqual([]);
  marker = newMarker('sandbox');
});

async function callProbe(spec: RunSpec, ops: Record<string, unknown>[]): Promise<{ results: ProbeResult[]; attempts: EgressAttempt[] }> {
  const runner = createProcessRunner(spec, { logger: createSilentLogger(), services, preparedAhead: 0 });
  const attempts: EgressAttempt[] = [];
  try {
    const outcome = await runner.run({ callId: `smuggle-${marker}`, args: { ops } }, runOptions({ timeoutMs: 60_000, onEgress: (attempt) => attempts.push(attempt) }));
    if (!outcome.ok) throw new Error(`the call failed: ${outcome.code} ${JSON.stringify(outcome.details)}`);
    if (outcome.output.type !== 'json') throw new Error('expected JSON');
    return { results: JSON.parse(outcome.output.json) as ProbeResult[], attempts };
  } finally {
    await runner.close();
  }
}

/** One raw exchange with the proxy, as the tool sees it at HTTP_PROXY. */
const raw = (send: string) => ({ op: 'raw', host: '127.0.0.1', port: 3128, send });

describe('egress proxy: header smuggling by a read_only tool', () => {
  it('refuses a POST smuggled in a header value with bare LFs: 400, one refused attempt naming the parser error, and the origin runs nothing', async () => {
    ran.length = 0;
    const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${port}`], sideEffect: 'read_only' });
    const smuggled = `GET http://127.0.0.1:${port}/innocent HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Note: a\n\nPOST /evil HTTP/1.1\nContent-Length: 0\n\n\r\n\r\n`;
    const { results, attempts } = await callProbe(spec, [raw(smuggled), { op: 'http', url: `http://127.0.0.1:${port}/after` }]);
    const answer = (results[0] as { ok: string }).ok;
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('X-Toolhost-Refusal: malformed_request');
    expect(attempts).toEqual([
      { kind: 'malformed', host: '', port: null, method: null, admitted: false, reason: 'malformed_request', address: null, detail: 'HPE_CR_EXPECTED' },
      { kind: 'http', host: '127.0.0.1', port, method: 'GET', admitted: true, reason: null, address: '127.0.0.1' },
    ]);
    // The origin ran the later honest GET only (it prints each request as it handles it).
    expect(results[1]).toEqual({ ok: { status: 200, body: 'ok' } });
    expect(await pollUntil(() => ({ done: ran.length > 0, value: ran }), 10_000)).toEqual(['GET /after']);
  });

  it('checks the second request of a kept-alive connection like the first: the GET runs, the POST behind it is refused', async () => {
    ran.length = 0;
    const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${port}`], sideEffect: 'read_only' });
    const pipelined = `GET http://127.0.0.1:${port}/first HTTP/1.1\r\nHost: x\r\n\r\nPOST http://127.0.0.1:${port}/evil HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`;
    const { results, attempts } = await callProbe(spec, [raw(pipelined)]);
    const answer = (results[0] as { ok: string }).ok;
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*okHTTP\/1\.1 403 Forbidden\r\n/);
    expect(answer).toContain('X-Toolhost-Refusal: method_not_allowed_for_class');
    expect(attempts.map((attempt) => [attempt.method, attempt.admitted, attempt.reason])).toEqual(
      expect.arrayContaining([
        ['GET', true, null],
        ['POST', false, 'method_not_allowed_for_class'],
      ]),
    );
    expect(await pollUntil(() => ({ done: ran.length > 0, value: ran }), 10_000)).toEqual(['GET /first']);
  });
});
