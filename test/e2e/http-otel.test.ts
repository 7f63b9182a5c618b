// `serve --http` with OTEL_EXPORTER_OTLP_ENDPOINT (SPEC section 6.2): the
// built host loads the OpenTelemetry SDK and exports over OTLP/HTTP to a
// receiver on loopback; the exported spans name the tool and never carry the
// arguments. On shutdown the host flushes what it has.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttpClient, ensureBuilt } from '../helpers/mcp-clients.js';
import { makeHostDirs, type HostDirs, until } from '../helpers/host-session.js';
import { startHttpHost, writeTokenFile, type HttpHost } from '../helpers/http-host.js';

const SECRET_ARGUMENT = 'argument-content-never-exported-91c2';

let dirs: HostDirs;
let host: HttpHost;
let receiver: Server;
const received: Array<{ path: string; body: string }> = [];

beforeAll(async () => {
  await ensureBuilt();
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  dirs = makeHostDirs();
  const { file, tokens } = writeTokenFile(dirs, ['otel-user']);
  host = await startHttpHost(dirs, ['--auth-tokens', file], {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
  });
  const client = await connectHttpClient(host.url, tokens['otel-user'], { kind: 'v2-modern' });
  await client.callTool({ name: 'echo', arguments: { text: SECRET_ARGUMENT } });
  await client.close();
});

afterAll(async () => {
  await host?.stop();
  receiver?.close();
  dirs?.cleanup();
});

describe('OTLP/HTTP export from the built host', () => {
  it('sends the call span to the collector, without argument content', async () => {
    await until(() => received.some((entry) => entry.path === '/v1/traces' && entry.body.includes('tools/call echo')), 'the span to reach the collector', 15_000);
    const traces = received
      .filter((entry) => entry.path === '/v1/traces')
      .map((entry) => entry.body)
      .join('\n');
    expect(traces).toContain('gen_ai.tool.name');
    expect(traces).toContain('execute_tool');
    expect(traces).not.toContain(SECRET_ARGUMENT);
  });

  it('flushes the duration metric when it stops', async () => {
    await host.stop();
    await until(() => received.some((entry) => entry.path === '/v1/metrics' && entry.body.includes('mcp.server.operation.duration')), 'the metric to reach the collector', 15_000);
  });
});
