// A bounded storm of 100 sleepers (every fifth setsid'd, out of the process
// group) dies entirely when the host SIGKILLs the sandbox (killProcessGroupNow:
// the group and bubblewrap's namespace init): the pid namespace takes every
// descendant with it, in both isolation modes.
import { describe, expect, it } from 'vitest';
import { spawnTool } from '../../../src/runner/process/spawn.js';
import { killProcessGroupNow } from '../../../src/runner/process/kill.js';
import { buildSandboxArgv, START_LINE } from '../../../src/runner/bwrap/argv.js';
import { findMarkedPids, MARKER_VARIABLE, probeSpec, STORM_SH, useSandboxTest, waitForNoMarkedProcessesOrKill } from './harness.js';
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
    let stderr = '';
    tool.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await new Promise<void>((resolve, reject) => {
      let stdout = '';
      tool.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('ready\n')) resolve();
      });
      void tool.ended.then(() => reject(new Error(`the storm ended before it was ready: ${stderr}`)));
      tool.stdin.end(START_LINE);
    });
    // bubblewrap, its init, the shell and 100 sleepers carry the marker.
    expect(findMarkedPids(sandbox.marker).length).toBeGreaterThanOrEqual(100);
    killProcessGroupNow(tool.pid ?? 0);
    await tool.ended;
    expect(await waitForNoMarkedProcessesOrKill(sandbox.marker)).toEqual([]);
  });
});
