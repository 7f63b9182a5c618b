// Result checks (SPEC section 5 step 9, first half): what a runner produced
// must be usable before anything of it reaches the model: valid UTF-8, one
// strict JSON value (depth at most 256, no duplicate keys), and the manifest's
// output schema when it declares one. Any failure is `invalid_output`.
import { HostError } from '../errors.js';
import type { Manifest } from '../registry/manifest.js';
import type { RunOutput } from '../runner/run-types.js';
import { describeError } from './validate-args.js';
import { MAX_RESULT_DEPTH, parseStrictJson } from './strict-json.js';

/** A result that passed the checks: a parsed JSON value, or text. */
export type CheckedResult = { readonly type: 'json'; readonly value: unknown } | { readonly type: 'text'; readonly text: string };

/** What tools other than upstream servers produce (an upstream result has its own checks: upstream-result.ts). */
export type LocalOutput = Exclude<RunOutput, { type: 'mcp' }>;

/** Checks a runner's output against SPEC section 5 step 9 and the output schema. */
export function checkResult(output: LocalOutput, manifest: Manifest): CheckedResult {
  const checked = parseResult(output, manifest);
  checkOutputSchema(checked, manifest);
  return checked;
}

/** The usability checks alone (UTF-8, strict JSON): a tool output envelope is read before any schema applies. */
export function parseResult(output: LocalOutput, manifest: Manifest): CheckedResult {
  return output.type === 'json' ? checkJson(output.json, output.parsed, manifest.name) : checkText(output.bytes, manifest.name);
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

/** The manifest's output schema, when it declares one; `invalid_output` when the value does not match. */
export function checkOutputSchema(checked: CheckedResult, manifest: Manifest): void {
  const validate = manifest.validateOutput;
  if (!validate || !manifest.output) return;
  const value = checked.type === 'json' ? checked.value : checked.text;
  if (validate(value)) return;
  const first = validate.errors?.[0];
  const details = first ? describeError(first, manifest.output) : { path: '', keyword: 'schema', expected: manifest.output };
  throw new HostError('invalid_output', `The result of ${manifest.name} does not match its output schema.`, { reason: 'output_schema', ...details });
}
