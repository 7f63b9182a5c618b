// The host's configuration in one call: manifests, policy layers and the
// effective view of every tool. serve, validate, list and explain all start
// here, so they agree on what is listed, excluded and why.
import { policyDigestOf } from './policy/policy-digest.js';
import { realPathOr } from './config/real-path.js';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { loadManifests } from './registry/load-manifests.js';
import { matchGlob } from './policy/globs.js';
import { loadPolicies } from './policy/load-policies.js';
import { mergePolicies } from './policy/merge.js';
import { readPrincipalRules } from './policy/principals.js';
import type { MergedPolicy, PolicyFile } from './policy/policy-model.js';
import type { SessionPolicy, ToolView } from './policy/types.js';
import { buildToolView } from './policy/views.js';
import { compileRules, type CompiledRule } from './policy/rules/compile-rules.js';
import { readRateWindows } from './policy/rates/rate-windows.js';
import { checkPin, excludeByPin, pinningOf, type PinningInForce } from './policy/pinning.js';
import { LOCK_FILE_NAME, readLock } from './registry/lock-file.js';
import type { ToolAssessment } from './policy/assess-tool.js';
import type { Problem } from './config/problem.js';
import { canonicalPathOf, protectedPathsOf } from './config/protected-paths.js';
import { createToolSchemaCompiler, type ToolSchemaCompiler } from './registry/ajv.js';
import type { Manifest } from './registry/manifest.js';
import { buildServerTools, probeManifestOf, type ServerListing, type ServerReport } from './registry/server-tools.js';
import { envLiteralOwners, literalSecretProblems } from './registry/sandbox-env.js';
import { unlistedServerTools } from './registry/unlisted-server-tools.js';
import type { RunSpec } from './runner/types.js';

export interface LoadHostConfigOptions {
  readonly manifestDirs: readonly string[];
  /** Organisation policy files, most authoritative first. */
  readonly policyFiles: readonly string[];
  readonly workspace: string;
  /** Base for relative paths; default process.cwd(). Never a base for names (see displayPathsFor). */
  readonly cwd?: string;
  /** The folder of the toolhost.yaml in force: organisation policy files are named relative to it. */
  readonly configDir?: string;
  /** The host environment process tools draw from and secrets are redacted from; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** The state folder (journal, artifacts): hidden from every tool. Absent for commands that run no tool. */
  readonly stateDir?: string;
  /** The host's log file, when it has one: no tool may write it. */
  readonly logFile?: string;
  /**
   * What each upstream server (by name) listed, read by starting it (host-servers.ts).
   * A server without a listing offers no tool and is reported as not started.
   */
  readonly serverListings?: ReadonlyMap<string, ServerListing>;
  /** Compiles tool schemas, caching each; a host that loads again and again shares one. Default: a fresh one. */
  readonly schemaCompiler?: ToolSchemaCompiler;
  /** `toolhost lock`: build every tool as it is, without applying the pins of toolhost.lock. */
  readonly ignorePins?: boolean;
}

/** The policy in force with provenance, for `explain`. */
interface HostPolicy {
  /** Every policy file that loaded, organisation first. */
  readonly files: readonly PolicyFile[];
  /** Enforced layers (shadow files left out) and the built-in defaults. */
  readonly enforced: MergedPolicy;
  /** Every layer including shadow files; absent when no file is in shadow mode. */
  readonly withShadow?: MergedPolicy;
  /** Per tool: every check with its outcome and rule (enforced policy). */
  readonly assessments: ReadonlyMap<string, ToolAssessment>;
  /** Every `rules:` entry of every layer (shadow files' too), compiled, in layer order. */
  readonly rules: readonly CompiledRule[];
}

