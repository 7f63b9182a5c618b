// Shared builders for journal tests: a temp state folder and call records.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallFinish, CallStart } from '../../src/audit/journal.js';
import { hashArgs } from '../../src/audit/hash.js';

/** A fresh parent folder; the state dir inside it does not exist yet. */
export function makeTempParent(): { parent: string; stateDir: string; remove(): void } {
  const parent = mkdtempSync(join(tmpdir(), 'toolhost-audit-'));
  return { parent, stateDir: join(parent, 'state'), remove: () => rmSync(parent, { recursive: true, force: true }) };
}

let counter = 0;

export function callStart(overrides: Partial<CallStart> = {}): CallStart {
  counter += 1;
  return {
    id: `call-${counter}-${Math.random().toString(16).slice(2)}`,
    sessionId: 'session-1',
    principal: null,
    tool: 'fs.write',
    argsHash: hashArgs({ path: 'a.txt', n: counter }),
    sideEffect: 'write',
    decision: 'allow',
    rule: 'policies/org.yaml:3 sideEffects.allow',
    approval: 'not_needed',
    idempotencyKey: null,
    startedAt: Date.now(),
    policyDigest: null,
    definitionDigest: null,
    approvedBy: null,
    approverName: null,
    arguments: null,
    ...overrides,
  };
}

export function callFinish(overrides: Partial<CallFinish> = {}): CallFinish {
  return { status: 'completed', errorCode: null, resultHash: 'b'.repeat(64), resultBytes: 12, replay: null, endedAt: Date.now(), ...overrides };
}
