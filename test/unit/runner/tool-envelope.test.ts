// The answer an isolate or worker tool's sandbox gives is untrusted data: every
// malformed or hostile shape becomes a clear failure, never a crash or a pass.
import { describe, expect, it } from 'vitest';
import { MAX_TOOL_MESSAGE_CHARS, parseToolEnvelope, type EnvelopeRules } from '../../../src/runner/tool-envelope.js';

const isolate: EnvelopeRules = { source: 'isolate', floodCapBytes: 8, memoryLimit: { memoryMb: 16, isMemoryError: (name) => name === 'RangeError' } };
const worker: EnvelopeRules = { source: 'worker', floodCapBytes: 8 };

describe('parseToolEnvelope', () => {
  it('passes a JSON text through (its bytes are held to the flood cap where they cross: isolate-result.ts, the worker entry)', () => {
    expect(parseToolEnvelope({ ok: true, json: '"ab"' }, isolate)).toEqual({ ok: true, json: '"ab"' });
    expect(parseToolEnvelope({ ok: true, json: '"éééé"' }, worker)).toEqual({ ok: true, json: '"éééé"' });
  });

  it('refuses what is not an envelope, naming the sandbox', () => {
    for (const envelope of [null, 'ok', 42, { ok: true, json: 7 }, { ok: 'true', json: '1' }, { code: 'root_shell' }, {}]) {
      expect(parseToolEnvelope(envelope, worker)).toEqual({ ok: false, code: 'internal', message: 'The worker returned a malformed result.', details: { reason: 'bad_envelope' } });
    }
    expect(parseToolEnvelope(undefined, isolate)).toMatchObject({ code: 'internal', message: 'The isolate returned a malformed result.' });
  });

  it('bounds a tool error message and keeps only string details', () => {
    const outcome = parseToolEnvelope({ code: 'tool_error', message: 'x'.repeat(20_000), errorCode: { evil: true }, reason: 'r' }, worker);
    expect(outcome).toMatchObject({ ok: false, code: 'tool_error', details: { reason: 'r' } });
    if (outcome.ok) throw new Error('expected a failure');
    // A generous bound: the supervisor redacts, then cuts to what the caller sees.
    expect(outcome.message).toHaveLength(MAX_TOOL_MESSAGE_CHARS);
    expect(outcome.details).not.toHaveProperty('errorCode');
    expect(parseToolEnvelope({ code: 'tool_error', message: 42 }, worker)).toMatchObject({ message: 'The tool failed.' });
  });

  it('reports the heap limit as memory_limit only where the sandbox has one', () => {
    expect(parseToolEnvelope({ code: 'tool_error', name: 'RangeError', message: 'heap' }, isolate)).toMatchObject({ code: 'memory_limit', details: { memoryMb: 16 } });
    expect(parseToolEnvelope({ code: 'tool_error', name: 'RangeError', message: 'heap' }, worker)).toMatchObject({ code: 'tool_error' });
  });

  it('maps the sandbox-side codes for output it refused', () => {
    expect(parseToolEnvelope({ code: 'invalid_output', reason: 'bigint' }, worker)).toMatchObject({ code: 'invalid_output', details: { reason: 'bigint' } });
    expect(parseToolEnvelope({ code: 'invalid_output' }, worker)).toMatchObject({ details: { reason: 'not_serializable' } });
    expect(parseToolEnvelope({ code: 'output_limit' }, worker)).toMatchObject({ code: 'output_limit', details: { reason: 'flood_cap', limit: 8 } });
  });
});
