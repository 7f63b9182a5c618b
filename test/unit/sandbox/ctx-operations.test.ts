// The isolate process's ctx operations, in this process: ctx.fs within the
// declared roots, ctx.fetch refused by name without a grant, progress and log
// bounded per call, and only plain, path-free failures answered to the tool.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCtxOperations, MAX_PENDING_CTX_CALLS, newCtxCall } from '../../../sandbox/isolate/ctx-operations.mjs';
import { ISOLATE_WIRE_LIMITS } from '../../../sandbox/shared/limits.mjs';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';

const dirs: TempDir[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

function setup(access: 'read' | 'read_write' = 'read') {
  const dir = makeTempDir('toolhost-ctx-ops-');
  dirs.push(dir);
  const sent: Array<Record<string, unknown>> = [];
  const running = new Set<object>();
  const ops = createCtxOperations({
    config: {
      type: 'init',
      toolName: 'probe',
      ivmPath: '',
      entryPath: '',
      preludePath: '',
      memoryMb: 16,
      floodCapBytes: 1024,
      maxIsolates: 1,
      roots: [{ path: dir.path, access }],
      protectedPaths: [],
      hiddenPaths: [],
    },
    send: (message) => sent.push(message as Record<string, unknown>),
    isRunning: (call) => running.has(call),
  });
  const call = newCtxCall(7, undefined);
  running.add(call);
  /** One ctx call, answered. */
  const ask = (op: unknown, args: unknown): Promise<{ ok: boolean; value: any }> => new Promise((resolve) => ops.handle(call, 1, op, args, (ok, value) => resolve({ ok, value })));
  return { dir: dir.path, sent, ops, call, ask, end: () => running.delete(call) };
}

describe('ctx operations', () => {
  it('reads and lists within the declared roots', async () => {
    const { dir, ask } = setup();
    writeFileSync(join(dir, 'a.txt'), 'hello');
    expect(await ask('fs.readText', [join(dir, 'a.txt')])).toEqual({ ok: true, value: 'hello' });
    expect(await ask('fs.list', [dir])).toMatchObject({ ok: true, value: [expect.objectContaining({ name: 'a.txt' })] });
  });

  it('refuses a path outside the roots and reports the denial as the call’s, naming no host path in the answer', async () => {
    const { sent, ask } = setup();
    const answer = await ask('fs.readText', ['/etc/passwd']);
    expect(answer).toMatchObject({ ok: false, value: { code: 'policy_denied' } });
    expect(Object.keys(answer.value).sort()).toEqual(['code', 'message']);
    expect(sent).toEqual([{ type: 'denied', id: 7, op: 'readText', target: '/etc/passwd', reason: 'outside_roots' }]);
  });

  it('refuses a write under a read-only root', async () => {
    const { dir, ask } = setup('read');
    expect(await ask('fs.writeText', [join(dir, 'b.txt'), 'x'])).toMatchObject({ ok: false, value: { code: 'policy_denied' } });
  });

  it('answers an unknown operation or a wrong argument with invalid_argument', async () => {
    const { ask } = setup();
    expect(await ask('fs.remove', ['/x'])).toEqual({ ok: false, value: { code: 'invalid_argument', message: 'unknown ctx operation' } });
    expect(await ask('fs.readText', [42])).toEqual({ ok: false, value: { code: 'invalid_argument', message: 'expected a string argument' } });
  });

  it('refuses a fetch by name without a grant: a denial and a refused attempt, nothing leaves', async () => {
    const { sent, ask } = setup();
    expect(await ask('fetch', ['https://example.com/', {}])).toMatchObject({ ok: false, value: { code: 'policy_denied' } });
    expect(sent.map((message) => message['type'])).toEqual(['egress', 'denied']);
    expect(sent[0]).toMatchObject({ type: 'egress', id: 7, host: 'example.com', port: 443 });
  });

  it('refuses a fetch whose request is out of bounds before any admission', async () => {
    const { sent, ask } = setup();
    expect(await ask('fetch', ['https://example.com/' + 'a'.repeat(ISOLATE_WIRE_LIMITS.maxUrlChars), {}])).toMatchObject({
      ok: false,
      value: { code: 'invalid_argument' },
    });
    expect(await ask('fetch', ['https://example.com/', { body: 'x'.repeat(1024 * 1024 + 1) }])).toMatchObject({
      ok: false,
      value: { code: 'too_large', maxBytes: 1024 * 1024 },
    });
    expect(sent).toEqual([]);
  });

  it('answers too_many_pending past the pending bound', async () => {
    const { ask, call } = setup();
    call.pending = MAX_PENDING_CTX_CALLS;
    expect(await ask('fs.stat', ['/'])).toEqual({ ok: false, value: { code: 'too_many_pending', message: 'too many ctx calls are pending' } });
  });

  it('sends progress and log as events, cut and counted against the call’s bounds', () => {
    const { ops, call, sent } = setup();
    const unanswered = () => {
      throw new Error('an event is never answered');
    };
    ops.handle(call, 0, 'progress', [1, 10, 'half'], unanswered);
    ops.handle(call, 0, 'progress', [Number.NaN], unanswered);
    ops.handle(call, 0, 'log', ['loud', 'x'.repeat(ISOLATE_WIRE_LIMITS.maxMessageChars + 5)], unanswered);
    expect(sent).toEqual([
      { type: 'progress', id: 7, progress: 1, total: 10, message: 'half' },
      { type: 'log', id: 7, level: 'info', message: 'x'.repeat(ISOLATE_WIRE_LIMITS.maxMessageChars) },
    ]);
    call.events = ISOLATE_WIRE_LIMITS.maxEventsPerCall;
    ops.handle(call, 0, 'log', ['info', 'dropped'], unanswered);
    expect(sent).toHaveLength(2);
  });

  it('drops what a call asks or reports once it no longer runs', () => {
    const { ops, call, sent, end } = setup();
    end();
    ops.handle(call, 0, 'log', ['info', 'late'], () => undefined);
    let answered = false;
    ops.handle(call, 1, 'fs.stat', ['/'], () => (answered = true));
    expect(sent).toEqual([]);
    expect(answered).toBe(false);
  });
});
