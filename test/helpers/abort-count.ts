// Counts the AbortControllers made while stubbed in: a call that nobody
// cancels must make none (call-control.ts makes its signal only when asked).
// Undo with vi.unstubAllGlobals().
import { vi } from 'vitest';

export function countAbortControllers(): () => number {
  const Original = globalThis.AbortController;
  let made = 0;
  vi.stubGlobal(
    'AbortController',
    class extends Original {
      constructor() {
        super();
        made++;
      }
    },
  );
  return () => made;
}
