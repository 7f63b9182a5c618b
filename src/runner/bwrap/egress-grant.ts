// An egress grant: the way out of one sandboxed process (a one-shot sandbox,
// a persistent process, an isolate process or an upstream server). It owns a
// private host folder holding the Unix socket its proxy listens on and, for a
// process whose ordinary TCP clients reach allowed destinations directly
// (egress-network.ts), one socket per destination and the sandbox's
// /etc/hosts; the sandbox sees the folder at SANDBOX_EGRESS_DIR and its bridge
// forwards its loopback listeners there (egress-bridge.ts). The grant reports
// each attempt to the call that currently uses the process and counts per call.
//
// For any sandboxed process:
//   const grant = await openEgressGrant({ allow: spec.networkAllow, readOnly, logger });
//   const argv = buildSandboxArgv(spec, { cwd, egress: grant });
//   grant.attach(onEgress);   // a call starts using the process: fresh counts
//   ...; grant.counts();      // what that call did
//   await grant.close();      // when the process is gone
//
// A process that serves several calls at once (an isolate process) opens the
// grant with `perCall: true` and gives each call a channel of its own instead:
//   const channel = grant.openCall(onEgress);  // its token goes to the process with the call
//   ...; channel.counts(); channel.close();     // the call is over: its connections are cut
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import { DEFAULT_EGRESS_LIMITS, EgressProxy, type EgressAttempt, type EgressCounts, type EgressLimits } from './egress-proxy.js';
import { planEgressNetwork, type EgressNetworkPlan } from './egress-network.js';

export type { EgressAttempt, EgressCounts, EgressLimits } from './egress-proxy.js';

interface EgressGrantOptions {
  /** network.allow in force for the process (manifest ∩ policy). Must be non-empty. */
  readonly allow: readonly string[];
  /** A read_only tool: plain-HTTP requests held to GET, HEAD and OPTIONS, without a body. */
  readonly readOnly: boolean;
  readonly logger: Logger;
  /** Defaults: DEFAULT_EGRESS_LIMITS. */
  readonly limits?: Partial<EgressLimits>;
  /** Resolves a name to its addresses (a seam for tests); default the system resolver. */
  readonly resolve?: (host: string) => Promise<readonly string[]>;
  /** Calls run side by side: each request must carry an open call's token (see openCall). */
  readonly perCall?: boolean;
  /**
   * Ordinary TCP clients in the sandbox reach each allowed destination directly (a listener per
   * destination, /etc/hosts for the names): process tools and servers. Not for an isolate
   * process, whose tools reach the network through ctx.fetch only.
   */
  readonly direct?: boolean;
}

/** One call's way out through a perCall grant. */
export interface EgressCallChannel {
  /** Sent by the process as `Proxy-Authorization: Toolhost <token>` on each of the call's requests. */
  readonly token: string;
  /** What the call did so far. */
  counts(): EgressCounts;
  /** The call is over: its token is refused from now on and its connections are cut; idempotent. */
  close(): void;
}

export interface EgressGrant {
  /** Host path of the grant's private folder, bound read-only into the sandbox at SANDBOX_EGRESS_DIR. */
  readonly dir: string;
  /** Host path of the proxy's Unix socket, in `dir`. */
  readonly socketPath: string;
  /** The direct listeners, /etc/hosts and added addresses (a `direct` grant); undefined otherwise. */
  readonly network: EgressNetworkPlan | undefined;
  /** A call starts using the process: counts and budgets start afresh, attempts go to `sink`. */
  attach(sink?: (attempt: EgressAttempt) => void): void;
  /** The call is over: later attempts are only logged. */
  detach(): void;
  /** What the current (or last) call did. */
  counts(): EgressCounts;
  /** A channel for one of several calls at once (a perCall grant): fresh counts and budget, attempts to `sink`. */
  openCall(sink?: (attempt: EgressAttempt) => void): EgressCallChannel;
  /** Closes the proxy, cuts its connections and removes its folder; idempotent. */
  close(): Promise<void>;
}

