// The composition root (STYLE section 1, "no hidden state"): builds the
// configuration, journal, artifact store, approval-state signer, runners and
// supervisor, and hands each its dependencies. Two hosts fit in one process.
import { randomUUID } from 'node:crypto';
import { realPathOr } from './config/real-path.js';
import { homedir, tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { journalFlagsFor } from './audit/journal-url.js';
import { journalUrlFrom, openJournal } from './audit/open-journal.js';
import { loadHostConfig, type HostConfig, type LoadHostConfigOptions } from './host-config.js';
import { loadHostConfigKeepingServers, ServerStartup } from './host-servers.js';
import type { ServerListing } from './registry/server-tools.js';
import { createToolSchemaCompiler } from './registry/ajv.js';
import type { RunSpec } from './runner/types.js';
import { fingerprintListingSoon } from './registry/server-tools.js';
import { DefinitionDrift } from './policy/definition-drift.js';
import { createJournalReadiness } from './host-readiness.js';
import { ConfigError } from './config/problem.js';
import type { Logger } from './log.js';
import { createRunner, ProcessServices, UpstreamServers, uiResourceOf, type ServerInstance } from './runner/index.js';
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
  /** The folder of the toolhost.yaml in force: organisation policy files are named relative to it. */
  readonly configDir?: string;
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
  /**
   * When the upstream servers are started and listed: `before` the host is returned (default:
   * its tools are complete at once), or in the `background` (`serve`: the host answers at once,
   * each server's tools appear as it lists, and the supervisor in force is replaced then).
   */
  readonly startServers?: 'before' | 'background';
  /** Start (and list) only the servers this selects; the others offer no tool (`call`, `explain`). Default: all. */
  readonly onlyServers?: (server: string) => boolean;
  /**
   * What each server listed in the host this one replaces (a reload): a server that does not
   * start now keeps offering those tools, which fail `sandbox_unavailable` with its reason.
   */
  readonly knownListings?: ReadonlyMap<string, ServerListing>;
  /** `--journal-key FILE`: the Ed25519 key that signs this host's chain; default TOOLHOST_JOURNAL_KEY, else the state folder's. */
  readonly journalKeyFile?: string;
}

export interface Host {
  /** The supervisor in force: replaced when a server started in the background lists its tools. */
  readonly supervisor: Supervisor;
  /** The configuration in force (with the listings so far). */
  readonly config: HostConfig;
  readonly sessionId: string;
  /** Called after each replacement of `supervisor` (serve tells its clients: tools/list_changed); returns the unsubscribe. */
  onSupervisorReplaced(listener: () => void): () => void;
  /** Resolves once no server is still starting for its first listing (each bounded by its startupTimeoutMs). */
  whenServersListed(): Promise<void>;
  /** For a tool of a server still starting for its first listing: resolves once its tools are in force. Else undefined. */
  whenToolReady(name: string): Promise<void> | undefined;
  /** What each server listed so far (by server name), for the host a reload builds next. */
  listings(): ReadonlyMap<string, ServerListing>;
  /** Subscribes to an upstream server's notifications/tools/list_changed (serve reloads); returns the unsubscribe. */
  onUpstreamToolsChanged(listener: (server: string) => void): () => void;
  /** This host's spawner, process groups, cgroups, prepared sandboxes and isolate processes: its own. */
  readonly services: ProcessServices;
  /** Resolves true while the journal answers a read (`/readyz` of `serve --http`), else false; never rejects. */
  isJournalReady(): Promise<boolean>;
  /**
   * Commits the read-only calls' records still queued for their batch (they land a few ms
   * after each answer on their own); another connection to the journal sees them after this.
   */
  flushJournal(): Promise<void>;
  /** Cancels in-flight calls, closes runners and the journal. Idempotent. */
  close(): Promise<void>;
}

/** Default time a person has to answer an approval prompt. */
const DEFAULT_APPROVAL_TIMEOUT_MS = 120_000;

/** Builds a host; throws ConfigError (every problem listed) when manifests or policies do not load. */
export async function createHost(options: HostOptions): Promise<Host> {
  const { logger } = options;
  // Built first: the upstream servers that list their tools are already this host's processes.
  const services = new ProcessServices({ logger });
  let instances: ReadonlyMap<string, ServerInstance> = new Map();
  try {
    const configOptions = configOptionsOf(options);
    if (options.startServers === 'background') {
      const first = loadHostConfig(configOptions);
      return await buildHost(options, first, new Map(), services, first.serverProbes);
    }
    const loaded = await loadHostConfigKeepingServers(configOptions, { logger, services, ...(options.onlyServers ? { only: options.onlyServers } : {}) });
    instances = loaded.instances;
    return await buildHost(options, loaded.config, instances, services, new Map());
  } catch (error) {
    // The servers that listed are still running: nothing may outlive a host that did not start.
    await Promise.allSettled([...instances.values()].map((instance) => instance.killAndWait()));
    await services.close();
    throw error;
  }
}

