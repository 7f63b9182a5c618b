// The parse of a result (SPEC section 5 step 9, first half): what a runner
// produced must be usable before anything of it reaches the model: valid UTF-8,
// one strict JSON value (depth at most 256, no duplicate keys). An upstream
// server's structuredContent, already a value, is held to the same depth. Any
// failure is `invalid_output`.
import { HostError } from '../../errors.js';
import type { Manifest } from '../../registry/manifest.js';
import type { RunOutput } from '../../runner/run-types.js';
import { MAX_RESULT_DEPTH, parseStrictJson } from './strict-json.js';

/** A result that parsed: a JSON value, or text. */
export type CheckedResult = { readonly type: 'json'; readonly value: unknown } | { readonly type: 'text'; readonly text: string };

/** What tools other than upstream servers produce (an upstream result is read by upstream.ts). */
export type LocalOutput = Exclude<RunOutput, { type: 'mcp' }>;

/** UTF-8 and strict JSON: a tool output envelope is read before any schema applies. */
export function parseResult(output: LocalOutput, manifest: Manifest): CheckedResult {
  return output.type === 'json' ? checkJson(output.json, output.parsed, manifest.name) : checkText(output.bytes, manifest.name);
}

/** True when `value` nests deeper than MAX_RESULT_DEPTH (counted as the strict parse counts containers). */
export function isTooDeep(value: unknown): boolean {
  return depthOf(value, 0) > MAX_RESULT_DEPTH;
}

// `value` (the runner's parse of `json`, when it made one) is used only once `json` passed the scan.
function checkJson(json: string, value: unknown, tool: string): CheckedResult {
  const parsed = parseStrictJson(json, MAX_RESULT_DEPTH, value);
  if (parsed.ok) return { type: 'json', value: parsed.value };
  const { reason, offset } = parsed;
  const what = {
    not_json: 'is not a single JSON value',
    too_deep: `nests deeper than ${MAX_RESULT_DEPTH} levels`,
    duplicate_key: 'repeats an object key',
    invalid_unicode: 'is not valid Unicode',
  }[reason];
  throw new HostError('invalid_output', `The result of ${tool} ${what}.`, {
    reason,
    offset,
    ...(reason === 'too_deep' ? { maxDepth: MAX_RESULT_DEPTH } : {}),
  });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function checkText(bytes: Uint8Array, tool: string): CheckedResult {
  try {
    return { type: 'text', text: UTF8.decode(bytes) };
  } catch {
    throw new HostError('invalid_output', `The output of ${tool} is not valid UTF-8 text.`, { reason: 'invalid_utf8', bytes: bytes.byteLength });
  }
}

// Stops one level past the limit: a hostile value is not walked further than needed.
function depthOf(value: unknown, depth: number): number {
  if (typeof value !== 'object' || value === null || depth > MAX_RESULT_DEPTH) return depth;
  let max = depth + 1;
  for (const child of Object.values(value)) max = Math.max(max, depthOf(child, depth + 1));
  return max;
}