/** Opens the proxy for one sandboxed process. */
export async function openEgressGrant(options: EgressGrantOptions): Promise<EgressGrant> {
  if (options.allow.length === 0) throw new TypeError('an egress grant needs a non-empty allow list');
  const planned = options.direct === true ? planEgressNetwork(options.allow) : undefined;
  if (planned?.ok === false) throw new Error(planned.reason);
  const network = planned?.plan;
  // mkdtemp makes the folder 0700: no other user of this machine can reach the socket.
  // The pid in its name lets a later host remove it if this one dies without closing it.
  const dir = await mkdtemp(join(tmpdir(), `${EGRESS_DIR_PREFIX}${process.pid}-`));
  const socketPath = join(dir, 'proxy.sock');
  let sink: ((attempt: EgressAttempt) => void) | undefined;
  const limits = { ...DEFAULT_EGRESS_LIMITS, ...options.limits };
  const proxy = new EgressProxy({
    rules: { allow: [...options.allow], readOnly: options.readOnly, ...(options.resolve === undefined ? {} : { resolve: options.resolve }) },
    limits,
    onAttempt: (attempt) => {
      // A call's sink logs with its call id; between calls (a persistent process) the grant does.
      if (sink !== undefined) return sink(attempt);
      options.logger[attempt.admitted ? 'info' : 'warn']({ egress: attempt }, attempt.admitted ? 'egress admitted (no call)' : 'egress refused (no call)');
    },
    onLimit: (limit) => options.logger.warn({ egressLimit: limit, limits }, 'egress limit reached; further traffic of this call is cut'),
    ...(options.perCall === true ? { requireCallToken: true } : {}),
  });
  try {
    await proxy.listen(socketPath);
    for (const listener of network?.listeners ?? []) await proxy.listenDirect(join(dir, listener.socketName), listener.destination);
    if (network !== undefined) await writeFile(join(dir, 'hosts'), network.hostsFile, { mode: 0o444 });
  } catch (error) {
    await proxy.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    dir,
    socketPath,
    network,
    attach(next) {
      proxy.reset();
      sink = next;
    },
    detach() {
      sink = undefined;
    },
    counts: () => ({ ...proxy.counts }),
    openCall(callSink) {
      const token = randomBytes(16).toString('hex');
      proxy.openCall(token, (attempt) => {
        if (callSink !== undefined) return callSink(attempt);
        options.logger[attempt.admitted ? 'info' : 'warn']({ egress: attempt }, attempt.admitted ? 'egress admitted' : 'egress refused');
      });
      return { token, counts: () => proxy.callCounts(token), close: () => proxy.closeCall(token) };
    },
    close() {
      closing ??= proxy.close().then(() => rm(dir, { recursive: true, force: true }));
      return closing;
    },
  };
}

const EGRESS_DIR_PREFIX = 'toolhost-egress-';

/**
 * Removes the grant folders of hosts that are gone: a SIGKILLed host never closes
 * its grants, and their folders stay in the temporary directory. Only folders of
 * this user whose owner pid is dead; a live owner (or a reused pid) keeps its
 * folder. Returns how many were removed; never throws.
 */
export async function sweepStaleEgressDirs(): Promise<number> {
  const base = tmpdir();
  let removed = 0;
  let names: string[];
  try {
    names = await readdir(base);
  } catch {
    return 0;
  }
  for (const name of names) {
    const ownerPid = Number(/^toolhost-egress-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(ownerPid) || ownerPid <= 0 || ownerPid === process.pid || existsSync(`/proc/${ownerPid}`)) continue;
    const dir = join(base, name);
    try {
      const found = await lstat(dir);
      if (!found.isDirectory() || found.uid !== process.getuid?.()) continue;
      await rm(dir, { recursive: true, force: true });
      removed += 1;
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}
