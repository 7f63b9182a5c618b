// The start gates between the host (CallGates) and a worker thread (sandbox/worker/worker-gate.mjs),
// both sides on one SharedArrayBuffer: a withdrawn call never begins, ending a thread is only
// ever decided for the call it is running, and a finished call is never mistaken for a running one.
import { describe, expect, it } from 'vitest';
import { CallGates, GATE_MARKS } from '../../../../src/runner/worker/call-gates.js';
import { threadGate } from '../../../../sandbox/worker/worker-gate.mjs';

function setUp(size = 2) {
  const gates = new CallGates(size);
  return { gates, thread: threadGate(gates.buffer, GATE_MARKS, 7), other: threadGate(gates.buffer, GATE_MARKS, 8) };
}

describe('worker call gates', () => {
  it('lets a handed-over call begin once, on one thread, and lets the thread go on after it', () => {
    const { gates, thread, other } = setUp();
    const task = gates.open();
    expect(thread.begin(task)).toBe(true);
    expect(other.begin(task)).toBe(false);
    expect(thread.end(task)).toBe(true);
    expect(gates.stop(task.slot, task.ticket)).toEqual({ kind: 'finished' });
  });

  it('withdraws a call its thread has not begun: the thread skips it, and it may run elsewhere', () => {
    const { gates, thread } = setUp();
    const task = gates.open();
    expect(gates.stop(task.slot, task.ticket)).toEqual({ kind: 'withdrawn' });
    expect(thread.begin(task)).toBe(false);
    expect(gates.withdrawUnbegun(task.slot, task.ticket)).toBe(true);
  });

  it('names the thread running a stopped call, and that thread begins nothing after it', () => {
    const { gates, thread } = setUp();
    const task = gates.open();
    expect(thread.begin(task)).toBe(true);
    expect(gates.stop(task.slot, task.ticket)).toEqual({ kind: 'running', threadId: 7 });
    // The call ends on its own just before the thread is ended: the thread must stop taking calls.
    expect(thread.end(task)).toBe(false);
    expect(gates.withdrawUnbegun(task.slot, task.ticket)).toBe(false);
  });

  it('never lets a stale task of a dead thread begin in a gate armed again for another call', () => {
    const { gates, thread } = setUp(1);
    const stale = gates.open();
    expect(gates.withdrawUnbegun(stale.slot, stale.ticket)).toBe(true);
    gates.release(stale.slot);
    const fresh = gates.open();
    expect(fresh.slot).toBe(stale.slot);
    expect(thread.begin(stale)).toBe(false);
    expect(thread.begin(fresh)).toBe(true);
  });

  it('hands out each gate once until it is released', () => {
    const { gates } = setUp(2);
    const a = gates.open();
    const b = gates.open();
    expect(a.slot).not.toBe(b.slot);
    expect(gates.available).toBe(0);
    expect(() => gates.open()).toThrow();
    gates.release(a.slot);
    expect(gates.available).toBe(1);
  });
});
