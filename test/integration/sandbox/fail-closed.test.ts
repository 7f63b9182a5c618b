// Fail closed: without a working bubblewrap nothing runs, and the reason says
// what to do. `toolhost doctor` reports the same facts and exits 1.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { buildDoctorReport, run as runDoctor } from '../../../src/cli/doctor.js';
import { isHostError } from '../../../src/errors.js';
import { createSilentLogger } from '../../../src/log.js';
import { createProcessRunner } from '../../../src/runner/process/process-runner.js';
import { buildSandboxArgv } from '../../../src/runner/bwrap/argv.js';
import { bwrapSupports } from '../../../src/runner/bwrap/binaries.js';
import { probeSandbox } from '../../../src/runner/bwrap/probe.js';
import { SandboxFacts } from '../../../src/runner/bwrap/sandbox-facts.js';
import { FIXTURES_DIR, probeSpec } from '../../helpers/sandbox-run.js';
import { newMarker } from '../../helpers/proc-scan.js';
import { runOptions } from '../../helpers/run-options.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

const MISSING_BWRAP = '/nonexistent/toolhost-test/bwrap';
const DENIED_BWRAP = join(FIXTURES_DIR, 'bwrap-denied.sh');
const NO_SECCOMP_BWRAP = join(FIXTURES_DIR, 'bwrap-no-seccomp.sh');

const standInDirs: string[] = [];
afterAll(() => {
  for (const dir of standInDirs) rmSync(dir, { recursive: true, force: true });
});
/** A fresh copy of a bubblewrap stand-in that keeps its state in a file beside it, at a path no SandboxFacts has seen. */
function standInCopy(name: 'bwrap-killed-once.sh' | 'bwrap-seccomp-killed-once.sh' | 'bwrap-counted.sh' | 'bwrap-help-fails.sh'): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-bwrap-stand-in-'));
  standInDirs.push(dir);
  const copy = join(dir, 'bwrap');
  copyFileSync(join(FIXTURES_DIR, name), copy);
  return copy;
}

/** The first argument of each run of a stand-in that writes its runs down (bwrap-counted.sh, bwrap-seccomp-killed-once.sh). */
function runsOf(bwrapPath: string): string[] {
  return readFileSync(join(dirname(bwrapPath), 'runs'), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
}

function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('fail closed', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('probes the real bubblewrap as usable, with its version', async () => {
    const probe = await probeSandbox(new SandboxFacts());
    expect(probe).toEqual({ ok: true, version: expect.stringMatching(/^\d+\.\d+/) });
  });

  it('reports a missing bubblewrap with how to install it', async () => {
    const probe = await probeSandbox(new SandboxFacts(), { bwrapPath: MISSING_BWRAP });
    expect(probe.ok).toBe(false);
    expect(probe.ok ? '' : probe.reason).toContain('apt-get install bubblewrap');
  });

  it("reports a bubblewrap that cannot create namespaces, with the kernel's refusal", async () => {
    const probe = await probeSandbox(new SandboxFacts(), { bwrapPath: DENIED_BWRAP });
    expect(probe.ok).toBe(false);
    expect(probe.ok ? '' : probe.reason).toContain('Creating new namespace failed: Operation not permitted');
  });

  it('never runs a namespaced tool without its seccomp filter: sandbox_unavailable naming the filter', async () => {
    const probe = await probeSandbox(new SandboxFacts(), { bwrapPath: NO_SECCOMP_BWRAP });
    expect(probe).toEqual({ ok: false, reason: expect.stringContaining('seccomp') });
    const runner = createProcessRunner(probeSpec(newMarker('sandbox')), { logger: createSilentLogger(), services, bwrapPath: NO_SECCOMP_BWRAP });
    try {
      const outcome = await runner.run({ callId: 'no-seccomp', args: { ops: [] } }, runOptions({ timeoutMs: 10_000 }));
      expect(outcome).toMatchObject({ ok: false, code: 'sandbox_unavailable', details: { reason: expect.stringContaining('seccomp') } });
    } finally {
      await runner.close();
    }
  });

  it('fails only the call whose probe bubblewrap did not finish: the next call probes again', async () => {
    const facts = new SandboxFacts();
    const bwrapPath = standInCopy('bwrap-killed-once.sh');
    const first = await probeSandbox(facts, { bwrapPath });
    expect(first).toEqual({ ok: false, reason: expect.stringContaining('retry the call') });
    // Not a verdict on the machine: kept, it would refuse every sandboxed tool for the host's life.
    expect(await probeSandbox(facts, { bwrapPath })).toEqual({ ok: true, version: expect.stringMatching(/^\d+\.\d+/) });
  });

  it('probes again after an interrupted probe without running again what it learned: neither --help nor the user-namespace probe', async () => {
    const facts = new SandboxFacts();
    const bwrapPath = standInCopy('bwrap-seccomp-killed-once.sh');
    // Its seccomp check is killed; --help and the user-namespace probe beside it answer.
    expect(await probeSandbox(facts, { bwrapPath })).toEqual({ ok: false, reason: expect.stringContaining('retry the call') });
    const first = runsOf(bwrapPath);
    expect(first).toEqual(expect.arrayContaining(['--help', '--unshare-user', '--seccomp']));
    expect(await probeSandbox(facts, { bwrapPath })).toMatchObject({ ok: true });
    const again = runsOf(bwrapPath).slice(first.length);
    expect(again).toContain('--seccomp');
    expect(again).not.toContain('--help');
    expect(again).not.toContain('--unshare-user');
  });

  it('never builds a weaker sandbox when its user-namespace probe was killed: sandbox_unavailable, then the full sandbox', () => {
    const bwrapPath = standInCopy('bwrap-killed-once.sh');
    const spec = probeSpec(newMarker('sandbox'));
    const thrown = thrownBy(() => buildSandboxArgv(spec, { services, cwd: FIXTURES_DIR, bwrapPath }));
    expect(isHostError(thrown) ? { code: thrown.code, details: thrown.details } : thrown).toEqual({
      code: 'sandbox_unavailable',
      details: { reason: expect.stringContaining('retry the call') },
    });
    // Read as "no user namespace", the killed probe would have dropped --unshare-user from every sandbox after it.
    expect(buildSandboxArgv(spec, { services, cwd: FIXTURES_DIR, bwrapPath })).toContain('--unshare-user');
  });

  it('learns in its probe what a sandbox build asks of bubblewrap, so the build (synchronous) runs it no more', async () => {
    const bwrapPath = standInCopy('bwrap-counted.sh');
    const runs = () => runsOf(bwrapPath);
    expect(await probeSandbox(services.facts, { bwrapPath })).toMatchObject({ ok: true });
    const probed = runs();
    expect(probed).toContain('--help');
    expect(buildSandboxArgv(probeSpec(newMarker('sandbox')), { services, cwd: FIXTURES_DIR, bwrapPath })).toContain('--unshare-user');
    // Without the probe's learning, the build would run `bwrap --help` and the user-namespace probe here, blocking the event loop.
    expect(runs()).toEqual(probed);
  });

  it('reads the help of a bubblewrap whose --help exits non-zero in the probe as the build would: its flags are known', async () => {
    const bwrapPath = standInCopy('bwrap-help-fails.sh');
    expect(await probeSandbox(services.facts, { bwrapPath })).toMatchObject({ ok: true });
    // Read as empty, it would build every sandbox without the private /tmp's size cap.
    expect(bwrapSupports(services.facts, bwrapPath, '--size')).toBe(true);
  });

  it('refuses to build an argv without bubblewrap: sandbox_unavailable, never an unsandboxed command', () => {
    let thrown: unknown;
    try {
      buildSandboxArgv(probeSpec(newMarker('sandbox')), { services, cwd: FIXTURES_DIR, bwrapPath: MISSING_BWRAP });
    } catch (error) {
      thrown = error;
    }
    expect(isHostError(thrown)).toBe(true);
    if (!isHostError(thrown)) return;
    expect(thrown.code).toBe('sandbox_unavailable');
    expect(thrown.details).toEqual({ reason: expect.stringContaining('apt-get install bubblewrap') });
  });
});

