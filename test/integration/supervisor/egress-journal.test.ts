// A namespaced process tool's network attempts through a real host: counted in
// the call's journal record and shown by `toolhost audit --json` (SPEC 3.2, 7).
// The tool is read_only, so its POST through the proxy is refused.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { run as runAudit } from '../../../src/cli/audit.js';
import { PROBE_PY } from '../sandbox/harness.js';
import { closeAllHosts, resultOf, startHost } from './harness.js';

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

    let written = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written += String(chunk);
      return true;
    });
    try {
      expect(await runAudit(['--state', again.stateDir, '--tool', 'egress_probe', '--json'])).toBe(0);
    } finally {
      vi.restoreAllMocks();
    }
    const records = JSON.parse(written) as Array<{ tool: string; status: string; egress: unknown }>;
    expect(records).toEqual([expect.objectContaining({ tool: 'egress_probe', status: 'completed', egress: { admitted: 1, refused: 2 } })]);
  });
});
