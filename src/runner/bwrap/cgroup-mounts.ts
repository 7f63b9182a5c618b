// Where this machine mounts the cgroup controllers a sandbox is held by (pids
// and memory), read from /proc/self/mountinfo: a v1 hierarchy per controller
// (`cgroup` with the controller in its super options), or the v2 unified
// hierarchy (`cgroup2`) whose root lists the controller in
// `cgroup.controllers`. A controller on v1 wins: where a machine mounts both
// (hybrid), a controller bound to a v1 hierarchy is not available on v2.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The controllers a sandbox's cgroup holds it by. */
export type CgroupController = 'pids' | 'memory';

export interface ControllerMount {
  readonly controller: CgroupController;
  readonly version: 1 | 2;
  /** The hierarchy's mount point (the root this process sees). */
  readonly mountPoint: string;
}

type ControllerMountLookup = { readonly ok: true; readonly mount: ControllerMount } | { readonly ok: false; readonly reason: string };

/** Where `controller` is mounted, from mountinfo's text (read from /proc/self/mountinfo when not given). */
export function findControllerMount(controller: CgroupController, mountinfo?: string): ControllerMountLookup {
  let text = mountinfo;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/mountinfo', 'utf8');
    } catch {
      return { ok: false, reason: 'cannot read /proc/self/mountinfo' };
    }
  }
  const mounts = text
    .split('\n')
    .map(parseMountinfoLine)
    .filter((mount) => mount !== undefined);
  const v1 = mounts.find((mount) => mount.fsType === 'cgroup' && mount.superOptions.split(',').includes(controller));
  if (v1 !== undefined) return { ok: true, mount: { controller, version: 1, mountPoint: v1.mountPoint } };
  const v2 = mounts.find((mount) => mount.fsType === 'cgroup2' && readText(join(mount.mountPoint, 'cgroup.controllers')).split(/\s+/).includes(controller));
  if (v2 !== undefined) return { ok: true, mount: { controller, version: 2, mountPoint: v2.mountPoint } };
  return { ok: false, reason: `no ${controller} cgroup controller is mounted` };
}

interface MountInfo {
  readonly mountPoint: string;
  readonly fsType: string;
  readonly superOptions: string;
}

// mountinfo: "id parent maj:min root mountpoint options [optional...] - fstype source superoptions"
function parseMountinfoLine(line: string): MountInfo | undefined {
  const separator = line.indexOf(' - ');
  if (separator < 0) return undefined;
  const before = line.slice(0, separator).split(' ');
  const after = line.slice(separator + 3).split(' ');
  const mountPoint = before[4];
  const fsType = after[0];
  if (mountPoint === undefined || fsType === undefined) return undefined;
  return { mountPoint: unescapeMountinfo(mountPoint), fsType, superOptions: after[2] ?? '' };
}

function unescapeMountinfo(value: string): string {
  return value.replace(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
