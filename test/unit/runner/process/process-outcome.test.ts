import { describe, expect, it } from 'vitest';
import { asTermination, classifyFailedExit } from '../../../../src/runner/process/process-outcome.js';

describe('classifyFailedExit', () => {
  it.each([
    [{ kind: 'exited', exitCode: 3, signal: null }, 'tool_error', { exitCode: 3, stderrTail: 'tail' }],
    [{ kind: 'exited', exitCode: 1, signal: null }, 'tool_error', { exitCode: 1, stderrTail: 'tail' }],
    // bubblewrap reports a tool killed by signal N as exit 128 + N.
    [{ kind: 'exited', exitCode: 139, signal: null }, 'tool_crashed', { exitCode: 139, signal: 'SIGSEGV', stderrTail: 'tail' }],
    [{ kind: 'exited', exitCode: 134, signal: null }, 'tool_crashed', { exitCode: 134, signal: 'SIGABRT', stderrTail: 'tail' }],
    // 128 + SIGHUP is not a crash signal: the tool chose that code.
    [{ kind: 'exited', exitCode: 129, signal: null }, 'tool_error', { exitCode: 129, stderrTail: 'tail' }],
    [{ kind: 'exited', exitCode: null, signal: 'SIGKILL' }, 'tool_crashed', { exitCode: null, signal: 'SIGKILL', stderrTail: 'tail' }],
    [{ kind: 'spawn_failed', errorCode: 'ENOENT' }, 'sandbox_unavailable', { reason: 'spawn_failed', errno: 'ENOENT' }],
  ] as const)('%j → %s', (exit, code, details) => {
    const outcome = classifyFailedExit(exit, 'tail', performance.now());
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect({ code: outcome.code, details: outcome.details }).toEqual({ code, details });
  });
});

describe('asTermination', () => {
  it.each([
    ['timeout', 'timeout'],
    ['output_limit', 'output_limit'],
    ['invalid_output', 'invalid_output'],
    ['cancelled', 'cancelled'],
    // A stop for any other reason (the host ending the call) stops the process as a cancel.
    ['internal', 'cancelled'],
  ] as const)('%s → %s', (reason, expected) => {
    expect(asTermination(reason)).toBe(expected);
  });
});
