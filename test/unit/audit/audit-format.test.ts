import { describe, expect, it } from 'vitest';
import { formatAuditTable, toAuditJson } from '../../../src/audit/audit-format.js';
import type { CallRecord } from '../../../src/audit/journal.js';

const record: CallRecord = {
  id: 'call-1',
  hostId: 'host-1',
  sessionId: 'session-1',
  principal: 'ci-bot',
  tool: 'fs.write',
  argsHash: 'a'.repeat(64),
  sideEffect: 'write',
  decision: 'ask',
  rule: 'policies/org.yaml:7 sideEffects.ask',
  approval: 'approved',
  idempotencyKey: 'k1',
  status: 'failed',
  errorCode: 'timeout',
  resultHash: null,
  resultBytes: null,
  startedAt: Date.parse('2026-11-29T10:00:00.000Z'),
  endedAt: Date.parse('2026-11-29T10:00:01.250Z'),
  reconciliation: null,
  reconciledAt: null,
  egressAdmitted: 2,
  egressRefused: 1,
  policyDigest: 'c'.repeat(64),
  definitionDigest: 'd'.repeat(64),
  approvedBy: 'operator',
  approverName: 'alice',
  arguments: '{"path":"a.txt"}',
};

describe('toAuditJson', () => {
  it('gives ISO times and the duration', () => {
    expect(toAuditJson(record)).toEqual({
      id: 'call-1',
      sessionId: 'session-1',
      principal: 'ci-bot',
      hostId: 'host-1',
      tool: 'fs.write',
      argsHash: 'a'.repeat(64),
      sideEffect: 'write',
      decision: 'ask',
      rule: 'policies/org.yaml:7 sideEffects.ask',
      approval: 'approved',
      idempotencyKey: 'k1',
      status: 'failed',
      errorCode: 'timeout',
      resultHash: null,
      resultBytes: null,
      startedAt: '2026-11-29T10:00:00.000Z',
      endedAt: '2026-11-29T10:00:01.250Z',
      durationMs: 1250,
      reconciliation: null,
      reconciledAt: null,
      egress: { admitted: 2, refused: 1 },
      policyDigest: 'c'.repeat(64),
      definitionDigest: 'd'.repeat(64),
      approvedBy: 'operator',
      approverName: 'alice',
      arguments: '{"path":"a.txt"}',
    });
  });

  it('gives egress null for a record written before the counts existed', () => {
    expect(toAuditJson({ ...record, egressAdmitted: null, egressRefused: null }).egress).toBeNull();
  });

  it('leaves the end and duration null while a call is started', () => {
    expect(toAuditJson({ ...record, status: 'started', endedAt: null })).toMatchObject({ endedAt: null, durationMs: null });
  });
});

describe('formatAuditTable', () => {
  it('aligns a header and one line per call', () => {
    const lines = formatAuditTable([record, { ...record, id: 'call-2', status: 'interrupted', reconciliation: 'rerun', endedAt: null }])
      .split('\n')
      .filter((line) => !/^[-\s]+$/.test(line));
    expect(lines[0]?.split(/\s{2,}/)).toEqual(['STARTED', 'ID', 'PRINCIPAL', 'TOOL', 'STATUS', 'CODE', 'DECISION', 'RULE', 'MS']);
    expect(lines[1]?.split(/\s{2,}/)).toEqual([
      '2026-11-29T10:00:00Z',
      'call-1',
      'ci-bot',
      'fs.write',
      'failed',
      'timeout',
      'ask (approved by alice)',
      'policies/org.yaml:7 sideEffects.ask',
      '1250',
    ]);
    expect(lines[2]).toContain('interrupted (rerun)');
    expect(lines[1]?.indexOf('fs.write')).toBe(lines[0]?.indexOf('TOOL'));
  });

  it('escapes control characters so a tool name cannot drive the terminal', () => {
    const table = formatAuditTable([{ ...record, tool: 'evil\u001b[2J\nname' }]);
    expect(table).not.toContain('\u001b');
    expect(table.split('\n')[2]).toContain('evil?[2J?name');
  });

  it('wraps a long rule on a narrow terminal instead of cutting it, and never cuts the id', () => {
    const rule = 'policies/org/acme-baseline.yaml:124 sideEffects.requireApproval';
    const lines = formatAuditTable([{ ...record, rule }], { tty: true, width: 120 }).split('\n');
    const ruleStart = lines[0]!.indexOf('RULE');
    const ruleText = lines
      .slice(2)
      .map((line) =>
        line
          .slice(ruleStart)
          .replace(/\s+\d+$/, '')
          .trim(),
      )
      .join(' ');
    expect(ruleText.replace(/\s+/g, '')).toBe(rule.replace(/\s+/g, ''));
    expect(lines.slice(2).some((line) => line.slice(ruleStart).startsWith('policies/org/'))).toBe(true);
    expect(lines[2]).toContain(record.id);
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(120);
  });

  it('says so when nothing matches', () => {
    expect(formatAuditTable([])).toBe('(no calls match)\n');
  });
});
