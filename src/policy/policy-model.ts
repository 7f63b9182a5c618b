// The policy as files declare it and as layering merges it. Every value keeps
// where it came from (layer, file, line), so a decision can name its rule and
// `explain` can show who set each key.
import type { SideEffect } from '../registry/manifest.js';
import type { YamlSource } from '../config/yaml-source.js';
import type { OnUnknownTool, PolicyMode, RuleRef } from './types.js';

export type Layer = 'organisation' | 'repository' | 'built-in';

/** Where a value was written. `file` and `line` are absent for built-in defaults. */
export interface Source {
  readonly layer: Layer;
  /** For people: relative to the working directory when inside it. */
  readonly file?: string;
  readonly line?: number;
  readonly col?: number;
  /** The policy key, dotted: `sideEffects.deny`. */
  readonly key: PolicyKey;
  /** `file:line key`, or `(built-in) key`. */
  readonly rule: RuleRef;
  /** The file's mode: shadow sources never decide the enforced view. */
  readonly shadow: boolean;
}

/** One value with where it was written (a list item, or a scalar). */
export interface Sourced<T> {
  readonly value: T;
  readonly source: Source;
}

/** One layer's setting of a list key, kept apart because such keys intersect across layers. */
export interface LayerList<T> {
  /** Where the key itself is written. */
  readonly source: Source;
  readonly items: readonly Sourced<T>[];
}

/** A scalar key: the value in force, its deciding source, and every layer that set it. */
export interface ScalarSetting<T> {
  readonly value: T;
  readonly source: Source;
  readonly setBy: readonly Sourced<T>[];
}

/** A key whose layers accumulate (deny lists, secrets): every item from every layer. */
export interface UnionSetting<T> {
  readonly items: readonly Sourced<T>[];
  /** Where each layer that set the key wrote it (built-in when none did). */
  readonly setBy: readonly Source[];
}

/** A key whose layers intersect: a value must pass every layer's list. */
export interface IntersectSetting<T> {
  readonly layers: readonly LayerList<T>[];
}

type MergedPolicyKey =
  | 'strict'
  | 'tools.allow'
  | 'tools.deny'
  | 'sideEffects.deny'
  | 'sideEffects.requireApproval'
  | 'trust.firstParty'
  | 'sandbox.community'
  | 'limits.maxTimeoutMs'
  | 'limits.maxResultBytes'
  | 'limits.maxMemoryMb'
  | 'limits.maxCallsPerSession'
  | 'limits.maxConcurrency'
  | 'limits.maxConsecutiveFailures'
  | 'workspace.allowedRoots'
  | 'network.allow'
  | 'env.allow'
  | 'env.secrets'
  | 'onUnknownTool'
  | 'onInvalidArguments'
  | 'approvals.by'
  | 'approvals.expireAfterMs'
  | 'pinning'
  | 'journal.arguments';
// `principals` entries are never merged into one value (each only tightens): see principals.ts.
// `rules` and `limits.rate` likewise: every rule and window of every layer applies (rules/, rates/).
export type PolicyKey = MergedPolicyKey | 'mode' | 'kind' | 'name' | 'principals' | 'rules' | 'limits.rate';

export type LimitKey = 'maxTimeoutMs' | 'maxResultBytes' | 'maxMemoryMb' | 'maxCallsPerSession' | 'maxConcurrency' | 'maxConsecutiveFailures';
export const LIMIT_KEYS: readonly LimitKey[] = ['maxTimeoutMs', 'maxResultBytes', 'maxMemoryMb', 'maxCallsPerSession', 'maxConcurrency', 'maxConsecutiveFailures'];

export type InvalidArgumentsMode = 'error_result' | 'protocol_error';

/** Who gives approvals (SPEC section 7.2): the client in-band, else an operator; or always an operator. */
export type ApprovalsBy = 'client' | 'operator';

/** What the journal keeps of a call's arguments: their hash only, or also their redacted, bounded text. */
export type JournalArguments = 'none' | 'redacted';

