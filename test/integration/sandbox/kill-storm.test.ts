// A bounded storm of 100 sleepers (every fifth setsid'd, out of the process
// group) dies entirely when the host SIGKILLs the sandbox (killProcessGroupNow:
// the group and bubblewrap's namespace init): the pid namespace takes every
// descendant with it, in both isolation modes.
import { describe, expect, it } from 'vitest';
import { spawnTool } from '../../../src/runner/process/spawn.js';
import { killProcessGroupNow } from '../../../src/runner/process/kill.js';
import { buildSandboxArgv, START_LINE } from '../../../src/runner/bwrap/argv.js';
import { MARKER_VARIABLE, probeSpec, STORM_SH, useSandboxTest, waitForNoMarkedProcessesOrKill } from '../../helpers/sandbox-run.js';
import { waitForMarkedProcesses } from '../../helpers/proc-scan.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

describe.each(['namespace', 'none'] as const)('isolation %s: a storm of 100 sleepers', (isolation) => {
  const sandbox = useSandboxTest('toolhost-sbx-storm-');

  it('leaves no process behind when the host SIGKILLs the sandbox', async () => {
    const spec = probeSpec(sandbox.marker, {
      isolation,
      command: ['/bin/sh', STORM_SH],
      env: { PATH: '/usr/bin:/bin', [MARKER_VARIABLE]: sandbox.marker },
      roots: [{ path: sandbox.workspace.path, access: 'read' }],
    });
    // Room for the storm: the default process limit is below 100 on purpose.
    const argv = [...buildSandboxArgv(spec, { services, cwd: sandbox.workspace.path, limits: { processes: 150 } }), ...(spec.command ?? [])];
    const tool = await spawnTool(argv, spec.env, sandbox.workspace.path, services);
    const leader = tool.pid;
    if (leader === undefined) throw new Error('bubblewrap did not start');
    let stderr = '';
    tool.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    try {
      await new Promise<void>((resolve, reject) => {
        let stdout = '';
        tool.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          if (stdout.includes('ready\n')) resolve();
        });
        void tool.ended.then(() => reject(new Error(`the storm ended before it was ready: ${stderr}`)));
        setTimeout(() => reject(new Error(`the storm was not ready within 60 s: ${stderr}`)), 60_000).unref();
        tool.stdin.end(START_LINE);
      });
      // bubblewrap, its init, the shell and 100 sleepers carry the marker. Polled: "ready" comes
      // right after the last fork, and a child in the middle of its exec shows an empty environ
      // and cmdline for a moment (the new image has no arguments yet).
      expect((await waitForMarkedProcesses(sandbox.marker, 100)).length).toBeGreaterThanOrEqual(100);
    } finally {
      // Killed whatever happened above, so a failure there is reported as itself, not as survivors
      // (a CI run once failed before the kill and reported only the 100 sleepers it left).
      killProcessGroupNow(leader);
    }
    await tool.ended;
    expect(await waitForNoMarkedProcessesOrKill(sandbox.marker)).toEqual([]);
  });
});
