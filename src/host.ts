// The composition root (STYLE section 1, "no hidden state"): builds the
// configuration, journal, artifact store, approval-state signer, runners and
// supervisor, and hands each its dependencies. Two hosts fit in one process.
import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { openJournal } from './audit/open-journal.js';
import type { HostConfig } from './host-config.js';
import { loadHostConfigKeepingServers } from './host-servers.js';
import { fingerprintListing } from './registry/server-tools.js';
import { ConfigError } from './config/problem.js';
import type { Logger } from './log.js';
import { createRunner, ProcessServices, UpstreamServers, type ServerInstance } from './runner/index.js';
import { createRedactor } from './supervisor/redact.js';
import { DEFAULT_REQUEST_STATE_TTL_MS, RequestStateSigner } from './supervisor/request-state.js';
import { RunnerCache } from './supervisor/runner-cache.js';
import { SessionCounters } from './supervisor/session-counters.js';
import { createSupervisor } from './supervisor/supervisor.js';
import type { Supervisor } from './supervisor/types.js';

export interface HostOptions {
  readonly manifestDirs: readonly string[];
  /** Organisation policy files, most authoritative first. */
  readonly policyFiles: readonly string[];
  readonly workspace: string;
  /** Journal and artifacts live here (created 0700). */
  readonly stateDir: string;
  /** `--journal URL`: sqlite:PATH or postgres://… (SPEC 7.1); default TOOLHOST_JOURNAL, else <state>/journal.sqlite. */
  readonly journalUrl?: string;
  /** The log file `logger` writes, if any: protected from tools like the state folder. */
  readonly logFile?: string;
  readonly logger: Logger;
  /** The host environment (secrets to redact, names process tools may get); default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** Base for relative paths; default process.cwd(). */
  readonly cwd?: string;
  /** How long an elicitation may wait for the user; default 120 s. */
  readonly approvalTimeoutMs?: number;
  /** How long an input_required approval state stays valid; default 10 min. */
  readonly requestStateTtlMs?: number;
  /** Clock for approval-state expiry (tests). */
  readonly now?: () => number;
  /** Names this session in the journal; default a random UUID. Ignored when `session` is given. */
  readonly sessionId?: string;
  /**
   * The session's counters (call budget, failure run, terminal: SPEC 5.2). `serve` builds
   * one per connection and hands it to every host a reload builds, so the counts survive
   * a reload; default a fresh session.
   */
  readonly session?: SessionCounters;
  /**
   * One-shot process tools start the next call's sandbox while a call runs; false for a
   * host that serves a single call (`toolhost call`), where it would be wasted. Default true.
   */
  readonly prepareSandboxes?: boolean;
  /** Start the spawner now when the host has process tools (`serve`), instead of on the first call. */
  readonly startSpawnerAhead?: boolean;
  /**
   * Start the isolate processes of the isolate tools (`serve`; as many as the host keeps alive)
   * in the background, one at a time, so a tool's first call does not pay for its process start.
   */
  readonly startIsolatesAhead?: boolean;
  /** SQLite journal: commit read-only calls' batched records on a writer thread, off the event loop (`serve`). */
  readonly journalWriterThread?: boolean;
  /** `--journal-key FILE`: the Ed25519 key that signs this host's chain; default TOOLHOST_JOURNAL_KEY, else the state folder's. */
  readonly journalKeyFile?: string;
}

export interface Host {
  readonly supervisor: Supervisor;
  readonly config: HostConfig;
  readonly sessionId: string;
  /** Subscribes to an upstream server's notifications/tools/list_changed (serve reloads); returns the unsubscribe. */
  onUpstreamToolsChanged(listener: (server: string) => void): () => void;
  /** This host's spawner, process groups, cgroups, prepared sandboxes and isolate processes: its own. */
  readonly services: ProcessServices;
  /** True while the journal answers a read (`/readyz` of `serve --http`). */
  isJournalReady(): boolean;
  /**
   * Commits the read-only calls' records still queued for their batch (they land a few ms
   * after each answer on their own); another connection to the journal sees them after this.
   */
  flushJournal(): Promise<void>;
  /** Cancels in-flight calls, closes runners and the journal. Idempotent. */
  close(): Promise<void>;
}

/** Default time a person has to answer an approval prompt. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 120_000;

/** Builds a host; throws ConfigError (every problem listed) when manifests or policies do not load. */
export async function createHost(options: HostOptions): Promise<Host> {
  const { logger } = options;
  // Built first: the upstream servers that list their tools are already this host's processes.
  const services = new ProcessServices({ logger });
  let instances: ReadonlyMap<string, ServerInstance> = new Map();
  try {
    const loaded = await loadHostConfigKeepingServers({
      manifestDirs: options.manifestDirs,
      policyFiles: options.policyFiles,
      workspace: options.workspace,
      stateDir: options.stateDir,
      ...(options.logFile !== undefined ? { logFile: options.logFile } : {}),
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.env !== undefined ? { env: options.env } : {}),
    }, { logger, services });
    instances = loaded.instances;
    return await buildHost(options, loaded.config, instances, services);
  } catch (error) {
    // The servers that listed are still running: nothing may outlive a host that did not start.
    await Promise.allSettled([...instances.values()].map((instance) => instance.killAndWait()));
    await services.close();
    throw error;
  }
}

