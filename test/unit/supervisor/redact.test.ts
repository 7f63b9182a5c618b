import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HostError } from '../../../src/errors.js';
import { redactError } from '../../../src/supervisor/redact-error.js';
import { createRedactor, cutChars, MAX_PATH_LOOKUPS_PER_SECOND, redactJson, REDACTED, REDACTED_PATH, REDACTED_STACK } from '../../../src/supervisor/redact.js';

const redact = createRedactor({ secretValues: ['s3cr3t-value-123', 'tok'], visibleRoots: ['/work/ws'], hostRoots: ['/home', '/root'] });

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
    expect(redact('cannot open /etc/passwd.')).toBe(`cannot open ${REDACTED_PATH}.`);
    expect(redact('/home/user/.ssh/id_rsa')).toBe(REDACTED_PATH);
    expect(redact('read /work/ws/src/a.ts ok')).toBe('read /work/ws/src/a.ts ok');
    expect(redact('root /work/ws')).toBe('root /work/ws');
    expect(redact('file:///etc/shadow')).toBe(`file://${REDACTED_PATH}`);
  });

  it('leaves URLs, relative paths and fractions alone', () => {
    const text = 'see https://api.github.com/repos/x/y and ../a/b or a/b, 1/2';
    expect(redact(text)).toBe(text);
  });

  it('collapses Node and Python stack frames', () => {
    const node =
      'Error: boom\n    at f (/opt/tool/x.js:1:2)\n    at /opt/tool/y.js:3:4\n    at async Promise.all (index 0)\n    at new Promise (<anonymous>)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\ndone';
    expect(redact(node)).toBe(`Error: boom\n${REDACTED_STACK}\ndone`);
    const python = 'Traceback (most recent call last):\n  File "/usr/lib/x.py", line 3, in <module>\nValueError: bad';
    expect(redact(python)).toBe(`Traceback (most recent call last):\n${REDACTED_STACK}\nValueError: bad`);
  });
});

describe('text without a slash (the path patterns are skipped)', () => {
  it('still has its secrets and slash-free stack frames redacted', () => {
    expect(redact('tok\n    at new Promise (<anonymous>)\n    at async Promise.all (index 2)\nend')).toBe(`${REDACTED}\n${REDACTED_STACK}\nend`);
    expect(redact('plain words, no paths')).toBe('plain words, no paths');
  });

  it('a secret whose redaction leaves a slash behind is still path-checked', () => {
    const r = createRedactor({ secretValues: ['k3y'], visibleRoots: [], hostRoots: ['/home'] });
    expect(r('k3y/home/x')).toBe(`${REDACTED}${REDACTED_PATH}`);
    expect(r('see /home/x')).toBe(`see ${REDACTED_PATH}`);
  });
});