describe('toolhost doctor', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('finds everything the bundled tools need on this machine', async () => {
    const report = await buildDoctorReport();
    expect(report.checks.map((check) => check.name)).toEqual([
      'isolated-vm',
      'isolate-process',
      'bubblewrap',
      'user-namespace',
      'network-namespace',
      'prlimit',
      'pids-limit',
      'python3',
      'memory-limit',
      'namespace-sandbox',
      'seccomp',
      'egress-bridge',
    ]);
    // Warnings (an older bubblewrap, no pids cgroup) are allowed; a failure is not.
    expect(report.checks.filter((check) => check.status === 'fail')).toEqual([]);
    expect(report.ok).toBe(true);
    const byName = new Map(report.checks.map((check) => [check.name, check]));
    expect(byName.get('bubblewrap')?.facts).toMatchObject({ namespacesUsable: true, version: expect.stringMatching(/^\d+\.\d+/) });
    expect(byName.get('namespace-sandbox')).toMatchObject({ status: 'ok', facts: { works: true } });
    // Memory by the cgroup (v1 here): the isolate process has no address-space cap, and its cgroup's limit.
    expect(byName.get('isolate-process')).toMatchObject({ status: 'ok', facts: { starts: true, namespaced: true, addressSpaceBytes: null, memoryBytes: expect.any(Number) } });
    expect(byName.get('memory-limit')).toMatchObject({ status: 'ok', facts: { mechanism: 'cgroup', cgroupVersion: 1, reason: null, swapLimited: true } });
    expect(byName.get('seccomp')).toMatchObject({ status: 'ok', facts: { inForce: true, architecture: 'x86_64' } });
    expect(String(byName.get('seccomp')?.facts['refusedNames']).split(',')).toEqual(expect.arrayContaining(['io_uring_setup', 'io_uring_enter', 'io_uring_register']));
    expect(byName.get('egress-bridge')).toMatchObject({ status: 'ok', facts: { works: true } });
  });

  it('exits 1 with a stable --json report when bubblewrap is missing', async () => {
    let written = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written += String(chunk);
      return true;
    });
    const exitCode = await runDoctor(['--json', '--bwrap', MISSING_BWRAP]);
    vi.restoreAllMocks();
    expect(exitCode).toBe(1);
    const report = JSON.parse(written) as { ok: boolean; checks: { name: string; status: string; facts: Record<string, unknown> }[] };
    expect(report.ok).toBe(false);
    const byName = new Map(report.checks.map((check) => [check.name, check]));
    expect(byName.get('bubblewrap')).toMatchObject({ status: 'fail', facts: { path: null, namespacesUsable: false } });
    expect(byName.get('namespace-sandbox')).toMatchObject({ status: 'fail' });
    expect(byName.get('isolated-vm')).toMatchObject({ status: 'ok', facts: { loads: true } });
    // Isolate tools fail closed too: their process needs the namespace sandbox.
    expect(byName.get('isolate-process')).toMatchObject({ status: 'fail', facts: { starts: false } });
  });
});
