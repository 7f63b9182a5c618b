// A namespaced process tool's and an isolate tool's network attempts through a
// real host: counted in the call's journal record and shown by `toolhost audit
// --json` (SPEC 3.2, 7). The tools are read_only, so their POSTs are refused
// (through the proxy; for ctx.fetch in the isolate process, before it).
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { run as runAudit } from '../../../src/cli/audit.js';
import { PROBE_PY } from '../../helpers/sandbox-run.js';
import { closeAllHosts, resultOf, startHost } from '../../helpers/supervisor-host.js';

let server: Server;
let port: number;
let otherPort: number;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push(`${request.method ?? ''} ${request.url ?? ''}`);
    response.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  otherPort = port === 65535 ? port - 1 : port + 1;
});

afterAll(async () => {
  await closeAllHosts();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function auditJson(stateDir: string, tool: string): Promise<Array<{ tool: string; status: string; egress: unknown }>> {
  let written = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written += String(chunk);
    return true;
  });
  try {
    expect(await runAudit(['--state', stateDir, '--tool', tool, '--json'])).toBe(0);
  } finally {
    vi.restoreAllMocks();
  }
  return JSON.parse(written) as Array<{ tool: string; status: string; egress: unknown }>;
}

describe('egress in the journal', () => {
  it('counts admitted and refused attempts on the call record, and audit --json shows them', async () => {
    const root = mkdtempSync(join(tmpdir(), 'toolhost-egress-journal-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const tools = join(root, 'egress-tools');
    mkdirSync(tools, { recursive: true });
    copyFileSync(PROBE_PY, join(tools, 'probe.py'));
    writeFileSync(
      join(tools, 'egress_probe.yaml'),
      [
        'name: egress_probe',
        'description: Reads through the egress proxy.',
        'sideEffect: read_only',
        'timeoutMs: 30000',
        'sandbox:',
        '  mode: process',
        '  command: ["python3", "./probe.py"]',
        '  isolation: namespace',
        '  memoryMb: 256',
        '  env: [PATH]',
        'network:',
        `  allow: ["127.0.0.1:${port}"]`,
        'input:',
        '  type: object',
        '  properties:',
        '    ops: { type: array, maxItems: 16 }',
        '',
      ].join('\n'),
    );
    const again = await startHost({ root, policy: `network:\n  allow: ["127.0.0.1:${port}"]`, host: { manifestDirs: [tools] } });
    seen.length = 0;
    const outcome = resultOf(
      await again.call('egress_probe', {
        ops: [
          { op: 'http', url: `http://127.0.0.1:${port}/read` },
          { op: 'http', url: `http://127.0.0.1:${port}/write`, method: 'POST', body: 'x' },
          { op: 'tunnel', host: '127.0.0.1', port: otherPort },
        ],
      }),
    );
    expect(JSON.parse(outcome.content[0]?.type === 'text' ? outcome.content[0].text : 'null')).toEqual([
      { ok: { status: 200, body: 'ok' } },
      { error: 'HTTP403', refusal: 'method_not_allowed_for_class' },
      { error: 'tunnel_refused', message: expect.any(String) as string },
    ]);
    expect(seen).toEqual(['GET /read']);
    await again.close();

    expect(await auditJson(again.stateDir, 'egress_probe')).toEqual([expect.objectContaining({ tool: 'egress_probe', status: 'completed', egress: { admitted: 1, refused: 2 } })]);
  });
});

describe('ctx.fetch egress in the journal', () => {
  it("counts an isolate tool's fetches (the proxy's and the isolate process's refusals) on the call record, and audit --json shows them", async () => {
    const root = mkdtempSync(join(tmpdir(), 'toolhost-egress-journal-isolate-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const tools = join(root, 'fetch-tools');
    mkdirSync(tools, { recursive: true });
    writeFileSync(
      join(tools, 'fetch_all.js'),
      [
        '// Sends each request in turn; reports each status or refusal code.',
        'export default async function fetchAll(args, ctx) {',
        '  const out = [];',
        '  for (const { url, method } of args.requests) {',
        '    try { out.push((await ctx.fetch(url, method ? { method, body: "x" } : undefined)).status); }',
        '    catch (error) { out.push(error.code); }',
        '  }',
        '  return { out };',
        '}',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(tools, 'fetch_all.yaml'),
      [
        'name: fetch_all',
        'description: Fetches a list of URLs.',
        'sideEffect: read_only',
        'timeoutMs: 30000',
        'sandbox:',
        '  mode: isolate',
        'entry: ./fetch_all.js',
        'network:',
        `  allow: ["127.0.0.1:${port}", "localhost:${port}"]`,
        'input:',
        '  type: object',
        '  properties:',
        '    requests: { type: array, maxItems: 8 }',
        '',
      ].join('\n'),
    );
    const host = await startHost({ root, policy: `network:\n  allow: ["127.0.0.1:${port}", "localhost:${port}"]`, host: { manifestDirs: [tools] } });
    seen.length = 0;
    const outcome = resultOf(
      await host.call('fetch_all', {
        requests: [
          { url: `http://127.0.0.1:${port}/read` },
          { url: `http://127.0.0.1:${port}/write`, method: 'POST' },
          { url: `http://localhost:${port}/loopback-by-name` },
          { url: `http://127.0.0.1:${otherPort}/other` },
        ],
      }),
    );
    expect(outcome.structuredContent).toEqual({ out: [200, 'policy_denied', 'policy_denied', 'policy_denied'] });
    expect(seen).toEqual(['GET /read']);
    await host.close();
    // Admitted: the GET (the proxy's); refused: the POST and the other port (the isolate process's), localhost (the proxy's).
    expect(await auditJson(host.stateDir, 'fetch_all')).toEqual([expect.objectContaining({ tool: 'fetch_all', status: 'completed', egress: { admitted: 1, refused: 3 } })]);
  });
});
