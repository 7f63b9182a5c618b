// The spawner: a small Node process the host starts once and asks, over its
// IPC channel, to start every process tool. Why a separate process:
// child_process.spawn() forks its caller, and fork() copies the caller's page
// tables first: several milliseconds for the ~150 MB host, during which the
// host's event loop stalls and every other call waits. Forking from this
// ~40 MB process is cheaper and stalls nothing but the spawner.
//
// The tool's three pipe ends go back to the host as handles on the IPC
// channel, so the host reads and writes them directly, with no copy through
// here. This process holds no secrets: each request carries the tool's whole
// environment, and it starts with the host's inheritable descriptors closed.
//
// Protocol (JSON over the IPC channel), host → spawner:
//   { type: 'spawn', id, file, args, cwd, env, fd4?, files? }  fd4: base64 bytes the child
//                                                    reads on fd 4 (bubblewrap's --seccomp program);
//                                                    files: host paths the child finds open read-only
//                                                    on fds 5, 6, … (bubblewrap's --file sources)
//   { type: 'memory', id }                           (diagnostics)
// spawner → host:
//   { type: 'ready' }                                once listening
//   { type: 'spawned', id, pid }                     then four of:
//   { type: 'stdio', id, fd: 0 | 1 | 2 | 3 } + handle  (the pipe ends, in order)
//   { type: 'failed', id, errorCode }                the spawn itself failed
//   { type: 'exit', id, exitCode, signal }           the tool's leader exited
//   { type: 'memory', id, usage, liveGroups }        process.memoryUsage() and live tools
import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { listInheritableDescriptors } from './inherited-fds.mjs';

/** @typedef {import('./messages.mjs').HostToSpawnerMessage} HostToSpawnerMessage */
/** @typedef {import('./messages.mjs').SpawnerSpawnMessage} SpawnerSpawnMessage */
/** @typedef {import('./messages.mjs').SpawnerToHostMessage} SpawnerToHostMessage */
/** @typedef {import('node:net').Socket} Socket */

// Started by the host with an IPC channel, or useless: say so instead of a TypeError later.
if (process.send === undefined) {
  process.stderr.write('spawner: started without an IPC channel (the host forks it with one)\n');
  process.exit(1);
}
const channelSend = process.send.bind(process);

/**
 * One message to the host, with the handle of a pipe end for 'stdio'.
 * @param {SpawnerToHostMessage} message
 * @param {import('node:stream').Readable | import('node:stream').Writable} [handle]
 */
function send(message, handle) {
  // Node's typings accept only its listed handle classes; a pipe end is a net.Socket.
  if (handle === undefined) channelSend(message);
  else channelSend(message, /** @type {Socket} */ (/** @type {unknown} */ (handle)));
}

/** Process-group leaders still alive, by pid: killed if the host goes away. */
/** @type {Set<number>} */
const liveGroups = new Set();

closeInheritedDescriptors();

// The host decides when this process ends: by closing the channel (its exit,
// however it died). A terminal's Ctrl-C or a group SIGTERM reaches the host
// too, which then cancels its calls and answers them; dying first would kill
// their sandboxes (--die-with-parent) under the host's feet.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => undefined);
// And SIGUSR1 would open Node's inspector here, in the process that starts every sandbox.
process.on('SIGUSR1', () => undefined);

// The host is gone: nothing may outlive it. (bubblewrap's --die-with-parent
// would also fire when we exit; this is the explicit, immediate path.)
function hostGone() {
  for (const pid of liveGroups) killGroup(pid);
  process.exit(0);
}
process.on('disconnect', hostGone);
// 'disconnect' alone is not enough: Node holds it back until every pipe end sent
// over the channel is acknowledged, and a host that died (SIGKILL, out of memory)
// or closed the channel while tools were being handed over never acknowledges
// them; this process and its tools, stuck at their start gates, would live on.
// stdin is a pipe only the host holds: its end comes whenever the host goes.
process.stdin.on('end', hostGone);
process.stdin.on('error', hostGone);
process.stdin.resume();

process.on('message', (/** @type {unknown} */ raw) => {
  if (raw === null || typeof raw !== 'object') return;
  // Only the host holds this channel; its messages have the shapes of messages.d.mts.
  const message = /** @type {HostToSpawnerMessage} */ (raw);
  if (message.type === 'spawn') startTool(message);
  // For the soak script and tests: this process's memory, to show it stays flat.
  else if (message.type === 'memory') send({ type: 'memory', id: message.id, usage: process.memoryUsage(), liveGroups: liveGroups.size });
});

