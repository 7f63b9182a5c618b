// The digest of the merged policy in force (SPEC section 7.1): SHA-256 of the
// RFC 8785 canonical JSON of every key's effective value (scalars as they
// apply, unions as sorted sets, intersections as each layer's sorted list) and
// the principals' rules. Where a value was written (file, line) is left out, so
// moving a key or adding a comment does not change the digest; changing what
// is enforced does. The journal records it with every call.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../config/canonical-json.js';
import type { MergedPolicy } from './policy-model.js';
import type { PrincipalRule } from './principals.js';

/** sha256 hex of the effective policy. */
export function policyDigestOf(policy: MergedPolicy, principalRules: readonly PrincipalRule[] = []): string {
  return createHash('sha256')
    .update(canonicalJson({ policy: effectiveOf(policy), principals: effectiveOf(principalRules) }))
    .digest('hex');
}

/** The effective values of a merged setting (or of any plain data holding settings), without their sources. */
function effectiveOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(effectiveOf);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if ('value' in record && ('source' in record || 'setBy' in record)) return effectiveOf(record['value']);
  if (Array.isArray(record['items'])) return sortedSet((record['items'] as unknown[]).map(effectiveOf));
  if (Array.isArray(record['layers'])) return (record['layers'] as unknown[]).map(effectiveOf);
  const plain: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(record)) if (key !== 'source' && key !== 'setBy') plain[key] = effectiveOf(member);
  return plain;
}

function sortedSet(values: unknown[]): unknown[] {
  const byText = new Map(values.map((item) => [canonicalJson(item), item]));
  return [...byText.keys()].sort().map((text) => byText.get(text));
}
