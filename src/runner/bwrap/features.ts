// What this machine's bubblewrap can do, learned by running it once (per binary,
// kept in the host's SandboxFacts). buildSandboxArgv is synchronous and asks
// detectSandboxFeatures; the sandbox probe, which every sandbox start awaits
// first, learns the same with asynchronous child processes beforehand
// (learnSandboxFeatures), so the event loop never waits for bubblewrap there.
// The synchronous probe is the fallback (a build with no probe before it).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { bwrapHelpIsKnown, bwrapSupports, learnBwrapHelp } from './binaries.js';
import { namespaceRunArgs, RUN_TIMEOUT_MS, tryNamespaces, type NamespaceOutcome } from './bwrap-run.js';
import type { SandboxFacts } from './sandbox-facts.js';

interface SandboxFeatures {
  /** `--unshare-user` works: root in the sandbox has no capability on the host. */
  readonly userNamespace: boolean;
  /** `--disable-userns` exists (bubblewrap 0.8+): the tool cannot make nested user namespaces. */
  readonly disableUserns: boolean;
  /** Why a user namespace cannot be made, when it cannot. */
  readonly userNamespaceProblem?: string;
  /**
   * bubblewrap was ended by a signal or its timeout before it answered: nothing is known. Not
   * kept, and never read as "no user namespace": a sandbox built from it would be weaker for the
   * host's life after one killed or starved probe (buildSandboxArgv refuses it instead).
   */
  readonly isInterrupted?: true;
}

/** Runs `bwrap --unshare-user … true` once per binary (and host) and reports what works. */
export function detectSandboxFeatures(facts: SandboxFacts, bwrapPath: string): SandboxFeatures {
  return facts.remember(featuresKey(bwrapPath), () => detect(facts, bwrapPath), isKept);
}

/** What detectSandboxFeatures answers, learned with asynchronous child processes and kept (unless interrupted). */
export async function learnSandboxFeatures(facts: SandboxFacts, bwrapPath: string): Promise<void> {
  // Known already (a probe again after an interrupted one, a second host's sandbox): no bubblewrap run.
  if (facts.knows(featuresKey(bwrapPath))) return;
  if (!(await learnBwrapHelp(facts, bwrapPath))) return;
  const features = featuresFrom(bwrapSupports(facts, bwrapPath, '--disable-userns'), await tryNamespaces(bwrapPath, USERNS_FLAGS));
  facts.remember(featuresKey(bwrapPath), () => features, isKept);
}

const featuresKey = (bwrapPath: string) => `features\0${bwrapPath}`;
const isKept = (features: SandboxFeatures) => features.isInterrupted !== true;

/** tryNamespaces, synchronously: a sandbox build with no probe before it cannot await. */
function tryNamespacesNow(bwrapPath: string, flags: readonly string[]): NamespaceOutcome {
  try {
    execFileSync(bwrapPath, namespaceRunArgs(flags), { env: {}, timeout: RUN_TIMEOUT_MS, stdio: ['ignore', 'ignore', 'pipe'] });
    return { ok: true };
  } catch (error) {
    const { stderr, signal } = error as { stderr?: unknown; signal?: unknown };
    const text = Buffer.isBuffer(stderr) ? stderr.toString('utf8') : error instanceof Error ? error.message : String(error);
    return { ok: false, stderr: text.trim().slice(0, 500), isInterrupted: typeof signal === 'string' };
  }
}

/** Advice for a failed namespace creation, from bubblewrap's stderr and the sysctls that gate it. */
export function explainNamespaceFailure(stderr: string): string {
  const maxUserNamespaces = readSysctl('/proc/sys/user/max_user_namespaces');
  if (maxUserNamespaces === '0') return `user namespaces are disabled (user.max_user_namespaces=0): sysctl -w user.max_user_namespaces=15000 (${stderr})`;
  if (readSysctl('/proc/sys/kernel/unprivileged_userns_clone') === '0') {
    return `unprivileged user namespaces are disabled: sysctl -w kernel.unprivileged_userns_clone=1 (${stderr})`;
  }
  if (readSysctl('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1') {
    return `AppArmor restricts unprivileged user namespaces: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 or add an AppArmor profile for bwrap (${stderr})`;
  }
  if (/permission|not permitted/i.test(stderr)) {
    return `the kernel refused to create namespaces (in a container: run it with --privileged or a seccomp profile that allows unshare/clone namespaces) (${stderr})`;
  }
  return `bubblewrap could not create the sandbox (${stderr})`;
}

const USERNS_FLAGS = ['--unshare-user', '--unshare-pid', '--die-with-parent'];

function detect(facts: SandboxFacts, bwrapPath: string): SandboxFeatures {
  // Without its help nothing is known of this bubblewrap's flags, --disable-userns among them.
  if (!bwrapHelpIsKnown(facts, bwrapPath)) return { userNamespace: false, disableUserns: false, isInterrupted: true };
  return featuresFrom(bwrapSupports(facts, bwrapPath, '--disable-userns'), tryNamespacesNow(bwrapPath, USERNS_FLAGS));
}

function featuresFrom(disableUserns: boolean, probe: NamespaceOutcome): SandboxFeatures {
  if (probe.ok) return { userNamespace: true, disableUserns };
  if (probe.isInterrupted) return { userNamespace: false, disableUserns, isInterrupted: true };
  return { userNamespace: false, disableUserns, userNamespaceProblem: explainNamespaceFailure(probe.stderr) };
}

function readSysctl(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}
