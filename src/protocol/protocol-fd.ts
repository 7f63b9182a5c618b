// `serve` speaks the protocol on a private duplicate of stdout, and points file
// descriptor 1 itself at stderr (SPEC section 3.1): whatever writes to fd 1
// afterwards (a worker tool's fs.writeSync(1, …), a native module, a logger
// configured for stdout) lands on stderr and never reaches the client. Node has
// no dup2, so: a pipe, file or terminal is reopened through /proc/self/fd/1; a
// socket (what a Node parent's 'pipe' usually is) is duplicated by sending its
// handle to a child and back over IPC; then fd 1 is closed and the lowest free
// descriptor, 1, is taken at once by reopening stderr (or /dev/null, when stderr
// is a socket that cannot be reopened).
import { fork } from 'node:child_process';
import { closeSync, createWriteStream, fstatSync, openSync } from 'node:fs';
import { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { isatty, WriteStream as TtyWriteStream } from 'node:tty';
import type { Logger } from '../log.js';
import { UNREACHABLE_INSPECTOR_FLAG } from '../node-inspector.js';

/** Where the protocol goes now, and what fd 1 became. */
export interface ProtocolChannel {
  readonly output: Writable;
  /** `stderr`: fd 1 is a second descriptor for stderr; `null`: /dev/null (stderr is a socket). */
  readonly fd1: 'stderr' | 'null';
}

const HANDLE_ECHO_URL = new URL('../runner/host-helpers/handle-echo.mjs', import.meta.url);

/**
 * Moves the protocol off fd 1; call before anything touches process.stdout. Without a
 * logger (serve's early front: none is made yet), a failure is only thrown.
 */
export async function takeProtocolChannel(logger?: Pick<Logger, 'error'>): Promise<ProtocolChannel> {
  const output = await duplicateStdout();
  closeSync(1);
  let fd1: ProtocolChannel['fd1'] = 'stderr';
  let reopened: number;
  try {
    reopened = openSync('/proc/self/fd/2', 'a');
  } catch {
    // A socket cannot be reopened through /proc: fd 1 discards instead.
    fd1 = 'null';
    reopened = openSync('/dev/null', 'w');
  }
  if (reopened !== 1) {
    // Another descriptor took 1 between the close and the open: nothing may write there.
    logger?.error({ fd: reopened }, 'could not point fd 1 at stderr');
    throw new Error(`could not point file descriptor 1 away from the protocol (descriptor ${reopened} took its place)`);
  }
  return { output, fd1 };
}

/** A new descriptor for what fd 1 is; fd 1 itself stays open, unwrapped, for the caller to close. */
async function duplicateStdout(): Promise<Writable> {
  const info = fstatSync(1);
  if (info.isSocket()) return duplicateSocketByIpc();
  const fd = openSync('/proc/self/fd/1', 'a');
  if (info.isFIFO()) return new Socket({ fd, readable: false, writable: true });
  if (info.isCharacterDevice() && isatty(fd)) return new TtyWriteStream(fd);
  return createWriteStream('', { fd, flags: 'a' });
}

// The child receives the socket as a new descriptor and sends it back: another new one, here.
// Our wrapper of fd 1 is then destroyed (libuv never closes descriptors 0 to 2 itself).
function duplicateSocketByIpc(): Promise<Writable> {
  const stdout = new Socket({ fd: 1, readable: false, writable: true });
  return new Promise<Socket>((resolve, reject) => {
    // Its own flags, not the host's: an inspector that can never listen (node-inspector.ts).
    const child = fork(HANDLE_ECHO_URL, [], { execArgv: [UNREACHABLE_INSPECTOR_FLAG], stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json', env: {} });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the handle echo exited (${code}) before answering`)));
    child.once('message', (_message, handle) => {
      if (!(handle instanceof Socket)) {
        reject(new Error('the handle echo answered without a socket'));
        return;
      }
      child.removeAllListeners('exit');
      child.disconnect();
      resolve(handle);
    });
    child.send({ type: 'echo' }, stdout, { keepOpen: true });
  }).then(
    (duplicate) =>
      new Promise<Writable>((resolve) => {
        stdout.once('close', () => resolve(duplicate));
        stdout.destroy();
      }),
  );
}
