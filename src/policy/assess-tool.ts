// One manifest against one merged policy: every policy key that concerns the
// tool becomes a check with its outcome and the rule behind it. The view, the
// decision, `validate` and `explain` all read these checks, so they cannot
// disagree about why.
import { isAbsolute, relative, sep } from 'node:path';
import type { Problem } from '../config/problem.js';
import type { YamlPath } from '../config/yaml-source.js';
import type { Manifest } from '../registry/manifest.js';
import { ALL_POLICY_MODES, DEFAULT_MEMORY_MB } from './defaults.js';
import { findMatch, matchGlob } from './globs.js';
import type { IntersectSetting, LayerList, MergedPolicy, PolicyKey } from './policy-model.js';
import type { Decision, EffectiveLimits, PolicyMode, RuleRef, Trust } from './types.js';

type CheckOutcome = 'pass' | 'deny' | 'ask' | 'exclude';

export interface ToolCheck {
  /** A policy key, or `approval` for the manifest's own `approval: always`. */
  readonly key: PolicyKey | 'approval';
  readonly outcome: CheckOutcome;
  /** The rule that decided this check; for a pass, the rule in force (if any). */
  readonly rule?: RuleRef;
  /** One sentence for people. */
  readonly text: string;
  /** exclude: where in the manifest the conflict is, with a reason naming the rule. */
  readonly problem?: Problem;
  /** deny: unclassified_tool for the strict check, else policy_denied. */
  readonly code?: 'policy_denied' | 'unclassified_tool';
}

export interface ToolAssessment {
  readonly checks: readonly ToolCheck[];
  readonly exclusions: readonly ToolCheck[];
  readonly decision: Decision;
  readonly trust: Trust;
  readonly allowedModes: readonly PolicyMode[];
  readonly limits: EffectiveLimits;
}

