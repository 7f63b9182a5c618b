// Layering: the tightest value wins, never the order of files. Deny lists and
// approval requirements accumulate, allow lists intersect, the smaller limit
// wins, strict wins. A key no layer sets takes its built-in default.
import { realPathOr } from '../config/real-path.js';
import { isAbsolute, resolve } from 'node:path';
import type { Problem } from '../config/problem.js';
import type { YamlPath } from '../config/yaml-source.js';
import { POLICY_DEFAULTS } from './defaults.js';
import type {
  IntersectSetting,
  JournalArguments,
  LayerList,
  LimitKey,
  MergedPolicy,
  PolicyFile,
  PinningSetting,
  PolicyKey,
  ScalarSetting,
  Source,
  Sourced,
  UnionSetting,
} from './policy-model.js';
import { LIMIT_KEYS } from './policy-model.js';
import type { OnUnknownTool } from './types.js';

interface MergeResult {
  readonly policy: MergedPolicy;
  /** Disagreements layering cannot resolve (two different rewrite targets, unknown ${VARIABLES}). */
  readonly problems: readonly Problem[];
}

/** Merges layers (most authoritative first) into the policy in force. */
export function mergePolicies(files: readonly PolicyFile[], workspace: string): MergeResult {
  const problems: Problem[] = [];
  const data = (file: PolicyFile) => file.data;
  const limits = Object.fromEntries(
    LIMIT_KEYS.map((key) => [key, mergeScalar(files, ['limits', key], `limits.${key}`, POLICY_DEFAULTS.limits[key], (f) => data(f).limits?.[key], smaller)]),
  ) as Record<LimitKey, ScalarSetting<number>>;

  const policy: MergedPolicy = {
    strict: mergeScalar(
      files,
      ['strict'],
      'strict',
      POLICY_DEFAULTS.strict,
      (f) => data(f).strict,
      (a, b) => a && !b,
    ),
    toolsAllow: mergeIntersect(files, ['tools', 'allow'], 'tools.allow', POLICY_DEFAULTS.toolsAllow, (f) => data(f).tools?.allow),
    toolsDeny: mergeUnion(files, ['tools', 'deny'], 'tools.deny', POLICY_DEFAULTS.toolsDeny, (f) => data(f).tools?.deny),
    sideEffectsDeny: mergeUnion(files, ['sideEffects', 'deny'], 'sideEffects.deny', POLICY_DEFAULTS.sideEffectsDeny, (f) => data(f).sideEffects?.deny),
    requireApproval: mergeUnion(
      files,
      ['sideEffects', 'requireApproval'],
      'sideEffects.requireApproval',
      POLICY_DEFAULTS.requireApproval,
      (f) => data(f).sideEffects?.requireApproval,
    ),
    firstParty: grantedByOrganisation(mergeIntersect(files, ['trust', 'firstParty'], 'trust.firstParty', POLICY_DEFAULTS.firstParty, (f) => data(f).trust?.firstParty)),
    community: mergeIntersect(files, ['sandbox', 'community'], 'sandbox.community', POLICY_DEFAULTS.community, (f) => data(f).sandbox?.community),
    limits,
    allowedRoots: expandRoots(
      mergeIntersect(files, ['workspace', 'allowedRoots'], 'workspace.allowedRoots', POLICY_DEFAULTS.allowedRoots, (f) => data(f).workspace?.allowedRoots),
      workspace,
      files,
      problems,
    ),
    networkAllow: mergeIntersect(files, ['network', 'allow'], 'network.allow', POLICY_DEFAULTS.networkAllow, (f) => data(f).network?.allow),
    envAllow: mergeIntersect(files, ['env', 'allow'], 'env.allow', POLICY_DEFAULTS.envAllow, (f) => data(f).env?.allow),
    envSecrets: mergeUnion(files, ['env', 'secrets'], 'env.secrets', POLICY_DEFAULTS.envSecrets, (f) => data(f).env?.secrets),
    onUnknownTool: mergeScalar(
      files,
      ['onUnknownTool'],
      'onUnknownTool',
      POLICY_DEFAULTS.onUnknownTool as OnUnknownTool,
      (f) => data(f).onUnknownTool,
      (a, b) => unknownToolRank(a) < unknownToolRank(b),
    ),
    onInvalidArguments: mergeScalar(
      files,
      ['onInvalidArguments'],
      'onInvalidArguments',
      POLICY_DEFAULTS.onInvalidArguments,
      (f) => data(f).onInvalidArguments,
      (a, b) => a === 'protocol_error' && b !== 'protocol_error',
    ),
    // operator wins over client (it never drops an approval); the shorter expiry wins.
    approvalsBy: mergeScalar(
      files,
      ['approvals', 'by'],
      'approvals.by',
      POLICY_DEFAULTS.approvalsBy,
      (f) => data(f).approvals?.by,
      (a, b) => a === 'operator' && b !== 'operator',
    ),
    approvalsExpireAfterMs: mergeScalar(
      files,
      ['approvals', 'expireAfterMs'],
      'approvals.expireAfterMs',
      POLICY_DEFAULTS.approvalsExpireAfterMs,
      (f) => data(f).approvals?.expireAfterMs,
      smaller,
    ),
    // enforce wins over off; `auto` (no layer set it) decides by whether a lock exists.
    pinning: mergeScalar<PinningSetting>(
      files,
      ['pinning'],
      'pinning',
      'auto',
      (f) => data(f).pinning,
      (a, b) => a === 'enforce' && b !== 'enforce',
    ),
    // More evidence for an auditor is the stricter oversight: any layer asking for the arguments gets them kept.
    journalArguments: mergeScalar(
      files,
      ['journal', 'arguments'],
      'journal.arguments',
      POLICY_DEFAULTS.journalArguments as JournalArguments,
      (f) => data(f).journal?.arguments,
      (a, b) => a === 'redacted' && b !== 'redacted',
    ),
  };
  checkRewrites(policy.onUnknownTool, files, problems);
  return { policy: deepFreeze(policy), problems };
}

