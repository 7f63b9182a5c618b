// Types for worker-gate.mjs (the thread's side of src/runner/worker/call-gates.ts).
import type { WorkerGateMarks } from '../shared/messages.mjs';

export interface ThreadGate {
  /** True when the call may begin; false when the host withdrew it. */
  begin(task: { readonly slot: number; readonly ticket: number }): boolean;
  /** True when the thread may go on; false when the host is ending it. */
  end(task: { readonly slot: number }): boolean;
}

export function threadGate(buffer: SharedArrayBuffer, marks: WorkerGateMarks, threadId: number): ThreadGate;
