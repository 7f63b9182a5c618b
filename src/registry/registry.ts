// The loaded tools by name. Built once from loadManifests' result; immutable.
import type { Manifest } from './manifest.js';

export class Registry {
  readonly #byName: ReadonlyMap<string, Manifest>;
  readonly #all: readonly Manifest[];

  /** Names must be unique (loadManifests guarantees it); a clash here is a bug in the caller. */
  constructor(manifests: readonly Manifest[]) {
    const byName = new Map<string, Manifest>();
    for (const manifest of manifests) {
      if (byName.has(manifest.name)) throw new Error(`duplicate tool name "${manifest.name}" in the registry`);
      byName.set(manifest.name, manifest);
    }
    this.#byName = byName;
    this.#all = Object.freeze([...byName.values()].sort((a, b) => compareNames(a.name, b.name)));
  }

  /** The manifest of `name`, or undefined when no such tool is loaded. */
  lookup(name: string): Manifest | undefined {
    return this.#byName.get(name);
  }

  /** Every tool name, sorted (deterministic tools/list order). */
  names(): string[] {
    return this.#all.map((manifest) => manifest.name);
  }

  /** Every manifest, sorted by name. */
  all(): readonly Manifest[] {
    return this.#all;
  }
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
