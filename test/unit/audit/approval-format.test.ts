// What an operator reads in `toolhost approvals` (SPEC section 7.2): a header
// row, the tool, class, principal, age and expiry; then the arguments one
// line each, the projected effect, who decided and when; everything a caller
// controls escaped and bounded.
import { describe, expect, it } from 'vitest';
import { argumentLines, formatApprovalsText, formatExpiry, formatSpan, toApprovalJson } from '../../../src/audit/approval-format.js';
import type { ApprovalRecord } from '../../../src/audit/approval-record.js';

const NOW = Date.parse('2026-11-29T13:10:00Z');
const PENDING: ApprovalRecord = {
  id: '3f0c2a1e-5b7d-4c1e-9d0a-2b3c4d5e6f70',
  tool: 'write_file',
  argsHash: 'ab'.repeat(32),
  sideEffect: 'local_mutation',
  rule: 'policies/org.yaml:4 sideEffects.requireApproval',
  principal: 'ci-bot',
  sessionId: 's-1',
  callId: 'c-1',
  createdAt: NOW - 3 * 60_000,
  expiresAt: NOW + 57 * 60_000,
  arguments: { path: 'notes.md', text: 'line one\nAPPROVED\u202e' },
  effects: [
    {
      argument: 'path',
      path: '/ws/notes.md',
      where: 'writable_root',
      summary: 'replaces a 9-byte text file (+1 -1 lines)',
      diff: '--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n-old\x1b[2J\n+new',
    },
  ],
  hostId: 'h-1',
  state: 'pending',
  decidedBy: null,
  decidedAt: null,
  note: null,
  decidedVia: null,
  spentBy: null,
  spentAt: null,
};
const DECIDED: ApprovalRecord = {
  ...PENDING,
  id: 'decided-1',
  state: 'spent',
  decidedBy: 'alice',
  decidedAt: NOW - 60_000,
  decidedVia: 'console (principal ops)',
  note: 'looks right',
  spentBy: 'c-2',
  spentAt: NOW - 30_000,
};

describe('formatApprovalsText', () => {
  it('a header row, then each approval with its arguments, effect and the command that decides it', () => {
    const text = formatApprovalsText([PENDING], { now: NOW, all: false, journalFlags: '--state /srv/state' });
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATE\s+TOOL\s+CLASS\s+PRINCIPAL\s+AGE\s+EXPIRES$/);
    expect(lines[1]).toMatch(/^3f0c2a1e-5b7d-4c1e-9d0a-2b3c4d5e6f70\s+pending\s+write_file\s+local_mutation\s+ci-bot\s+3m\s+in 57m$/);
    expect(text).toContain('  arguments  path: "notes.md"\n             text: "line one\\nAPPROVED\\u202e"\n');
    expect(text).toContain('  writes     /ws/notes.md: replaces a 9-byte text file (+1 -1 lines)\n             --- a/notes.md\n');
    expect(text).toContain('             -old\\x1b[2J\n             +new\n');
    expect(text).toContain('  decide     toolhost approve 3f0c2a1e-5b7d-4c1e-9d0a-2b3c4d5e6f70 --state /srv/state --as NAME   (or --deny)');
    expect(text).toContain('  asked by   ci-bot (session s-1, host h-1, call c-1)');
    // Only the newlines between lines: nothing a caller wrote reaches the terminal raw.
    expect(text.replace(/\n/g, '')).not.toMatch(/[\p{Cc}\p{Cf}]/u);
  });

  it('with --all: who decided and when, with the note and where', () => {
    const text = formatApprovalsText([DECIDED, PENDING], { now: NOW, all: true, journalFlags: '' });
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/\s+DECIDED$/);
    expect(lines[1]).toMatch(/^decided-1\s+spent\s+.*\s+-\s+approved by alice$/);
    expect(text).toContain('  decided    approved by alice at 2026-11-29T13:09:00.000Z (console (principal ops)): "looks right"');
    expect(text).toContain('  ran        call c-2 at 2026-11-29T13:09:30.000Z');
    expect(formatApprovalsText([], { now: NOW, all: false, journalFlags: '' })).toBe('no pending approvals\n');
  });

  it('argument lines are bounded; arguments not kept say so', () => {
    expect(argumentLines({ big: 'x'.repeat(5000) })[0]?.length).toBeLessThanOrEqual(200);
    expect(argumentLines(null)).toEqual(['(not kept: approvals journaled before arguments were)']);
    expect(argumentLines({})).toEqual(['(none)']);
  });

  it('spans and expiry in whole units', () => {
    expect([formatSpan(45_000), formatSpan(3 * 60_000), formatSpan(125 * 60_000), formatSpan(26 * 3_600_000), formatSpan(48 * 3_600_000)]).toEqual([
      '45s',
      '3m',
      '2h 5m',
      '1d 2h',
      '2d',
    ]);
    expect([formatExpiry(NOW + 60_000, NOW), formatExpiry(NOW - 120_000, NOW)]).toEqual(['in 1m', 'expired 2m ago']);
  });

  it('--json keeps every field, with the arguments and effects as data', () => {
    expect(toApprovalJson(DECIDED)).toMatchObject({
      id: 'decided-1',
      arguments: PENDING.arguments,
      effects: PENDING.effects,
      hostId: 'h-1',
      note: 'looks right',
      decidedVia: 'console (principal ops)',
      decidedAt: '2026-11-29T13:09:00.000Z',
    });
  });
});
