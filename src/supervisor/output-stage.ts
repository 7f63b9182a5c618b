// The result stage of a call (SPEC section 5 step 9 and 5.1): the runner's
// output is parsed (usable UTF-8, strict JSON), then read either as a tool
// output envelope (tool-output.ts, shaped by output-shape.ts) or as a plain
// value (output schema, then result-shape.ts). A terminal tool's success gets
// its mark here (SPEC 5.2).
import type { Manifest } from '../registry/manifest.js';
import { refuse } from './output-parts.js';
import { shapeToolOutput } from './output-shape.js';
import { checkOutputSchema, parseResult, type LocalOutput } from './result-checks.js';
import { shapeResult, type ShapedResult, type ShapeOptions } from './result-shape.js';
import { isOutputEnvelope, readToolOutput, TERMINAL_META_KEY } from './tool-output.js';
import type { ContentBlock } from './types.js';

/** A successful call's result, as the caller will see it, and what the journal records of it. */
export interface StagedResult {
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  readonly meta?: Readonly<Record<string, unknown>>;
  readonly payload: string;
  readonly payloadBytes: number;
}

/** Checks and shapes what the runner produced; throws the HostError of a refusal or a model_error. */
export async function stageResult(output: LocalOutput, manifest: Manifest, options: ShapeOptions): Promise<StagedResult> {
  const parsed = parseResult(output, manifest);
  let staged: StagedResult;
  if (parsed.type === 'json' && isOutputEnvelope(parsed.value)) staged = await stageToolOutput(parsed.value, manifest, options);
  else {
    // A plain result within the limit is staged without a promise of its own (only a spill waits).
    const plain = stagePlain(parsed, manifest, options);
    staged = plain instanceof Promise ? await plain : plain;
  }
  if (!manifest.terminal) return staged;
  return { ...staged, meta: { ...staged.meta, [TERMINAL_META_KEY]: true } };
}

async function stageToolOutput(envelope: Parameters<typeof readToolOutput>[0], manifest: Manifest, options: ShapeOptions): Promise<StagedResult> {
  const output = readToolOutput(envelope, manifest.name);
  // MCP clients require structuredContent from a tool that advertises an outputSchema;
  // parts cannot give it, so such a tool answers with a plain value (or a model_error).
  if (manifest.output && output.kind !== 'model_error') {
    throw refuse(manifest.name, 'output_schema_needs_value', `a tool with an output schema returns a value, not a ${output.kind} output`, { kind: output.kind });
  }
  return shapeToolOutput(output, options);
}

function stagePlain(parsed: ReturnType<typeof parseResult>, manifest: Manifest, options: ShapeOptions): StagedResult | Promise<StagedResult> {
  if (manifest.sandbox.mode === 'process' && manifest.sandbox.stdout === 'output') {
    throw refuse(manifest.name, 'not_output_envelope', `with stdout: output it must print one {"toolhost/output": {...}} object`);
  }
  checkOutputSchema(parsed, manifest);
  const shaped = shapeResult(parsed, options);
  return shaped instanceof Promise ? shaped.then(plainStaged) : plainStaged(shaped);
}

function plainStaged(shaped: ShapedResult): StagedResult {
  // Spilled, with an outputSchema: an output_limit error result carrying the preview and the link.
  if (shaped.error) throw shaped.error;
  return {
    content: shaped.content,
    ...(shaped.structuredContent ? { structuredContent: shaped.structuredContent } : {}),
    payload: shaped.payload,
    payloadBytes: shaped.payloadBytes,
  };
}
