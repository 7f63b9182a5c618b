// Whole-host tests for the process runner: a host killed with SIGKILL takes its
// tools with it, and a host that inherited stray descriptors does not pass them
// on. The host is test/fixtures/tools/process/host.mjs on the compiled dist
// (`npm test` builds it first).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { findMarkedProcesses, pollUntil, waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';
import { FIXTURES_DIR, newWorkdir, removeWorkdirs } from '../../helpers/process-runner-test.js';
import { newMarker } from '../../helpers/proc-scan.js';

const DIST_RUNNER_DIR = fileURLToPath(new URL('../../../dist/src/runner/', import.meta.url));

let marker = newMarker('proc');
let host: ChildProcess | undefined;

function spawnRunnerHost(mode: 'hang' | 'persistent-hang' | 'list-fds', workdir: string, stdio: ('pipe' | 'ignore')[]): ChildProcess {
  if (!existsSync(join(DIST_RUNNER_DIR, 'process', 'process-runner.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  host = spawn(process.execPath, ['--no-node-snapshot', join(FIXTURES_DIR, 'host.mjs'), pathToFileURL(DIST_RUNNER_DIR).href, marker, workdir, mode], { stdio });
  return host;
}

async function readLine(child: ChildProcess): Promise<string> {
  let text = '';
  for await (const chunk of child.stdout ?? []) {
    text += String(chunk);
    const newline = text.indexOf('\n');
    if (newline !== -1) return text.slice(0, newline);
  }
  throw new Error(`host ended before writing a line: ${text}`);
}

afterEach(async () => {
  if (host?.exitCode === null && host.signalCode === null) host.kill('SIGKILL');
  host = undefined;
  expect(await waitForNoMarkedProcesses(marker)).toEqual([]);
  marker = newMarker('proc');
  removeWorkdirs();
});

describe('process runner in a whole host', () => {
  // Readiness in both: the tool's double-forked, setsid'd grandchild is running.
  it.each([
    { what: 'tool process', mode: 'hang', grandchild: '/bin/sleep 1001' },
    { what: 'persistent pool process', mode: 'persistent-hang', grandchild: '/bin/sleep 1003' },
  ] as const)('leaves no $what behind when the host itself is killed with SIGKILL', async ({ mode, grandchild }) => {
    const child = spawnRunnerHost(mode, newWorkdir(), ['ignore', 'pipe', 'pipe']);
    expect(await readLine(child)).toBe('running');
    const found = await pollUntil(() => {
      const matching = findMarkedProcesses(marker).filter((candidate) => candidate.cmdline === grandchild);
      return { done: matching.length > 0, value: matching };
    }, 10_000);
    expect(found).toHaveLength(1);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    expect(await waitForNoMarkedProcesses(marker)).toEqual([]);
  });

  it('does not pass a descriptor the host inherited without close-on-exec to the tool', async () => {
    // fd 40 of the host is a pipe its parent left open and inheritable. (Node marks the
    // descriptors from 0 up to the first gap past 15 close-on-exec at startup, so a
    // stray descriptor is only ever seen above such a gap.)
    const stdio: ('pipe' | 'ignore')[] = ['ignore', 'pipe', 'pipe', ...Array.from({ length: 37 }, () => 'ignore' as const), 'pipe'];
    const child = spawnRunnerHost('list-fds', newWorkdir(), stdio);
    const report = JSON.parse(await readLine(child)) as { hostInheritable: number[]; outcome: { ok: boolean; output?: { json: string } } };
    expect(report.hostInheritable).toContain(40);
    expect(report.outcome.ok).toBe(true);
    expect(JSON.parse(report.outcome.output?.json ?? 'null')).toEqual([0, 1, 2]);
  });
});
