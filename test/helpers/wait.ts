// Waiting in tests without fixed sleeps: a bounded poll of a condition the
// test can observe (a count, a file, a log line), never "wait N ms and hope".

/** Polls `probe` every 10 ms until it reports done or `deadlineMs` passes; returns its last value. */
export async function pollUntil<T>(probe: () => { done: boolean; value: T }, deadlineMs: number): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const { done, value } = probe();
    if (done || Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Polls `predicate` every 10 ms until it holds; throws after `timeoutMs` (generous: it only bounds a failure), naming `what`. */
export async function until(predicate: () => boolean, what = 'a condition', timeoutMs = 60_000): Promise<void> {
  const met = await pollUntil(() => {
    const done = predicate();
    return { done, value: done };
  }, timeoutMs);
  if (!met) throw new Error(`timed out waiting for ${what}`);
}
