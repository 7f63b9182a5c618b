// Legacy (2025-era) HTTP sessions that nobody uses are closed after an idle
// time, so a client that went away without DELETE leaves nothing for ever; a
// session whose client still waits for an answer is never closed under it.
// One process: a real host, the HTTP front with a short idle time, a raw
// client for the abandoned session and an SDK v1 client for the busy one.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../../src/protocol/http.js';
import { serveHostOverHttp } from '../../helpers/http-front.js';
import { connectHttpClient, type TestClient } from '../../helpers/mcp-clients.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { until } from '../../helpers/wait.js';
import { closeAllHosts, startHost, type TestHost } from '../../helpers/supervisor-host.js';

const IDLE_MS = 150;
const LEGACY_VERSION = '2025-11-25';

let host: TestHost;
let http: HttpServer;
const log = recordingLogger();
const barrierDir = mkdtempSync(join(tmpdir(), 'toolhost-http-idle-'));

beforeAll(async () => {
  host = await startHost();
  http = await serveHostOverHttp(host, { logger: log.logger, legacySessionIdleMs: IDLE_MS });
});

afterAll(async () => {
  await http?.close();
  await closeAllHosts();
  rmSync(barrierDir, { recursive: true, force: true });
});

async function post(body: unknown, sessionId?: string): Promise<Response> {
  return fetch(`${http.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': LEGACY_VERSION,
      ...(sessionId !== undefined ? { 'mcp-session-id': sessionId } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** Opens a legacy session by hand and returns its id. */
async function openRawSession(): Promise<string> {
  const opened = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  expect(opened.status).toBe(200);
  await opened.body?.cancel();
  const id = opened.headers.get('mcp-session-id');
  if (id === null) throw new Error('no Mcp-Session-Id');
  const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, id);
  expect(initialized.status).toBe(202);
  return id;
}

const closedIdle = () => log.lines().filter((line) => line['msg'] === 'legacy http session closed: idle');

describe('legacy HTTP sessions', () => {
  it('an unused session is closed after the idle time (404 after), while a session with a call still running is kept', async () => {
    const abandoned = await openRawSession();
    const busy: TestClient = await connectHttpClient(`${http.url}/mcp`, undefined, { kind: 'v1-legacy' });
    try {
      // The busy session's call waits until the test puts a second arrival in the folder.
      const call = busy.callTool({ name: 'barrier', arguments: { dir: barrierDir, name: 'first', count: 2 } }, { timeout: 60_000 });
      await until(() => closedIdle().length >= 1, 'the abandoned session to be closed', 30_000);
      const ping = await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, abandoned);
      expect(ping.status).toBe(404);
      // Several sweeps pass while the call waits; its session stays (one closed so far).
      await until(() => Date.now() - Number(closedIdle()[0]?.['time'] ?? Date.now()) > IDLE_MS * 4, 'more sweeps', 30_000);
      expect(closedIdle()).toHaveLength(1);
      writeFileSync(join(barrierDir, 'second'), '');
      const result = await call;
      expect(result['isError']).not.toBe(true);
      expect(result['structuredContent'] ?? JSON.parse(String((result['content'] as Array<{ text: string }>)[0]?.text))).toMatchObject({ name: 'first', saw: 2 });
      // Answered, then unused: now it goes too.
      await until(() => closedIdle().length >= 2, 'the busy session to be closed once idle', 30_000);
    } finally {
      await busy.close().catch(() => undefined);
    }
  });

  it('a session whose only unanswered request was cancelled is closed once idle (a cancelled request is never answered)', async () => {
    const before = closedIdle().length;
    const client: TestClient = await connectHttpClient(`${http.url}/mcp`, undefined, { kind: 'v1-legacy' });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'toolhost-http-idle-cancel-'));
      const controller = new AbortController();
      const call = client.callTool({ name: 'barrier', arguments: { dir, name: 'alone', count: 2 } }, { signal: controller.signal, timeout: 60_000 });
      // The call is running once its arrival is in the folder; then the client cancels it.
      await until(() => readdirSync(dir).length === 1, 'the call to start', 30_000);
      controller.abort();
      await expect(call).rejects.toThrow();
      await until(() => closedIdle().length > before, 'the session to be closed once idle', 30_000);
      rmSync(dir, { recursive: true, force: true });
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});
