// bubblewrap's --json-status-fd: one JSON object per line, the first when the
// sandbox starts ({ "child-pid": … }), the last when its command has exited
// ({ "exit-code": N }, 128 + the signal for a command killed by one). Reading
// the exit code here, straight from bubblewrap, keeps the spawner's event loop
// (busy forking the next sandbox, perhaps) off every call's path.
import type { Readable } from 'node:stream';

/** More than bubblewrap ever writes; beyond it the pipe is not bubblewrap's. */
const MAX_STATUS_BYTES = 4096;

/** The sandboxed command's exit code, or undefined when the pipe closes without one (bubblewrap itself was killed). */
export function readSandboxExitCode(status: Readable): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const finish = (code: number | undefined): void => {
      status.removeAllListeners('data');
      status.destroy();
      resolve(code);
    };
    status.setEncoding('utf8');
    status.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_STATUS_BYTES) return finish(undefined);
      const code = exitCodeIn(text);
      if (code !== undefined) finish(code);
    });
    status.once('close', () => finish(exitCodeIn(text)));
    status.on('error', () => undefined);
  });
}

function exitCodeIn(text: string): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.includes('"exit-code"')) continue;
    try {
      const value = (JSON.parse(line) as { 'exit-code'?: unknown })['exit-code'];
      if (typeof value === 'number' && Number.isInteger(value)) return value;
    } catch {
      // a partial line: wait for the rest
    }
  }
  return undefined;
}
