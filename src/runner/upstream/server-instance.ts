// One running upstream MCP server (SPEC section 2.1): a persistent process in
// the namespace sandbox (same argv, spawner, cgroup and rlimits as
// process tools), and the host as its MCP client (SDK v2) over the pipes. The
// server's words are bounded before they are parsed (pipe-transport.ts); its
// requests to the client are refused except roots/list; when it dies, every
// call in flight on it fails `tool_crashed`.
import type { Client } from '@modelcontextprotocol/client';
import type * as ClientSdk from '@modelcontextprotocol/client';
import type { Logger } from '../../log.js';
import type { RunSpec } from '../types.js';
import type { EgressAttempt, RunOptions } from '../run-types.js';
import { CallEvents } from '../events.js';
import type { EgressGrant } from '../bwrap/egress-grant.js';
import { DEFAULT_GRACE_MS, killProcessGroup } from '../process/kill.js';
import { TailBuffer } from '../process/output-cap.js';
import { resolveSandboxArgv, sandboxSetupOf, withEgress, type EgressSettings, type SandboxedSpawnServices } from '../process/process-sandbox.js';
import { openWorkdir, spawnTool, type SpawnedTool, type ToolExit } from '../process/spawn.js';
import { START_LINE } from '../bwrap/argv.js';
import { upstreamAddressSpaceMb } from './address-space.js';
import { PipeClientTransport, type PipeFault } from './pipe-transport.js';
import { ServerLog } from './server-log.js';
import { lastStderrLines } from './stderr-tail.js';

/** The server's spec: a RunSpec whose command is the server's, plus its start-up budget. */
export interface InstanceSpec {
  readonly run: RunSpec;
  readonly startupTimeoutMs: number;
  /** Largest JSON-RPC message the server may send, in bytes. */
  readonly maxMessageBytes: number;
}

interface InstanceDeps {
  readonly logger: Logger;
  /**
   * The host's spawner, groups, cgroups and machine facts: the server is one of
   * the host's processes, tracked by its groups and killed when it closes.
   */
  readonly services: SandboxedSpawnServices;
  readonly graceMs?: number;
  readonly bwrapPath?: string;
  /** The egress proxies' limits and resolver, for servers with a network allow list. */
  readonly egress?: EgressSettings;
  /** Redacts and cuts what the server logs before the host's log gets it (Redactor.cut). */
  readonly redactLog?: (text: string, maxChars: number) => string;
}

/** Why an instance ended, as facts for the calls that were running on it. */
interface InstanceEnd {
  readonly reason: 'exited' | 'killed' | PipeFault;
  /** The kernel killed it (or a process of its sandbox) at its memory cgroup's limit. */
  readonly isOomKilled?: boolean;
  readonly exitCode?: number | null;
  readonly signal?: string | null;
  readonly stderrTail: string;
}

/**
 * A failed start names why, and carries the last lines of the server's stderr (redacted with
 * deps.redactLog when there is one, bounded: stderr-tail.ts) for people and the model.
 */
export type StartResult = { readonly ok: true; readonly instance: ServerInstance } | { readonly ok: false; readonly reason: string; readonly stderrLines?: readonly string[] };

/** A tool as the server lists it (unchecked beyond being an object with a string name). */
export interface UpstreamTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
}

export type ListResult = { readonly ok: true; readonly tools: readonly UpstreamTool[]; readonly truncated: boolean } | { readonly ok: false; readonly reason: string };

/** At most this many tools are read from one server (a listing of 10,000 is cut, and says so). */
const MAX_UPSTREAM_TOOLS = 512;
const MAX_LIST_PAGES = 32;

export class ServerInstance {
  /** Settles once the process is gone; never rejects. */
  readonly gone: Promise<InstanceEnd>;
  /** Called when the server says its tool list changed. */
  onToolsChanged: (() => void) | undefined;
  #end: InstanceEnd | undefined;
  #killing: InstanceEnd['reason'] | undefined;
  #isStdoutClosed = false;
  readonly #stderr = new TailBuffer();
  readonly #log: ServerLog;
  /** The egress sinks of the calls in flight: a server's connections say no call, so each counts on all of them. */
  readonly #egressSinks = new Set<(attempt: EgressAttempt) => void>();
  #egress: EgressGrant | undefined;

