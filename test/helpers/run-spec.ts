// The one RunSpec builder of the tests: what a runner gets, with the fields a
// test does not care about at plain defaults (no env, no roots, no network,
// 1 MiB of output, nothing protected). Each test names what matters to it.
import type { RunSpec } from '../../src/runner/types.js';

export type RunSpecInput = Partial<RunSpec> & Pick<RunSpec, 'name' | 'mode' | 'manifestDir'>;

export function runSpec(input: RunSpecInput): RunSpec {
  return {
    memoryMb: 64,
    stdout: 'json',
    isolation: 'none',
    persistent: false,
    poolSize: 1,
    env: {},
    roots: [],
    networkAllow: [],
    floodCapBytes: 1 << 20,
    protectedPaths: [],
    hiddenPaths: [],
    ...input,
  };
}
