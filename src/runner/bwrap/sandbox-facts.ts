// What one host has learned about its machine while building sandboxes: where
// bubblewrap and prlimit are, what this bubblewrap supports, whether namespaces,
// seccomp and a pids cgroup work, the system mounts, the encoded seccomp filter.
// Each is learned once (a few milliseconds, or a stat per PATH entry, that would
// otherwise run at every sandbox start) and then kept by the host that learned
// it (its ProcessServices), not by the module: two hosts in one process learn
// for themselves, and a test that swaps bubblewrap builds fresh facts instead of
// clearing a global cache.

/** One host's memo of machine facts, by key (`<what>\0<inputs>`). */
export class SandboxFacts {
  private readonly known = new Map<string, unknown>();

  /**
   * The fact under `key`, learned with `learn` the first time. `keep` says
   * whether a learned value is kept (a program not found is looked for again,
   * so installing it needs no restart).
   */
  remember<T>(key: string, learn: () => T, keep: (value: T) => boolean = () => true): T {
    if (this.known.has(key)) return this.known.get(key) as T;
    const value = learn();
    if (keep(value)) this.known.set(key, value);
    return value;
  }

  /** Whether the fact under `key` is known (learning it again would only repeat the work). */
  knows(key: string): boolean {
    return this.known.has(key);
  }

  /** Forgets the fact under `key`: it is learned again at its next use. */
  forget(key: string): void {
    this.known.delete(key);
  }

  /** How many facts are known (tests: two hosts learn their own). */
  get size(): number {
    return this.known.size;
  }
}