export interface HostConfig {
  /** Absolute, symlinks resolved. */
  readonly workspace: string;
  /** Every manifest that loaded, excluded and denied ones too, in name order. */
  readonly tools: ReadonlyMap<string, ToolView>;
  readonly session: SessionPolicy;
  /** Manifest and policy load problems: fatal for serve, exit 1 for validate. */
  readonly problems: readonly Problem[];
  /** Tools that conflict with the policy as declared: exit 1 for validate, logged by serve. */
  readonly exclusions: readonly Problem[];
  /** What shadow-mode organisation files would exclude: reported, never enforced. */
  readonly shadowExclusions: readonly Problem[];
  readonly policy: HostPolicy;
  /** Every `kind: Server` manifest: its tools (offered and excluded, with reasons) or why it did not start. */
  readonly servers: readonly ServerReport[];
  /** How to start each server (by name) to read its listing; absent when the policy refuses it (see servers). */
  readonly serverProbes: ReadonlyMap<string, RunSpec>;
  /** Values of host environment variables whose names match env.secrets (non-empty, longest first). */
  secretValues(): string[];
  /** Pinned definitions (SPEC section 4.2): whether they are enforced, by which rule, and the lock read. */
  readonly pinning: PinningInForce;
  /**
   * The tools a server's listing makes (name → manifest), classified and checked as at load:
   * what a tools/list_changed is compared with. Empty for a server this host does not know.
   */
  manifestsOfListing(server: string, listing: ServerListing): ReadonlyMap<string, Manifest>;
}

