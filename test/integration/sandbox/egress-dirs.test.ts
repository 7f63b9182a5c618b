// A SIGKILLed host never closes its egress grants, and their private folders
// stay in the temporary directory. Each folder carries its host's pid; a new
// host (its ProcessServices) removes those of dead hosts and nothing else.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import { openEgressGrant } from '../../../src/runner/bwrap/egress-grant.js';
import { ProcessServices } from '../../../src/runner/process-services.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn('/bin/true');
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid ?? 0;
}

function leftoverDir(ownerPid: number): string {
  const dir = mkdtempSync(join(tmpdir(), `toolhost-egress-${ownerPid}-`));
  writeFileSync(join(dir, 'proxy.sock'), '');
  made.push(dir);
  return dir;
}

describe('egress grant folders', () => {
  it('carry the pid of the host that opened them', async () => {
    const grant = await openEgressGrant({ allow: ['127.0.0.1:1'], readOnly: true, logger: createSilentLogger() });
    try {
      expect(basename(dirname(grant.socketPath))).toMatch(new RegExp(`^toolhost-egress-${process.pid}-`));
    } finally {
      await grant.close();
    }
  });

  it('of a dead host are removed when a host starts; a live host keeps its own', async () => {
    const dead = leftoverDir(await deadPid());
    const live = leftoverDir(process.ppid);
    const services = new ProcessServices({ logger: createSilentLogger() });
    try {
      expect(await services.sweptEgressDirs).toBeGreaterThanOrEqual(1);
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(live)).toBe(true);
    } finally {
      await services.close();
    }
  });
});
