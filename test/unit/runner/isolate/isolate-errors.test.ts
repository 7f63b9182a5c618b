// Pins the isolated-vm messages the isolate runner maps to codes: if an
// isolated-vm upgrade changes one, these tests fail instead of the mapping
// silently falling through to `internal`.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyIsolateError, isIvmFailure, isToolMemoryError, IVM_MESSAGES, type IsolateFacts } from '../../../../src/runner/isolate/isolate-errors.js';

const healthy: IsolateFacts = { isolateDisposed: false, memoryMb: 64, timeoutMs: 300 };
const disposedByIvm: IsolateFacts = { isolateDisposed: true, memoryMb: 64, timeoutMs: 300 };

describe('classifyIsolateError', () => {
  const cases: Array<[string, string, IsolateFacts, string, Record<string, unknown>]> = [
    ['eval timeout', 'Script execution timed out.', healthy, 'timeout', { timeoutMs: 300 }],
    ['memory limit (sync)', 'Isolate was disposed during execution due to memory limit', disposedByIvm, 'memory_limit', { memoryMb: 64 }],
    ['array buffer allocation', 'Array buffer allocation failed', healthy, 'memory_limit', { memoryMb: 64 }],
    ['memory limit after an await', 'Promise was abandoned', disposedByIvm, 'memory_limit', { memoryMb: 64 }],
    ['disposed, not by the host', 'Isolate was disposed during execution', disposedByIvm, 'memory_limit', { memoryMb: 64 }],
    [
      'disposed by the host after a stuck call',
      'Isolate was disposed during execution',
      { isolateDisposed: true, hostDisposeReason: 'wedged', memoryMb: 64, timeoutMs: 300 },
      'tool_crashed',
      { reason: 'isolate_reset' },
    ],
    [
      'abandoned because the host retired the isolate',
      'Promise was abandoned',
      { isolateDisposed: true, hostDisposeReason: 'retired', memoryMb: 64, timeoutMs: 300 },
      'tool_crashed',
      { reason: 'isolate_reset' },
    ],
    [
      'disposed because the runner closed',
      'Isolate is disposed',
      { isolateDisposed: true, hostDisposeReason: 'closed', memoryMb: 64, timeoutMs: 300 },
      'cancelled',
      { reason: 'runner_closed' },
    ],
    ['an unknown isolated-vm error', 'A non-transferable value was passed', healthy, 'internal', { reason: 'isolate_error' }],
    ['abandoned on a live isolate', 'Promise was abandoned', healthy, 'internal', { reason: 'isolate_error' }],
  ];

  it.each(cases)('%s → %s', (_name, message, facts, code, details) => {
    const classified = classifyIsolateError(new Error(message), facts);
    expect(classified.code).toBe(code);
    expect(classified.details).toEqual(details);
    expect(classified.message).not.toContain(message);
  });

  it('treats a non-Error throwable on a live isolate as internal', () => {
    expect(classifyIsolateError({ weird: true }, healthy).code).toBe('internal');
    expect(classifyIsolateError(undefined, healthy).code).toBe('internal');
  });
});

describe('isIvmFailure and isToolMemoryError', () => {
  it('recognizes only isolated-vm messages', () => {
    for (const message of Object.values(IVM_MESSAGES)) expect(isIvmFailure(new Error(message))).toBe(true);
    expect(isIvmFailure(new Error('the tool said no'))).toBe(false);
  });

  it('treats an uncaught RangeError "Array buffer allocation failed" as memory', () => {
    expect(isToolMemoryError('RangeError', 'Array buffer allocation failed')).toBe(true);
    expect(isToolMemoryError('Error', 'Array buffer allocation failed')).toBe(false);
    expect(isToolMemoryError('RangeError', 'Invalid array length')).toBe(false);
  });
});

describe('the pinned messages exist in the installed isolated-vm', () => {
  const require = createRequire(import.meta.url);
  const root = path.dirname(require.resolve('isolated-vm/package.json'));
  const binary = readFileSync(path.join(root, 'out', 'isolated_vm.node')).toString('latin1');

  it('uses isolated-vm 5.0.x', () => {
    const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    expect(version).toMatch(/^5\.0\./);
  });

  it.each(Object.entries(IVM_MESSAGES))('%s: %s is in the native module', (_key, message) => {
    expect(binary.includes(message)).toBe(true);
  });
});