/** Loads manifests and policies and builds the effective view of every tool. */
export function loadHostConfig(options: LoadHostConfigOptions): HostConfig {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const workspace = realPathOr(resolve(cwd, options.workspace));

  const names = displayPathsFor(workspace, options.configDir !== undefined ? realPathOr(resolve(cwd, options.configDir)) : undefined);
  const loadedManifests = loadManifests({ dirs: options.manifestDirs, workspace, cwd, displayPathOf: names.manifest });
  const lockRead = readLock(workspace, names.manifest(join(workspace, LOCK_FILE_NAME)));
  const loadedPolicies = loadPolicies({ policyFiles: options.policyFiles, workspace, cwd, displayPathOf: names.policy });
  const enforcedFiles = loadedPolicies.files.filter((file) => file.mode === 'enforce');
  const enforced = mergePolicies(enforcedFiles, workspace);
  const hasShadow = enforcedFiles.length < loadedPolicies.files.length;
  const withShadow = hasShadow ? mergePolicies(loadedPolicies.files, workspace) : undefined;

  const compiledRules = compileRules(loadedPolicies.files);
  const rateWindows = readRateWindows(loadedPolicies.files);
  const problems: Problem[] = [
    ...loadedManifests.problems,
    ...loadedPolicies.problems,
    ...enforced.problems,
    ...compiledRules.problems,
    ...rateWindows.problems,
    ...(lockRead.ok || options.ignorePins === true ? [] : lockRead.problems),
  ];
  // A lock that cannot be trusted is a problem (the host does not start); `toolhost lock` rewrites it.
  const pinning = pinningOf(enforced.policy, lockRead.ok ? lockRead.lock : null);
  const pinsInForce = options.ignorePins === true ? { ...pinning, enforced: false } : pinning;
  if (withShadow) problems.push(...withShadow.problems.filter((problem) => !problems.some((known) => sameProblem(known, problem))));

  const secretGlobs = enforced.policy.envSecrets.items.map((item) => item.value);
  // Literal env values are checked against the secret names once the policy is known.
  problems.push(...literalSecretProblems(envLiteralOwners(loadedManifests), (name) => secretGlobs.find((glob) => matchGlob(glob, name, { ignoreCase: true }))));
  const servers: ServerReport[] = [];
  const serverManifests: Manifest[] = [];
  const probeManifests: Manifest[] = [];
  const compiler = options.schemaCompiler ?? createToolSchemaCompiler();
  const secretValues = secretValuesOf(secretGlobs, env);
  const toolNames = new Set(loadedManifests.manifests.map((manifest) => manifest.name));
  // Tools of servers without a listing: callable (and failing with the server's reason), not listed.
  const unlisted = new Set<string>();
  for (const server of loadedManifests.servers) {
    probeManifests.push(probeManifestOf(server, compiler));
    const listing = options.serverListings?.get(server.name) ?? { ok: false as const, reason: 'not started' };
    const built = buildServerTools(server, listing, compiler, { secretValues });
    if (!listing.ok && options.serverListings?.has(server.name) === true) {
      const named = unlistedServerTools(server, compiler).filter((manifest) => !toolNames.has(manifest.name));
      for (const manifest of named) unlisted.add(manifest.name);
      serverManifests.push(...named);
    }
    // A listed name that a tool manifest already uses is the server tool's problem, never "last one wins".
    const clashing = new Set(built.manifests.filter((manifest) => toolNames.has(manifest.name)).map((manifest) => manifest.name));
    serverManifests.push(...built.manifests.filter((manifest) => !clashing.has(manifest.name)));
    servers.push({
      ...built.report,
      tools: built.report.tools.map((tool) =>
        tool.listed !== undefined && clashing.has(tool.listed) && tool.excluded === undefined
          ? { ...tool, excluded: `the listed name ${tool.listed} is also a tool manifest's` }
          : tool,
      ),
    });
  }

  const manifests = [...loadedManifests.manifests, ...serverManifests].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const tools = new Map<string, ToolView>();
  const assessments = new Map<string, ToolAssessment>();
  const exclusions: Problem[] = [];
  const shadowExclusions: Problem[] = [];
  // The host's own files stay out of every tool's reach (manifests, policies, state).
  const guarded = protectedPathsOf({
    manifestDirs: options.manifestDirs.map((dir) => resolve(cwd, dir)),
    policyFiles: options.policyFiles.map((file) => resolve(cwd, file)),
    workspace,
    ...(options.stateDir !== undefined ? { stateDir: resolve(cwd, options.stateDir) } : {}),
    ...(options.logFile !== undefined ? { logFile: resolve(cwd, options.logFile) } : {}),
  });
  const layers = withShadow ? { enforced: enforced.policy, withShadow: withShadow.policy } : { enforced: enforced.policy };
  for (const manifest of manifests) {
    const built = buildToolView(manifest, layers, workspace, env, guarded, compiledRules.rules, rateWindows.windows);
    // Without pins in force the (lazy) definition digest is not read here: tools/list does not need it.
    const refusal = built.view.exclusion || !pinsInForce.enforced ? undefined : checkPin(pinsInForce, manifest.name, built.view.definitionDigest);
    const pinned = refusal ? excludeByPin(built.view, pinsInForce, refusal) : undefined;
    const view = pinned?.view ?? built.view;
    tools.set(manifest.name, unlisted.has(manifest.name) ? Object.freeze({ ...view, listed: false }) : view);
    assessments.set(manifest.name, built.assessment);
    exclusions.push(...built.exclusions, ...(pinned ? [pinned.problem] : []));
    shadowExclusions.push(...built.shadowExclusions);
  }

  const serverProbes = new Map<string, RunSpec>();
  for (const probe of probeManifests) {
    const built = buildToolView(probe, layers, workspace, env, guarded);
    const server = probe.upstream?.server ?? probe.name;
    if (built.view.runSpec) serverProbes.set(server, built.view.runSpec);
    else {
      exclusions.push(...built.exclusions);
      // Excluded by the policy, like a tool: never started, reported with the rule (not as "not started").
      const index = servers.findIndex((report) => report.server === server);
      const report = servers[index];
      const check = built.assessment.exclusions[0];
      const why = check ? `${check.text}${check.rule !== undefined ? ` (${check.rule})` : ''}` : 'it conflicts with the policy';
      if (report && report.unavailable !== undefined) servers[index] = { ...report, unavailable: why, isExcludedByPolicy: true };
    }
  }

  const policy = enforced.policy;
  problems.push(...rewriteProblems(policy, loadedPolicies.files, tools));
  const session: SessionPolicy = Object.freeze({
    maxCallsPerSession: policy.limits.maxCallsPerSession.value,
    maxConcurrency: policy.limits.maxConcurrency.value,
    maxConsecutiveFailures: policy.limits.maxConsecutiveFailures.value,
    onUnknownTool: policy.onUnknownTool.value,
    onInvalidArguments: policy.onInvalidArguments.value,
    secretNames: Object.freeze(policy.envSecrets.items.map((item) => item.value)),
    principalRules: readPrincipalRules(loadedPolicies.files),
    approvalsBy: policy.approvalsBy.value,
    approvalExpireAfterMs: policy.approvalsExpireAfterMs.value,
    journalArguments: policy.journalArguments.value,
    policyDigest: policyDigestOf(policy, readPrincipalRules(loadedPolicies.files)),
  });

  return {
    workspace,
    tools,
    session,
    problems,
    exclusions,
    shadowExclusions,
    policy: { files: loadedPolicies.files, enforced: policy, ...(withShadow ? { withShadow: withShadow.policy } : {}), assessments, rules: compiledRules.rules },
    servers,
    serverProbes,
    secretValues: () => secretValuesOf(session.secretNames, env),
    pinning: pinsInForce,
    manifestsOfListing: (server, listing) => {
      const manifest = loadedManifests.servers.find((candidate) => candidate.name === server);
      if (!manifest) return new Map();
      return new Map(buildServerTools(manifest, listing, compiler).manifests.map((built) => [built.name, built]));
    },
  };
}

