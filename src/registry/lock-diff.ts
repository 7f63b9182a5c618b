// What changed between toolhost.lock and the tools as they are now (SPEC
// section 4.2, `toolhost lock --check` and a server's tools/list_changed):
// tools added (not pinned), removed (pinned, no longer offered) and changed,
// each change as a unified diff of the fields that differ, the description as
// text and the schemas as indented JSON, so a reviewer reads what a model
// would now be told.
import { createTwoFilesPatch } from 'diff';
import type { ToolDefinition } from './definition-digest.js';
import { canonicalJson, definitionDigest } from './definition-digest.js';

/** One tool that differs from its pin. */
type PinChange =
  | { readonly kind: 'added'; readonly name: string; readonly current: string }
  | { readonly kind: 'removed'; readonly name: string; readonly pinned: string }
  | { readonly kind: 'changed'; readonly name: string; readonly pinned: string; readonly current: string; readonly fields: readonly string[]; readonly diff: string };

const FIELDS = ['description', 'inputSchema', 'outputSchema', 'annotations', 'classEntry'] as const;

/** Every difference between pinned and current definitions (by listed name), sorted by name. */
export function diffPins(pinned: ReadonlyMap<string, ToolDefinition>, current: ReadonlyMap<string, ToolDefinition>): PinChange[] {
  const changes: PinChange[] = [];
  const names = [...new Set([...pinned.keys(), ...current.keys()])].sort();
  for (const name of names) {
    const before = pinned.get(name);
    const after = current.get(name);
    if (before === undefined && after !== undefined) changes.push({ kind: 'added', name, current: definitionDigest(after) });
    else if (before !== undefined && after === undefined) changes.push({ kind: 'removed', name, pinned: definitionDigest(before) });
    else if (before !== undefined && after !== undefined) {
      const change = diffDefinition(before, after);
      if (change) changes.push(change);
    }
  }
  return changes;
}

/** The change between two definitions of one tool, or undefined when their digests agree. */
export function diffDefinition(before: ToolDefinition, after: ToolDefinition): Extract<PinChange, { kind: 'changed' }> | undefined {
  const pinnedDigest = definitionDigest(before);
  const currentDigest = definitionDigest(after);
  if (pinnedDigest === currentDigest) return undefined;
  const fields: string[] = [];
  let diff = '';
  for (const field of FIELDS) {
    const oldText = asText(before[field]);
    const newText = asText(after[field]);
    if (oldText === newText) continue;
    fields.push(field);
    diff += createTwoFilesPatch(`${after.name} ${field} (pinned)`, `${after.name} ${field} (current)`, oldText, newText, undefined, undefined, { context: 3 })
      .split('\n')
      .filter((line) => !line.startsWith('===='))
      .join('\n');
  }
  return { kind: 'changed', name: after.name, pinned: pinnedDigest, current: currentDigest, fields, diff };
}

/** The changes for a person: one line per tool, then the diff of each change. */
export function formatPinChanges(changes: readonly PinChange[]): string {
  const lines: string[] = [];
  for (const change of changes) {
    if (change.kind === 'added') lines.push(`+ ${change.name}: not pinned (sha256 ${change.current})`);
    else if (change.kind === 'removed') lines.push(`- ${change.name}: pinned (sha256 ${change.pinned}) but no longer offered`);
    else {
      lines.push(`~ ${change.name}: ${change.fields.join(', ')} changed (pinned sha256 ${change.pinned}, now ${change.current})`);
      lines.push(change.diff.trimEnd());
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

// Descriptions are text; everything else reads best as indented JSON, keys in canonical order
// (a pin read back from the lock and a definition built now differ in key order, not in meaning).
function asText(value: unknown): string {
  if (typeof value === 'string') return value.endsWith('\n') ? value : `${value}\n`;
  return `${JSON.stringify(JSON.parse(canonicalJson(value ?? null)), null, 2)}\n`;
}