send({ type: 'ready' });

/** @param {SpawnerSpawnMessage} request */
function startTool({ id, file, args, cwd, env, fd4, files }) {
  /** @type {import('node:child_process').ChildProcess} */
  let child;
  const input = typeof fd4 === 'string' ? Buffer.from(fd4, 'base64') : undefined;
  const opened = Array.isArray(files) ? files.map(openForChild) : [];
  try {
    // fd 3 is bubblewrap's --json-status-fd: it reports the exit code there
    // itself, so the host learns it without waiting for this process's loop.
    // fd 4, when asked for, carries a few hundred bytes bubblewrap reads at
    // start (the seccomp program): a pipe, so no file of it exists anywhere.
    // fds 5 and up are the files bubblewrap copies into the sandbox (--file),
    // each closed by bubblewrap once copied: the tool never holds one.
    /** @type {Array<'pipe' | 'ignore' | number | undefined>} */
    const stdio = ['pipe', 'pipe', 'pipe', 'pipe', input === undefined ? (opened.length === 0 ? undefined : 'ignore') : 'pipe', ...opened];
    child = spawn(file, args, { cwd, env, detached: true, stdio: stdio.filter((entry) => entry !== undefined) });
  } catch (error) {
    send({ type: 'failed', id, errorCode: errorCodeOf(error) });
    return;
  } finally {
    // The child has its own copies once spawn() returned (or there is no child).
    for (const fd of opened) closeQuietly(fd);
  }
  const pid = child.pid;
  if (pid === undefined) {
    child.once('error', (error) => send({ type: 'failed', id, errorCode: errorCodeOf(error) }));
    return;
  }
  liveGroups.add(pid);
  // Not one byte may be read here: the host reads these pipes. child_process
  // starts reading the output pipes at once; stop that before the loop turns.
  // (_handle is Node's internal pipe wrap: not in the typings.)
  for (const stream of child.stdio.slice(1, 4)) /** @type {{ _handle?: { readStop(): void } } | null | undefined} */ (stream)?._handle?.readStop();
  // Asked for as 'pipe' above whenever input is defined: a writable stream.
  const program = /** @type {import('node:stream').Writable | null | undefined} */ (child.stdio[4]);
  if (input !== undefined && program != null) {
    // Far below a pipe's buffer: written whole at once, then closed so bubblewrap sees its end.
    program.on('error', () => undefined);
    program.end(input, () => program.destroy());
  }
  child.once('exit', (exitCode, signal) => {
    liveGroups.delete(pid);
    send({ type: 'exit', id, exitCode, signal });
  });
  send({ type: 'spawned', id, pid });
  // Sent without keepOpen: our copy of each descriptor is closed once it is across.
  child.stdio.slice(0, 4).forEach((stream, fd) => {
    if (stream !== null) send({ type: 'stdio', id, fd }, stream);
  });
}

/** The errno code of a failed spawn (ENOENT, EACCES…), or 'spawn_error'. */
function errorCodeOf(/** @type {unknown} */ error) {
  const code = typeof error === 'object' && error !== null ? /** @type {{ code?: unknown }} */ (error).code : undefined;
  return typeof code === 'string' ? code : 'spawn_error';
}

// Read-only, for the child only. A file gone since the host listed it, or no longer a
// regular file, is copied empty (never a missing descriptor, on which bubblewrap would fail
// the whole sandbox). O_NONBLOCK: opening a FIFO put there meanwhile must not hang this
// process, and a device (an endless /dev/zero) is never handed over to be copied.
function openForChild(path) {
  let fd;
  try {
    fd = openSync(String(path), constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    if (fstatSync(fd).isFile()) return fd;
  } catch {
    // gone or unreadable: an empty file instead
  }
  if (fd !== undefined) closeQuietly(fd);
  return openSync('/dev/null', 'r');
}

function closeQuietly(fd) {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

// Descriptors the host inherited from its own parent reach this process too,
// and would reach every tool: close them once here, so no tool needs a closer.
function closeInheritedDescriptors() {
  const channelFd = Number(process.env.NODE_CHANNEL_FD);
  for (const fd of listInheritableDescriptors()) {
    if (fd === channelFd) continue;
    try {
      closeSync(fd);
    } catch {
      // closed meanwhile
    }
  }
}
