// bubblewrap's --json-status-fd: one JSON object per line, the first when the
// sandbox starts ({ "child-pid": … }), the last when its command has exited
// ({ "exit-code": N }, 128 + the signal for a command killed by one). Reading
// the exit code here, straight from bubblewrap, keeps the spawner's event loop
// (busy forking the next sandbox, perhaps) off every call's path. The child's
// pid (in the host's pid namespace) names the sandbox's namespaces, which the
// host may set up further before the tool starts (sandbox-addresses.ts).
import type { Readable } from 'node:stream';

/** More than bubblewrap ever writes; beyond it the pipe is not bubblewrap's. */
const MAX_STATUS_BYTES = 4096;

interface SandboxStatus {
  /** The sandbox's first process (in the host's pid namespace), or undefined when bubblewrap never said. */
  readonly childPid: Promise<number | undefined>;
  /** The sandboxed command's exit code, or undefined when the pipe closes without one (bubblewrap itself was killed). */
  readonly exitCode: Promise<number | undefined>;
}

/** Reads bubblewrap's status lines: the child's pid when it starts, the exit code when it ends. */
export function readSandboxStatus(status: Readable): SandboxStatus {
  let resolvePid: (pid: number | undefined) => void = () => undefined;
  const childPid = new Promise<number | undefined>((resolve) => (resolvePid = resolve));
  const exitCode = new Promise<number | undefined>((resolve) => {
    let text = '';
    const finish = (code: number | undefined): void => {
      status.removeAllListeners('data');
      status.destroy();
      resolvePid(undefined);
      resolve(code);
    };
    status.setEncoding('utf8');
    status.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_STATUS_BYTES) return finish(undefined);
      const pid = integerField(text, 'child-pid');
      if (pid !== undefined) resolvePid(pid);
      const code = integerField(text, 'exit-code');
      if (code !== undefined) finish(code);
    });
    status.once('close', () => finish(integerField(text, 'exit-code')));
    status.on('error', () => undefined);
  });
  return { childPid, exitCode };
}

/** The sandboxed command's exit code, or undefined when the pipe closes without one (bubblewrap itself was killed). */
export function readSandboxExitCode(status: Readable): Promise<number | undefined> {
  return readSandboxStatus(status).exitCode;
}

// The integer `field` of a complete status line, if one has it.
function integerField(text: string, field: string): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.includes(`"${field}"`)) continue;
    try {
      const value = (JSON.parse(line) as Record<string, unknown>)[field];
      if (typeof value === 'number' && Number.isInteger(value)) return value;
    } catch {
      // a partial line: wait for the rest
    }
  }
  return undefined;
}
