// The RunSpec of a doctor check: a throwaway tool in the namespace sandbox, with
// the fields no check cares about at one set of values. Each check names the rest.
import type { RunSpec } from './types.js';

type DoctorSpecInput = Pick<RunSpec, 'mode' | 'manifestDir' | 'memoryMb'> & Partial<RunSpec>;

export function doctorRunSpec(input: DoctorSpecInput): RunSpec {
  return {
    name: 'doctor',
    stdout: 'text',
    isolation: 'namespace',
    persistent: false,
    poolSize: 1,
    env: {},
    roots: [],
    networkAllow: [],
    floodCapBytes: 4096,
    protectedPaths: [],
    hiddenPaths: [],
    ...input,
  };
}
