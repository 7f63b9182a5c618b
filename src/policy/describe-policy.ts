// The merged policy as rows for people and machines: for each key, each layer
// that contributes to the value in force, with its file and line.
import type { Layer, MergedPolicy, PolicyKey, ScalarSetting, Source, UnionSetting, IntersectSetting } from './policy-model.js';
import { LIMIT_KEYS } from './policy-model.js';

export interface KeyRow {
  readonly key: PolicyKey;
  /** The value this layer contributes (for scalars: the value in force). */
  readonly value: unknown;
  readonly layer: Layer;
  readonly file: string | null;
  readonly line: number | null;
  readonly rule: string;
  /** How layers combine for this key. */
  readonly merge: 'tightest' | 'union' | 'intersect';
  /** Written in a shadow-mode file: reported, not enforced. */
  readonly shadow: boolean;
}

/** One row per key and contributing layer, in the order of the policy reference. */
export function describePolicy(policy: MergedPolicy): KeyRow[] {
  return [
    ...scalarRows('strict', policy.strict),
    ...intersectRows('tools.allow', policy.toolsAllow),
    ...unionRows('tools.deny', policy.toolsDeny),
    ...unionRows('sideEffects.deny', policy.sideEffectsDeny),
    ...unionRows('sideEffects.requireApproval', policy.requireApproval),
    ...intersectRows('trust.firstParty', policy.firstParty),
    ...intersectRows('sandbox.community', policy.community),
    ...LIMIT_KEYS.flatMap((key) => scalarRows(`limits.${key}`, policy.limits[key])),
    ...intersectRows('workspace.allowedRoots', policy.allowedRoots),
    ...intersectRows('network.allow', policy.networkAllow),
    ...intersectRows('env.allow', policy.envAllow),
    ...unionRows('env.secrets', policy.envSecrets),
    ...scalarRows('onUnknownTool', policy.onUnknownTool),
    ...scalarRows('onInvalidArguments', policy.onInvalidArguments),
    ...scalarRows('approvals.by', policy.approvalsBy),
    ...scalarRows('approvals.expireAfterMs', policy.approvalsExpireAfterMs),
    ...scalarRows('journal.arguments', policy.journalArguments),
  ];
}

function row(key: PolicyKey, value: unknown, source: Source, merge: KeyRow['merge']): KeyRow {
  return { key, value, layer: source.layer, file: source.file ?? null, line: source.line ?? null, rule: source.rule, merge, shadow: source.shadow };
}

function scalarRows<T>(key: PolicyKey, setting: ScalarSetting<T>): KeyRow[] {
  return [row(key, setting.value, setting.source, 'tightest')];
}

function unionRows<T>(key: PolicyKey, setting: UnionSetting<T>): KeyRow[] {
  return setting.setBy.map((source) =>
    row(
      key,
      setting.items.filter((item) => item.source.file === source.file && item.source.layer === source.layer).map((item) => item.value),
      source,
      'union',
    ),
  );
}

function intersectRows<T>(key: PolicyKey, setting: IntersectSetting<T>): KeyRow[] {
  return setting.layers.map((layer) => row(key, layer.items.map((item) => item.value), layer.source, 'intersect'));
}
