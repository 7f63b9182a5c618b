// One signal that aborts when any of several does, linked by hand. Node 20's
// AbortSignal.any keeps a composite signal that has 'abort' listeners alive
// until it aborts (so a timeout can still reach it), and a call's signal
// normally never aborts: one composite per call grew the host by about 1 KB a
// call, forever. Here the sources hold the link only until unlink().
/** A signal that follows `sources`, and unlink() to detach it once the work it guards is over. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  unlink(): void;
}

/** Aborts (with the source's reason) as soon as any source aborts; already aborted if one is. */
export function linkSignals(sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const links: Array<readonly [AbortSignal, () => void]> = [];
  const unlink = (): void => {
    for (const [source, onAbort] of links) source.removeEventListener('abort', onAbort);
    links.length = 0;
  };
  for (const source of sources) {
    if (source.aborted) {
      unlink();
      controller.abort(source.reason);
      break;
    }
    const onAbort = (): void => {
      unlink();
      controller.abort(source.reason);
    };
    source.addEventListener('abort', onAbort, { once: true });
    links.push([source, onAbort]);
  }
  return { signal: controller.signal, unlink };
}