/** Values of environment variables whose names match a secret glob (case-insensitive). */
export function secretValuesOf(secretNames: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (secretNames.some((pattern) => matchGlob(pattern, name, { ignoreCase: true }))) values.add(value);
  }
  // Longest first, so a redactor replaces a secret before any shorter secret inside it.
  return [...values].sort((a, b) => b.length - a.length);
}

// A rewrite to a tool that does not exist would turn every unknown call into a second unknown call.
function rewriteProblems(policy: MergedPolicy, files: readonly PolicyFile[], tools: ReadonlyMap<string, ToolView>): Problem[] {
  const value = policy.onUnknownTool.value;
  if (typeof value !== 'object' || tools.has(value.rewrite)) return [];
  const source = policy.onUnknownTool.source;
  const file = files.find((candidate) => candidate.file === source.file);
  return [
    {
      file: file?.file ?? '(built-in)',
      line: source.line ?? 1,
      col: source.col ?? 1,
      reason: `onUnknownTool rewrites to "${value.rewrite}", which is not a loaded tool`,
    },
  ];
}

/**
 * How files are named in problems, rule names and the journal (SPEC 7.1): relative to
 * the workspace; organisation policy files relative to toolhost.yaml's folder (then the
 * workspace); else absolute. Never relative to the working directory of whoever started
 * the host, so two clients started from different folders record the same rule.
 */
function displayPathsFor(workspace: string, configDir: string | undefined) {
  const inside = (base: string | undefined, path: string): string | undefined => {
    if (base === undefined) return undefined;
    const rel = relative(base, path);
    return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? undefined : rel;
  };
  // Symlinks resolved on both sides, so a workspace reached through a link still names its files relatively.
  return {
    manifest: (path: string): string => {
      const real = canonicalPathOf(path);
      return inside(workspace, real) ?? inside(configDir, real) ?? path;
    },
    policy: (path: string, layer: 'organisation' | 'repository'): string => {
      const real = canonicalPathOf(path);
      return (layer === 'organisation' ? (inside(configDir, real) ?? inside(workspace, real)) : inside(workspace, real)) ?? path;
    },
  };
}

function sameProblem(a: Problem, b: Problem): boolean {
  return a.file === b.file && a.line === b.line && a.col === b.col && a.reason === b.reason;
}
