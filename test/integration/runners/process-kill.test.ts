// kill.ts on real process groups: SIGTERM to descendants with the leader spared,
// SIGKILL to the whole group after the grace, and the sweep on host exit.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killProcessGroup, killProcessGroupNow, MAX_GRACE_MS, ProcessGroups } from '../../../src/runner/process/kill.js';
import { findMarkedProcesses, pollUntil, waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';
import { newWorkdir, removeWorkdirs } from '../../helpers/process-runner-test.js';
import { newMarker } from '../../helpers/proc-scan.js';
import { waitForLineIn } from '../../helpers/wait.js';

let marker = newMarker('proc');
/** The live groups of this file's "host" (a host's ProcessServices holds its own). */
const groups = new ProcessGroups();
afterAll(() => groups.close());

afterEach(async () => {
  // Survivors are killed and the marker renewed before the check: one failure must not fail every later test.
  const left = await waitForNoMarkedProcesses(marker, undefined, { killSurvivors: true });
  marker = newMarker('proc');
  removeWorkdirs();
  expect(left).toEqual([]);
});

function spawnGroup(script: string, workdir: string): { pid: number; exited: Promise<unknown> } {
  const child = spawn('/bin/sh', ['-c', script, marker], { detached: true, stdio: 'ignore', cwd: workdir, env: { MARKER: marker } });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (child.pid === undefined) throw new Error('spawn failed');
  groups.track(child.pid);
  return { pid: child.pid, exited };
}

async function waitForFile(path: string): Promise<void> {
  expect(await waitForLineIn(path)).not.toBe('');
}

describe('killProcessGroup', () => {
  it('SIGTERMs the descendants but spares the leader, then SIGKILLs the group', async () => {
    const workdir = newWorkdir();
    const child = `trap 'echo child > child-term; exit 0' TERM; echo ready > ready; while :; do sleep 0.05; done`;
    // The leader ends once its child has handled the TERM, which ends the grace early: the grace
    // only bounds a failure, and a loaded machine gets all of it to run the child's trap.
    const { pid, exited } = spawnGroup(`trap 'echo leader > leader-term' TERM; /bin/sh -c "${child}" & wait $!`, workdir);
    await waitForFile(join(workdir, 'ready'));
    const trackedBefore = groups.size;
    await killProcessGroup(pid, MAX_GRACE_MS, { exited, spareLeaderFromTerm: true, groups });
    await waitForFile(join(workdir, 'child-term'));
    expect(readFileSync(join(workdir, 'child-term'), 'utf8')).toBe('child\n');
    expect(existsSync(join(workdir, 'leader-term'))).toBe(false);
    expect(groups.size).toBe(trackedBefore - 1);
  });

  it('SIGTERMs descendants several levels down, in sessions of their own, and spares the leader', async () => {
    const workdir = newWorkdir();
    // leader -> middle -> setsid'd grandchild: the grandchild is in neither the leader's group nor its session.
    const grandchild = `trap 'echo grandchild > grandchild-term; exit 0' TERM; echo ready > ready; while :; do sleep 0.05; done`;
    const middle = `trap 'echo middle > middle-term; exit 0' TERM; setsid /bin/sh -c \\"${grandchild}\\" & while :; do sleep 0.05; done`;
    const { pid, exited } = spawnGroup(`trap 'echo leader > leader-term' TERM; /bin/sh -c "${middle}" & wait $!`, workdir);
    await waitForFile(join(workdir, 'ready'));
    await killProcessGroup(pid, MAX_GRACE_MS, { exited, spareLeaderFromTerm: true });
    await waitForFile(join(workdir, 'grandchild-term'));
    await waitForFile(join(workdir, 'middle-term'));
    expect(readFileSync(join(workdir, 'grandchild-term'), 'utf8')).toBe('grandchild\n');
    expect(existsSync(join(workdir, 'leader-term'))).toBe(false);
  });

  it('SIGTERMs a grandchild whose parent ends at once on SIGTERM (the whole tree is read before any signal)', async () => {
    const workdir = newWorkdir();
    // The middle shell waits in `wait`, which its TERM trap interrupts at once: it is gone, and its
    // setsid'd child orphaned, before a walk that signalled level by level read its children.
    const grandchild = `trap 'echo grandchild > grandchild-term; exit 0' TERM; echo ready > ready; while :; do sleep 0.05; done`;
    const middle = `trap 'exit 0' TERM; setsid /bin/sh -c \\"${grandchild}\\" & wait`;
    const { pid, exited } = spawnGroup(`/bin/sh -c "${middle}" & wait $!`, workdir);
    await waitForFile(join(workdir, 'ready'));
    await killProcessGroup(pid, MAX_GRACE_MS, { exited, spareLeaderFromTerm: true });
    await waitForFile(join(workdir, 'grandchild-term'));
  });

  it("SIGKILLs the leader's own children even when they left its group and session (bubblewrap's namespace init)", async () => {
    const workdir = newWorkdir();
    // The direct child setsid's itself out of the group, as bubblewrap's pid-1 init does
    // (--new-session): a SIGKILL of the group alone leaves it, orphaned, running.
    const { pid, exited } = spawnGroup('setsid sleep 1000 & echo ready > ready; wait', workdir);
    await waitForFile(join(workdir, 'ready'));
    expect(
      await pollUntil(() => {
        const found = findMarkedProcesses(marker).some((found) => found.cmdline === 'sleep 1000');
        return { done: found, value: found };
      }, 10_000),
    ).toBe(true);
    killProcessGroupNow(pid);
    await exited;
    expect(await waitForNoMarkedProcesses(marker)).toEqual([]);
  });

  it('SIGKILLs a group that ignores SIGTERM once the grace is over', async () => {
    const workdir = newWorkdir();
    const { pid, exited } = spawnGroup(`trap '' TERM; /bin/sh -c "trap '' TERM; echo ready > ready; exec sleep 1000" & wait`, workdir);
    await waitForFile(join(workdir, 'ready'));
    await killProcessGroup(pid, 100, { exited });
    expect(await exited).toBeNull();
  });

  it('sweeps every tracked group with SIGKILL when the host exits', async () => {
    const killUrl = pathToFileURL(fileURLToPath(new URL('../../../dist/src/runner/process/kill.js', import.meta.url))).href;
    if (!existsSync(new URL(killUrl))) throw new Error('dist/ is missing: run `npm run build` first');
    const script = `
      import { spawn } from 'node:child_process';
      const { ProcessGroups } = await import(${JSON.stringify(killUrl)});
      const groups = new ProcessGroups();
      const child = spawn('/bin/sh', ['-c', 'trap "" TERM; echo ready; exec sleep 1000', ${JSON.stringify(marker)}], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
      groups.track(child.pid);
      child.stdout.once('data', () => process.exit(0));
    `;
    const host = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    const code = await new Promise((resolve) => host.once('exit', resolve));
    expect(code).toBe(0);
    expect(await waitForNoMarkedProcesses(marker)).toEqual([]);
  });
});
