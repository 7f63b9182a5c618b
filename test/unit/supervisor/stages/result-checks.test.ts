// The result stage: an envelope is read as a tool output, anything else as a
// plain value; `stdout: output` insists on the envelope; a tool with an output
// schema answers with a value (or a model_error); a terminal tool's success is
// marked whichever way it answered.
import { describe, expect, it } from 'vitest';
import { HostError } from '../../../../src/errors.js';
import type { Manifest } from '../../../../src/registry/manifest.js';
import { stageResult } from '../../../../src/supervisor/stages/result-checks.js';
import { createRedactor } from '../../../../src/supervisor/redact.js';

const options = {
  tool: 't',
  redact: createRedactor({ secretValues: [], visibleRoots: [] }),
  inlineBudgetBytes: 4096,
  artifacts: { put: () => ({ sha256: 'x', uri: 'toolhost://artifacts/x', size: 0 }) },
};

function manifest(extra: { terminal?: boolean; stdout?: 'json' | 'output'; output?: Record<string, unknown> } = {}): Manifest {
  const validateOutput = extra.output ? Object.assign(() => true, { errors: null }) : undefined;
  return {
    name: 't',
    terminal: extra.terminal ?? false,
    sandbox: { mode: 'process', stdout: extra.stdout ?? 'json' },
    ...(extra.output ? { output: extra.output, validateOutput } : {}),
  } as unknown as Manifest;
}

const json = (value: unknown) => ({ type: 'json' as const, json: JSON.stringify(value) });
const rich = { 'toolhost/output': { kind: 'rich', parts: [{ type: 'text', text: 'hi' }] } };

async function refusal(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(HostError);
  return { code: (error as HostError).code, ...(error as HostError).details };
}

describe('stageResult', () => {
  it('reads an envelope as a tool output and a plain object as structured content', async () => {
    expect((await stageResult(json(rich), manifest(), options)).content).toEqual([{ type: 'text', text: 'hi' }]);
    const plain = await stageResult(json({ n: 1 }), manifest(), options);
    expect(plain.structuredContent).toEqual({ n: 1 });
  });

  it('stdout: output refuses a plain value', async () => {
    expect(await refusal(stageResult(json({ n: 1 }), manifest({ stdout: 'output' }), options))).toEqual({ code: 'invalid_output', reason: 'not_output_envelope' });
  });

  it('a tool with an output schema may not answer with parts, but may refuse with a model_error', async () => {
    const schema = { type: 'object' };
    expect(await refusal(stageResult(json(rich), manifest({ output: schema }), options))).toEqual({ code: 'invalid_output', reason: 'output_schema_needs_value', kind: 'rich' });
    const modelError = { 'toolhost/output': { kind: 'model_error', parts: [{ type: 'text', text: 'no' }] } };
    expect(await refusal(stageResult(json(modelError), manifest({ output: schema }), options))).toEqual({ code: 'tool_error', modelError: true });
  });

  it("marks a terminal tool's success, plain or rich", async () => {
    expect((await stageResult(json('done'), manifest({ terminal: true }), options)).meta).toEqual({ 'toolhost/terminal': true });
    expect((await stageResult(json(rich), manifest({ terminal: true }), options)).meta).toEqual({ 'toolhost/terminal': true });
    expect((await stageResult(json('done'), manifest(), options)).meta).toBeUndefined();
  });
});
