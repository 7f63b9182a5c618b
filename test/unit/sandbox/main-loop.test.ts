// The isolate process's main loop, in this process with real isolates (no pipes,
// no sandbox): the host's frames in, the frames it would send out. A result's
// JSON crosses as the frame's body, held to the flood cap in UTF-8 bytes; a
// stopped call is answered `stopped` and never `result`; stage times are sent
// only when init asked for them.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createMainLoop } from '../../../sandbox/isolate/main-loop.mjs';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';

const PRELUDE_PATH = fileURLToPath(new URL('../../../sandbox/isolate/isolate-prelude.mjs', import.meta.url));
const IVM_PATH = createRequire(import.meta.url).resolve('isolated-vm');
const TOOL = `export default async function tool(args) {
  if (args.mode === 'wide') return 'é'.repeat(9);
  if (args.mode === 'hold') return new Promise(() => {});
  return { echoed: args.text };
}`;

type Sent = { message: Record<string, any>; body: string | undefined };

const dirs: TempDir[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

/** A main loop over a tool module; `sent` collects what it would write to the host. */
async function startLoop(extra: Record<string, unknown> = {}) {
  const dir = makeTempDir('toolhost-main-loop-');
  dirs.push(dir);
  const entryPath = join(dir.path, 'tool.mjs');
  writeFileSync(entryPath, TOOL);
  const sent: Sent[] = [];
  const waiters: Array<() => void> = [];
  const record = (message: any, body?: Uint8Array) => {
    sent.push({ message, body: body === undefined ? undefined : Buffer.from(body).toString('utf8') });
    for (const wake of waiters.splice(0)) wake();
  };
  const loop = createMainLoop({
    send: record,
    sendNow: record,
    die: (why) => {
      throw new Error(`die: ${why}`);
    },
    exit: (code) => {
      throw new Error(`exit ${code}`);
    },
  });
  /** The first frame sent that `match` accepts, once it is sent. */
  const frame = async (match: (message: Record<string, any>) => boolean): Promise<Sent> => {
    for (;;) {
      const found = sent.find((entry) => match(entry.message));
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  loop.onFrame({
    type: 'init',
    toolName: 'loop_probe',
    ivmPath: IVM_PATH,
    entryPath,
    preludePath: PRELUDE_PATH,
    memoryMb: 32,
    floodCapBytes: 18,
    maxIsolates: 2,
    roots: [],
    protectedPaths: [],
    hiddenPaths: [],
    ...extra,
  });
  await frame((message) => message['type'] === 'ready');
  const run = (id: number, args: Record<string, unknown>) => {
    loop.onFrame({ type: 'run', id, callId: `call-${id}`, args, timeoutMs: 5000, sentAtUs: 0 });
    return frame((message) => message['id'] === id && (message['type'] === 'result' || message['type'] === 'stopped'));
  };
  return { loop, sent, frame, run };
}

describe('the isolate main loop', () => {
  it('says loaded, then ready, and answers a call with its JSON as the frame body', async () => {
    const { sent, run } = await startLoop();
    expect(sent.slice(0, 2).map((entry) => entry.message['type'])).toEqual(['loaded', 'ready']);
    const answer = await run(1, { text: 'hi' });
    expect(answer.message).toEqual({ type: 'result', id: 1, kind: 'envelope', envelope: { ok: true, bodyBytes: 15 } });
    expect(answer.body).toBe('{"echoed":"hi"}');
  });

  it('holds a result to the flood cap in UTF-8 bytes (11 characters, 20 bytes), sending no body', async () => {
    const { run } = await startLoop();
    const answer = await run(1, { mode: 'wide' });
    expect(answer.message).toEqual({ type: 'result', id: 1, kind: 'envelope', envelope: { ok: false, code: 'output_limit' } });
    expect(answer.body).toBeUndefined();
  });

  it('answers a stopped call with stopped, never a result, and serves the next call', async () => {
    const { loop, sent, frame, run } = await startLoop();
    loop.onFrame({ type: 'run', id: 1, callId: 'held', args: { mode: 'hold' }, timeoutMs: 5000 });
    loop.onFrame({ type: 'stop', id: 1 });
    await frame((message) => message['type'] === 'stopped' && message['id'] === 1);
    expect((await run(2, { text: 'next' })).body).toBe('{"echoed":"next"}');
    expect(sent.filter((entry) => entry.message['type'] === 'result' && entry.message['id'] === 1)).toEqual([]);
  });

  it('sends stage times only when init asked for them', async () => {
    const plain = await startLoop();
    expect((await plain.run(1, { text: 'a' })).message).not.toHaveProperty('times');
    const timed = await startLoop({ stageTimes: true });
    expect((await timed.run(1, { text: 'a' })).message['times']).toEqual({
      slotUs: expect.any(Number),
      runUs: expect.any(Number),
      encodeUs: expect.any(Number),
      inboundUs: expect.any(Number),
      sentAtUs: expect.any(Number),
    });
  });
});
