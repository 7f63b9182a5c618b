// The result-checks stage (SPEC section 5 step 9 and 5.1): what the runner
// produced, checked and shaped into what the caller sees. An upstream server's
// CallToolResult has its own reader (result/upstream.ts); every other output is
// parsed (usable UTF-8, strict JSON), then read either as a tool output
// envelope (result/envelope.ts, shaped by result/envelope-shape.ts) or as a
// plain value (output schema, then result/plain.ts). All fit within the one
// inline budget of result/budget.ts. A terminal tool's success gets its mark
// here (SPEC 5.2). Throws the HostError of a refusal or a model_error.
import type { ToolView } from '../../policy/types.js';
import type { Manifest } from '../../registry/manifest.js';
import type { RunOutput } from '../../runner/run-types.js';
import type { Redactor } from '../redact.js';
import { isOutputEnvelope, readToolOutput, TERMINAL_META_KEY } from '../result/envelope.js';
import { refuse } from '../result/envelope-parts.js';
import { shapeToolOutput } from '../result/envelope-shape.js';
import { checkOutputSchema } from '../result/output-schema.js';
import { parseResult, type CheckedResult, type LocalOutput } from '../result/parse.js';
import { shapePlain } from '../result/plain.js';
import type { ArtifactSink, ShapeOptions, StagedResult } from '../result/staged.js';
import { shapeUpstreamResult } from '../result/upstream.js';

interface ResultCheckInput {
  readonly view: ToolView;
  readonly output: RunOutput;
  readonly redact: Redactor;
  readonly artifacts: ArtifactSink;
  /** Upstream tools: records each resource link the server returned, so resources/read may forward it. */
  readonly onResourceLink: ((shownUri: string, upstreamUri: string) => void) | undefined;
}

/** The result as the caller will see it, and what the journal records of it. */
export function checkResult(input: ResultCheckInput): Promise<StagedResult> {
  const { view, output } = input;
  const shapeOptions: ShapeOptions = {
    tool: view.manifest.name,
    redact: input.redact,
    inlineBudgetBytes: view.limits.maxResultBytes,
    artifacts: input.artifacts,
    hasOutputSchema: view.manifest.output !== undefined,
  };
  if (output.type === 'mcp')
    return shapeUpstreamResult(output.result, view.manifest, { ...shapeOptions, ...(input.onResourceLink ? { onResourceLink: input.onResourceLink } : {}) });
  return stageResult(output, view.manifest, shapeOptions);
}

/** Checks and shapes what the runner produced; throws the HostError of a refusal or a model_error. */
export async function stageResult(output: LocalOutput, manifest: Manifest, options: ShapeOptions): Promise<StagedResult> {
  const parsed = parseResult(output, manifest);
  let staged: StagedResult;
  if (parsed.type === 'json' && isOutputEnvelope(parsed.value)) staged = await stageToolOutput(parsed.value, manifest, options);
  else staged = await stagePlain(parsed, manifest, options);
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

async function stagePlain(parsed: CheckedResult, manifest: Manifest, options: ShapeOptions): Promise<StagedResult> {
  if (manifest.sandbox.mode === 'process' && manifest.sandbox.stdout === 'output') {
    throw refuse(manifest.name, 'not_output_envelope', `with stdout: output it must print one {"toolhost/output": {...}} object`);
  }
  checkOutputSchema(parsed.type === 'json' ? parsed.value : parsed.text, manifest);
  return shapePlain(parsed, options);
}
