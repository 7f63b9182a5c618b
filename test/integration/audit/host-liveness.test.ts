import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { currentHostIdentity, hostLiveness, readProcessStart } from '../../../src/audit/sqlite/host-liveness.js';

describe('readProcessStart', () => {
  it('reads the kernel start time of a live process and null for a finished one', () => {
    expect(readProcessStart(process.pid)).toMatch(/^\d+$/);
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    expect(readProcessStart(Number(child.stdout))).toBeNull();
  });
});

describe('hostLiveness', () => {
  const here = currentHostIdentity();

  it('is alive for this very process', () => {
    expect(hostLiveness(here, here)).toBe('alive');
  });

  it.each([
    ['a reused pid (other start time)', { processStart: '1' }],
    ['an earlier boot', { bootId: 'an-earlier-boot' }],
    ['a finished process', { pid: 2 ** 22 + 1 }],
  ])('is dead for %s', (_label, overrides) => {
    expect(hostLiveness({ ...here, ...overrides }, here)).toBe('dead');
  });

  it('is unknown for a host on another machine, whatever its pid', () => {
    expect(hostLiveness({ ...here, machine: `${here.machine}-elsewhere`, processStart: '1' }, here)).toBe('unknown');
  });
});