/** Assesses a manifest under a merged policy. Pure: reads no files and no environment. */
export function assessTool(manifest: Manifest, policy: MergedPolicy, workspace: string): ToolAssessment {
  const checks: ToolCheck[] = [];
  const sideEffect = manifest.sideEffect;
  // A server's start-up probe is named `<server>__`, a name no one wrote: its exclusion is the server's.
  const subject = manifest.upstream?.probe === true ? `server "${manifest.upstream.server}"` : `tool "${manifest.name}"`;
  const exclude = (key: PolicyKey, rule: RuleRef, text: string, at: YamlPath): ToolCheck => ({
    key,
    outcome: 'exclude',
    rule,
    text,
    problem: manifest.source.problemAt(at, `${subject} excluded: ${text} (${rule})`),
  });

  // Denial by name.
  const denied = findMatch(policy.toolsDeny.items, manifest.name);
  checks.push(
    denied
      ? { key: 'tools.deny', outcome: 'deny', code: 'policy_denied', rule: denied.source.rule, text: `the name matches "${denied.value}"` }
      : { key: 'tools.deny', outcome: 'pass', text: 'the name matches no deny pattern' },
  );
  const notAllowed = firstFailingLayer(policy.toolsAllow, (items) => findMatch(items, manifest.name) !== undefined);
  checks.push(
    notAllowed
      ? { key: 'tools.allow', outcome: 'deny', code: 'policy_denied', rule: notAllowed.source.rule, text: `the name matches no pattern of ${describeLayer(notAllowed)}` }
      : { key: 'tools.allow', outcome: 'pass', rule: policy.toolsAllow.layers[0]?.source.rule, text: 'the name is allowed by every layer' },
  );

  // Denial and approval by class.
  const classDenied = sideEffect === undefined ? undefined : policy.sideEffectsDeny.items.find((item) => item.value === sideEffect);
  checks.push(
    classDenied
      ? { key: 'sideEffects.deny', outcome: 'deny', code: 'policy_denied', rule: classDenied.source.rule, text: `${sideEffect} tools are denied` }
      : { key: 'sideEffects.deny', outcome: 'pass', text: `${sideEffect ?? 'unclassified'} is not a denied class` },
  );
  if (sideEffect === undefined) {
    checks.push(
      policy.strict.value
        ? { key: 'strict', outcome: 'deny', code: 'unclassified_tool', rule: policy.strict.source.rule, text: 'the tool declares no sideEffect and the policy is strict' }
        : { key: 'strict', outcome: 'ask', rule: policy.strict.source.rule, text: 'the tool declares no sideEffect: not strict, so every call needs approval' },
    );
  } else {
    checks.push({ key: 'strict', outcome: 'pass', rule: policy.strict.source.rule, text: `the tool is classified ${sideEffect}` });
  }
  const approval = sideEffect === undefined ? undefined : policy.requireApproval.items.find((item) => item.value === sideEffect);
  checks.push(
    approval
      ? { key: 'sideEffects.requireApproval', outcome: 'ask', rule: approval.source.rule, text: `${sideEffect} calls need approval` }
      : { key: 'sideEffects.requireApproval', outcome: 'pass', text: `${sideEffect ?? 'unclassified'} calls need no approval by class` },
  );
  if (manifest.approval === 'always') {
    const line = manifest.source.positionOf(['approval']).line;
    checks.push({ key: 'approval', outcome: 'ask', rule: `${manifest.displayFile}:${line} approval`, text: 'the manifest asks for approval on every call' });
  }

  // Trust and sandbox mode.
  const trust = trustOf(manifest, policy.firstParty, workspace);
  checks.push({ key: 'trust.firstParty', outcome: 'pass', rule: trust.rule, text: trust.text });
  const allowedModes = trust.trust === 'first_party' ? ALL_POLICY_MODES : intersectModes(policy.community);
  const mode = policyModeOf(manifest);
  if (trust.trust === 'community') {
    const lacking = firstFailingLayer(policy.community, (items) => items.some((item) => item.value === mode));
    checks.push(
      lacking
        ? exclude('sandbox.community', lacking.source.rule, `community tools may not use mode ${mode} (allowed: ${allowedModes.join(', ') || 'none'})`, ['sandbox', 'mode'])
        : { key: 'sandbox.community', outcome: 'pass', rule: policy.community.layers[0]?.source.rule, text: `community tools may use mode ${mode}` },
    );
  } else {
    checks.push({ key: 'sandbox.community', outcome: 'pass', text: `first-party tools may use every mode (${mode})` });
  }

  // Limits declared above the policy's.
  const { maxTimeoutMs, maxMemoryMb, maxResultBytes } = policy.limits;
  checks.push(
    manifest.timeoutMs > maxTimeoutMs.value
      ? exclude('limits.maxTimeoutMs', maxTimeoutMs.source.rule, `timeoutMs ${manifest.timeoutMs} is above the policy maximum ${maxTimeoutMs.value}`, ['timeoutMs'])
      : { key: 'limits.maxTimeoutMs', outcome: 'pass', rule: maxTimeoutMs.source.rule, text: `timeoutMs ${manifest.timeoutMs} ≤ ${maxTimeoutMs.value}` },
  );
  const declaredMemoryMb = manifest.sandbox.memoryMb;
  const memoryMb = declaredMemoryMb ?? Math.min(DEFAULT_MEMORY_MB[manifest.sandbox.mode], maxMemoryMb.value);
  checks.push(
    declaredMemoryMb !== undefined && declaredMemoryMb > maxMemoryMb.value
      ? exclude('limits.maxMemoryMb', maxMemoryMb.source.rule, `sandbox.memoryMb ${declaredMemoryMb} is above the policy maximum ${maxMemoryMb.value}`, ['sandbox', 'memoryMb'])
      : {
          key: 'limits.maxMemoryMb',
          outcome: 'pass',
          rule: maxMemoryMb.source.rule,
          text: `memoryMb ${memoryMb}${declaredMemoryMb === undefined ? ` (the ${manifest.sandbox.mode} default, capped)` : ''} ≤ ${maxMemoryMb.value}`,
        },
  );
  const declaredResultBytes = manifest.maxResultBytes;
  checks.push(
    declaredResultBytes !== undefined && declaredResultBytes > maxResultBytes.value
      ? exclude('limits.maxResultBytes', maxResultBytes.source.rule, `limits.maxResultBytes ${declaredResultBytes} is above the policy maximum ${maxResultBytes.value}`, [
          'limits',
          'maxResultBytes',
        ])
      : {
          key: 'limits.maxResultBytes',
          outcome: 'pass',
          rule: maxResultBytes.source.rule,
          text: `maxResultBytes ${declaredResultBytes ?? maxResultBytes.value} ≤ ${maxResultBytes.value}`,
        },
  );

  // Roots, network and environment the tool asks for.
  manifest.roots.forEach((root, index) => {
    const outside = firstFailingLayer(policy.allowedRoots, (items) => items.some((item) => isInside(root.path, item.value)));
    checks.push(
      outside
        ? exclude('workspace.allowedRoots', outside.source.rule, `root ${root.declared} (${root.path}) is outside the allowed roots of ${describeLayer(outside)}`, [
            'workspace',
            'roots',
            index,
            'path',
          ])
        : {
            key: 'workspace.allowedRoots',
            outcome: 'pass',
            rule: policy.allowedRoots.layers[0]?.source.rule,
            text: `root ${root.declared} (${root.access}) lies inside the allowed roots`,
          },
    );
  });
  manifest.networkAllow.forEach((host, index) => {
    const refusing = firstFailingLayer(policy.networkAllow, (items) => items.some((item) => isHostAllowed(host, item.value)));
    checks.push(
      refusing
        ? exclude('network.allow', refusing.source.rule, `network host ${host} is not allowed by ${describeLayer(refusing)}`, ['network', 'allow', index])
        : { key: 'network.allow', outcome: 'pass', rule: policy.networkAllow.layers[0]?.source.rule, text: `network host ${host} is allowed` },
    );
  });
  manifest.sandbox.env.forEach((name, index) => {
    const secret = findMatch(policy.envSecrets.items, name, { ignoreCase: true });
    if (secret) {
      checks.push(exclude('env.secrets', secret.source.rule, `env ${name} is a secret (matches "${secret.value}") and is never passed`, ['sandbox', 'env', index]));
      return;
    }
    const refusing = firstFailingLayer(policy.envAllow, (items) => findMatch(items, name) !== undefined);
    checks.push(
      refusing
        ? exclude('env.allow', refusing.source.rule, `env ${name} is not allowed by ${describeLayer(refusing)}`, ['sandbox', 'env', index])
        : { key: 'env.allow', outcome: 'pass', rule: policy.envAllow.layers[0]?.source.rule, text: `env ${name} is passed through` },
    );
  });

  const exclusions = checks.filter((check) => check.outcome === 'exclude');
  const limits: EffectiveLimits = {
    timeoutMs: manifest.timeoutMs,
    maxResultBytes: declaredResultBytes ?? maxResultBytes.value,
    memoryMb,
  };
  return { checks, exclusions, decision: decisionFrom(checks), trust: trust.trust, allowedModes, limits };
}

