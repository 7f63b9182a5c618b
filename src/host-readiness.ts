// Readiness of a host for `/readyz` (SPEC section 6.1): ready while the journal
// answers a read. The read is asynchronous (PostgreSQL answers over the
// network), so a journal that is away rejects or hangs rather than throws: the
// probe turns both into "not ready", bounded in time, and never lets a
// rejection escape. Probes that arrive while one is under way share it, so a
// flood of /readyz makes one query at a time.
import type { Journal } from './audit/journal.js';

/** How long a readiness read may take before the journal counts as not answering. */
const READY_PROBE_TIMEOUT_MS = 2_000;

/** A call id no call has: reading it proves the journal answers without touching a record. */
const READY_PROBE_ID = 'readyz-probe';

/** Builds the probe of one journal: resolves true while it answers a read, else false; never rejects. */
export function createJournalReadiness(journal: Pick<Journal, 'get'>, timeoutMs: number = READY_PROBE_TIMEOUT_MS): () => Promise<boolean> {
  let inFlight: Promise<boolean> | undefined;
  return () => {
    inFlight ??= probe(journal, timeoutMs).finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}

async function probe(journal: Pick<Journal, 'get'>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    // A synchronous throw (a closed SQLite journal) and a rejection both mean "not ready".
    const read = Promise.resolve()
      .then(() => journal.get(READY_PROBE_ID))
      .then(
        () => true,
        () => false,
      );
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}
