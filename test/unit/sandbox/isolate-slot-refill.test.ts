// IsolateSlot's refill: a call takes the spare whose top level ran ahead without
// waiting for the rest of the refill (the next context being made), and the refill
// takes no synchronous step while that call's code may hold the isolate (code the
// call runs on the isolate's thread, through runsToolCode, as the main loop does).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { IsolateSlot, SPARE_CONTEXTS, toPreludeClosure } from '../../../sandbox/isolate/isolate-slot.mjs';
import { runAtOnce } from '../../../sandbox/isolate/run-at-once.mjs';

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

function newSlot(stepsAtOnce = { on: false }): IsolateSlot {
  const slot = new IsolateSlot(
    ivm,
    {
      toolName: 'refill_probe',
      preludeClosure: toPreludeClosure(PRELUDE),
      toolSource: TOOL,
      memoryMb: 32,
      runtimeOptions: { maxPendingHostCalls: 4, maxOutputChars: 10_000, maxMessageChars: 1000, maxEvents: 10, maxEventChars: 100, maxPathChars: 4096 },
    },
    stepsAtOnce,
  );
  slots.push(slot);
  return slot;
}

/** Runs the tool (which leaves a global behind) in a context taken from the slot, on the isolate's thread, as the isolate process does. */
async function runIn(slot: IsolateSlot, prepared: any): Promise<unknown> {
  const args = new ivm.ExternalCopy({}).copyInto({ release: true });
  const envelope: { json: string } = await slot.runsToolCode(
    prepared.runtime.apply(undefined, ['run', prepared.tool.module.namespace.derefInto(), args, 'c'], {
      timeout: 5000,
      result: { copy: true, promise: true },
    }),
  );
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
    expect(await runIn(slot, first)).toEqual({ seen: 1, left: null });
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
    const secondRun = runIn(slot, second);
    letGo();
    await slot.whenRefilled();
    // The fresh context came back while the call's code could hold the isolate: kept beside the
    // one made ahead by the refill before, neither prepared (nor used) then.
    expect(slot.rawContexts).toHaveLength(2);
    expect(await secondRun).toEqual({ seen: 1, left: null });
    second.release();

    slot.refill();
    await slot.whenRefilled();
    // Spares made from the kept contexts; one more made ahead, for the next refill to prepare at once.
    expect(slot.rawContexts).toHaveLength(1);
    expect(slot.spares).toHaveLength(SPARE_CONTEXTS);
    // Every context is fresh: nothing of the earlier calls' top levels or globals is seen.
    for (let index = 0; index < 4; index += 1) {
      const prepared = await slot.take();
      expect(await runIn(slot, prepared)).toEqual({ seen: 1, left: null });
      prepared.release();
      slot.refill();
    }
  });

  it('prepares the context made ahead as soon as a call whose code ran at once is over, before any wait', async () => {
    const slot = newSlot({ on: true });
    slot.refill();
    await slot.whenRefilled();
    expect(slot.spares).toHaveLength(SPARE_CONTEXTS);
    expect(slot.rawContexts).toHaveLength(1);
    const prepared = await slot.take();
    expect(slot.mayStepAtOnce).toBe(true);
    const args = new ivm.ExternalCopy({}).copyInto({ release: true });
    const { module } = prepared.tool as { module: any };
    const envelope = await runAtOnce(prepared.runtime, ['run', module.namespace.derefInto(), args, 'c'], 5000, () => slot.isUsable);
    expect(JSON.parse((envelope as { json: string }).json)).toEqual({ seen: 1, left: null });
    prepared.release();
    slot.refill();
    // Synchronously, in refill() itself: the next call finds this thread free.
    expect(slot.spares).toHaveLength(SPARE_CONTEXTS);
    expect(slot.rawContexts).toHaveLength(0);
    await slot.whenRefilled();
    expect(slot.spares[0]?.evaluated).toEqual({ ok: true });
    expect(slot.rawContexts).toHaveLength(1);
    expect(slot.mayStepAtOnce).toBe(true);
  });
});
