// A call's end as the isolate process reports it is untrusted: a success's bytes
// are held to the flood cap by the frame body's length, every string is bounded
// again, and isolated-vm's failures read as the codes every runner uses.
import { describe, expect, it } from 'vitest';
import { readIsolateResult, type IsolateResultFacts } from '../../../../src/runner/isolate/isolate-result.js';
import { recordingLogger } from '../../../helpers/recording-logger.js';

function facts(): IsolateResultFacts {
  return { tool: 'probe', memoryMb: 16, floodCapBytes: 8, timeoutMs: 250, logger: recordingLogger().logger };
}

const body = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('readIsolateResult', () => {
  it('passes a success body within the flood cap through as its text', () => {
    expect(readIsolateResult({ type: 'result', id: 1, kind: 'envelope', envelope: { ok: true } }, body('"ab"'), facts())).toEqual({ ok: true, json: '"ab"' });
  });

  it('refuses a success body past the flood cap in UTF-8 bytes, whatever its length in characters', () => {
    // 6 characters, 10 bytes.
    expect(readIsolateResult({ type: 'result', id: 1, kind: 'envelope', envelope: { ok: true } }, body('"éééé"'), facts())).toMatchObject({
      ok: false,
      code: 'output_limit',
      details: { reason: 'flood_cap', bytes: 10, limit: 8 },
    });
  });

  it('reads a failed envelope as the tool envelope it is, with the isolate heap as memory_limit', () => {
    expect(readIsolateResult({ type: 'result', id: 1, kind: 'envelope', envelope: { ok: false, code: 'output_limit' } }, body(''), facts())).toMatchObject({
      code: 'output_limit',
      details: { reason: 'flood_cap', limit: 8 },
    });
    expect(readIsolateResult({ type: 'result', id: 1, kind: 'envelope', envelope: { ok: false, code: 'tool_error', message: 'boom' } }, body(''), facts())).toMatchObject({
      code: 'tool_error',
      message: 'boom',
    });
    expect(readIsolateResult({ type: 'result', id: 1, kind: 'envelope', envelope: {} }, body(''), facts())).toMatchObject({
      code: 'internal',
      message: 'The isolate returned a malformed result.',
    });
  });

  it('reads a module that did not load, or threw at its top level, as the tool failing to load', () => {
    expect(readIsolateResult({ type: 'result', id: 1, kind: 'load_error', message: '' }, body(''), facts())).toEqual({
      ok: false,
      code: 'tool_error',
      message: 'The tool module could not be loaded.',
      details: { reason: 'load_failed' },
    });
    expect(readIsolateResult({ type: 'result', id: 1, kind: 'ivm_error', stage: 'evaluate', message: 'Error: top', isolateDisposed: false }, body(''), facts())).toMatchObject({
      code: 'tool_error',
      message: 'the tool module threw while loading: Error: top',
      details: { reason: 'load_failed' },
    });
  });

  it("classifies isolated-vm's own failures, logging the ones it does not know", () => {
    const known = readIsolateResult({ type: 'result', id: 1, kind: 'ivm_error', stage: 'run', message: 'Script execution timed out.', isolateDisposed: false }, body(''), facts());
    expect(known).toMatchObject({ ok: false, code: 'timeout', details: { timeoutMs: 250 } });
    const log = recordingLogger();
    const unknown = readIsolateResult({ type: 'result', id: 1, kind: 'ivm_error', stage: 'run', message: 'something new', isolateDisposed: false }, body(''), {
      ...facts(),
      logger: log.logger,
    });
    expect(unknown).toMatchObject({ ok: false, code: 'internal' });
    expect(log.lines()).toEqual([expect.objectContaining({ tool: 'probe', ivm: 'something new', msg: 'unexpected isolated-vm failure' })]);
  });
});