/** The policy in force after layering (one per view: enforced, or with shadow files too). */
export interface MergedPolicy {
  readonly strict: ScalarSetting<boolean>;
  readonly toolsAllow: IntersectSetting<string>;
  readonly toolsDeny: UnionSetting<string>;
  readonly sideEffectsDeny: UnionSetting<SideEffect>;
  readonly requireApproval: UnionSetting<SideEffect>;
  readonly firstParty: IntersectSetting<string>;
  readonly community: IntersectSetting<PolicyMode>;
  readonly limits: { readonly [K in LimitKey]: ScalarSetting<number> };
  /** Values are absolute paths (${WORKSPACE} substituted, symlinks resolved when they exist). */
  readonly allowedRoots: IntersectSetting<string>;
  readonly networkAllow: IntersectSetting<string>;
  readonly envAllow: IntersectSetting<string>;
  readonly envSecrets: UnionSetting<string>;
  readonly onUnknownTool: ScalarSetting<OnUnknownTool>;
  readonly onInvalidArguments: ScalarSetting<InvalidArgumentsMode>;
  readonly approvalsBy: ScalarSetting<ApprovalsBy>;
  readonly approvalsExpireAfterMs: ScalarSetting<number>;
  /** `auto` when no layer sets it: enforce when a lock exists, else off (SPEC section 4.2). */
  readonly pinning: ScalarSetting<PinningSetting>;
  readonly journalArguments: ScalarSetting<JournalArguments>;
}

/** The `pinning` key: `auto` is the default, never written in a file. */
export type PinningSetting = 'off' | 'enforce' | 'auto';

/** A side-effect class filter of a rule or a rate window: one class or a list. */
export type ClassFilter = SideEffect | readonly SideEffect[];

/** One `rules:` entry as written. */
interface RuleDocument {
  readonly name: string;
  readonly tools: readonly string[];
  readonly principals?: readonly string[];
  readonly class?: ClassFilter;
  readonly when: string;
  readonly effect: 'deny' | 'ask';
}

/** One `limits.rate` window as written. */
interface RateDocument {
  readonly tools: readonly string[];
  readonly class?: ClassFilter;
  readonly per: string;
  readonly calls: number;
}

/** One policy file after schema validation: every key it sets, with positions. */
export interface PolicyFile {
  /** Absolute path. */
  readonly path: string;
  /** For people. */
  readonly file: string;
  readonly layer: 'organisation' | 'repository';
  readonly name: string;
  readonly mode: 'enforce' | 'shadow';
  readonly source: YamlSource;
  readonly data: PolicyDocument;
}

/** The YAML of a policy file, as the schema guarantees it. */
export interface PolicyDocument {
  readonly kind: 'Policy';
  readonly name: string;
  readonly mode?: 'enforce' | 'shadow';
  readonly strict?: boolean;
  readonly tools?: { readonly allow?: readonly string[]; readonly deny?: readonly string[] };
  readonly sideEffects?: { readonly deny?: readonly SideEffect[]; readonly requireApproval?: readonly SideEffect[] };
  readonly trust?: { readonly firstParty?: readonly string[] };
  readonly sandbox?: { readonly community?: readonly PolicyMode[] };
  readonly limits?: { readonly [K in LimitKey]?: number } & { readonly rate?: readonly RateDocument[] };
  readonly workspace?: { readonly allowedRoots?: readonly string[] };
  readonly network?: { readonly allow?: readonly string[] };
  readonly env?: { readonly allow?: readonly string[]; readonly secrets?: readonly string[] };
  readonly onUnknownTool?: OnUnknownTool;
  readonly onInvalidArguments?: InvalidArgumentsMode;
  readonly principals?: Readonly<Record<string, { readonly tools?: { readonly allow?: readonly string[]; readonly deny?: readonly string[] } }>>;
  readonly approvals?: { readonly by?: ApprovalsBy; readonly expireAfterMs?: number };
  readonly rules?: readonly RuleDocument[];
  readonly pinning?: 'off' | 'enforce';
  readonly journal?: { readonly arguments?: JournalArguments };
}
