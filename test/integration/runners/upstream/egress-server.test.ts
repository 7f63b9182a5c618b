// An upstream server with a network allow list reaches only its hosts (SPEC
// 2.1, 3.2): a real MCP server (SDK v2, test/fixtures/egress-server) whose tool
// fetches a URL through HTTP_PROXY reaches an allowed 127.0.0.1:PORT through
// the host's egress proxy, and nothing else: not another port of 127.0.0.1 (the
// host's other loopback service), not the metadata address, not a direct
// connection; its read_only instance may only read. Loopback only.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMarkedProcesses, pollUntil } from '../../../helpers/proc-scan.js';
import { closeAllHosts, startHost, textOf, type TestHost } from '../../../helpers/supervisor-host.js';

const FIXTURE = fileURLToPath(new URL('../../../fixtures/egress-server/fetcher.mjs', import.meta.url));
const NODE_MODULES = fileURLToPath(new URL('../../../../node_modules', import.meta.url));

interface Served {
  readonly server: Server;
  port: number;
  readonly seen: string[];
}

async function serve(name: string): Promise<Served> {
  const served: Served = { server: createServer(), port: 0, seen: [] };
  served.server.on('request', (request, response) => {
    served.seen.push(`${request.method ?? ''} ${request.url ?? ''}`);
    request.resume();
    request.on('end', () => response.end(`${name}:${request.url ?? ''}`));
  });
  await new Promise<void>((resolve) => served.server.listen(0, '127.0.0.1', resolve));
  served.port = (served.server.address() as AddressInfo).port;
  return served;
}

function serverManifest(name: string, port: number, sideEffect: string): string {
  return [
    'kind: Server',
    `name: ${name}`,
    'description: A real SDK v2 server whose tool fetches a URL.',
    'command: ["node", "./fetcher.mjs"]',
    'sandbox:',
    '  memoryMb: 2048',
    '  startupTimeoutMs: 30000',
    'network:',
    `  allow: ["127.0.0.1:${port}"]`,
    'timeoutMs: 20000',
    'tools:',
    `  fetch_url: { sideEffect: ${sideEffect} }`,
    '',
  ].join('\n');
}

let allowed: Served;
let other: Served;
let host: TestHost;
let dir: string;

beforeAll(async () => {
  allowed = await serve('allowed');
  other = await serve('other');
  dir = mkdtempSync(join(tmpdir(), 'toolhost-egress-server-'));
  const manifests = join(dir, 'servers');
  mkdirSync(manifests);
  copyFileSync(FIXTURE, join(manifests, 'fetcher.mjs'));
  // The SDK is found where the server looks for it (bound read-only into its sandbox).
  symlinkSync(NODE_MODULES, join(manifests, 'node_modules'));
  writeFileSync(join(manifests, 'fetcher.yaml'), serverManifest('fetcher', allowed.port, 'remote_mutation'));
  writeFileSync(join(manifests, 'reader.yaml'), serverManifest('reader', allowed.port, 'read_only'));
  host = await startHost({ manifestDirs: [manifests], policy: `limits:\n  maxMemoryMb: 2048\nnetwork:\n  allow: ["127.0.0.1:${allowed.port}"]` });
}, 120_000);

afterAll(async () => {
  await closeAllHosts();
  // Every server process (its cmdline holds the manifest folder) is gone with the host.
  expect(await pollUntil(() => ({ done: findMarkedProcesses(dir).length === 0, value: findMarkedProcesses(dir) }), 10_000)).toEqual([]);
  for (const served of [allowed, other]) {
    served.server.closeAllConnections();
    await new Promise((resolve) => served.server.close(resolve));
  }
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

async function fetchVia(tool: string, args: Record<string, unknown>): Promise<unknown> {
  return JSON.parse(textOf(await host.call(tool, args))) as unknown;
}

describe('an upstream server with a network allow list', () => {
  it('loads both servers and offers their tools', () => {
    for (const server of ['fetcher', 'reader']) expect(host.config.servers.find((report) => report.server === server)?.unavailable).toBeUndefined();
    expect(host.config.tools.has('fetcher__fetch_url')).toBe(true);
  });

  it('reaches its allowed 127.0.0.1:PORT through the egress proxy', async () => {
    allowed.seen.length = 0;
    expect(await fetchVia('fetcher__fetch_url', { url: `http://127.0.0.1:${allowed.port}/ok`, method: 'POST' })).toEqual({ status: 200, refusal: null, body: 'allowed:/ok' });
    expect(allowed.seen).toEqual(['POST /ok']);
  });

  it('is refused everything else: another loopback port, the metadata address, an address spelled in decimal', async () => {
    other.seen.length = 0;
    const refused = [
      [`http://127.0.0.1:${other.port}/secret`, 'host_not_allowed'],
      ['http://169.254.169.254/latest/meta-data/', 'host_not_allowed'],
      [`http://2130706433:${allowed.port}/ok`, 'non_canonical_host'],
    ] as const;
    for (const [url, reason] of refused) {
      expect({ url, answer: await fetchVia('fetcher__fetch_url', { url }) }).toEqual({ url, answer: { status: 403, refusal: reason, body: expect.any(String) as string } });
    }
    expect(other.seen).toEqual([]);
  });

  it('reaches its allowed 127.0.0.1:PORT by a direct connection too (bridged through the same admission); nothing else has a route', async () => {
    allowed.seen.length = 0;
    other.seen.length = 0;
    expect(await fetchVia('fetcher__fetch_url', { url: `http://127.0.0.1:${allowed.port}/direct`, direct: true })).toEqual({ status: 200, refusal: null, body: 'allowed:/direct' });
    // Another port of the host's loopback, and a routable address: no listener, no route.
    expect(await fetchVia('fetcher__fetch_url', { url: `http://127.0.0.1:${other.port}/direct`, direct: true })).toEqual({ error: 'ECONNREFUSED' });
    expect(await fetchVia('fetcher__fetch_url', { url: 'http://192.0.2.1/', direct: true })).toEqual({ error: 'ENETUNREACH' });
    expect(allowed.seen).toEqual(['GET /direct']);
    expect(other.seen).toEqual([]);
  });

  it("holds a read_only server instance's plain HTTP to the read-only methods", async () => {
    allowed.seen.length = 0;
    expect(await fetchVia('reader__fetch_url', { url: `http://127.0.0.1:${allowed.port}/write`, method: 'POST' })).toEqual({
      status: 403,
      refusal: 'method_not_allowed_for_class',
      body: expect.any(String) as string,
    });
    expect(await fetchVia('reader__fetch_url', { url: `http://127.0.0.1:${allowed.port}/read` })).toEqual({ status: 200, refusal: null, body: 'allowed:/read' });
    expect(allowed.seen).toEqual(['GET /read']);
  });
});
