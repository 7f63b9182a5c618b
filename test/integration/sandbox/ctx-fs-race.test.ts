// ctx.fs under a concurrent swapper: a folder of the workspace and a symlink to
// a folder outside trade places (renameat2 RENAME_EXCHANGE, thousands of times a
// second) while a tool loops over writeText, list, stat and readText there. No
// outside name, size or content may come back, and nothing may be created
// outside. Proven twice: for the scoped fs itself in this process (what worker
// tools use, and the isolate process's second line), and for an isolate tool,
// whose ctx.fs runs in its isolate process where the outside does not exist.
import { spawn } from 'node:child_process';
import { mkdir, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createScopedFs } from '../../../sandbox/ctx/scoped-fs.mjs';
import { root, useFixtureRunners, recordingOptions } from '../../helpers/fixture-runners.js';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';
import { jsonOf } from '../../helpers/run-outcomes.js';

const RACER = fileURLToPath(new URL('../../helpers/rename-exchange-racer.py', import.meta.url));
const RACE_SECONDS = 3;
const OUTSIDE_SIZE = 7777;
const isolateRunner = useFixtureRunners('isolate');

let base: TempDir;
let workspace: string;
let outside: string;

beforeEach(async () => {
  base = makeTempDir('toolhost-race-');
  workspace = path.join(base.path, 'ws');
  outside = path.join(base.path, 'outside');
  await mkdir(path.join(workspace, 'race'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(workspace, 'race', 'probe.txt'), 'inside');
  await writeFile(path.join(outside, 'probe.txt'), 'S'.repeat(OUTSIDE_SIZE));
  await writeFile(path.join(outside, 'outside-only.txt'), 'secret');
  await symlink(outside, path.join(workspace, 'link'));
});
afterEach(async () => {
  base.remove();
});

/** Starts the racer; resolves once it swaps, with a promise of its swap count. */
async function startRacer(): Promise<{ swaps: Promise<number> }> {
  const racer = spawn('python3', [RACER, path.join(workspace, 'race'), path.join(workspace, 'link'), String(RACE_SECONDS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  racer.stdout.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    racer.stdout.on('data', (chunk: string) => {
      output += chunk;
      if (output.includes('ready')) resolve();
    });
    racer.once('exit', (code) => reject(new Error(`racer exited early (${code})`)));
  });
  const swaps = new Promise<number>((resolve, reject) => {
    racer.once('exit', (code) => {
      const count = Number(/swaps (\d+)/.exec(output)?.[1]);
      if (code === 0 && count > 0) resolve(count);
      else reject(new Error(`racer failed (${code}): ${output}`));
    });
  });
  // Not a thenable itself: awaiting startRacer() must not wait for the race to end.
  return { swaps };
}

async function expectOutsideUntouched(): Promise<void> {
  expect((await readdir(outside, { recursive: true })).sort()).toEqual(['outside-only.txt', 'probe.txt']);
  expect((await stat(path.join(outside, 'probe.txt'))).size).toBe(OUTSIDE_SIZE);
}

describe('ctx.fs under a folder/symlink swap race', () => {
  it('the scoped fs (in this process) never describes, reads or creates anything outside', async () => {
    const denials: unknown[] = [];
    const fs = createScopedFs({ roots: [{ path: workspace, access: 'read_write' }], onDenied: (denial) => denials.push(denial) });
    const seen = { names: new Set<string>(), sizes: new Set<number>(), texts: new Set<string>(), ok: 0 };
    const { swaps: swapped } = await startRacer();
    let done = false;
    void swapped.finally(() => (done = true)).catch(() => undefined);
    for (let index = 0; !done; index += 1) {
      const attempts: Array<() => Promise<void>> = [
        () => fs.writeText(`race/made-${index % 7}/deep/file.txt`, 'written inside').then(() => undefined),
        () => fs.list('race').then((entries) => entries.forEach((entry) => seen.names.add(entry.name))),
        () => fs.stat('race/probe.txt').then((info) => void seen.sizes.add(info.size)),
        () => fs.readText('race/probe.txt').then((text) => void seen.texts.add(text.slice(0, 40))),
      ];
      for (const attempt of attempts)
        await attempt().then(
          () => void (seen.ok += 1),
          () => undefined,
        );
    }
    expect(await swapped).toBeGreaterThan(1000);
    expect(seen.ok).toBeGreaterThan(0);
    expect(denials.length).toBeGreaterThan(0);
    expect([...seen.names].filter((name) => name === 'outside-only.txt')).toEqual([]);
    expect([...seen.sizes].filter((size) => size === OUTSIDE_SIZE)).toEqual([]);
    expect([...seen.texts].filter((text) => text.startsWith('S'))).toEqual([]);
    await expectOutsideUntouched();
  });

  it('an isolate tool never describes, reads or creates anything outside', async () => {
    const runner = isolateRunner('race-loop.mjs', { roots: [root(workspace, 'read_write')] });
    // Warm: the isolate process is up before the race starts.
    expect(jsonOf(await runner.run({ callId: 'warm', args: { iterations: 1 } }, recordingOptions(20_000)))).toMatchObject({ ok: 4 });
    const { swaps: racing } = await startRacer();
    const reports: Array<{ names: string[]; sizes: number[]; texts: string[]; ok: number; refused: number }> = [];
    let done = false;
    void racing.finally(() => (done = true)).catch(() => undefined);
    while (!done) {
      reports.push(jsonOf(await runner.run({ callId: 'race', args: { iterations: 50 } }, recordingOptions(20_000))) as (typeof reports)[number]);
    }
    expect(await racing).toBeGreaterThan(1000);
    expect(reports.reduce((sum, report) => sum + report.ok, 0)).toBeGreaterThan(0);
    expect(reports.reduce((sum, report) => sum + report.refused, 0)).toBeGreaterThan(0);
    expect(reports.flatMap((report) => report.names).filter((name) => name === 'outside-only.txt')).toEqual([]);
    expect(reports.flatMap((report) => report.sizes).filter((size) => size === OUTSIDE_SIZE)).toEqual([]);
    expect(reports.flatMap((report) => report.texts).filter((text) => text.startsWith('S'))).toEqual([]);
    await expectOutsideUntouched();
  });
});
