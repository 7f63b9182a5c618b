// The built host against hostile isolate tools, over real stdio with a real
// client (SPEC section 3.1): each attack fails its own call with a stable code,
// and after each one the host answers ping and serves a normal call of another
// tool. The isolates live in an isolate process, never in the host: its peak RSS
// stays low through a large allocation, a concurrent innocent call of the same
// tool succeeds, and a SIGKILLed isolate process fails only its call.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { findMarkedProcesses, pollUntil } from '../helpers/proc-scan.js';
import { makeHostDirs, startClient, stopClient, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

const SWITCH_TOOL = join(REPO_ROOT, 'test/fixtures/tools/isolate/switch.mjs');
/** The host's peak resident set must stay under this through every attack. */
const MAX_HOST_PEAK_RSS_KB = 300 * 1024;

// Unique names: the isolate process of each is found in /proc by its tool name.
const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
const HOSTILE = `hostile_${suffix}`;
const INNOCENT = `innocent_${suffix}`;

let dirs: HostDirs;
let client: HostClient;
let manifests: string;

function manifest(name: string, timeoutMs: number): string {
  return `name: ${name}
description: An isolate tool with many behaviours, some hostile.
sideEffect: read_only
concurrencySafe: true
timeoutMs: ${timeoutMs}
sandbox:
  mode: isolate
  memoryMb: 32
entry: ./switch.js
workspace:
  roots: [{ path: "\${WORKSPACE}", access: read }]
input:
  type: object
  additionalProperties: false
  required: [mode]
  properties:
    mode: { type: string, maxLength: 64 }
    value: { type: string, maxLength: 100 }
    times: { type: integer, minimum: 1, maximum: 10 }
`;
}

beforeAll(async () => {
  await ensureBuilt();
  manifests = mkdtempSync(join(tmpdir(), 'toolhost-e2e-hostile-'));
  copyFileSync(SWITCH_TOOL, join(manifests, 'switch.js'));
  writeFileSync(join(manifests, `${HOSTILE}.yaml`), manifest(HOSTILE, 20_000));
  writeFileSync(join(manifests, `${INNOCENT}.yaml`), manifest(INNOCENT, 20_000));
  dirs = makeHostDirs({ manifests: [manifests] });
  client = await startClient(dirs, { kind: 'v2-legacy' });
}, 300_000);

afterAll(async () => {
  await stopClient(client, dirs);
  expect(isolateProcesses(HOSTILE)).toEqual([]);
  dirs.cleanup();
  rmSync(manifests, { recursive: true, force: true });
});

function call(name: string, args: Record<string, unknown>, onprogress?: (progress: { progress: number }) => void) {
  return client.callTool({ name, arguments: args }, { timeout: 60_000, ...(onprogress ? { onprogress } : {}) });
}

/** After each attack: the host answers ping and serves a normal call of another tool. */
async function expectHostServes(): Promise<void> {
  await (client.raw as unknown as { ping(): Promise<unknown> }).ping();
  const result = await call(INNOCENT, { mode: 'echo', value: 'still here' });
  expect(result['isError']).not.toBe(true);
  expect(JSON.parse((result['content'] as Array<{ text: string }>)[0]?.text ?? '')).toEqual({ echo: 'still here' });
}

function hostPeakRssKb(): number {
  const status = readFileSync(`/proc/${client.pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]);
}

function isolateProcesses(tool: string): number[] {
  return (
    findMarkedProcesses(`TOOLHOST_ISOLATE_TOOL=${tool}`)
      // The node process itself, not the bubblewrap processes above it.
      .filter((found) => found.cmdline.startsWith(`${process.execPath} `) && found.cmdline.includes('isolate-process.mjs'))
      .map((found) => found.pid)
  );
}

describe('hostile isolate tools against the built host', () => {
  const attacks: Array<[string, string, string, Record<string, unknown>]> = [
    ['Atomics.waitAsync on a SharedArrayBuffer (aborted the host before)', 'wait_async', 'tool_error', {}],
    ['a Set of millions (catastrophic out-of-memory)', 'set_bomb', 'memory_limit', { memoryMb: 32 }],
    ['new Array(3e7).fill(1.5) with memoryMb 32', 'array_fill', 'memory_limit', { memoryMb: 32 }],
    ['an 8 MiB error message', 'big_error', 'tool_error', {}],
  ];

  it.each(attacks)('%s: fails with its code, and the host serves on', async (_name, mode, code, details) => {
    const failed = wireErrorOf(await call(HOSTILE, { mode }));
    expect(failed.code).toBe(code);
    expect(failed).toMatchObject(details);
    await expectHostServes();
  });

  it('removes SharedArrayBuffer, Atomics.waitAsync and WebAssembly from tool contexts', async () => {
    const result = await call(HOSTILE, { mode: 'globals' });
    expect(JSON.parse((result['content'] as Array<{ text: string }>)[0]?.text ?? '')).toEqual({
      sharedArrayBuffer: 'undefined',
      waitAsync: 'undefined',
      webAssembly: 'undefined',
    });
  });

  it('floods of 150 log and progress messages of 2 MiB each arrive bounded, and the host serves on', async () => {
    const progress: number[] = [];
    const logged = await call(HOSTILE, { mode: 'log_flood' });
    expect(JSON.parse((logged['content'] as Array<{ text: string }>)[0]?.text ?? '')).toEqual({ logged: 150 });
    const progressed = await call(HOSTILE, { mode: 'progress_flood' }, (event) => progress.push(event.progress));
    expect(JSON.parse((progressed['content'] as Array<{ text: string }>)[0]?.text ?? '')).toEqual({ progressed: 150 });
    // 4000 characters a message and 256 KiB a call: at most 65 of the 150 cross.
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.length).toBeLessThanOrEqual(66);
    await expectHostServes();
  });

  it('an 8 MiB path given to ctx.fs.stat is refused over there, call after call, and the host serves on', async () => {
    const result = await call(HOSTILE, { mode: 'big_path_stat', times: 5 });
    expect(result['isError']).not.toBe(true);
    expect(JSON.parse((result['content'] as Array<{ text: string }>)[0]?.text ?? '')).toEqual({ codes: Array(5).fill('invalid_argument') });
    await expectHostServes();
  });

  it('a heap bomb fails only its own call: a concurrent innocent call of the same tool succeeds', async () => {
    const [bomb, innocent] = await Promise.all([call(HOSTILE, { mode: 'heap_bomb' }), call(HOSTILE, { mode: 'echo', value: 'innocent' })]);
    expect(wireErrorOf(bomb)).toMatchObject({ code: 'memory_limit', memoryMb: 32 });
    expect(innocent['isError']).not.toBe(true);
    expect(JSON.parse((innocent['content'] as Array<{ text: string }>)[0]?.text ?? '')).toEqual({ echo: 'innocent' });
    await expectHostServes();
  });

  it('a SIGKILLed isolate process fails its call with tool_crashed, leaves nothing running, and the next call works', async () => {
    let started = false;
    const running = call(HOSTILE, { mode: 'progress_then_never' }, () => (started = true));
    await pollUntil(() => ({ done: started, value: started }), 20_000);
    const [pid, ...others] = isolateProcesses(HOSTILE);
    expect(others).toEqual([]);
    process.kill(pid ?? 0, 'SIGKILL');
    expect(wireErrorOf(await running)).toMatchObject({ code: 'tool_crashed', reason: 'isolate_process_exited', signal: 'SIGKILL' });
    // The killed process is gone with its sandbox; one replacement at most runs.
    const left = await pollUntil(() => {
      const alive = isolateProcesses(HOSTILE);
      return { done: !alive.includes(pid ?? 0) && alive.length <= 1, value: alive };
    }, 10_000);
    expect(left).not.toContain(pid);
    expect(JSON.parse(((await call(HOSTILE, { mode: 'echo', value: 'again' }))['content'] as Array<{ text: string }>)[0]?.text ?? '')).toEqual({ echo: 'again' });
    await expectHostServes();
  });

  it('kept the host small through all of it (peak RSS below 300 MB)', () => {
    expect(hostPeakRssKb()).toBeGreaterThan(0);
    expect(hostPeakRssKb()).toBeLessThan(MAX_HOST_PEAK_RSS_KB);
  });

  it('never loaded isolated-vm into the host process: the isolates ran elsewhere', () => {
    const maps = readFileSync(`/proc/${client.pid}/maps`, 'utf8');
    expect(maps).toContain('/node'); // the host's own executable: the maps were read
    expect(maps).not.toContain('isolated_vm.node');
  });
});
