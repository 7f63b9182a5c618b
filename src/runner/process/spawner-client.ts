// The host's side of the spawner process (host-helpers/spawner.mjs): one per host
// (a SpawnerService in the host's ProcessServices), started on first use or
// ahead by `serve`, asked over its IPC channel to start each process tool.
// The tool's pipe ends come back as sockets the host reads and writes
// directly; the host still tracks and kills each process group itself
// (kill.ts), since signalling by pid needs no help from the spawner.
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { recordSandboxStartWork } from '../../diagnostics/event-loop.js';
import type { Logger } from '../../log.js';
import { UNREACHABLE_INSPECTOR_FLAG } from '../../node-inspector.js';
import { killProcessGroupNow } from './kill.js';
import type { HostToSpawnerMessage, SpawnerSpawnMessage } from '../host-helpers/messages.mjs';

/** How a spawned process's leader ended, or why it never started. */
export type SpawnerExit =
  { readonly kind: 'exited'; readonly exitCode: number | null; readonly signal: NodeJS.Signals | null } | { readonly kind: 'spawn_failed'; readonly errorCode: string };

/**
 * One process to start: the spawn message of the wire without its framing, the whole
 * environment of the new process, and fd 4's bytes (bubblewrap's --seccomp program) as
 * bytes here (base64 on the wire); `files` are bubblewrap's --file sources (sandboxFileInputs).
 */
type SpawnerRequest = Omit<SpawnerSpawnMessage, 'type' | 'id' | 'fd4'> & { readonly fd4?: Uint8Array };

/** A started process: its leader's pid (its own process group) and its pipes. */
interface SpawnerProcess {
  readonly pid: number;
  readonly stdin: Socket;
  readonly stdout: Socket;
  readonly stderr: Socket;
  /** fd 3 of the leader: bubblewrap's --json-status-fd (see sandbox-status.ts). */
  readonly status: Socket;
  /** Settles when the spawner has seen the leader exit (not when the pipes close). */
  readonly exited: Promise<SpawnerExit>;
}

type SpawnerResult = { readonly ok: true; readonly process: SpawnerProcess } | { readonly ok: false; readonly errorCode: string };

/** One host's spawner: started on first use (or ahead), replaced when it dies, stopped on close. */
export class SpawnerService {
  private spawner: Spawner | undefined;
  private isClosed = false;

  constructor(private readonly logger?: Logger) {}

  /** Starts `request` through this spawner (started on first use). */
  async spawn(request: SpawnerRequest): Promise<SpawnerResult> {
    // A spawner that died (killed, out of memory) is replaced: once per request, so
    // one that cannot start at all fails the call instead of looping.
    for (let attempt = 0; attempt < 2 && !this.isClosed; attempt++) {
      if (this.spawner === undefined || this.spawner.isGone) this.spawner = new Spawner(this.logger);
      const result = await this.spawner.spawn(request);
      if (result !== undefined) return result;
    }
    return { ok: false, errorCode: 'spawner_unavailable' };
  }

  /**
   * Starts the spawner now rather than on the first process call (which would
   * otherwise wait for a Node process to boot). Forking the host costs a few
   * milliseconds of its event loop: done once, at start-up.
   */
  start(): void {
    if (!this.isClosed) this.spawner ??= new Spawner(this.logger);
  }

  /** The spawner's process.memoryUsage() and how many tools it tracks, or undefined without a running spawner. */
  memory(): Promise<SpawnerMemory | undefined> {
    return this.spawner?.memory() ?? Promise.resolve(undefined);
  }

  /** The spawner's pid, when one is running (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.spawner?.pid;
  }

  /** Stops the spawner: it kills the tools it still tracks as it goes (its channel closes). */
  close(): void {
    this.isClosed = true;
    this.spawner?.stop();
    this.spawner = undefined;
  }
}

interface SpawnerMemory {
  readonly usage: NodeJS.MemoryUsage;
  readonly liveGroups: number;
}

const SPAWNER_URL = new URL('../host-helpers/spawner.mjs', import.meta.url);
// The spawner keeps no data: a small heap keeps its fork() cheap. With V8's
// default young generation its heap grew to 44 MB over 4000 spawns (all
// garbage, RSS 84 MB); with a 1 MB semi-space it stays at 14 MB (RSS 57 MB).
// An inspector that can never listen (node-inspector.ts).
const SPAWNER_EXEC_ARGV = ['--max-old-space-size=64', '--max-semi-space-size=1', UNREACHABLE_INSPECTOR_FLAG];

