// The result stage of a call (SPEC section 5 step 9 and 5.1): the runner's
// output is parsed (usable UTF-8, strict JSON), then read either as a tool
// output envelope (result/envelope.ts, shaped by result/envelope-shape.ts) or
// as a plain value (output schema, then result/plain.ts). Both fit within the
// one inline budget of result/budget.ts. A terminal tool's success gets its
// mark here (SPEC 5.2).
import type { Manifest } from '../registry/manifest.js';
import { isOutputEnvelope, readToolOutput, TERMINAL_META_KEY } from './result/envelope.js';
import { refuse } from './result/envelope-parts.js';
import { shapeToolOutput } from './result/envelope-shape.js';
import { checkOutputSchema } from './result/output-schema.js';
import { parseResult, type CheckedResult, type LocalOutput } from './result/parse.js';
import { shapePlain } from './result/plain.js';
import type { ShapeOptions, StagedResult } from './result/staged.js';

export type { StagedResult } from './result/staged.js';

/** Checks and shapes what the runner produced; throws the HostError of a refusal or a model_error. */
export async function stageResult(output: LocalOutput, manifest: Manifest, options: ShapeOptions): Promise<StagedResult> {
  const parsed = parseResult(output, manifest);
  let staged: StagedResult;
  if (parsed.type === 'json' && isOutputEnvelope(parsed.value)) staged = await stageToolOutput(parsed.value, manifest, options);
  else {
    // A plain result within the budget is staged without a promise of its own (only a spill waits).
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

function stagePlain(parsed: CheckedResult, manifest: Manifest, options: ShapeOptions): StagedResult | Promise<StagedResult> {
  if (manifest.sandbox.mode === 'process' && manifest.sandbox.stdout === 'output') {
    throw refuse(manifest.name, 'not_output_envelope', `with stdout: output it must print one {"toolhost/output": {...}} object`);
  }
  checkOutputSchema(parsed.type === 'json' ? parsed.value : parsed.text, manifest);
  return shapePlain(parsed, options);
}
