// The effective view of one tool: what tools/list shows, what a call decides,
// and the RunSpec a runner gets. Shadow-mode organisation files are assessed
// too, and what they would refuse is recorded beside the enforced decision.
import type { Problem } from '../config/problem.js';
import type { ProtectedPaths } from '../config/protected-paths.js';
import type { Manifest } from '../registry/manifest.js';
import type { RunSpec } from '../registry/run-spec.js';
import { assessTool, type ToolAssessment } from './assess-tool.js';
import { FLOOD_CAP_BYTES } from '../registry/result-limits.js';
import { findMatch } from './globs.js';
import type { MergedPolicy } from './policy-model.js';
import type { CompiledRule } from './rules/compile-rules.js';
import { scopeRules } from './rules/evaluate-rules.js';
import { windowsFor, type RateWindow } from './rates/rate-windows.js';
import { manifestDigest } from '../registry/tool-definition.js';
import type { Decision, ToolView } from './types.js';

interface PolicyLayers {
  /** Organisation enforce files, repository files and the built-in defaults. */
  readonly enforced: MergedPolicy;
  /** The same plus organisation files in `mode: shadow`; absent when there are none. */
  readonly withShadow?: MergedPolicy;
}

interface BuiltView {
  readonly view: ToolView;
  readonly assessment: ToolAssessment;
  /** Exclusions under the enforced policy: `validate` fails on these. */
  readonly exclusions: readonly Problem[];
  /** What shadow files would exclude (reported, never enforced). */
  readonly shadowExclusions: readonly Problem[];
}

const NOTHING_PROTECTED: ProtectedPaths = { protectedPaths: [], hiddenPaths: [] };

/**
 * Builds a tool's effective view. `env` is the host environment the RunSpec draws from;
 * `guarded` the host's configuration and state that no tool may change (see protected-paths.ts).
 */
export function buildToolView(
  manifest: Manifest,
  layers: PolicyLayers,
  workspace: string,
  env: NodeJS.ProcessEnv,
  guarded: ProtectedPaths = NOTHING_PROTECTED,
  rules: readonly CompiledRule[] = [],
  rateWindows: readonly RateWindow[] = [],
): BuiltView {
  const assessment = assessTool(manifest, layers.enforced, workspace);
  const excluded = assessment.exclusions[0];
  const deniedByRule = assessment.decision.effect === 'deny';
  const shadow = layers.withShadow ? assessTool(manifest, layers.withShadow, workspace) : undefined;
  const shadowDecision = shadow && isStricter(shadow.decision, assessment.decision) ? shadow.decision : undefined;
  const enforcedExclusionRules = new Set(assessment.exclusions.map((check) => check.rule));
  const rates = rateWindows.length === 0 ? [] : windowsFor(rateWindows, manifest.name, manifest.sideEffect);
  // Relative path arguments start where the tool's do: its first root, else the workspace.
  const ruleScope =
    rules.length === 0
      ? undefined
      : scopeRules(
          rules,
          {
            name: manifest.name,
            ...(manifest.sideEffect !== undefined ? { sideEffect: manifest.sideEffect } : {}),
            ...(manifest.upstream ? { server: manifest.upstream.server } : {}),
          },
          { root: manifest.roots[0]?.path ?? workspace, workspace },
        );

  // Computed on first use (a call, an approval, a pin check with a lock in force), not for each
  // of a thousand tools while the host starts: tools/list does not need it.
  let definitionDigest: string | undefined;
  const view: ToolView = {
    manifest,
    listed: !excluded && !deniedByRule,
    ...(excluded?.rule ? { exclusion: { rule: excluded.rule, reason: excluded.text } } : {}),
    decision: assessment.decision,
    ...(shadowDecision ? { shadowDecision } : {}),
    get definitionDigest() {
      return (definitionDigest ??= manifestDigest(manifest));
    },
    trust: assessment.trust,
    allowedModes: assessment.allowedModes,
    limits: assessment.limits,
    ...(excluded ? {} : { runSpec: buildRunSpec(manifest, assessment, layers.enforced, env, guarded) }),
    ...(ruleScope ? { rules: ruleScope } : {}),
    ...(rates.length > 0 ? { rates } : {}),
  };
  return {
    view: deepFreeze(view),
    assessment,
    exclusions: assessment.exclusions.flatMap((check) => (check.problem ? [check.problem] : [])),
    shadowExclusions: (shadow?.exclusions ?? [])
      .filter((check) => !enforcedExclusionRules.has(check.rule))
      .flatMap((check) => (check.problem ? [{ ...check.problem, reason: `warning (shadow, not enforced): ${check.problem.reason}` }] : [])),
  };
}