/**
 * Only an organisation layer can grant first party (SPEC 4): without one that sets
 * trust.firstParty, the built-in default (nothing) is in force, and the repository
 * layers that set it stay listed after it, narrowing nothing and granting nothing.
 */
function grantedByOrganisation(setting: IntersectSetting<string>): IntersectSetting<string> {
  if (setting.layers.some((layer) => layer.source.layer === 'organisation')) return setting;
  const repository = setting.layers.filter((layer) => layer.source.layer !== 'built-in');
  if (repository.length === 0) return setting;
  return { layers: [{ source: builtInSource('trust.firstParty'), items: [] }, ...repository] };
}

/**
 * Tightest first. protocol_error refuses at the protocol level; error_result
 * lets the model read the refusal; a rewrite runs another tool instead, the loosest.
 */
function unknownToolRank(value: OnUnknownTool): number {
  if (value === 'protocol_error') return 0;
  if (value === 'error_result') return 1;
  return 2;
}

/** The source of a built-in default. */
function builtInSource(key: PolicyKey): Source {
  return { layer: 'built-in', key, rule: `(built-in) ${key}`, shadow: false };
}

/** The source of a value written at `path` in `file`. */
export function sourceAt(file: PolicyFile, path: YamlPath, key: PolicyKey, at: 'key' | 'value' = 'value'): Source {
  const position = at === 'key' ? file.source.keyPositionOf(path) : file.source.positionOf(path);
  return {
    layer: file.layer,
    file: file.file,
    line: position.line,
    col: position.col,
    key,
    rule: `${file.file}:${position.line} ${key}`,
    shadow: file.mode === 'shadow',
  };
}

