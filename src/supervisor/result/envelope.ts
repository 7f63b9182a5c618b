// Tool outputs (SPEC section 5.1): a tool may answer, instead of a plain
// value, one object `{"toolhost/output": {kind, parts, hostOnly}}` saying what
// each part is for. isolate and worker tools build it with ctx.output.*, process
// tools print it (`stdout: output`, or a persistent process's `result`). It is
// plain data from inside the sandbox, read here like any result: exactly the
// known keys, a known kind, checked parts (envelope-parts.ts).
import { checkParts, refuse, type OutputPart } from './envelope-parts.js';

/** The one key of an output envelope. */
const OUTPUT_ENVELOPE_KEY = 'toolhost/output';
/** `_meta` key of a host_only result: the value for the application, never for the model. */
export const HOST_ONLY_META_KEY = 'toolhost/hostOnly';
/** `_meta` key marking a terminal tool, in tools/list and on its successful result (SPEC 5.2). */
export const TERMINAL_META_KEY = 'toolhost/terminal';

const OUTPUT_KINDS = ['rich', 'model_error', 'host_only'] as const;
type OutputKind = (typeof OUTPUT_KINDS)[number];

/** A checked output. `hostOnly` is present exactly for `host_only`. */
export type ToolOutput =
  | { readonly kind: 'rich' | 'model_error'; readonly parts: readonly OutputPart[] }
  | { readonly kind: 'host_only'; readonly parts: readonly OutputPart[]; readonly hostOnly: unknown };

/** True for an object whose only key is `toolhost/output`: what ctx.output.* builds. */
export function isOutputEnvelope(value: unknown): value is Record<typeof OUTPUT_ENVELOPE_KEY, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === OUTPUT_ENVELOPE_KEY;
}

/** Reads an envelope (isOutputEnvelope holds); `invalid_output` for anything malformed. */
export function readToolOutput(envelope: Record<typeof OUTPUT_ENVELOPE_KEY, unknown>, tool: string): ToolOutput {
  const body = envelope[OUTPUT_ENVELOPE_KEY];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw refuse(tool, 'bad_envelope', `"${OUTPUT_ENVELOPE_KEY}" is not an object`);
  const fields = body as Record<string, unknown>;
  const extra = Object.keys(fields).find((key) => key !== 'kind' && key !== 'parts' && key !== 'hostOnly');
  if (extra !== undefined) throw refuse(tool, 'bad_envelope', 'the envelope has an unknown field', { field: extra.slice(0, 64) });
  const kind = fields['kind'];
  if (!OUTPUT_KINDS.includes(kind as OutputKind)) throw refuse(tool, 'bad_envelope', 'its kind is not rich, model_error or host_only', { allowed: [...OUTPUT_KINDS] });
  if (kind !== 'host_only') {
    if ('hostOnly' in fields) throw refuse(tool, 'bad_envelope', `only a host_only output carries hostOnly`, { field: 'hostOnly' });
    return { kind: kind as 'rich' | 'model_error', parts: checkParts(fields['parts'], tool) };
  }
  if (!('hostOnly' in fields)) throw refuse(tool, 'bad_envelope', 'a host_only output needs a hostOnly value', { field: 'hostOnly' });
  // modelParts are optional: without them the model gets a one-line notice.
  const parts = fields['parts'] === undefined ? [] : checkParts(fields['parts'], tool);
  return { kind: 'host_only', parts, hostOnly: fields['hostOnly'] };
}
