// How fuzz names an outcome: a model_error (the tool ran and refused, SPEC 5.1)
// is told apart from other tool errors, and both count as reaching the tool.
import { describe, expect, it } from 'vitest';
import { describeOutcome } from '../../../src/cli/fuzz.js';
import { HostError } from '../../../src/errors.js';

describe('describeOutcome', () => {
  it('names results, model errors and other failures', () => {
    expect(describeOutcome({ kind: 'result', callId: 'c', content: [] })).toBe('result');
    const modelError = new HostError('tool_error', 'declined', { modelError: true }, { content: [{ type: 'text', text: 'no such file' }] });
    expect(describeOutcome({ kind: 'error', callId: 'c', error: modelError })).toBe('model_error');
    expect(describeOutcome({ kind: 'error', callId: 'c', error: new HostError('tool_error', 'threw', {}) })).toBe('tool_error');
    expect(describeOutcome({ kind: 'error', callId: 'c', error: new HostError('call_limit', 'over', { reason: 'terminal' }) })).toBe('call_limit');
  });
});
