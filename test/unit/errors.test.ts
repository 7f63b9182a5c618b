// The ERRORS table is the source of truth for failure codes: the README's
// code table must name every code, and name no code the host does not have.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERRORS, HostError, isErrorCode } from '../../src/errors.js';

const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const codeTable = readme.slice(readme.indexOf('| code | reaches the client as |'));
const codeRows = codeTable.slice(0, codeTable.indexOf('\n\n'));

describe('ERRORS', () => {
  it('every code appears in the README code table', () => {
    for (const code of Object.keys(ERRORS)) expect(codeRows, code).toContain(`\`${code}\``);
  });

  it('the README code table names only real codes', () => {
    const named = [...codeRows.matchAll(/^\| ([^|]+) \|/gm)].flatMap((row) => [...(row[1] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
    expect(named.length).toBeGreaterThan(0);
    for (const code of named) expect(isErrorCode(code), String(code)).toBe(true);
    expect(new Set(named)).toEqual(new Set(Object.keys(ERRORS)));
  });

  it('a HostError carries its code, details and the table entry', () => {
    const error = new HostError('timeout', 'The tool ran past its deadline.', { timeoutMs: 50 });
    expect(error.code).toBe('timeout');
    expect(error.details).toEqual({ timeoutMs: 50 });
    expect(error.info).toEqual({ kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn' });
    expect(isErrorCode('not_a_code')).toBe(false);
  });
});
