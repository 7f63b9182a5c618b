// The bundled tools that use SPEC 5.1 and 5.2 for real, through a real host
// (bubblewrap, isolated-vm, SQLite, the artifact store): view_image shows the
// model a real PNG of the workspace as an image part, refuses what is not an
// image with a model_error, and spills an image over the result limit to a
// readable artifact; finish ends the session's run.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gradientPng, encodePng } from '../../../scripts/demo/png.mjs';
import { createHost, type Host } from '../../../src/host.js';
import { createSilentLogger } from '../../../src/log.js';
import type { CallOutcome } from '../../../src/supervisor/types.js';
import { CallControl } from '../../../src/supervisor/call-control.js';

const REPO = resolve(import.meta.dirname, '../../..');
const root = mkdtempSync(join(tmpdir(), 'toolhost-bundled-outputs-'));
const workspace = join(root, 'ws');
const small = gradientPng(24, 16) as Buffer;
// Noise does not compress: a PNG well over the 8 KiB result limit below.
const noisy = encodePng(96, 96, (x: number, y: number) => [(x * 7919 + y * 104729) % 251, (x * y * 31) % 253, (x + y * 13) % 255]) as Buffer;
let host: Host;

beforeAll(async () => {
  mkdirSync(join(workspace, 'policies'), { recursive: true });
  writeFileSync(join(workspace, 'chart.png'), small);
  writeFileSync(join(workspace, 'noise.png'), noisy);
  writeFileSync(join(workspace, 'notes.txt'), 'not a picture\n');
  writeFileSync(join(workspace, 'policies/limits.yaml'), 'kind: Policy\nname: small-results\nlimits:\n  maxResultBytes: 8192\n');
  host = await createHost({ manifestDirs: [join(REPO, 'manifests')], policyFiles: [], workspace, stateDir: join(root, 'state'), logger: createSilentLogger() });
}, 180_000);
afterAll(async () => {
  await host?.close();
  rmSync(root, { recursive: true, force: true });
});

const call = (name: string, args: Record<string, unknown>): Promise<CallOutcome> =>
  host.supervisor.callTool({ name, args, meta: {}, control: new CallControl(), approval: { kind: 'none' } });

describe('view_image', { timeout: 180_000 }, () => {
  it('returns a line about the image and the image itself, the bytes of the file', async () => {
    const outcome = await call('view_image', { path: 'chart.png' });
    if (outcome.kind !== 'result') throw new Error(JSON.stringify(outcome));
    expect(outcome.content).toEqual([
      { type: 'text', text: `chart.png: PNG image, 24x16 pixels, ${small.length} bytes.` },
      { type: 'image', mimeType: 'image/png', data: small.toString('base64') },
    ]);
  });

  it('a file that is not an image is a model_error the model can read', async () => {
    const outcome = await call('view_image', { path: 'notes.txt' });
    if (outcome.kind !== 'error') throw new Error(JSON.stringify(outcome));
    expect([outcome.error.code, outcome.error.details, outcome.error.recovery]).toEqual(['tool_error', { modelError: true }, 'repair']);
    expect(outcome.error.content).toEqual([{ type: 'text', text: 'notes.txt cannot be shown: it is not a PNG, JPEG, GIF or WebP image.' }]);
  });

  it('an image over the result limit is spilled as an artifact holding the whole file', async () => {
    expect(noisy.length).toBeGreaterThan(8192);
    const outcome = await call('view_image', { path: 'noise.png' });
    if (outcome.kind !== 'result') throw new Error(JSON.stringify(outcome));
    expect(outcome.content.map((block) => block.type)).toEqual(['text', 'resource_link']);
    const link = outcome.content[1] as { uri: string; mimeType: string; size: number };
    expect(link).toMatchObject({ mimeType: 'image/png', size: noisy.length });
    const stored = await host.supervisor.readArtifact(link.uri);
    expect(stored?.mimeType).toBe('image/png');
    expect(Buffer.from(stored!.bytes).equals(noisy)).toBe(true);
  });
});

describe('finish', () => {
  it('carries the terminal mark; every later call of the session is call_limit (terminal)', async () => {
    const outcome = await call('finish', { summary: 'Looked at the chart.', outcome: 'succeeded' });
    if (outcome.kind !== 'result') throw new Error(JSON.stringify(outcome));
    expect(outcome.content).toEqual([{ type: 'text', text: 'Run finished (succeeded): Looked at the chart.' }]);
    expect(outcome.meta).toEqual({ 'toolhost/terminal': true });
    const after = await call('view_image', { path: 'chart.png' });
    if (after.kind !== 'error') throw new Error(JSON.stringify(after));
    expect([after.error.code, after.error.details]).toEqual(['call_limit', { reason: 'terminal', tool: 'finish', callId: outcome.callId }]);
  });
});