interface PendingSpawn {
  readonly resolve: (result: SpawnerResult) => void;
  pid: number | undefined;
  readonly stdio: (Socket | undefined)[];
  readonly exited: Promise<SpawnerExit>;
  readonly onExit: (exit: SpawnerExit) => void;
  isDelivered: boolean;
}

interface SpawnerMessage {
  readonly type?: unknown;
  readonly id?: unknown;
  readonly pid?: unknown;
  readonly fd?: unknown;
  readonly errorCode?: unknown;
  readonly exitCode?: unknown;
  readonly signal?: unknown;
}

class Spawner {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, PendingSpawn>();
  private readonly memoryRequests = new Map<number, (memory: SpawnerMemory | undefined) => void>();
  private readonly ready: Promise<boolean>;
  private nextId = 1;
  private hasEnded = false;
  /** Requests waiting for the spawner to be ready (they too keep the host alive). */
  private waitingCount = 0;

  constructor(private readonly logger: Logger | undefined) {
    this.child = fork(SPAWNER_URL, [], {
      execArgv: SPAWNER_EXEC_ARGV,
      // Its own environment is not the tools': each request carries theirs.
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      // stdin: the spawner's lifeline, never written; it ends when the host exits or stops it.
      stdio: ['pipe', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    });
    // Neither the lifeline nor stderr may keep the host's event loop alive.
    (this.child.stdin as Socket | null)?.unref();
    this.child.stdin?.on('error', () => undefined);
    // Its stderr is only diagnostics.
    (this.child.stderr as Socket | null)?.unref();
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (text: string) => this.logger?.warn({ spawner: text.trim().slice(0, 2000) }, 'spawner wrote to stderr'));
    this.ready = new Promise<boolean>((resolve) => {
      this.child.on('message', (message: SpawnerMessage, handle: unknown) => {
        if (message.type === 'ready') resolve(true);
        else this.onMessage(message, handle);
      });
      this.child.once('exit', (code, signal) => {
        resolve(false);
        this.onGone(code, signal);
      });
      this.child.once('error', (error) => {
        this.logger?.error({ err: error }, 'spawner process failed');
        resolve(false);
        this.onGone(null, null);
      });
    });
    this.updateRef();
  }

  /** Closes the channel: the spawner kills its tools and exits (see host-helpers/spawner.mjs). */
  stop(): void {
    if (this.hasEnded) return;
    // Both ends: the channel, and the lifeline for a spawner whose 'disconnect' waits on handles.
    this.child.stdin?.destroy();
    try {
      this.child.disconnect();
    } catch {
      // already disconnected
    }
  }

  /** Exited or failed to start: the next request gets a new spawner. */
  get isGone(): boolean {
    return this.hasEnded;
  }

  get pid(): number | undefined {
    return this.isGone ? undefined : this.child.pid;
  }

  /** Starts `request`; undefined when this spawner never became ready or is gone. */
  async spawn(request: SpawnerRequest): Promise<SpawnerResult | undefined> {
    this.waitingCount++;
    this.updateRef();
    const isReady = await this.ready;
    this.waitingCount--;
    this.updateRef();
    if (!isReady || this.isGone) return undefined;
    const id = this.nextId++;
    let onExit: (exit: SpawnerExit) => void = () => undefined;
    const exited = new Promise<SpawnerExit>((resolve) => {
      onExit = resolve;
    });
    let resolveFailed: (result: SpawnerResult) => void = () => undefined;
    const result = new Promise<SpawnerResult>((resolve) => {
      resolveFailed = resolve;
      this.pending.set(id, { resolve, pid: undefined, stdio: [], exited, onExit, isDelivered: false });
    });
    this.updateRef();
    const sendStartedMs = performance.now();
    // A channel that closed meanwhile (the spawner died) fails this request; onGone settles the rest.
    const failSend = (error: Error | null): void => {
      if (error === null || !this.pending.has(id)) return;
      this.pending.delete(id);
      this.logger?.warn({ err: error }, 'could not reach the spawner');
      resolveFailed({ ok: false, errorCode: 'spawner_unavailable' });
    };
    try {
      const fd4 = request.fd4 === undefined ? {} : { fd4: Buffer.from(request.fd4).toString('base64') };
      const files = request.files === undefined ? {} : { files: request.files };
      this.child.send({ type: 'spawn', id, file: request.file, args: request.args, cwd: request.cwd, env: request.env, ...fd4, ...files } satisfies HostToSpawnerMessage, failSend);
    } catch (error) {
      failSend(error instanceof Error ? error : new Error(String(error)));
    }
    recordSandboxStartWork(performance.now() - sendStartedMs);
    return result;
  }

