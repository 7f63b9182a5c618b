// A call's first synchronous step (run-at-once.mjs) holds the isolate process's
// main thread, so every other call of the process waits behind it: a tool that
// never lets go holds them RUN_AT_ONCE_SLICE_MS at most, and once. The test
// checks that the holder's step was taken (a call that found its slot busy runs
// on its isolate's thread and would prove nothing) and cut, through the main
// loop's onStepAtOnce seam, and times the bystander behind it.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createMainLoop } from '../../../sandbox/isolate/main-loop.mjs';

interface Sent {
  readonly message: { type: string; id?: number; kind?: string; envelope?: unknown };
  readonly body: Uint8Array | undefined;
  readonly atMs: number;
}

/** Long enough that a step cut at the holder's deadline instead of the slice cannot pass. */
const HOLDER_DEADLINE_MS = 10_000;
/** The bystander's answer, counted from the holder's arrival: the slice (RUN_AT_ONCE_SLICE_MS) and room for a loaded machine, far below the holder's deadline. */
const BYSTANDER_BOUND_MS = 2_000;

/** Stops what the loops still run (a holder spins on its isolate's thread until its isolate goes). */
const stoppers: (() => void)[] = [];
afterEach(() => {
  for (const stop of stoppers.splice(0)) stop();
});

function startLoop() {
  const sent: Sent[] = [];
  const steps: { id: number; outcome: 'done' | 'cut' }[] = [];
  let lastRun = 0;
  const waiters: (() => void)[] = [];
  const running = new Set<number>();
  const fail = (why: string) => {
    throw new Error(`the isolate main loop ended: ${why}`);
  };
  const loop = createMainLoop({
    send: (message, body) => {
      sent.push({ message: message as Sent['message'], body, atMs: performance.now() });
      for (const wake of waiters.splice(0)) wake();
    },
    sendNow: (message) => fail(JSON.stringify(message)),
    die: (why) => fail(why),
    exit: (code) => fail(`exit ${code}`),
    // Steps are taken in the order the calls came, before the next call's (each holds the thread).
    onStepAtOnce: (outcome) => steps.push({ id: lastRun, outcome }),
  });
  const next = async (matches: (sent: Sent) => boolean): Promise<Sent> => {
    for (;;) {
      const found = sent.find(matches);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const run = (id: number, args: Record<string, unknown>, timeoutMs: number) => {
    running.add(id);
    lastRun = id;
    loop.onFrame({ type: 'run', id, callId: `call-${id}`, args, timeoutMs });
  };
  const resultOf = (id: number) => next((entry) => entry.message.type === 'result' && entry.message.id === id);
  const handle = {
    steps,
    next,
    run,
    resultOf,
    stop: (id: number) => {
      running.delete(id);
      loop.onFrame({ type: 'stop', id });
    },
  };
  stoppers.push(() => {
    for (const id of running) loop.onFrame({ type: 'stop', id });
    running.clear();
  });
  loop.onFrame({
    type: 'init',
    toolName: 'switch',
    ivmPath: createRequire(import.meta.url).resolve('isolated-vm'),
    entryPath: fileURLToPath(new URL('../../fixtures/tools/isolate/switch.mjs', import.meta.url)),
    preludePath: fileURLToPath(new URL('../../../sandbox/isolate/isolate-prelude.mjs', import.meta.url)),
    memoryMb: 32,
    floodCapBytes: 1024 * 1024,
    maxIsolates: 4,
    roots: [],
    protectedPaths: [],
    hiddenPaths: [],
  });
  return handle;
}

describe('run at once: a hostile first step', () => {
  it('holds the other calls of its process the slice at most, and only the first time', async () => {
    const loop = startLoop();
    // Ready: the first slot's refill is over, so nothing of ours is on its isolate's thread (quiet).
    await loop.next((entry) => entry.message.type === 'ready');

    const arrivedMs = performance.now();
    loop.run(1, { mode: 'busy_loop' }, HOLDER_DEADLINE_MS);
    const bystander = loop.resultOf(2);
    // The bystander is sent once the holder's step is over: it runs in the microtasks after the frame.
    await new Promise(setImmediate);
    loop.run(2, { mode: 'echo', value: 'bystander' }, HOLDER_DEADLINE_MS);
    const answered = await bystander;
    expect(answered.message).toMatchObject({ kind: 'envelope', envelope: { ok: true } });
    expect(Buffer.from(answered.body ?? []).toString('utf8')).toBe('{"echo":"bystander"}');
    expect(answered.atMs - arrivedMs).toBeLessThan(BYSTANDER_BOUND_MS);
    expect(loop.steps).toEqual([{ id: 1, outcome: 'cut' }]);

    // The holder runs on, on its isolate's thread, until its deadline; no call of this process
    // takes a synchronous step any more, so the next holder holds nobody up.
    loop.run(3, { mode: 'busy_loop' }, HOLDER_DEADLINE_MS);
    loop.run(4, { mode: 'echo', value: 'bystander again' }, HOLDER_DEADLINE_MS);
    const again = await loop.resultOf(4);
    expect(Buffer.from(again.body ?? []).toString('utf8')).toBe('{"echo":"bystander again"}');
    expect(loop.steps).toEqual([{ id: 1, outcome: 'cut' }]);
    loop.stop(1);
    loop.stop(3);
    await loop.next((entry) => entry.message.type === 'stopped' && entry.message.id === 3);
  });
});