function configOptionsOf(options: HostOptions): LoadHostConfigOptions {
  return {
    manifestDirs: options.manifestDirs,
    policyFiles: options.policyFiles,
    workspace: options.workspace,
    stateDir: options.stateDir,
    ...(options.logFile !== undefined ? { logFile: options.logFile } : {}),
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.configDir !== undefined ? { configDir: options.configDir } : {}),
    ...(options.env !== undefined ? { env: options.env } : {}),
  };
}

async function buildHost(
  options: HostOptions,
  initial: HostConfig,
  instances: ReadonlyMap<string, ServerInstance>,
  services: ProcessServices,
  /** Servers to start and list in the background (serve's fast start); empty: none. */
  background: ReadonlyMap<string, RunSpec>,
): Promise<Host> {
  const { logger } = options;
  // Exclusions are not fatal: `serve` logs them, `validate` reports them.
  if (initial.problems.length > 0) throw new ConfigError(initial.problems);
  let config = initial;
  logServers(config, logger, (server) => !background.has(server));

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
  if (options.startSpawnerAhead === true && ([...config.tools.values()].some((view) => view.runSpec?.mode === 'process') || background.size > 0)) services.spawner.start();
  const redact = createRedactor({
    secretValues: config.secretValues(),
    // Paths inside the workspace may be shown, as given or with symlinks resolved.
    visibleRoots: [...new Set([config.workspace, options.workspace, realPathOr(options.workspace)])],
    // Paths under these are hidden even when they do not exist (yet); elsewhere only existing paths are.
    hostRoots: hostRootsOf(options),
  });
  // Updated as listings come in: a server's tools/list_changed that repeats its listing is no change.
  const fingerprints = new Map<string, string>();
  const noteFingerprints = (next: HostConfig): void => {
    for (const server of next.servers) if (server.fingerprint !== undefined) fingerprints.set(server.server, server.fingerprint);
  };
  noteFingerprints(config);
  const redactLog = (text: string, maxChars: number): string => redact.cut(text, maxChars);
  // Pinned server tools a tools/list_changed changes are refused from that moment (SPEC section 4.2).
  // The source reads the configuration in force, which the background start replaces.
  const drift = config.pinning.enforced
    ? new DefinitionDrift(
        {
          get tools() {
            return config.tools;
          },
          pinning: config.pinning,
          manifestsOfListing: (server, listing) => config.manifestsOfListing(server, listing),
        },
        logger,
        redactLog,
      )
    : undefined;
  const upstream = new UpstreamServers({
    logger,
    services,
    ...(drift ? { onListing: (server: string, tools: Parameters<DefinitionDrift['relisted']>[1]) => drift.relisted(server, tools) } : {}),
    // What a server writes to stderr or logs reaches the host's log redacted and bounded.
    redactLog,
    fingerprint: fingerprintListingSoon,
    fingerprints,
  });
  // The instance that listed a server (its roots all read-only) serves the first calls of the
  // profile it matches: the read_only one, or the only one of a server without writable roots.
  // A server with `instances: one` and a writable root or network has no such profile.
  const adoptListed = (listed: ReadonlyMap<string, ServerInstance>, from: HostConfig): void => {
    for (const [server, instance] of listed) {
      const manifest = [...from.tools.values()].find((view) => view.manifest.upstream?.server === server && view.runSpec !== undefined)?.manifest;
      const isReadOnlyLike = manifest !== undefined && !manifest.upstream?.hasWritableRoot && manifest.networkAllow.length === 0;
      if (manifest?.upstream && isReadOnlyLike) upstream.adopt(server, 'declared', instance);
      else if (manifest?.upstream && manifest.upstream.instances !== 'one') upstream.adopt(server, 'read_only', instance);
      else instance.kill();
    }
  };
  // MCP Apps: the `ui://` resource a tool's _meta names is read from that tool's server.
  const rememberUiResources = (from: HostConfig): void => {
    for (const view of from.tools.values()) {
      const spec = view.runSpec;
      const uri = uiResourceOf(view.manifest.upstream?.meta);
      if (spec?.upstream && uri !== undefined && view.listed) upstream.rememberUiResource({ ...spec, upstream: spec.upstream }, uri);
    }
  };
  adoptListed(instances, config);
  rememberUiResources(config);
  const runnerDeps = { logger, services, upstream, ...(options.prepareSandboxes === false ? { preparedAhead: 0 } : {}) };
  const runners = new RunnerCache((spec) => createRunner(spec, runnerDeps));
  const signer = new RequestStateSigner({ ttlMs: options.requestStateTtlMs ?? DEFAULT_REQUEST_STATE_TTL_MS, ...(options.now ? { now: options.now } : {}) });
  // Every supervisor of this host shares its journal, runners and servers; only the one in
  // force is closed (with them), the ones it replaced keep serving the calls they began.
  const approveJournalFlags = journalFlagsFor(journalUrlFrom(options.journalUrl, options.env ?? process.env), options.stateDir, options.cwd);
  const makeSupervisor = (from: HostConfig): Supervisor =>
    createSupervisor({
      config: from,
      journal,
      artifacts,
      runners,
      signer,
      redact,
      session,
      logger,
      ...(drift ? { drift } : {}),
      approvalTimeoutMs: options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
      // approval_required names the exact command, journal included, that approves the call.
      approveJournalFlags,
      onResourceLink: (view) => (shownUri, upstreamUri) => {
        const spec = view.runSpec;
        if (spec?.upstream) upstream.rememberLink({ ...spec, upstream: spec.upstream }, shownUri, upstreamUri);
      },
      // Forwarded to the one server it belongs to; the supervisor redacts what comes back.
      readUpstreamResource: (uri) => upstream.readResource(uri),
      onClose: async () => {
        await startup?.close();
        await upstream.close();
        await journal.close();
      },
    });
  let supervisor = makeSupervisor(config);
  // One compiler for every load of this host: each schema is compiled once (listings are
  // compiled into it in slices, off the critical turn), never again on each rebuild.
  const schemaCompiler = createToolSchemaCompiler();
  const replacedListeners = new Set<() => void>();
  const startup: ServerStartup | undefined =
    background.size === 0
      ? undefined
      : new ServerStartup({
          logger,
          services,
          upstream,
          redactLog,
          ...(options.knownListings ? { known: options.knownListings } : {}),
          // Runs once per batch of listings that came in: the tools of those servers go in force.
          schemaCompiler,
          rebuild: (listings, listed, batch) => {
            const next = loadHostConfig({ ...configOptionsOf(options), serverListings: listings, schemaCompiler });
            if (next.problems.length > 0) {
              logger.warn({ problems: next.problems.length }, 'the configuration no longer loads; server listings not applied (a reload will report it)');
              for (const instance of listed.values()) instance.kill();
              return;
            }
            adoptListed(listed, next);
            rememberUiResources(next);
            noteFingerprints(next);
            logServers(next, logger, (server) => batch.has(server));
            config = next;
            supervisor = makeSupervisor(next);
            for (const listener of replacedListeners) listener();
          },
        });
  startup?.start(background);

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
  const isJournalReady = createJournalReadiness(journal);
  return {
    get supervisor() {
      return supervisor;
    },
    get config() {
      return config;
    },
    sessionId,
    services,
    isJournalReady,
    flushJournal: () => journal.flush(),
    onUpstreamToolsChanged: (listener) => upstream.onToolsChanged((server) => listener(server)),
    onSupervisorReplaced: (listener) => {
      replacedListeners.add(listener);
      return () => replacedListeners.delete(listener);
    },
    whenServersListed: () => startup?.whenAllListed() ?? Promise.resolve(),
    whenToolReady: (name) => startup?.whenToolReady(name),
    listings: () => startup?.listings() ?? new Map(),
    close,
  };
}

// Says which servers offer no tool, and which of their tools are not offered, once their listing is in.
function logServers(config: HostConfig, logger: Logger, isListed: (server: string) => boolean): void {
  for (const server of config.servers) {
    if (!isListed(server.server)) continue;
    if (server.unavailable !== undefined)
      logger.warn(
        { server: server.server, file: server.displayFile, reason: server.unavailable, ...(server.stderrLines ? { stderr: server.stderrLines } : {}) },
        'upstream server not available: serving without its tools',
      );
    for (const tool of server.tools)
      if (tool.excluded !== undefined) logger.info({ server: server.server, tool: tool.upstream, reason: tool.excluded }, 'upstream tool not offered');
  }
}

// Folders of the host a tool's text may name: home, the state and manifest folders, the host's /tmp.
function hostRootsOf(options: HostOptions): string[] {
  const folders = [homedir(), '/root', '/home', tmpdir(), options.stateDir, ...options.manifestDirs];
  const resolved = folders.map((folder) => resolve(options.cwd ?? process.cwd(), folder));
  return [...new Set([...resolved, ...resolved.map((path) => realPathOr(path))])];
}
