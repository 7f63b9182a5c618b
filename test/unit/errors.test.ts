// The ERRORS table is the source of truth for failure codes: the code table
// of docs/clients.md must name every code, and name no code the host does not
// have, and its recovery column must say what the table says (SPEC 5.2). The
// default messages and documented details (ERROR_TEXT) cover the same codes as
// SPEC section 5's list, and every details key the docs name is documented.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultMessage, ERROR_TEXT, ERRORS, HostError, hostError, isErrorCode, RECOVERIES, recoveryOf, withToolRecovery, type ErrorCode } from '../../src/errors.js';

const clientsPage = readFileSync(fileURLToPath(new URL('../../docs/clients.md', import.meta.url)), 'utf8');
const codeTable = clientsPage.slice(clientsPage.indexOf('| code | reaches the client as |'));
const codeRows = codeTable.slice(0, codeTable.indexOf('\n\n'));

describe('ERRORS', () => {
  it('every code appears in the code table of docs/clients.md', () => {
    for (const code of Object.keys(ERRORS)) expect(codeRows, code).toContain(`\`${code}\``);
  });

  it('the code table of docs/clients.md names only real codes', () => {
    const named = [...codeRows.matchAll(/^\| ([^|]+) \|/gm)].flatMap((row) => [...(row[1] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
    expect(named.length).toBeGreaterThan(0);
    for (const code of named) expect(isErrorCode(code), String(code)).toBe(true);
    expect(new Set(named)).toEqual(new Set(Object.keys(ERRORS)));
  });

  it('a HostError carries its code, details and the table entry', () => {
    const error = new HostError('timeout', 'The tool ran past its deadline.', { timeoutMs: 50 });
    expect(error.code).toBe('timeout');
    expect(error.details).toEqual({ timeoutMs: 50 });
    expect(error.info).toEqual({ kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn', recovery: 'retry' });
    expect(error.recovery).toBe('retry');
    expect(isErrorCode('not_a_code')).toBe(false);
  });
});

/** SPEC 5.2, word for word: retry (transient), repair (the caller can fix the call), stop (every other code). */
const SPEC_RECOVERY: Record<ErrorCode, 'retry' | 'repair' | 'stop'> = {
  tool_crashed: 'retry',
  sandbox_unavailable: 'retry',
  timeout: 'retry',
  internal: 'retry',
  invalid_arguments: 'repair',
  unknown_tool: 'repair',
  tool_error: 'repair',
  invalid_output: 'repair',
  output_limit: 'repair',
  memory_limit: 'repair',
  malformed_request: 'stop',
  policy_denied: 'stop',
  unclassified_tool: 'stop',
  approval_required: 'stop',
  approval_denied: 'stop',
  call_limit: 'stop',
  cancelled: 'stop',
  interrupted_side_effect: 'stop',
};

describe('recovery', () => {
  it('every code carries the recovery SPEC 5.2 gives it', () => {
    expect(Object.keys(SPEC_RECOVERY).sort()).toEqual(Object.keys(ERRORS).sort());
    for (const [code, recovery] of Object.entries(SPEC_RECOVERY)) expect([code, ERRORS[code as ErrorCode].recovery]).toEqual([code, recovery]);
  });

  it('the code table of docs/clients.md has a recovery column that matches the table, row by row', () => {
    const header = codeRows.split('\n')[0] ?? '';
    expect(header.split('|').map((cell) => cell.trim())).toContain('recovery');
    const rows = [...codeRows.matchAll(/^\| `([a-z_]+)` \|.*\| `(retry|repair|stop)`[^|]*\|$/gm)].map((row) => [row[1], row[2]]);
    expect(new Set(rows.map(([code]) => code))).toEqual(new Set(Object.keys(ERRORS)));
    for (const [code, recovery] of rows) expect([code, recovery]).toEqual([code, ERRORS[code as ErrorCode].recovery]);
    for (const recovery of RECOVERIES) expect(codeRows).toContain(`\`${recovery}\``);
  });

  it('a timeout or a cancel of a non-idempotent tool is stop: its effect is unknown', () => {
    expect(recoveryOf('timeout', { idempotent: true })).toBe('retry');
    expect(recoveryOf('timeout', { idempotent: false })).toBe('stop');
    expect(recoveryOf('cancelled', { idempotent: true })).toBe('stop');
    expect(recoveryOf('cancelled', { idempotent: false })).toBe('stop');
    expect(recoveryOf('tool_error', { idempotent: false })).toBe('repair');
    const timeout = new HostError('timeout', 'Too slow.', { timeoutMs: 5 });
    const stopped = withToolRecovery(timeout, { idempotent: false });
    expect([stopped.code, stopped.details, stopped.recovery]).toEqual(['timeout', { timeoutMs: 5 }, 'stop']);
    expect(withToolRecovery(timeout, { idempotent: true })).toBe(timeout);
  });
});

/** SPEC section 5, word for word: the codes every failure carries (the SPEC is not in the repository). */
const SPEC_CODES = `unknown_tool, invalid_arguments, malformed_request, policy_denied,
unclassified_tool, approval_required, approval_denied, call_limit, timeout,
cancelled, memory_limit, output_limit, tool_error, tool_crashed,
invalid_output, sandbox_unavailable, interrupted_side_effect, internal`
  .split(/,\s*/)
  .map((code) => code.trim());

describe('ERROR_TEXT: the default message and documented details of each code', () => {
  it("covers SPEC section 5's codes, the ERRORS table's and the code table of docs/clients.md: one list", () => {
    const documented = [...codeRows.matchAll(/^\| `([a-z_]+)` \|/gm)].map((row) => row[1]);
    expect(Object.keys(ERROR_TEXT).sort()).toEqual([...SPEC_CODES].sort());
    expect(Object.keys(ERRORS).sort()).toEqual([...SPEC_CODES].sort());
    expect(documented.sort()).toEqual([...SPEC_CODES].sort());
  });

  it('gives each code one sentence and a meaning for each details key', () => {
    for (const [code, text] of Object.entries(ERROR_TEXT)) {
      expect(text.message, code).toMatch(/^[A-Z].*\.$/);
      for (const [key, meaning] of Object.entries(text.details)) expect(meaning.length, `${code}.${key}`).toBeGreaterThan(3);
    }
  });

  it('documents every details key the code table of docs/clients.md names', () => {
    let checked = 0;
    for (const [, code, rest] of codeRows.matchAll(/^\| `([a-z_]+)` \|(.*)$/gm)) {
      const named = [...(rest ?? '').matchAll(/details\.(\w+)/g)].map((match) => match[1]!);
      for (const braces of (rest ?? '').matchAll(/`details` `\{([^}]*)\}`/g)) named.push(...(braces[1] ?? '').split(',').map((key) => key.trim().replace(/\?$/, '')));
      const keys = Object.keys(ERROR_TEXT[code as ErrorCode].details);
      for (const key of named) expect(keys, `${code}: details.${key}`).toContain(key);
      checked += named.length;
    }
    expect(checked).toBeGreaterThanOrEqual(8);
  });

  it("hostError says the table's sentence, or the one for its reason", () => {
    expect(hostError('cancelled').message).toBe('The call was cancelled.');
    const shutdown = hostError('cancelled', { reason: 'shutdown' });
    expect([shutdown.code, shutdown.message, shutdown.details]).toEqual(['cancelled', 'The host is shutting down.', { reason: 'shutdown' }]);
    expect(defaultMessage('cancelled', 'runner_closed')).toBe(shutdown.message);
    expect(defaultMessage('timeout', 'no_such_reason')).toBe(ERROR_TEXT.timeout.message);
    expect(hostError('internal', { reason: 'disk_full' }).message).toMatch(/disk is full/);
  });
});