/** deny is stricter than ask, ask than allow. */
function isStricter(candidate: Decision, current: Decision): boolean {
  const rank = (decision: Decision): number => (decision.effect === 'deny' ? 2 : decision.effect === 'ask' ? 1 : 0);
  return rank(candidate) > rank(current);
}

function buildRunSpec(manifest: Manifest, assessment: ToolAssessment, policy: MergedPolicy, env: NodeJS.ProcessEnv, guarded: ProtectedPaths): RunSpec {
  return {
    name: manifest.name,
    mode: manifest.sandbox.mode,
    manifestDir: manifest.dir,
    ...(manifest.entry !== undefined ? { entryPath: manifest.entry } : {}),
    ...(manifest.sandbox.command !== undefined ? { command: [...manifest.sandbox.command] } : {}),
    memoryMb: assessment.limits.memoryMb,
    stdout: manifest.sandbox.stdout,
    isolation: manifest.sandbox.isolation,
    persistent: manifest.sandbox.persistent,
    poolSize: manifest.sandbox.poolSize,
    // Literals are the manifest's own words (registry/sandbox-env.ts); host values pass the policy.
    env: { ...passedEnv(manifest.sandbox.env, policy, env), ...manifest.sandbox.envLiterals },
    roots: manifest.roots.map((root) => ({ path: root.path, access: root.access })),
    // A tool of a server with `instances: one` runs in the instance with the declared access,
    // whose egress is not held to the read-only methods: its spec carries no read_only class.
    ...(manifest.sideEffect !== undefined && manifest.upstream?.instances !== 'one' ? { sideEffect: manifest.sideEffect } : {}),
    networkAllow: [...manifest.networkAllow],
    floodCapBytes: FLOOD_CAP_BYTES,
    protectedPaths: [...guarded.protectedPaths],
    hiddenPaths: [...guarded.hiddenPaths],
    ...(manifest.upstream ? upstreamRunSpec(manifest, manifest.upstream) : {}),
  };
}

// An upstream tool runs in its server's instance for its class: with `instances: split`,
// read_only tools in one whose roots are all read-only and whose egress is held to the
// read-only methods (when the server has a writable root or any network at all), the others
// in one with the declared access. With `instances: one`, every tool in the latter.
function upstreamRunSpec(manifest: Manifest, upstream: NonNullable<Manifest['upstream']>): Pick<RunSpec, 'upstream' | 'readOnlyPaths'> {
  const isSplit = upstream.instances !== 'one';
  const profile = isSplit && manifest.sideEffect === 'read_only' && (upstream.hasWritableRoot || manifest.networkAllow.length > 0) ? 'read_only' : 'declared';
  return {
    upstream: { server: upstream.server, tool: upstream.tool, profile, startupTimeoutMs: upstream.startupTimeoutMs },
    readOnlyPaths: [...upstream.readOnlyPaths],
  };
}

// Only names the manifest asks for, every layer allows and no secret glob
// matches; a name missing from the host environment is simply not set.
function passedEnv(names: readonly string[], policy: MergedPolicy, env: NodeJS.ProcessEnv): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value === undefined) continue;
    if (findMatch(policy.envSecrets.items, name, { ignoreCase: true })) continue;
    if (!policy.envAllow.layers.every((layer) => findMatch(layer.items, name) !== undefined)) continue;
    passed[name] = value;
  }
  return passed;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    // Data properties only: reading an accessor (the lazy definitionDigest) would compute it now.
    for (const { value: child } of Object.values(Object.getOwnPropertyDescriptors(value))) {
      // The manifest is frozen by its loader and holds compiled validators, the rule scope compiled
      // expressions (frozen by their compiler): leave them alone.
      if (typeof child === 'object' && child !== null && !('validateInput' in child) && !('shadowRules' in child)) deepFreeze(child);
    }
  }
  return value;
}