/** The mode as `sandbox.community` names it. */
function policyModeOf(manifest: Manifest): PolicyMode {
  if (manifest.sandbox.mode !== 'process') return manifest.sandbox.mode;
  return manifest.sandbox.isolation === 'namespace' ? 'process_namespace' : 'process';
}

/** True when `host` (host or host:port) is allowed by one policy entry (host, host:port, or a glob). */
export function isHostAllowed(host: string, entry: string): boolean {
  const wanted = splitHost(host);
  const allowed = splitHost(entry);
  if (!matchGlob(allowed.host.toLowerCase(), wanted.host.toLowerCase())) return false;
  // An entry without a port allows every port; a manifest host without a port asks for every port.
  return allowed.port === undefined || allowed.port === wanted.port;
}

function decisionFrom(checks: readonly ToolCheck[]): Decision {
  const excluded = checks.find((check) => check.outcome === 'exclude');
  if (excluded?.rule) return { effect: 'deny', code: 'policy_denied', rule: excluded.rule, reason: `excluded: ${excluded.text}` };
  const denied = checks.find((check) => check.outcome === 'deny');
  if (denied?.rule) return { effect: 'deny', code: denied.code ?? 'policy_denied', rule: denied.rule, reason: denied.text };
  const ask = checks.find((check) => check.outcome === 'ask');
  if (ask?.rule) return { effect: 'ask', rule: ask.rule, reason: ask.text };
  return { effect: 'allow' };
}

function trustOf(manifest: Manifest, firstParty: IntersectSetting<string>, workspace: string): { trust: Trust; rule?: RuleRef; text: string } {
  const rel = relative(workspace, manifest.file);
  const inside = rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  const relPosix = rel.split(sep).join('/');
  const matches = (pattern: string): boolean => (isAbsolute(pattern) ? matchGlob(pattern, manifest.file, { path: true }) : inside && matchGlob(pattern, relPosix, { path: true }));
  const failing = firstFailingLayer(firstParty, (items) => items.some((item) => matches(item.value)));
  if (failing?.source.layer === 'built-in') {
    return { trust: 'community', rule: failing.source.rule, text: 'community: no organisation policy grants first party (trust.firstParty)' };
  }
  if (failing) {
    return { trust: 'community', rule: failing.source.rule, text: `community: the manifest path matches no first-party glob of ${describeLayer(failing)}` };
  }
  return { trust: 'first_party', rule: firstParty.layers[0]?.source.rule, text: 'first party: every layer that sets trust.firstParty matches the manifest path' };
}

function intersectModes(setting: IntersectSetting<PolicyMode>): PolicyMode[] {
  return ALL_POLICY_MODES.filter((mode) => setting.layers.every((layer) => layer.items.some((item) => item.value === mode)));
}

function firstFailingLayer<T>(setting: IntersectSetting<T>, passes: (items: LayerList<T>['items']) => boolean): LayerList<T> | undefined {
  return setting.layers.find((layer) => !passes(layer.items));
}

function describeLayer(layer: LayerList<unknown>): string {
  return layer.source.layer === 'built-in' ? 'the built-in default' : `${layer.source.file} (${layer.source.layer})`;
}

function isInside(path: string, root: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(prefix);
}

function splitHost(value: string): { host: string; port?: string } {
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    const port = value.slice(end + 1).startsWith(':') ? value.slice(end + 2) : undefined;
    return { host: value.slice(0, end + 1), ...(port ? { port } : {}) };
  }
  const parts = value.split(':');
  if (parts.length === 2 && parts[0] && parts[1]) return { host: parts[0], port: parts[1] };
  return { host: value };
}
