// The shapes the policy layer hands to the rest of the host. The supervisor
// reads a ToolView per tool and never re-derives policy itself.
import type { Manifest, SandboxMode } from '../registry/manifest.js';
import type { RunSpec } from '../registry/run-spec.js';

/**
 * A rule is named `file:line key` (SPEC section 4), e.g.
 * `policies/org.yaml:12 sideEffects.deny`; a built-in default is named
 * `(built-in) key`; a manifest's own `approval: always` is `manifests/x.yaml:9 approval`.
 */
export type RuleRef = string;

export type Decision =
  | { readonly effect: 'allow' }
  | { readonly effect: 'deny'; readonly code: 'policy_denied' | 'unclassified_tool'; readonly rule: RuleRef; readonly reason: string }
  | { readonly effect: 'ask'; readonly rule: RuleRef; readonly reason: string };

export type Trust = 'first_party' | 'community';
/** Modes as named by `sandbox.community`. */
export type PolicyMode = SandboxMode | 'process_namespace';

export interface EffectiveLimits {
  readonly timeoutMs: number;
  readonly maxResultBytes: number;
  readonly memoryMb: number;
}

/** One tool as the policy in force sees it. */
export interface ToolView {
  readonly manifest: Manifest;
  /** Shown in tools/list: false when excluded or denied by name or class. */
  readonly listed: boolean;
  /**
   * Set when the tool conflicts with the policy as declared (SPEC section 4, first kind of refusal);
   * `details` are facts a refusal carries beyond rule and reason (a pin's digests).
   */
  readonly exclusion?: { readonly rule: RuleRef; readonly reason: string; readonly details?: Readonly<Record<string, unknown>> };
  /** SHA-256 of the tool's definition (registry/definition-digest.ts): what pins and approvals bind to. */
  readonly definitionDigest: string;
  /** The decision for a call (exclusion implies deny). */
  readonly decision: Decision;
  /** What a shadow-mode organisation policy would decide, when it is stricter than `decision`. */
  readonly shadowDecision?: Decision;
  readonly trust: Trust;
  readonly allowedModes: readonly PolicyMode[];
  readonly limits: EffectiveLimits;
  /** What the runner gets; absent when the tool is excluded. */
  readonly runSpec?: RunSpec;
  /** `limits.rate` windows that count calls to this tool (SPEC section 4.1); absent when none does. */
  readonly rates?: readonly import('./rates/rate-windows.js').RateWindow[];
  /** Rules on arguments that apply to this tool (SPEC section 4.1); absent when none does. */
  readonly rules?: import('./rules/evaluate-rules.js').RuleScope;
}

export type OnUnknownTool = 'protocol_error' | 'error_result' | { readonly rewrite: string };

/** Session-wide settings in force after layering. */
export interface SessionPolicy {
  readonly maxCallsPerSession: number;
  readonly maxConcurrency: number;
  /** Calls in a row that may fail (SPEC 5.2 codes) before the session's later calls are call_limit. */
  readonly maxConsecutiveFailures: number;
  readonly onUnknownTool: OnUnknownTool;
  readonly onInvalidArguments: 'error_result' | 'protocol_error';
  /** Globs over environment variable names whose values are never passed and always redacted. */
  readonly secretNames: readonly string[];
  /** `principals:` entries of the enforced layers (HTTP callers only); absent or empty: none. */
  readonly principalRules?: readonly import('./principals.js').PrincipalRule[];
  /** `operator`: every approval goes to `toolhost approve` (SPEC section 7.2); `client` (also when absent): in-band first. */
  readonly approvalsBy?: 'client' | 'operator';
  /** How long a pending operator approval lives, in ms; absent means the built-in default (one hour). */
  readonly approvalExpireAfterMs?: number;
  /** `journal.arguments`: keep the redacted, bounded arguments in each call record; absent means none. */
  readonly journalArguments?: 'none' | 'redacted';
  /** sha256 hex of the merged policy in force (policy-digest.ts); absent where no policy was merged (tests). */
  readonly policyDigest?: string;
}