  /** Asks the spawner for its memory (diagnostics); undefined when it is gone. */
  async memory(): Promise<SpawnerMemory | undefined> {
    if (!(await this.ready) || this.isGone) return undefined;
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.memoryRequests.set(id, resolve);
      this.updateRef();
      this.child.send({ type: 'memory', id } satisfies HostToSpawnerMessage, (error) => {
        if (error === null) return;
        this.memoryRequests.delete(id);
        this.updateRef();
        resolve(undefined);
      });
    });
  }

  private onMessage(message: SpawnerMessage, handle: unknown): void {
    const id = typeof message.id === 'number' ? message.id : -1;
    if (message.type === 'memory') {
      this.memoryRequests.get(id)?.(message as unknown as SpawnerMemory);
      this.memoryRequests.delete(id);
      this.updateRef();
      return;
    }
    const entry = this.pending.get(id);
    if (entry === undefined) {
      // A handle for a request we no longer track: never leave its descriptor open.
      (handle as Socket | undefined)?.destroy();
      return;
    }
    switch (message.type) {
      case 'spawned':
        entry.pid = typeof message.pid === 'number' ? message.pid : undefined;
        break;
      case 'stdio':
        if (typeof message.fd === 'number' && handle !== undefined) entry.stdio[message.fd] = handle as Socket;
        this.deliverWhenComplete(entry);
        break;
      case 'failed':
        this.pending.delete(id);
        entry.resolve({ ok: false, errorCode: typeof message.errorCode === 'string' ? message.errorCode : 'spawn_error' });
        break;
      case 'exit':
        this.pending.delete(id);
        entry.onExit({
          kind: 'exited',
          exitCode: typeof message.exitCode === 'number' ? message.exitCode : null,
          signal: typeof message.signal === 'string' ? (message.signal as NodeJS.Signals) : null,
        });
        // Exited before all its pipes came across (they still will, and are then destroyed above).
        if (!entry.isDelivered) entry.resolve({ ok: false, errorCode: 'exited_before_handover' });
        break;
      default:
        break;
    }
    this.updateRef();
  }

  private deliverWhenComplete(entry: PendingSpawn): void {
    const [stdin, stdout, stderr, status] = entry.stdio;
    if (entry.isDelivered || entry.pid === undefined || stdin === undefined || stdout === undefined || stderr === undefined || status === undefined) return;
    entry.isDelivered = true;
    // The host only writes to the tool's stdin: do not buffer what the tool might write back into it.
    stdin.pause();
    stdin.on('error', () => undefined);
    entry.resolve({ ok: true, process: { pid: entry.pid, stdin, stdout, stderr, status, exited: entry.exited } });
  }

  private onGone(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.hasEnded) return;
    this.hasEnded = true;
    if (this.pending.size > 0) this.logger?.error({ code, signal, running: this.pending.size }, 'spawner process ended; its tools died with it');
    // --die-with-parent takes every sandbox down with the spawner; a process
    // group it left behind all the same is killed here.
    for (const entry of this.pending.values()) {
      if (entry.pid !== undefined) killProcessGroupNow(entry.pid);
      entry.onExit({ kind: 'exited', exitCode: null, signal: 'SIGKILL' });
      if (!entry.isDelivered) entry.resolve({ ok: false, errorCode: 'spawner_exited' });
    }
    this.pending.clear();
    for (const resolve of this.memoryRequests.values()) resolve(undefined);
    this.memoryRequests.clear();
  }

  // The channel keeps the host's event loop alive only while a tool is running,
  // so an idle host can still exit when its work is done.
  private updateRef(): void {
    if (this.isGone) return;
    if (this.pending.size > 0 || this.waitingCount > 0 || this.memoryRequests.size > 0) {
      this.child.ref();
      this.child.channel?.ref();
    } else {
      this.child.unref();
      this.child.channel?.unref();
    }
  }
}
