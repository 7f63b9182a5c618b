// Each context is hardened and given the prelude by one Script compiled once per
// isolate (preludeScriptSource): the globals a tool must not have are gone before
// the prelude's factory or any tool code runs, in every fresh context.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { IsolateSlot, preludeScriptSource, toPreludeClosure } from '../../../sandbox/isolate/isolate-slot.mjs';

const ivm = createRequire(import.meta.url)('isolated-vm');
const PRELUDE = readFileSync(new URL('../../../sandbox/isolate/isolate-prelude.mjs', import.meta.url), 'utf8');
const TOOL = `const atTopLevel = [typeof SharedArrayBuffer, typeof WebAssembly, typeof FinalizationRegistry, typeof Atomics.wait, typeof Atomics.waitAsync];
export default async function tool() {
  const left = globalThis.leftByCall ?? null;
  globalThis.leftByCall = 'yes';
  return { atTopLevel, left };
}`;
const GONE = ['undefined', 'undefined', 'undefined', 'undefined', 'undefined'];

const disposers: (() => void)[] = [];
afterEach(() => {
  for (const dispose of disposers.splice(0)) dispose();
});

describe('preludeScriptSource', () => {
  it('removes the refused globals, then completes with the prelude factory', () => {
    const isolate = new ivm.Isolate({ memoryLimit: 16 });
    disposers.push(() => isolate.dispose());
    const context = isolate.createContextSync();
    const factory = isolate.compileScriptSync(preludeScriptSource(toPreludeClosure(PRELUDE))).runSync(context, { reference: true });
    expect(factory.typeof).toBe('function');
    expect(context.evalSync('[typeof SharedArrayBuffer, typeof WebAssembly, typeof FinalizationRegistry, typeof Atomics.wait, typeof Atomics.waitAsync].join()')).toBe(GONE.join());
  });
});

describe('IsolateSlot prelude script', () => {
  it('compiles the harden script and the prelude once per isolate, and every fresh context is hardened', async () => {
    const slot = new IsolateSlot(ivm, {
      toolName: 'prelude_script_probe',
      preludeClosure: toPreludeClosure(PRELUDE),
      toolSource: TOOL,
      memoryMb: 32,
      runtimeOptions: { maxPendingHostCalls: 4, maxOutputChars: 10_000, maxMessageChars: 1000, maxEvents: 10, maxEventChars: 100, maxPathChars: 4096 },
    });
    disposers.push(() => slot.dispose('closed'));
    // The isolate is a frozen native object: the slot gets a view of it that counts script compiles.
    const isolate = slot.isolate;
    let scriptCompiles = 0;
    slot.isolate = new Proxy(isolate, {
      get: (target, key) => {
        const value = Reflect.get(target, key, target);
        if (key === 'compileScriptSync') {
          return (...args: unknown[]) => {
            scriptCompiles += 1;
            return value.apply(target, args);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    for (let call = 0; call < 3; call += 1) {
      // A tool that compiles and links: its context holds the module.
      const prepared: any = slot.prepareNow();
      await prepared.tool.module.evaluate({ timeout: 5000 });
      const args = new ivm.ExternalCopy({}).copyInto({ release: true });
      const envelope = await prepared.runtime.apply(undefined, ['run', prepared.tool.module.namespace.derefInto(), args, `c${call}`], {
        timeout: 5000,
        result: { copy: true, promise: true },
      });
      // Hardened before the tool's top level ran, and nothing left by the previous call.
      expect(JSON.parse(envelope.json)).toEqual({ atTopLevel: GONE, left: null });
      prepared.release();
    }
    expect(scriptCompiles).toBe(1);
  });
});
