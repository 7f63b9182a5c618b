import { ProtocolError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { ERRORS, HostError, type ErrorCode } from '../../../src/errors.js';
import type { SessionPolicy } from '../../../src/policy/types.js';
import { ERROR_META_KEY, renderOutcome } from '../../../src/protocol/results.js';

type Session = Pick<SessionPolicy, 'onUnknownTool' | 'onInvalidArguments'>;
const DEFAULTS: Session = { onUnknownTool: 'protocol_error', onInvalidArguments: 'error_result' };

const DETAILS: Record<ErrorCode, Record<string, unknown>> = {
  malformed_request: { reason: 'too_large', maxBytes: 10 },
  unknown_tool: { available: ['read_file', 'search'] },
  invalid_arguments: { path: '/path', schema: { type: 'string' } },
  policy_denied: { rule: 'policies/org.yaml:12 tools.deny' },
  unclassified_tool: { rule: '(built-in) strict' },
  approval_required: { rule: '(built-in) sideEffects.requireApproval' },
  approval_denied: { action: 'decline' },
  call_limit: { limit: 3 },
  sandbox_unavailable: { mode: 'process_namespace' },
  interrupted_side_effect: { journalId: 'c-1' },
  timeout: { timeoutMs: 100 },
  cancelled: { reason: 'shutdown' },
  memory_limit: { memoryMb: 64 },
  output_limit: { bytes: 20, limit: 10 },
  tool_error: { exitCode: 2 },
  tool_crashed: { signal: 'SIGSEGV' },
  invalid_output: { reason: 'duplicate_key' },
  internal: {},
};

/** What each code becomes with the default session settings: a JSON-RPC error code, or an isError result. */
const EXPECTED_SURFACE: Record<ErrorCode, number | 'result'> = {
  malformed_request: -32600,
  unknown_tool: -32602,
  invalid_arguments: 'result',
  policy_denied: 'result',
  unclassified_tool: 'result',
  approval_required: 'result',
  approval_denied: 'result',
  call_limit: 'result',
  sandbox_unavailable: 'result',
  interrupted_side_effect: 'result',
  timeout: 'result',
  cancelled: 'result',
  memory_limit: 'result',
  output_limit: 'result',
  tool_error: 'result',
  tool_crashed: 'result',
  invalid_output: 'result',
  internal: -32603,
};

function render(code: ErrorCode, session: Session = DEFAULTS) {
  const error = new HostError(code, `A ${code} happened.`, DETAILS[code]);
  try {
    return { result: renderOutcome({ kind: 'error', callId: 'c1', error }, session) };
  } catch (thrown) {
    return { thrown };
  }
}

describe('renderOutcome: every error code', () => {
  it('covers the whole ERRORS table', () => {
    expect(Object.keys(EXPECTED_SURFACE).sort()).toEqual(Object.keys(ERRORS).sort());
  });

  it.each(Object.keys(ERRORS) as ErrorCode[])('%s', (code) => {
    const { result, thrown } = render(code);
    const expected = EXPECTED_SURFACE[code];
    if (expected === 'result') {
      expect(thrown).toBeUndefined();
      expect(result).toEqual({
        isError: true,
        content: [{ type: 'text', text: `code: ${code}\nA ${code} happened.` }],
        _meta: { [ERROR_META_KEY]: { code, ...DETAILS[code], recovery: ERRORS[code].recovery } },
      });
      expect(result).not.toHaveProperty('structuredContent');
    } else {
      expect(thrown).toBeInstanceOf(ProtocolError);
      const fault = thrown as ProtocolError;
      expect(fault.code).toBe(expected);
      expect(fault.data).toEqual({ code, ...DETAILS[code], recovery: ERRORS[code].recovery });
    }
  });
});

describe('renderOutcome: internal', () => {
  it.each(['journal_unavailable', 'disk_full'])('with a known cause (%s) is a result the caller can read and retry', (reason) => {
    const error = new HostError('internal', 'The journal cannot be written.', { reason, stage: 'journal' });
    expect(renderOutcome({ kind: 'error', callId: 'c1', error }, DEFAULTS)).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'code: internal\nThe journal cannot be written.' }],
      _meta: { [ERROR_META_KEY]: { code: 'internal', reason, stage: 'journal', recovery: 'retry' } },
    });
  });

  it('with any other reason is a defect of the host: JSON-RPC -32603', () => {
    const error = new HostError('internal', 'An internal error stopped this call.', { reason: 'isolate_error' });
    expect(() => renderOutcome({ kind: 'error', callId: 'c1', error }, DEFAULTS)).toThrow(ProtocolError);
  });
});

describe('renderOutcome: session settings', () => {
  it('unknown_tool as an error result when onUnknownTool is error_result', () => {
    const { result } = render('unknown_tool', { ...DEFAULTS, onUnknownTool: 'error_result' });
    expect(result).toMatchObject({ isError: true, _meta: { [ERROR_META_KEY]: { code: 'unknown_tool', available: ['read_file', 'search'] } } });
  });

  it('unknown_tool after a failed rewrite answers like the default', () => {
    const { thrown } = render('unknown_tool', { ...DEFAULTS, onUnknownTool: { rewrite: 'search' } });
    expect((thrown as ProtocolError).code).toBe(-32602);
  });

  it('invalid_arguments as JSON-RPC -32602 when onInvalidArguments is protocol_error', () => {
    const { thrown } = render('invalid_arguments', { ...DEFAULTS, onInvalidArguments: 'protocol_error' });
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect((thrown as ProtocolError).code).toBe(-32602);
    expect((thrown as ProtocolError).data).toEqual({ code: 'invalid_arguments', path: '/path', schema: { type: 'string' }, recovery: 'repair' });
  });
});

describe('renderOutcome: results', () => {
  it('passes content and structuredContent through', () => {
    const result = renderOutcome({ kind: 'result', callId: 'c1', content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } }, DEFAULTS);
    expect(result).toEqual({ content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } });
  });

  it('an artifact link without structuredContent', () => {
    const link = { type: 'resource_link' as const, uri: 'toolhost://artifacts/ab', name: 'result', mimeType: 'text/plain', size: 99 };
    const result = renderOutcome({ kind: 'result', callId: 'c1', content: [{ type: 'text', text: 'prev' }, link] }, DEFAULTS);
    expect(result).toEqual({ content: [{ type: 'text', text: 'prev' }, link] });
  });

  it('input_required asks the approve question and carries the state', () => {
    const result = renderOutcome({ kind: 'input_required', callId: 'c1', requestState: 'signed.state', message: 'Allow write_file?' }, DEFAULTS);
    expect(result).toMatchObject({
      resultType: 'input_required',
      requestState: 'signed.state',
      inputRequests: {
        approve: {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: 'Allow write_file?',
            requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] },
          },
        },
      },
    });
  });
});
