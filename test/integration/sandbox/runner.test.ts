// The same hostile checks through the process runner (createProcessRunner),
// which builds its argv with buildSandboxArgv and probes with probeSandbox:
// what a real call sees, with real codes.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import { createProcessRunner } from '../../../src/runner/process/process-runner.js';
import type { RunSpec } from '../../../src/runner/types.js';
import type { RunOutcome } from '../../../src/runner/run-types.js';
import { MARKER_VARIABLE, type ProbeResult, probeSpec, STORM_SH, useSandboxTest, waitForNoMarkedProcessesOrKill } from '../../helpers/sandbox-run.js';
import { runOptions } from '../../helpers/run-options.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

const SECRET_NAME = 'TOOLHOST_RUNNER_TEST_SECRET_KEY';

async function callOnce(spec: RunSpec, args: Record<string, unknown>, timeoutMs = 20_000, bwrapPath?: string): Promise<RunOutcome> {
  const runner = createProcessRunner(spec, { logger: createSilentLogger(), services, ...(bwrapPath === undefined ? {} : { bwrapPath }) });
  try {
    return await runner.run({ callId: `call-${spec.name}`, args }, runOptions({ timeoutMs }));
  } finally {
    await runner.close();
  }
}

function probeResults(outcome: RunOutcome): ProbeResult[] {
  if (!outcome.ok) throw new Error(`the call failed: ${outcome.code} ${JSON.stringify(outcome.details)}`);
  if (outcome.output.type !== 'json') throw new Error('expected JSON output');
  return JSON.parse(outcome.output.json) as ProbeResult[];
}

describe('process runner in the namespace sandbox', () => {
  const sandbox = useSandboxTest('toolhost-sbx-runner-', { hostSecret: SECRET_NAME });

  it('keeps writes outside the workspace, secrets and hidden paths away from a real call', async () => {
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read_write' }] });
    const escape = `/srv/runner-escape-${sandbox.marker}`;
    const outcome = await callOnce(spec, {
      ops: [{ op: 'write', path: escape }, { op: 'write', path: join(sandbox.workspace.path, 'inside.txt') }, { op: 'read', path: '/etc/shadow' }, { op: 'env' }],
    });
    const results = probeResults(outcome);
    expect(results.slice(0, 3)).toEqual([{ error: 'ENOENT' }, { ok: true }, { error: 'ENOENT' }]);
    expect(existsSync(escape)).toBe(false);
    expect(existsSync(join(sandbox.workspace.path, 'inside.txt'))).toBe(true);
    expect(Object.keys((results[3] as { ok: Record<string, string> }).ok)).not.toContain(SECRET_NAME);
    expect(JSON.stringify(results)).not.toContain(`secret-${sandbox.marker}`);
  });

  it("kills a storm of sleepers on timeout, setsid'd ones included, with none left", async () => {
    const spec = probeSpec(sandbox.marker, {
      command: ['/bin/sh', STORM_SH, '50'],
      stdout: 'text',
      env: { PATH: '/usr/bin:/bin', [MARKER_VARIABLE]: sandbox.marker },
      roots: [{ path: sandbox.workspace.path, access: 'read' }],
    });
    const outcome = await callOnce(spec, {}, 1500);
    expect(outcome).toMatchObject({ ok: false, code: 'timeout', details: { timeoutMs: 1500 } });
    expect(await waitForNoMarkedProcessesOrKill(sandbox.marker)).toEqual([]);
  });

  it('fails closed with sandbox_unavailable when bubblewrap is missing', async () => {
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    const outcome = await callOnce(spec, { ops: [] }, 5000, '/nonexistent/toolhost-runner-test/bwrap');
    expect(outcome).toMatchObject({ ok: false, code: 'sandbox_unavailable', details: { reason: expect.stringContaining('apt-get install bubblewrap') } });
  });
});
