import { describe, expect, it } from 'vitest';
import { createRedactor, redactJson, REDACTED, REDACTED_PATH, REDACTED_STACK } from '../../../src/supervisor/redact.js';

const redact = createRedactor({ secretValues: ['s3cr3t-value-123', 'tok'], visibleRoots: ['/work/ws'] });

describe('createRedactor', () => {
  it('replaces every secret value, wherever it appears', () => {
    expect(redact('key=s3cr3t-value-123; again s3cr3t-value-123')).toBe(`key=${REDACTED}; again ${REDACTED}`);
    expect(redact('a tok b')).toBe(`a ${REDACTED} b`);
  });

  it('replaces the longest secret first', () => {
    const r = createRedactor({ secretValues: ['abc', 'abcdef'], visibleRoots: [] });
    expect(r('xabcdefx')).toBe(`x${REDACTED}x`);
  });

  it('hides absolute paths outside the workspace and keeps those inside', () => {
    expect(redact('cannot open /etc/passwd.')).toBe(`cannot open ${REDACTED_PATH}`);
    expect(redact('/home/user/.ssh/id_rsa')).toBe(REDACTED_PATH);
    expect(redact('read /work/ws/src/a.ts ok')).toBe('read /work/ws/src/a.ts ok');
    expect(redact('root /work/ws')).toBe('root /work/ws');
    expect(redact('sibling /work/wsx/a')).toBe(`sibling ${REDACTED_PATH}`);
    expect(redact('file:///etc/shadow')).toBe(`file://${REDACTED_PATH}`);
  });

  it('leaves URLs, relative paths and fractions alone', () => {
    const text = 'see https://api.github.com/repos/x/y and ../a/b or a/b, 1/2';
    expect(redact(text)).toBe(text);
  });

  it('collapses Node and Python stack frames', () => {
    const node = 'Error: boom\n    at f (/opt/tool/x.js:1:2)\n    at /opt/tool/y.js:3:4\n    at async Promise.all (index 0)\n    at new Promise (<anonymous>)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\ndone';
    expect(redact(node)).toBe(`Error: boom\n${REDACTED_STACK}\ndone`);
    const python = 'Traceback (most recent call last):\n  File "/usr/lib/x.py", line 3, in <module>\nValueError: bad';
    expect(redact(python)).toBe(`Traceback (most recent call last):\n${REDACTED_STACK}\nValueError: bad`);
  });
});

describe('redactJson', () => {
  it('redacts strings and keys at every depth, keeping other values', () => {
    const value = { 's3cr3t-value-123': [{ path: '/etc/hosts', n: 1, ok: true, nil: null }], text: 'x s3cr3t-value-123' };
    expect(redactJson(value, redact)).toEqual({ [REDACTED]: [{ path: REDACTED_PATH, n: 1, ok: true, nil: null }], text: `x ${REDACTED}` });
  });

  it('keeps a __proto__ key as data', () => {
    const value = JSON.parse('{"__proto__":{"a":"/etc/x"}}') as unknown;
    const out = redactJson(value, redact) as object;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ a: REDACTED_PATH });
  });
});

describe('hostile input', () => {
  it('handles long frame-like lines in linear time', () => {
    const lines = Array.from({ length: 2000 }, () => `at ${'1:'.repeat(2000)}x`).join('\n');
    const digits = `at ${'9'.repeat(500_000)}:`;
    const slashes = '/'.repeat(500_000);
    // A quadratic scan of these would not finish within the test timeout.
    for (const text of [lines, digits, slashes]) expect(redact(text)).toBe(text);
  });
});
