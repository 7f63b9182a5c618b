// The isolate processes of one host: a bounded number stays alive, and when a
// tool needs one past the bound, the tool used least recently whose process is
// idle gives its up (it starts again on its next call). Built by host.ts, one
// per host: two hosts in one process share no isolate process.

/** Isolate processes one host keeps alive at a time (each holds ~50 MB resident). */
export const MAX_ISOLATE_PROCESSES = 8;

/** What the registry can ask of a runner holding a process. */
export interface IsolateProcessOwner {
  /** Stops its process if no call runs there; true when it did. */
  stopIfIdle(): boolean;
}

export class IsolateProcesses {
  // Least recently used first (Map order).
  private readonly owners = new Map<IsolateProcessOwner, true>();
  #started = 0;

  constructor(readonly maxAlive: number = MAX_ISOLATE_PROCESSES) {}

  /** `owner` has (or is starting) a process and was just used: others may give theirs up. */
  touch(owner: IsolateProcessOwner): void {
    this.owners.delete(owner);
    this.owners.set(owner, true);
    for (const candidate of [...this.owners.keys()]) {
      if (this.owners.size <= this.maxAlive) break;
      if (candidate !== owner && candidate.stopIfIdle()) this.owners.delete(candidate);
    }
  }

  /** `owner` no longer has a process. */
  forget(owner: IsolateProcessOwner): void {
    this.owners.delete(owner);
  }

  /** An isolate process of this host came up. */
  noteStarted(): void {
    this.#started += 1;
  }

  /** How many isolate processes this host has started (tests, diagnostics). */
  get startedCount(): number {
    return this.#started;
  }

  /** How many owners hold a process (tests, diagnostics). */
  get aliveCount(): number {
    return this.owners.size;
  }
}
