// The prelude module becomes a closure body with exactly one edit: its export.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toPreludeClosure } from '../../../sandbox/isolate/isolate-slot.mjs';

const PRELUDE = readFileSync(new URL('../../../sandbox/isolate/isolate-prelude.mjs', import.meta.url), 'utf8');

describe('toPreludeClosure', () => {
  it('turns the real prelude into a closure returning the runtime dispatcher', () => {
    const closure = toPreludeClosure(PRELUDE);
    expect(closure).not.toContain('export default');
    // Compile it as a plain function body here (not run in Node: it only needs V8 built-ins).
    const build = new Function('$0', '$1', '$2', '$3', '$4', '$5', '$6', closure) as (...args: unknown[]) => unknown;
    const calls: unknown[][] = [];
    const runtime = build((...args: unknown[]) => calls.push(args), 4, 1000, 100, 10, 4000, 4096);
    expect(typeof runtime).toBe('function');
  });

  it('runs a tool through the dispatcher with strict JSON results', async () => {
    const runtime = new Function('$0', '$1', '$2', '$3', '$4', '$5', '$6', toPreludeClosure(PRELUDE))(() => {}, 4, 1000, 100, 10, 4000, 4096) as (
      kind: string,
      ...args: unknown[]
    ) => Promise<unknown>;
    await expect(runtime('run', { default: async (args: { n: number }) => ({ n: args.n + 1 }) }, { n: 1 }, 'c')).resolves.toEqual({
      ok: true,
      json: '{"n":2}',
      hostCalls: 0,
    });
    await expect(runtime('run', { default: async () => ({ f: () => 1 }) }, {}, 'c')).resolves.toEqual({
      ok: false,
      code: 'invalid_output',
      message: 'the tool returned a value that is not JSON',
      reason: 'function',
      path: '/f',
      hostCalls: 0,
    });
    // An undefined object property is left out, as JSON.stringify does.
    await expect(runtime('run', { default: async () => ({ n: 1, gone: undefined }) }, {}, 'c')).resolves.toEqual({ ok: true, json: '{"n":1}', hostCalls: 0 });
    await expect(runtime('run', {}, {}, 'c')).resolves.toMatchObject({ ok: false, code: 'tool_error' });
  });

  it('cuts off a flood of progress and log events before it reaches the host', async () => {
    const sent: unknown[][] = [];
    const runtime = new Function('$0', '$1', '$2', '$3', '$4', '$5', '$6', toPreludeClosure(PRELUDE))((...args: unknown[]) => sent.push(args), 4, 1000, 100, 10, 8, 4096) as (
      kind: string,
      ...args: unknown[]
    ) => Promise<unknown>;
    const flood = async (_args: unknown, ctx: { log(level: string, message: string): void }) => {
      for (let index = 0; index < 1000; index += 1) ctx.log('info', `line ${index}`);
      return null;
    };
    // hostCalls: what reached the host, so its answer waits for all ten.
    await expect(runtime('run', { default: flood }, {}, 'c')).resolves.toEqual({ ok: true, json: 'null', hostCalls: 10 });
    expect(sent).toHaveLength(10);
    expect(sent[0]).toEqual([0, 'log', ['info', 'line 0']]);
    expect(sent[9]).toEqual([0, 'log', ['info', 'line 9']]);
  });

  it('cuts a long log message to maxEventChars before it leaves the isolate', async () => {
    const sent: unknown[][] = [];
    const runtime = new Function('$0', '$1', '$2', '$3', '$4', '$5', '$6', toPreludeClosure(PRELUDE))((...args: unknown[]) => sent.push(args), 4, 1000, 100, 10, 8, 4096) as (
      kind: string,
      ...args: unknown[]
    ) => Promise<unknown>;
    const loud = async (_args: unknown, ctx: { log(level: string, message: string): void }) => ctx.log('info', 'x'.repeat(100));
    await runtime('run', { default: loud }, {}, 'c');
    expect(sent).toEqual([[0, 'log', ['info', 'xxxxxxxx']]]);
  });

  it('refuses a source without exactly one createToolRuntime export', () => {
    expect(() => toPreludeClosure('export const x = 1;')).toThrow();
    const twice = 'export default function createToolRuntime(a) {}\nexport default function createToolRuntime(b) {}';
    expect(() => toPreludeClosure(twice)).toThrow();
  });
});