function mergeScalar<T>(
  files: readonly PolicyFile[],
  path: YamlPath,
  key: PolicyKey,
  fallback: T,
  read: (file: PolicyFile) => T | undefined,
  isTighter: (candidate: T, current: T) => boolean,
): ScalarSetting<T> {
  const setBy: Sourced<T>[] = [];
  for (const file of files) {
    const value = read(file);
    if (value !== undefined) setBy.push({ value, source: sourceAt(file, path, key) });
  }
  const [first, ...rest] = setBy;
  if (!first) return { value: fallback, source: builtInSource(key), setBy: [] };
  // Ties keep the most authoritative layer as the source.
  const winner = rest.reduce((current, candidate) => (isTighter(candidate.value, current.value) ? candidate : current), first);
  return { value: winner.value, source: winner.source, setBy };
}

function mergeUnion<T>(
  files: readonly PolicyFile[],
  path: YamlPath,
  key: PolicyKey,
  fallback: readonly T[],
  read: (file: PolicyFile) => readonly T[] | undefined,
): UnionSetting<T> {
  const items: Sourced<T>[] = [];
  const setBy: Source[] = [];
  for (const file of files) {
    const values = read(file);
    if (values === undefined) continue;
    setBy.push(sourceAt(file, path, key, 'key'));
    values.forEach((value, index) => items.push({ value, source: sourceAt(file, [...path, index], key) }));
  }
  if (setBy.length === 0) {
    const source = builtInSource(key);
    return { items: fallback.map((value) => ({ value, source })), setBy: [source] };
  }
  return { items, setBy };
}

function mergeIntersect<T>(
  files: readonly PolicyFile[],
  path: YamlPath,
  key: PolicyKey,
  fallback: readonly T[],
  read: (file: PolicyFile) => readonly T[] | undefined,
): IntersectSetting<T> {
  const layers: LayerList<T>[] = [];
  for (const file of files) {
    const values = read(file);
    if (values === undefined) continue;
    layers.push({
      source: sourceAt(file, path, key, 'key'),
      items: values.map((value, index) => ({ value, source: sourceAt(file, [...path, index], key) })),
    });
  }
  if (layers.length > 0) return { layers };
  const source = builtInSource(key);
  return { layers: [{ source, items: fallback.map((value) => ({ value, source })) }] };
}

// ${WORKSPACE} is the only variable: anything else would depend on the
// environment of whoever runs the host, so it is refused rather than guessed.
function expandRoots(setting: IntersectSetting<string>, workspace: string, files: readonly PolicyFile[], problems: Problem[]): IntersectSetting<string> {
  const layers = setting.layers.map((layer) => ({
    source: layer.source,
    items: layer.items.map((item) => {
      const unknown = /\$\{(?!WORKSPACE\})[^}]*\}/.exec(item.value);
      if (unknown) {
        const file = files.find((candidate) => candidate.file === item.source.file);
        if (file)
          problems.push({
            file: file.file,
            line: item.source.line ?? 1,
            col: item.source.col ?? 1,
            reason: `workspace.allowedRoots: unknown variable ${unknown[0]} (only \${WORKSPACE} is substituted)`,
          });
      }
      const substituted = item.value.replaceAll('${WORKSPACE}', workspace);
      return { value: realPathOr(isAbsolute(substituted) ? substituted : resolve(workspace, substituted)), source: item.source };
    }),
  }));
  return { layers };
}

function checkRewrites(setting: ScalarSetting<OnUnknownTool>, files: readonly PolicyFile[], problems: Problem[]): void {
  const targets = new Set(setting.setBy.flatMap((entry) => (typeof entry.value === 'object' ? [entry.value.rewrite] : [])));
  if (targets.size <= 1 || typeof setting.value !== 'object') return;
  // Two layers that redirect unknown calls to different tools: neither may silently win.
  for (const entry of setting.setBy) {
    if (typeof entry.value !== 'object') continue;
    const file = files.find((candidate) => candidate.file === entry.source.file);
    if (!file) continue;
    problems.push({
      file: file.file,
      line: entry.source.line ?? 1,
      col: entry.source.col ?? 1,
      reason: `onUnknownTool: layers rewrite unknown tools to different tools (${[...targets].join(', ')}); pick one or use error_result`,
    });
  }
}

function smaller(candidate: number, current: number): boolean {
  return candidate < current;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
