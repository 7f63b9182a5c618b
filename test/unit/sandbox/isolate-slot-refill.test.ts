// IsolateSlot's refill: a call takes the spare whose top level ran ahead without
// waiting for the rest of the refill (the next context being made), and the refill
// takes no synchronous step while that call's code may hold the isolate.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { IsolateSlot, SPARE_CONTEXTS, toPreludeClosure } from '../../../sandbox/isolate/isolate-slot.mjs';

const ivm = createRequire(import.meta.url)('isolated-vm');
const PRELUDE = readFileSync(new URL('../../../sandbox/isolate/isolate-prelude.mjs', import.meta.url), 'utf8');
const TOOL = `globalThis.madeByTopLevel = (globalThis.madeByTopLevel ?? 0) + 1;
export default async function tool() {
  const seen = { seen: globalThis.madeByTopLevel, left: globalThis.leftByCall ?? null };
  globalThis.leftByCall = 'yes';
  return seen;
}`;

const slots: IsolateSlot[] = [];
afterEach(() => {
  for (const slot of slots.splice(0)) slot.dispose('closed');
});

function newSlot(): IsolateSlot {
  const slot = new IsolateSlot(
    ivm,
    {
      toolName: 'refill_probe',
      preludeClosure: toPreludeClosure(PRELUDE),
      toolSource: TOOL,
      memoryMb: 32,
      runtimeOptions: { maxPendingHostCalls: 4, maxOutputChars: 10_000, maxMessageChars: 1000, maxEvents: 10, maxEventChars: 100, maxPathChars: 4096 },
    },
    () => undefined,
  );
  slots.push(slot);
  return slot;
}

/** Runs the tool (which leaves a global behind) in a context taken from the slot, as the isolate process does. */
async function runIn(prepared: any): Promise<unknown> {
  const args = new ivm.ExternalCopy({}).copyInto({ release: true });
  const envelope = await prepared.runtime.apply(undefined, ['run', prepared.tool.module.namespace.derefInto(), args, 'c'], {
    timeout: 5000,
    result: { copy: true, promise: true },
  });
  return JSON.parse(envelope.json);
}

describe('IsolateSlot refill', () => {
  it('hands a call the spare run ahead while the next context is still being made, and prepares that one after the call', async () => {
    const slot = newSlot();
    slot.refill();
    await slot.whenRefilled();
    expect(slot.spares).toHaveLength(SPARE_CONTEXTS);
    const first = await slot.take();
    expect(first.evaluated).toEqual({ ok: true });
    expect(await runIn(first)).toEqual({ seen: 1, left: null });
    first.release();

    // Hold the refill's new context (the isolate's asynchronous createContext) until the test lets it go.
    // (The isolate is a frozen native object: the slot gets a view of it whose createContext waits.)
    const isolate = slot.isolate;
    let letGo: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    const heldCreate = async () => {
      const context = await isolate.createContext();
      await gate;
      return context;
    };
    slot.isolate = new Proxy(isolate, {
      get: (target, key) => {
        if (key === 'createContext') return heldCreate;
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    slot.refill();
    // Resolves with the gate still shut: the call waits for its spare's top level, not the refill.
    const second = await slot.take();
    expect(slot.refilling).toBeDefined();
    expect(second.evaluated).toEqual({ ok: true });
    letGo();
    await slot.whenRefilled();
    // The fresh context came back while the call held its own: kept, never prepared (nor used) then.
    expect(slot.rawContexts).toHaveLength(1);
    expect(await runIn(second)).toEqual({ seen: 1, left: null });
    second.release();

    slot.refill();
    await slot.whenRefilled();
    expect(slot.rawContexts).toHaveLength(0);
    expect(slot.spares).toHaveLength(SPARE_CONTEXTS);
    // Every context is fresh: nothing of the earlier calls' top levels or globals is seen.
    for (let index = 0; index < 4; index += 1) {
      const prepared = await slot.take();
      expect(await runIn(prepared)).toEqual({ seen: 1, left: null });
      prepared.release();
      slot.refill();
    }
  });
});