  private constructor(
    private readonly spec: InstanceSpec,
    private readonly deps: InstanceDeps,
    private readonly process: SpawnedTool,
    readonly client: Client,
    ended: Promise<ToolExit>,
    oomKills: () => Promise<number>,
  ) {
    // Named as the host's log names the server's profiles: `fs:read_only`, `fs:declared`.
    const upstream = spec.run.upstream;
    this.#log = new ServerLog({
      logger: deps.logger,
      server: upstream ? `${upstream.server}:${upstream.profile}` : spec.run.name,
      ...(deps.redactLog ? { redact: deps.redactLog } : {}),
    });
    process.stderr.on('data', (chunk: Buffer) => {
      this.#stderr.push(chunk);
      this.#log.stderr(chunk);
    });
    process.stdout.once('end', () => (this.#isStdoutClosed = true));
    process.stdout.once('close', () => (this.#isStdoutClosed = true));
    this.gone = ended.then(async (exit) => {
      const isOomKilled = (await oomKills()) > 0;
      this.#end = {
        reason: this.#killing ?? 'exited',
        ...(isOomKilled ? { isOomKilled } : {}),
        ...(exit.kind === 'spawn_failed' ? {} : { exitCode: exit.exitCode, signal: exit.signal }),
        stderrTail: this.#stderr.toText(),
      };
      this.#log.end();
      void client.close().catch(() => undefined);
      return this.#end;
    });
  }

  /** Starts the server in its sandbox and completes the MCP handshake within startupTimeoutMs. */
  static async start(spec: InstanceSpec, deps: InstanceDeps): Promise<StartResult> {
    const sdk = loadClientSdk();
    const opened = await openWorkdir(spec.run);
    const sandbox = await resolveSandboxArgv(spec.run, {
      cwd: opened.cwd,
      // Under the RLIMIT_AS fallback only: a memory cgroup holds the server to its memoryMb as used.
      addressSpaceMb: upstreamAddressSpaceMb(spec.run.memoryMb),
      logger: deps.logger,
      services: deps.services,
      ...(deps.bwrapPath !== undefined ? { bwrapPath: deps.bwrapPath } : {}),
      ...(deps.egress !== undefined ? { egress: deps.egress } : {}),
    });
    if (!sandbox.ok) {
      await opened.dispose();
      return { ok: false, reason: sandbox.reason };
    }
    // A server with a network allow list reaches out only through its own egress proxy, closed with it.
    const workdir = withEgress(opened, sandbox.egress);
    const process = await spawnTool(sandbox.argv, spec.run.env, workdir.cwd, deps.services, sandboxSetupOf(sandbox.egress));
    const ended = process.ended.then(async (exit) => {
      await workdir.dispose();
      return exit;
    });
    if (process.pid === undefined) {
      await ended;
      return { ok: false, reason: 'the server process could not be spawned' };
    }
    // The server waits at its start gate (nothing flows yet) while the client library finishes loading.
    const { Client } = await sdk;
    process.stdin.write(START_LINE);
    let instance: ServerInstance | undefined;
    const transport = new PipeClientTransport(process.stdout, process.stdin, spec.maxMessageBytes, (fault) => {
      deps.logger.warn({ server: spec.run.name, fault }, 'upstream server broke the protocol; killing it');
      instance?.kill(fault);
    });
    // No sampling, no elicitation: requests for them are answered "method not found".
    const client = new Client({ name: 'toolhost', version: '1.0.0' }, { capabilities: { roots: { listChanged: false } } });
    const { cgroup } = sandbox;
    instance = new ServerInstance(spec, deps, process, client, ended, () => deps.services.cgroups.oomKills(cgroup));
    instance.#egress = sandbox.egress;
    const self = instance;
    client.setRequestHandler('roots/list', async () => ({
      roots: spec.run.roots.map((root) => ({ uri: `file://${root.path}`, name: root.path })),
    }));
    client.setNotificationHandler('notifications/tools/list_changed', () => self.onToolsChanged?.());
    client.setNotificationHandler('notifications/message', (notification) => self.#log.message(notification.params));
    let started = await withDeadline(client.connect(transport), spec.startupTimeoutMs, self.gone);
    // The SDK's "Connection closed" races the exit: a server whose output ended has exited.
    if (started !== 'ok' && started !== 'timeout' && self.#isStdoutClosed) started = 'gone';
    if (started !== 'ok') {
      const end = await self.killAndWait('killed');
      const exit = end.signal ? ` (signal ${end.signal})` : end.exitCode !== undefined && end.exitCode !== null ? ` (exit code ${end.exitCode})` : '';
      // A server that exits at once often closes its pipes before its exit is seen: the handshake
      // then fails with "Connection closed", but an exit code of its own (not 128+N of our kill) says why.
      const exitedByItself = started === 'gone' || (started !== 'timeout' && !end.signal && typeof end.exitCode === 'number' && end.exitCode < 128);
      const why = end.isOomKilled
        ? `it went over its memory limit (memoryMb ${spec.run.memoryMb}) during start-up`
        : started === 'timeout'
          ? `it did not complete the MCP handshake within ${spec.startupTimeoutMs} ms`
          : exitedByItself
            ? `it exited during start-up${exit}`
            : `the handshake failed (${started})`;
      return { ok: false, reason: why, stderrLines: self.stderrLines(end) };
    }
    return { ok: true, instance: self };
  }

  /** The last lines of the server's stderr once it is gone, redacted and bounded. */
  stderrLines(end: InstanceEnd): string[] {
    return lastStderrLines(end.stderrTail, this.deps.redactLog ? { redact: this.deps.redactLog } : {});
  }

  /** True until the process is gone or being killed. */
  get isAlive(): boolean {
    return this.#end === undefined && this.#killing === undefined;
  }

  /** Reads the server's tools, page by page, at most MAX_UPSTREAM_TOOLS of them. */
  async listTools(timeoutMs: number): Promise<ListResult> {
    const tools: UpstreamTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      let result: { tools?: unknown; nextCursor?: unknown };
      try {
        // Checked tool by tool below and by the registry: the SDK's own schema would walk a
        // listing of megabytes on the event loop in one go.
        result = (await this.client.request({ method: 'tools/list', params: cursor !== undefined ? { cursor } : {} }, ANY_RESULT, { timeout: timeoutMs })) as never;
      } catch (error) {
        return { ok: false, reason: `tools/list failed: ${errorText(error)}` };
      }
      const listed = Array.isArray(result.tools) ? (result.tools as unknown[]) : [];
      for (const tool of listed) {
        if (tools.length >= MAX_UPSTREAM_TOOLS) return { ok: true, tools, truncated: true };
        if (typeof tool === 'object' && tool !== null && typeof (tool as { name?: unknown }).name === 'string') tools.push(tool as UpstreamTool);
      }
      if (typeof result.nextCursor !== 'string' || result.nextCursor === '') return { ok: true, tools, truncated: false };
      cursor = result.nextCursor.slice(0, 1024);
    }
    return { ok: true, tools, truncated: true };
  }

  /**
   * Calls one tool. Resolves with the raw result, or a failure: `timeout`/`cancelled`
   * (sent upstream as notifications/cancelled; a server that then does not answer a
   * ping within the grace is killed), `crashed` when the process went away, or
   * `protocol` when the answer was not a valid result.
   */
  async callTool(name: string, args: Readonly<Record<string, unknown>>, options: RunOptions): Promise<CallAnswer> {
    if (!this.isAlive) return { kind: 'crashed', end: this.#end ?? (await this.gone) };
    const { control } = options;
    if (control.reason !== undefined) return { kind: control.reason === 'timeout' ? 'timeout' : 'cancelled' };
    const onEgress = options.onEgress;
    if (onEgress !== undefined) this.#followEgress(onEgress);
    // The call's control owns the deadline and the cancel (STYLE 7); a stop aborts the request,
    // which sends notifications/cancelled upstream.
    const controller = new AbortController();
    let stopped: 'timeout' | 'cancelled' | undefined;
    const unregister = control.onStop((reason) => {
      stopped ??= reason === 'timeout' ? 'timeout' : 'cancelled';
      controller.abort();
    });
    // The server's progress, bounded per call before the supervisor (redaction) and the client see it.
    const events = options.onProgress ? new CallEvents({ options, logger: this.deps.logger, facts: { server: this.spec.run.name } }) : undefined;
    const onprogress = events ? (progress: unknown) => events.progress(progress) : undefined;
    const request = this.client
      .request(
        { method: 'tools/call', params: { name, arguments: args } },
        // The result's shape is checked by the supervisor (supervisor/result/upstream.ts), with stable reasons.
        ANY_RESULT,
        {
          signal: controller.signal,
          // The call's control decides; the SDK's default of 60 s must not cut a longer budget.
          timeout: 2 ** 31 - 1,
          ...(onprogress ? { onprogress } : {}),
        },
      )
      .then((result): CallAnswer => ({ kind: 'result', result }))
      .catch(async (error: unknown): Promise<CallAnswer> => {
        if (stopped) return { kind: stopped };
        // "Connection closed" is the process going away (killed, crashed, or broke the protocol).
        if (this.#isStdoutClosed || !this.isAlive) return { kind: 'crashed', end: await this.gone };
        // A JSON-RPC error response: the server's own answer (a tool that threw, a refused connection).
        if (clientSdk?.ProtocolError.isInstance(error) === true) return { kind: 'upstream_error', code: error.code, message: upstreamErrorText(error.message) };
        return { kind: 'protocol', message: errorText(error) };
      });
    const crashed = this.gone.then((end): CallAnswer => ({ kind: 'crashed', end }));
    try {
      const answer = await Promise.race([request, crashed]);
      // Answered only once the server is known to have settled (or is being killed), so the
      // next call never lands on a server still stuck in the cancelled work.
      if (answer.kind === 'timeout' || answer.kind === 'cancelled') await this.#checkSettled();
      return answer;
    } finally {
      unregister();
      if (onEgress !== undefined) this.#egressSinks.delete(onEgress);
    }
  }

  // A call starts on this server: the egress proxy's budget starts afresh (as for a persistent
  // process's call), and every connection the server makes while the call runs counts on its
  // record (and on every other call in flight: the connection does not say whose it is).
  #followEgress(onEgress: (attempt: EgressAttempt) => void): void {
    this.#egressSinks.add(onEgress);
    this.#egress?.attach((attempt) => {
      if (this.#egressSinks.size === 0)
        return this.deps.logger[attempt.admitted ? 'info' : 'warn'](
          { server: this.spec.run.name, egress: attempt },
          attempt.admitted ? 'egress admitted (no call)' : 'egress refused (no call)',
        );
      for (const sink of this.#egressSinks) sink(attempt);
    });
  }

  /** Kills the whole sandbox (pid namespace); calls in flight fail `tool_crashed`. */
  kill(reason: InstanceEnd['reason'] = 'killed'): void {
    if (this.#killing !== undefined || this.#end !== undefined) return;
    this.#killing = reason;
    if (this.process.pid !== undefined) {
      void killProcessGroup(this.process.pid, this.deps.graceMs ?? DEFAULT_GRACE_MS, { exited: this.process.exited, groups: this.deps.services.groups });
    }
  }

  /** Kills and waits until the process is gone. */
  async killAndWait(reason: InstanceEnd['reason'] = 'killed'): Promise<InstanceEnd> {
    this.kill(reason);
    return this.gone;
  }

  // After a cancel, the server must still answer within the grace; one stuck in the
  // cancelled work is killed (and replaced on the next call).
  async #checkSettled(): Promise<void> {
    const graceMs = Math.max(this.deps.graceMs ?? DEFAULT_GRACE_MS, 250);
    try {
      await this.client.request({ method: 'ping' }, { timeout: graceMs });
    } catch {
      if (this.isAlive) {
        this.deps.logger.warn({ server: this.spec.run.name, graceMs }, 'upstream server did not settle after a cancel; killing it');
        this.kill('killed');
      }
    }
  }
}

// A Standard Schema that accepts any value: the SDK's own result schema would reject
// malformed content with an unstable message before our checks can name it.
const ANY_RESULT = { '~standard': { version: 1 as const, vendor: 'toolhost', validate: (value: unknown) => ({ value }) } };

type CallAnswer =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'crashed'; readonly end: InstanceEnd }
  /** The server answered with a JSON-RPC error: its code and message (bounded; redacted by the supervisor). */
  | { readonly kind: 'upstream_error'; readonly code: number; readonly message: string }
  | { readonly kind: 'protocol'; readonly message: string };

/** Characters of an upstream JSON-RPC error message kept (redacted and cut again by the supervisor). */
const MAX_UPSTREAM_ERROR_MESSAGE_CHARS = 4096;

// Bounded before anything else is done with it; the SDK adds no prefix of its own to a ProtocolError.
function upstreamErrorText(message: string): string {
  return message.length > MAX_UPSTREAM_ERROR_MESSAGE_CHARS ? message.slice(0, MAX_UPSTREAM_ERROR_MESSAGE_CHARS) : message;
}

async function withDeadline(work: Promise<void>, timeoutMs: number, gone: Promise<unknown>): Promise<'ok' | 'timeout' | 'gone' | string> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    return await Promise.race([
      work.then(
        () => 'ok' as const,
        (error: unknown) => errorText(error),
      ),
      deadline,
      gone.then(() => 'gone' as const),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function errorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, ' ').slice(0, 300);
}

// The MCP client library (hundreds of milliseconds to load on a busy machine) loads with the
// first server start, not with the host: `serve` answers `initialize` before any server starts.
let clientSdk: typeof ClientSdk | undefined;
let clientSdkLoading: Promise<typeof ClientSdk> | undefined;
function loadClientSdk(): Promise<typeof ClientSdk> {
  return (clientSdkLoading ??= import('@modelcontextprotocol/client').then((sdk) => (clientSdk = sdk)));
}
