// The merged policy as rows for people and machines: for each key, each layer
// that set it (or the built-in default), with its file and line, whether its
// value is the one in force or was overridden by a tighter one, and the
// entries of a list that add nothing because another layer does not allow them.
import { realPathOr } from '../config/real-path.js';
import { sep } from 'node:path';
import { matchGlob } from './globs.js';
import type { Layer, LayerList, MergedPolicy, PolicyKey, ScalarSetting, Source, UnionSetting, IntersectSetting } from './policy-model.js';
import { LIMIT_KEYS } from './policy-model.js';

export interface KeyRow {
  readonly key: PolicyKey;
  /** The value this layer contributes (for scalars: the value it set). */
  readonly value: unknown;
  readonly layer: Layer;
  readonly file: string | null;
  readonly line: number | null;
  readonly col: number | null;
  readonly rule: string;
  /** How layers combine for this key. */
  readonly merge: 'tightest' | 'union' | 'intersect';
  /**
   * `in_force`: this row's value is (or, for union and intersect keys, is part of) the
   * value in force; `overridden`: a tighter value from another row is in force instead.
   */
  readonly status: 'in_force' | 'overridden';
  /** The row in force that overrode this one (overridden rows only). */
  readonly overriddenBy?: string;
  /** Intersect keys: entries of this row that another layer does not allow, so they add nothing. */
  readonly noEffect?: readonly unknown[];
  /** Written in a shadow-mode file: reported, not enforced. */
  readonly shadow: boolean;
}

/** One row per key and layer that set it, in the order of the policy reference. */
export function describePolicy(policy: MergedPolicy): KeyRow[] {
  return [
    ...scalarRows('strict', policy.strict),
    ...intersectRows('tools.allow', policy.toolsAllow, isGlobCovered),
    ...unionRows('tools.deny', policy.toolsDeny),
    ...unionRows('sideEffects.deny', policy.sideEffectsDeny),
    ...unionRows('sideEffects.requireApproval', policy.requireApproval),
    ...intersectRows('trust.firstParty', policy.firstParty, isPathGlobCovered),
    ...intersectRows('sandbox.community', policy.community, isEqual),
    ...LIMIT_KEYS.flatMap((key) => scalarRows(`limits.${key}`, policy.limits[key])),
    ...intersectRows('workspace.allowedRoots', policy.allowedRoots, isPathInside),
    ...intersectRows('network.allow', policy.networkAllow, isGlobCovered),
    ...intersectRows('env.allow', policy.envAllow, isGlobCovered),
    ...unionRows('env.secrets', policy.envSecrets),
    ...scalarRows('onUnknownTool', policy.onUnknownTool),
    ...scalarRows('onInvalidArguments', policy.onInvalidArguments),
    ...scalarRows('approvals.by', policy.approvalsBy),
    ...scalarRows('approvals.expireAfterMs', policy.approvalsExpireAfterMs),
    ...scalarRows('pinning', policy.pinning),
    ...scalarRows('journal.arguments', policy.journalArguments),
  ];
}

type Covers<T> = (allowed: T, entry: T) => boolean;

function row(key: PolicyKey, value: unknown, source: Source, merge: KeyRow['merge'], status: KeyRow['status'] = 'in_force'): KeyRow {
  return {
    key,
    value,
    layer: source.layer,
    file: source.file ?? null,
    line: source.line ?? null,
    col: source.col ?? null,
    rule: source.rule,
    merge,
    status,
    shadow: source.shadow,
  };
}

// The tightest value wins: its row is in force, every other layer's is overridden by it.
function scalarRows<T>(key: PolicyKey, setting: ScalarSetting<T>): KeyRow[] {
  if (setting.setBy.length === 0) return [row(key, setting.value, setting.source, 'tightest')];
  return setting.setBy.map((entry) =>
    entry.source === setting.source
      ? row(key, entry.value, entry.source, 'tightest')
      : { ...row(key, entry.value, entry.source, 'tightest', 'overridden'), overriddenBy: setting.source.rule },
  );
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

// Every layer is in force (a value must pass all of them); an entry no other layer
// allows adds nothing. A layer behind the built-in default (trust.firstParty without
// an organisation layer, merge.ts) is overridden by it.
function intersectRows<T>(key: PolicyKey, setting: IntersectSetting<T>, covers: Covers<T>): KeyRow[] {
  const builtIn = setting.layers.find((layer) => layer.source.layer === 'built-in');
  return setting.layers.map((layer) => {
    const values = layer.items.map((item) => item.value);
    if (builtIn !== undefined && layer !== builtIn) return { ...row(key, values, layer.source, 'intersect', 'overridden'), overriddenBy: builtIn.source.rule, noEffect: values };
    const noEffect = values.filter((value) => setting.layers.some((other) => other !== layer && !allows(other, value, covers)));
    return noEffect.length === 0 ? row(key, values, layer.source, 'intersect') : { ...row(key, values, layer.source, 'intersect'), noEffect };
  });
}

function allows<T>(layer: LayerList<T>, value: T, covers: Covers<T>): boolean {
  return layer.items.some((item) => covers(item.value, value));
}

// An entry is covered when another layer's glob matches it as written ("read_*" covers
// "read_file" and "read_f*"; "*" is covered only by a glob that matches "*").
function isGlobCovered(allowed: string, entry: string): boolean {
  return allowed === entry || matchGlob(allowed, entry);
}

function isPathGlobCovered(allowed: string, entry: string): boolean {
  return allowed === entry || matchGlob(allowed, entry, { path: true });
}

function isEqual<T>(allowed: T, entry: T): boolean {
  return allowed === entry;
}

// Roots are absolute, resolved paths (merge.ts): an entry inside another layer's root is covered.
function isPathInside(allowed: string, entry: string): boolean {
  const root = realPathOr(allowed);
  const path = realPathOr(entry);
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}