describe('redactJson', () => {
  it('keeps keys that name Object.prototype members as plain data, in order', () => {
    const value = JSON.parse('{"constructor":"/etc/hosts","toString":1,"z":2,"hasOwnProperty":3}') as Record<string, unknown>;
    const out = redactJson(value, redact) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['constructor', 'toString', 'z', 'hasOwnProperty']);
    expect(out).toEqual({ constructor: REDACTED_PATH, toString: 1, z: 2, hasOwnProperty: 3 });
  });

  it('redacts strings and keys at every depth, keeping other values', () => {
    const value = { 's3cr3t-value-123': [{ path: '/etc/hosts', n: 1, ok: true, nil: null }], text: 'x s3cr3t-value-123' };
    expect(redactJson(value, redact)).toEqual({ [REDACTED]: [{ path: REDACTED_PATH, n: 1, ok: true, nil: null }], text: `x ${REDACTED}` });
  });

  it('keeps a __proto__ key as data', () => {
    const value = JSON.parse('{"__proto__":{"a":"/etc/hosts"}}') as unknown;
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

const SECRET_44 = 'ghp_0123456789abcdefghijABCDEFGHIJ0123456789';

describe('redaction that corrupts results (only real host paths become [path])', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-redact-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('leaves text that only looks like a path alone', () => {
    const r = createRedactor({ secretValues: [], visibleRoots: ['/work/ws'], hostRoots: ['/root', '/home', join(dir, 'state')] });
    for (const text of ['hello from 18780 /ok', 'GET /api/v1/items?limit=3 answered 200', 'the route /users/:id/edit', 'ratio 3/4 and /word']) {
      expect(r(text)).toBe(text);
    }
  });

  it('hides existing host paths, and paths under the host folders it knows even when they do not exist', () => {
    const real = join(dir, 'real-file.txt');
    writeFileSync(real, 'x');
    const state = join(dir, 'state');
    const r = createRedactor({ secretValues: [], visibleRoots: ['/work/ws'], hostRoots: ['/root', '/home', state] });
    expect(r(`wrote ${real} ok`)).toBe(`wrote ${REDACTED_PATH} ok`);
    expect(r('see /etc/hostname')).toBe(`see ${REDACTED_PATH}`);
    expect(r('key at /root/.ssh/not-there-yet')).toBe(`key at ${REDACTED_PATH}`);
    expect(r(`journal ${state}/journal.sqlite-wal`)).toBe(`journal ${REDACTED_PATH}`);
    expect(r('inside /work/ws/not/yet/made')).toBe('inside /work/ws/not/yet/made');
  });

  it('answers from a bounded number of lookups: past it, a path is hidden (fail closed)', () => {
    let lookups = 0;
    const r = createRedactor({ secretValues: [], visibleRoots: [], exists: () => (lookups++, false), now: () => 0 });
    const text = Array.from({ length: 3000 }, (_, i) => `/p${i}`).join(' ');
    const out = r(text);
    // Across texts too (a JSON result is many strings): the same paths again cost nothing.
    expect(r(text)).toBe(out);
    expect(lookups).toBe(MAX_PATH_LOOKUPS_PER_SECOND);
    expect(out.startsWith('/p0 /p1 ')).toBe(true);
    expect(out.endsWith(` ${REDACTED_PATH}`)).toBe(true);
  });
});

describe('redact, then cut', () => {
  const r = createRedactor({ secretValues: [SECRET_44], visibleRoots: [] });

  it('redacts a whole secret before cutting, so the cut never splits it', () => {
    const text = 'x'.repeat(980) + SECRET_44 + ' tail';
    const cut = r.cut(text, 1000);
    expect(cut).toBe('x'.repeat(980) + REDACTED + ' tail');
    const tail = r.cut('boom ' + SECRET_44 + 'y'.repeat(2030), 2048, 'tail');
    expect(tail).toBe('boom ' + REDACTED + 'y'.repeat(2030));
  });

  it('a text already cut by the far side with 8+ characters of a secret at an edge has that piece redacted', () => {
    expect(r.cut('prefix ' + SECRET_44.slice(0, 20), 1000)).toBe(`prefix ${REDACTED}`);
    expect(r.cut(SECRET_44.slice(-8) + ' rest', 1000)).toBe(`${REDACTED} rest`);
    // Seven characters say too little to count as a piece.
    expect(r.cut('prefix ' + SECRET_44.slice(0, 7), 1000)).toBe('prefix ' + SECRET_44.slice(0, 7));
  });

  it('cuts on character boundaries, keeping the head or the tail', () => {
    expect(cutChars('ab😀cd', 3)).toBe('ab');
    expect(cutChars('ab😀cd', 3, 'tail')).toBe('cd');
    expect(cutChars('abc', 5)).toBe('abc');
  });
});

describe('redactError (secrets in error details)', () => {
  const r = createRedactor({ secretValues: [SECRET_44], visibleRoots: [], hostRoots: ['/root'] });

  it('redacts keys, values and pointers of the details, keeping the rule and JSON pointers that look like paths', () => {
    const error = new HostError('invalid_output', `The result has ${SECRET_44}.`, {
      path: `/${SECRET_44}`,
      other: '/home',
      rule: '/etc/toolhost/org.yaml:3 tools.deny',
      [SECRET_44]: { nested: `at /root/.config ${SECRET_44}` },
    });
    const out = redactError(error, r);
    expect(out.code).toBe('invalid_output');
    expect(out.message).toBe(`The result has ${REDACTED}.`);
    expect(out.details).toEqual({
      path: `/${REDACTED}`,
      other: REDACTED_PATH,
      rule: '/etc/toolhost/org.yaml:3 tools.deny',
      [REDACTED]: { nested: `at ${REDACTED_PATH} ${REDACTED}` },
    });
  });
});
