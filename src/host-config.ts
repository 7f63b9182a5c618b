// The host's configuration in one call: manifests, policy layers and the
// effective view of every tool. serve, validate, list and explain all start
// here, so they agree on what is listed, excluded and why.
import { policyDigestOf } from './policy/policy-digest.js';
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadManifests } from './registry/load-manifests.js';
import { matchGlob } from './policy/globs.js';
import { loadPolicies } from './policy/load-policies.js';
import { mergePolicies } from './policy/merge.js';
import { readPrincipalRules } from './policy/principals.js';
import type { MergedPolicy, PolicyFile } from './policy/policy-model.js';
import type { SessionPolicy, ToolView } from './policy/types.js';
import { buildToolView } from './policy/views.js';
import type { ToolAssessment } from './policy/assess-tool.js';
import type { Problem } from './config/problem.js';
import { protectedPathsOf } from './config/protected-paths.js';
import { createToolSchemaCompiler } from './registry/ajv.js';
import type { Manifest } from './registry/manifest.js';
import { buildServerTools, probeManifestOf, type ServerListing, type ServerReport } from './registry/server-tools.js';
import type { RunSpec } from './runner/types.js';

export interface LoadHostConfigOptions {
  readonly manifestDirs: readonly string[];
  /** Organisation policy files, most authoritative first. */
  readonly policyFiles: readonly string[];
  readonly workspace: string;
  /** Base for relative paths and display paths; default process.cwd(). */
  readonly cwd?: string;
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
}

/** The policy in force with provenance, for `explain`. */
export interface HostPolicy {
  /** Every policy file that loaded, organisation first. */
  readonly files: readonly PolicyFile[];
  /** Enforced layers (shadow files left out) and the built-in defaults. */
  readonly enforced: MergedPolicy;
  /** Every layer including shadow files; absent when no file is in shadow mode. */
  readonly withShadow?: MergedPolicy;
  /** Per tool: every check with its outcome and rule (enforced policy). */
  readonly assessments: ReadonlyMap<string, ToolAssessment>;
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
}

/** Loads manifests and policies and builds the effective view of every tool. */
export function loadHostConfig(options: LoadHostConfigOptions): HostConfig {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const workspace = canonicalPath(resolve(cwd, options.workspace));

  const loadedManifests = loadManifests({ dirs: options.manifestDirs, workspace, cwd });
  const loadedPolicies = loadPolicies({ policyFiles: options.policyFiles, workspace, cwd });
  const enforcedFiles = loadedPolicies.files.filter((file) => file.mode === 'enforce');
  const enforced = mergePolicies(enforcedFiles, workspace);
  const hasShadow = enforcedFiles.length < loadedPolicies.files.length;
  const withShadow = hasShadow ? mergePolicies(loadedPolicies.files, workspace) : undefined;

  const problems: Problem[] = [...loadedManifests.problems, ...loadedPolicies.problems, ...enforced.problems];
  if (withShadow) problems.push(...withShadow.problems.filter((problem) => !problems.some((known) => sameProblem(known, problem))));

  const servers: ServerReport[] = [];
  const serverManifests: Manifest[] = [];
  const probeManifests: Manifest[] = [];
  const compiler = createToolSchemaCompiler();
  const toolNames = new Set(loadedManifests.manifests.map((manifest) => manifest.name));
  for (const server of loadedManifests.servers) {
    probeManifests.push(probeManifestOf(server, compiler));
    const listing = options.serverListings?.get(server.name) ?? { ok: false as const, reason: 'not started' };
    const built = buildServerTools(server, listing, compiler);
    // A listed name that a tool manifest already uses is the server tool's problem, never "last one wins".
    const clashing = new Set(built.manifests.filter((manifest) => toolNames.has(manifest.name)).map((manifest) => manifest.name));
    serverManifests.push(...built.manifests.filter((manifest) => !clashing.has(manifest.name)));
    servers.push({
      ...built.report,
      tools: built.report.tools.map((tool) => (tool.listed !== undefined && clashing.has(tool.listed) && tool.excluded === undefined ? { ...tool, excluded: `the listed name ${tool.listed} is also a tool manifest's` } : tool)),
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
    const built = buildToolView(manifest, layers, workspace, env, guarded);
    tools.set(manifest.name, built.view);
    assessments.set(manifest.name, built.assessment);
    exclusions.push(...built.exclusions);
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
    policy: { files: loadedPolicies.files, enforced: policy, ...(withShadow ? { withShadow: withShadow.policy } : {}), assessments },
    servers,
    serverProbes,
    secretValues: () => secretValuesOf(session.secretNames, env),
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

function sameProblem(a: Problem, b: Problem): boolean {
  return a.file === b.file && a.line === b.line && a.col === b.col && a.reason === b.reason;
}

function canonicalPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