async function buildHost(options: HostOptions, config: HostConfig, instances: ReadonlyMap<string, ServerInstance>, services: ProcessServices): Promise<Host> {
  const { logger } = options;
  // Exclusions are not fatal: `serve` logs them, `validate` reports them.
  if (config.problems.length > 0) throw new ConfigError(config.problems);
  // A server that cannot start is not fatal for serve: it starts without that server's tools, and says why.
  for (const server of config.servers) {
    if (server.unavailable !== undefined) logger.warn({ server: server.server, file: server.displayFile, reason: server.unavailable }, 'upstream server not available: serving without its tools');
    for (const tool of server.tools) if (tool.excluded !== undefined) logger.info({ server: server.server, tool: tool.upstream, reason: tool.excluded }, 'upstream tool not offered');
  }

  const session = options.session ?? new SessionCounters(options.sessionId ?? randomUUID());
  const sessionId = session.id;
  const journal = await openJournal({
    url: options.journalUrl,
    stateDir: options.stateDir,
    logger,
    sessionId,
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    writeBatchesOffThread: options.journalWriterThread === true,
    keyFile: options.journalKeyFile,
  });
  const artifacts = { put: (bytes: Uint8Array, mimeType: string) => journal.putArtifact(bytes, mimeType), get: (uri: string) => journal.getArtifact(uri) };
  if (options.startSpawnerAhead === true && [...config.tools.values()].some((view) => view.runSpec?.mode === 'process')) services.spawner.start();
  const redact = createRedactor({
    secretValues: config.secretValues(),
    // Paths inside the workspace may be shown, as given or with symlinks resolved.
    visibleRoots: [...new Set([config.workspace, options.workspace, realpathOr(options.workspace)])],
    // Paths under these are hidden even when they do not exist (yet); elsewhere only existing paths are.
    hostRoots: hostRootsOf(options),
  });
  const upstream = new UpstreamServers({
    logger,
    services,
    // What a server writes to stderr or logs reaches the host's log redacted and bounded.
    redactLog: (text, maxChars) => redact.cut(text, maxChars),
    fingerprint: fingerprintListing,
    fingerprints: new Map(config.servers.flatMap((server) => (server.fingerprint !== undefined ? [[server.server, server.fingerprint] as const] : []))),
  });
  // The instance that listed a server (its roots all read-only) serves the first calls of the
  // profile it matches: the read_only one, or the only one of a server without writable roots.
  for (const [server, instance] of instances) {
    const manifest = [...config.tools.values()].find((view) => view.manifest.upstream?.server === server)?.manifest;
    if (manifest?.upstream) upstream.adopt(server, manifest.upstream.hasWritableRoot || manifest.networkAllow.length > 0 ? 'read_only' : 'declared', instance);
    else instance.kill();
  }
  const runnerDeps = { logger, services, upstream, ...(options.prepareSandboxes === false ? { preparedAhead: 0 } : {}) };
  const runners = new RunnerCache((spec) => createRunner(spec, runnerDeps));
  const supervisor = createSupervisor({
    config,
    journal,
    artifacts,
    runners,
    signer: new RequestStateSigner({ ttlMs: options.requestStateTtlMs ?? DEFAULT_REQUEST_STATE_TTL_MS, ...(options.now ? { now: options.now } : {}) }),
    redact,
    session,
    logger,
    approvalTimeoutMs: options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
    onResourceLink: (view) => (uri) => {
      const spec = view.runSpec;
      if (spec?.upstream) upstream.rememberLink({ ...spec, upstream: spec.upstream }, uri);
    },
    readUpstreamResource: async (uri) => {
      const read = await upstream.readResource(uri);
      if (!read) return undefined;
      // What a server hands back is redacted like its results when it is text.
      const isText = read.mimeType.startsWith('text/') || read.mimeType.includes('json');
      return isText ? { mimeType: read.mimeType, bytes: Buffer.from(redact(Buffer.from(read.bytes).toString('utf8')), 'utf8') } : read;
    },
    onClose: async () => {
      await upstream.close();
      await journal.close();
    },
  });
  if (options.startIsolatesAhead === true) {
    const isolateTools = [...config.tools.values()].filter((view) => view.runSpec?.mode === 'isolate').slice(0, services.isolateProcesses.maxAlive);
    // In the background, one process at a time: the host answers `initialize` meanwhile.
    void runners.warm(isolateTools).catch((error: unknown) => logger.warn({ err: String(error) }, 'starting isolate processes ahead failed'));
  }
  // Runners first (their processes answered and killed), then what is left of the host's sandboxes.
  const close = async (): Promise<void> => {
    await supervisor.close();
    await services.close();
  };
  const isJournalReady = (): boolean => {
    try {
      journal.get(READY_PROBE_ID);
      return true;
    } catch {
      return false;
    }
  };
  return { supervisor, config, sessionId, services, isJournalReady, flushJournal: () => journal.flush(), onUpstreamToolsChanged: (listener) => upstream.onToolsChanged(listener), close };
}

/** A call id no call has: reading it proves the journal answers without touching a record. */
const READY_PROBE_ID = 'readyz-probe';

// Folders of the host a tool's text may name: home, the state and manifest folders, the host's /tmp.
function hostRootsOf(options: HostOptions): string[] {
  const folders = [homedir(), '/root', '/home', tmpdir(), options.stateDir, ...options.manifestDirs];
  const resolved = folders.map((folder) => resolve(options.cwd ?? process.cwd(), folder));
  return [...new Set([...resolved, ...resolved.map(realpathOr)])];
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
