// Waiting in tests without fixed sleeps: a bounded poll of a condition the
// test can observe (a count, a file, a log line, a journal row), never "wait N ms and hope".
import { readFileSync } from 'node:fs';

type Probe<T> = () => { done: boolean; value: T } | Promise<{ done: boolean; value: T }>;

/** Polls `probe` (sync or async) every `everyMs` until it reports done or `deadlineMs` passes; returns its last value. */
export async function pollUntil<T>(probe: Probe<T>, deadlineMs: number, everyMs = 10): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const { done, value } = await probe();
    if (done || Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Polls `predicate` (sync or async) every `everyMs` until it holds; throws after `timeoutMs` (generous: it only bounds a failure), naming `what`. */
export async function until(predicate: () => boolean | Promise<boolean>, what = 'a condition', timeoutMs = 60_000, everyMs = 10): Promise<void> {
  const met = await pollUntil(
    async () => {
      const done = await predicate();
      return { done, value: done };
    },
    timeoutMs,
    everyMs,
  );
  if (!met) throw new Error(`timed out waiting for ${what}`);
}

/**
 * Polls until `path` holds at least one whole line (a fixture's readiness file: `echo ready > ./ready`
 * creates the file before it writes the line); returns its text, '' if the deadline passed first.
 */
export async function waitForLineIn(path: string, deadlineMs = 10_000): Promise<string> {
  return pollUntil(() => {
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      // not there yet
    }
    return { done: text.endsWith('\n'), value: text };
  }, deadlineMs);
}
