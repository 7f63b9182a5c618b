// The supervisor alone, with a fake runner and a recording journal (no real
// host, no sandbox, no SQLite): the stages run in the order of SPEC section 5,
// the first termination reason wins over what the runner reports later, and
// exactly one journal write closes every call from `finally`, whatever threw.
import { describe, expect, it, vi } from 'vitest';
import type { CallFinish, CallStart } from '../../../src/audit/call-record.js';
import { createSilentLogger } from '../../../src/log.js';
import type { Runner } from '../../../src/runner/types.js';
import type { RunOptions, RunOutcome } from '../../../src/runner/run-types.js';
import { CallControl } from '../../../src/supervisor/call-control.js';
import type { CallJournal } from '../../../src/supervisor/stages/journal.js';
import { createRedactor } from '../../../src/supervisor/redact.js';
import { RequestStateSigner } from '../../../src/supervisor/request-state.js';
import { RunnerCache } from '../../../src/supervisor/runner-cache.js';
import { SessionCounters } from '../../../src/supervisor/session-counters.js';
import { STAGES } from '../../../src/supervisor/stages.js';
import { createSupervisor } from '../../../src/supervisor/supervisor.js';
import type { CallOutcome, CallRequest, Supervisor } from '../../../src/supervisor/types.js';
import { manifestYaml, policyYaml, useTestWorkspaces } from '../../helpers/policy-workspace.js';
import { countAbortControllers } from '../../helpers/abort-count.js';

const workspaces = useTestWorkspaces();

type RunBehaviour = (options: RunOptions, trace: string[]) => Promise<RunOutcome>;

interface Harness {
  readonly supervisor: Supervisor;
  readonly trace: string[];
  /** The stages the supervisor entered, in order (CallContext.enter through the request's CallTrace). */
  readonly stages: string[];
  readonly finishes: CallFinish[];
  readonly starts: CallStart[];
  /** What each recordSoon was told: whether its call was the only one in flight. */
  readonly alone: boolean[];
  call(name: string, args?: unknown, extra?: Partial<CallRequest>): Promise<CallOutcome>;
}

const ok = (json: string): RunOutcome => ({ ok: true, output: { type: 'json', json }, durationMs: 1 });

/** A supervisor over real manifests and policy, with `behaviour` as every tool's runner. */
function harness(behaviour: RunBehaviour, journalFaults: { finish?: Error; recordSoon?: Error } = {}): Harness {
  const workspace = workspaces.make({
    manifests: {
      'reader.yaml': manifestYaml('reader'),
      'writer.yaml': manifestYaml('writer', { sideEffect: 'local_mutation' }),
      'quick.yaml': manifestYaml('quick', { timeoutMs: 50 }),
      'denied.yaml': manifestYaml('denied'),
    },
    repository: { 'r.yaml': policyYaml('r', 'tools:\n  deny: [denied]') },
  });
  const config = workspace.load();
  const trace: string[] = [];
  const stages: string[] = [];
  const starts: CallStart[] = [];
  const finishes: CallFinish[] = [];
  const alone: boolean[] = [];
  const journal: CallJournal = {
    begin: async (start) => {
      trace.push('journal.begin');
      starts.push(start);
      return { kind: 'begun' };
    },
    finish: async (_id, finish) => {
      trace.push('journal.finish');
      finishes.push(finish);
      if (journalFaults.finish) throw journalFaults.finish;
    },
    record: async (start, finish) => {
      trace.push('journal.record');
      starts.push(start);
      finishes.push(finish);
    },
    // As the stores do: committed at the end of the event-loop turn (a group commit), or failed.
    recordSoon: (start, finish, onlyCall = false) => {
      trace.push('journal.recordSoon');
      alone.push(onlyCall);
      starts.push(start);
      finishes.push(finish);
      return new Promise<void>((resolve, reject) =>
        setImmediate(() => {
          trace.push(journalFaults.recordSoon ? 'journal.failed' : 'journal.committed');
          if (journalFaults.recordSoon) reject(journalFaults.recordSoon);
          else resolve();
        }),
      );
    },
    findByIdempotencyKey: async () => undefined,
    // No tool here is approved by an operator.
    createApproval: async () => {
      throw new Error('no operator approvals in these tests');
    },
    spendApproval: async () => {
      throw new Error('no operator approvals in these tests');
    },
    // No tool here has a rate window.
    takeRate: async () => {
      throw new Error('no rate windows in these tests');
    },
  };
  const runner: Runner = {
    mode: 'isolate',
    run: (_job, options) => {
      trace.push('run');
      return behaviour(options, trace);
    },
    close: async () => {},
  };
  const supervisor = createSupervisor({
    config,
    journal,
    artifacts: { put: () => ({ sha256: 'x', uri: 'toolhost://artifacts/x', size: 0 }), get: () => undefined },
    runners: new RunnerCache(() => runner),
    signer: new RequestStateSigner({ ttlMs: 60_000 }),
    redact: createRedactor({ secretValues: [], visibleRoots: [workspace.dir] }),
    session: new SessionCounters('test-session'),
    logger: createSilentLogger(),
    approvalTimeoutMs: 1_000,
  });
  return {
    supervisor,
    trace,
    stages,
    starts,
    finishes,
    alone,
    call: (name, args = {}, extra = {}) =>
      supervisor.callTool({
        name,
        args,
        meta: {},
        control: new CallControl(),
        approval: { kind: 'none' },
        onEvent: (event) => trace.push(event.type),
        trace: { enterStage: (stage) => stages.push(stage) },
        ...extra,
      }),
  };
}

function codeOf(outcome: CallOutcome): string | undefined {
  return outcome.kind === 'error' ? outcome.error.code : undefined;
}

describe('stage order', () => {
  it('a mutating call: write-ahead journal, tool.started, run, then the one closing write, then tool.completed', async () => {
    const h = harness(async () => ok('{"done":true}'));
    const outcome = await h.call('writer');
    expect(outcome.kind).toBe('result');
    expect(h.trace).toEqual(['journal.begin', 'tool.started', 'run', 'journal.finish', 'tool.completed']);
    expect(h.starts[0]).toMatchObject({ tool: 'writer', decision: 'allow', sideEffect: 'local_mutation' });
    expect(h.finishes).toMatchObject([{ status: 'completed', errorCode: null }]);
  });

  it('a mutating call goes through every stage of STAGES, in its order; finish runs from finally', async () => {
    const h = harness(async () => ok('{"done":true}'));
    await h.call('writer');
    expect(h.stages).toEqual(STAGES.filter((stage) => stage !== 'finish'));
  });

  it('a refusal stops at the stage that decided it, and no later stage runs', async () => {
    const h = harness(async () => ok('1'));
    await h.call('denied');
    expect(h.stages).toEqual(['session-limits', 'lookup', 'policy']);
    await h.call('reader', { unexpected: true });
    expect(h.stages.slice(3)).toEqual(['session-limits', 'lookup', 'policy', 'validate-args']);
  });

  it('a read-only call has no write-ahead record: one record at the end, group committed before it answers', async () => {
    const h = harness(async () => ok('1'));
    const outcome = await h.call('reader').then((answer) => (h.trace.push('answer'), answer));
    expect(outcome.kind).toBe('result');
    expect(h.trace).toEqual(['tool.started', 'run', 'journal.recordSoon', 'journal.committed', 'tool.completed', 'answer']);
  });

  it('the record of a read-only call alone in flight is committed at once; with another call in flight it waits for the group commit', async () => {
    const h = harness(async () => ok('1'));
    await h.call('reader');
    expect(h.alone).toEqual([true]);
    // The first call runs until it is released; the second is in flight meanwhile (running or waiting for a slot).
    let started: (() => void) | undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    let release: (() => void) | undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    const two = harness(async () => {
      if (++runs === 1) {
        started?.();
        await released;
      }
      return ok('1');
    });
    const calls = [two.call('reader'), two.call('reader')];
    await running;
    release?.();
    expect((await Promise.all(calls)).map((outcome) => outcome.kind)).toEqual(['result', 'result']);
    // The call that ended first had the other in flight (whether the second was alone depends on when the first's record settled).
    expect(two.alone[0]).toBe(false);
  });

  it('a read-only record that could not be written withholds the result: internal, with the reason', async () => {
    const full = Object.assign(new Error('database or disk is full'), { code: 'journal_write_failed', details: { sqlite: 'SQLITE_FULL' } });
    const h = harness(async () => ok('{"secret":"result"}'), { recordSoon: full });
    const outcome = await h.call('reader');
    expect(outcome).toMatchObject({ kind: 'error', error: { code: 'internal', details: { reason: 'disk_full', stage: 'journal' } } });
    expect(h.trace).toEqual(['tool.started', 'run', 'journal.recordSoon', 'journal.failed', 'tool.failed']);
  });

  it('a read-only call with an idempotency key is recorded before it answers (a repeat replays it)', async () => {
    const h = harness(async () => ok('1'));
    await h.call('reader', {}, { meta: { idempotencyKey: 'k-read' } });
    expect(h.trace).toEqual(['tool.started', 'run', 'journal.record', 'tool.completed']);
    expect(h.starts[0]).toMatchObject({ idempotencyKey: 'k-read' });
  });

  it('a denied tool stops at the policy stage: no run, no lifecycle event, one record with the rule', async () => {
    const h = harness(async () => ok('1'));
    const outcome = await h.call('denied');
    expect(codeOf(outcome)).toBe('policy_denied');
    expect(h.trace).toEqual(['journal.recordSoon', 'journal.committed']);
    expect(h.starts[0]).toMatchObject({ decision: 'deny', rule: 'policies/r.yaml:4 tools.deny' });
    expect(h.finishes).toMatchObject([{ status: 'denied', errorCode: 'policy_denied' }]);
  });

  it('invalid arguments stop before the rules stage and the run', async () => {
    const h = harness(async () => ok('1'));
    const outcome = await h.call('reader', { unexpected: true });
    expect(codeOf(outcome)).toBe('invalid_arguments');
    expect(h.trace).toEqual(['journal.recordSoon', 'journal.committed']);
    expect(h.finishes).toMatchObject([{ status: 'rejected', errorCode: 'invalid_arguments' }]);
  });
});

describe('one control per call', () => {
  it("runs the call under the control the caller built (no second one), the host's shutdown linked into it", async () => {
    const controls: unknown[] = [];
    let running: (() => void) | undefined;
    const started = new Promise<void>((resolve) => (running = resolve));
    const h = harness(async (options) => {
      controls.push(options.control);
      running?.();
      await new Promise<void>((resolve) => (options.control.signal.aborted ? resolve() : options.control.signal.addEventListener('abort', () => resolve(), { once: true })));
      return { ok: false, code: 'cancelled', message: 'stopped', details: {}, durationMs: 1 };
    });
    const control = new CallControl([new AbortController().signal]);
    const call = h.call('reader', {}, { control });
    await started;
    expect(controls).toEqual([control]);
    await h.supervisor.close();
    expect(codeOf(await call)).toBe('cancelled');
    expect(control.reason).toBe('cancelled');
    expect(control.signal.aborted).toBe(true);
  });
});

describe('a call nobody cancels', () => {
  it('runs without an AbortSignal: the stages and the runner read its control, never ask for a signal', async () => {
    try {
      const h = harness(async (options) => (options.control.reason === undefined ? ok('{"n":1}') : ok('{"stopped":true}')));
      const made = countAbortControllers();
      const control = new CallControl();
      // As the protocol layer calls it: the control, no signal of the request's own.
      const outcome = await h.supervisor.callTool({ name: 'reader', args: {}, meta: {}, control, approval: { kind: 'none' }, onEvent: (event) => h.trace.push(event.type) });
      expect(outcome).toMatchObject({ kind: 'result', structuredContent: { n: 1 } });
      expect(h.trace).toEqual(['tool.started', 'run', 'journal.recordSoon', 'journal.committed', 'tool.completed']);
      expect(made()).toBe(0);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe('close', () => {
  it('stops a call under the control the supervisor built, and waits until it closed its record', async () => {
    let running: (() => void) | undefined;
    const started = new Promise<void>((resolve) => (running = resolve));
    const h = harness(async (options) => {
      running?.();
      const reason = await options.control.stopped;
      return { ok: false, code: 'tool_crashed', message: `stopped: ${reason}`, details: {}, durationMs: 1 };
    });
    const call = h.call('writer');
    await started;
    await h.supervisor.close();
    // close() returned after the call ended: its one closing write is there.
    expect(h.finishes).toMatchObject([{ status: 'cancelled', errorCode: 'cancelled' }]);
    expect(codeOf(await call)).toBe('cancelled');
    // A call after close is refused with the same facts as one the host's shutdown stops.
    expect(await h.call('reader')).toMatchObject({ kind: 'error', error: { code: 'cancelled', message: 'The host is shutting down.', details: { reason: 'shutdown' } } });
  });
});

describe('lifecycle events', () => {
  it('a client that did not ask for events gets none, and the call is the same', async () => {
    const h = harness(async () => ok('{"n":1}'));
    const outcome = await h.call('writer', {}, { onEvent: undefined });
    expect(outcome).toMatchObject({ kind: 'result', structuredContent: { n: 1 } });
    expect(h.trace).toEqual(['journal.begin', 'run', 'journal.finish']);
  });
});

describe('first reason wins', () => {
  it('a cancel that came first stays cancelled when the runner later reports a timeout', async () => {
    const request = new AbortController();
    const h = harness(async (options) => {
      request.abort();
      await options.control.stopped;
      return { ok: false, code: 'timeout', message: 'late', details: {}, durationMs: 1 };
    });
    const outcome = await h.call('writer', {}, { control: new CallControl([request.signal]) });
    expect(codeOf(outcome)).toBe('cancelled');
    expect(h.finishes).toMatchObject([{ status: 'cancelled', errorCode: 'cancelled' }]);
  });

  it('the deadline the supervisor arms stops the runner, and its timeout wins over the crash it then reports', async () => {
    const h = harness(async (options) => {
      const reason = await options.control.stopped;
      return { ok: false, code: 'tool_crashed', message: `stopped: ${reason}`, details: {}, durationMs: 1 };
    });
    const outcome = await h.call('quick');
    expect(codeOf(outcome)).toBe('timeout');
    expect(outcome.kind === 'error' ? outcome.error.details : undefined).toEqual({ timeoutMs: 50 });
  });

  it("a tool's own failure is not overruled by a cancel that arrives after it", async () => {
    const request = new AbortController();
    const h = harness(async () => ({ ok: false, code: 'tool_error', message: 'no', details: {}, durationMs: 1 }));
    const outcome = await h.call('writer', {}, { control: new CallControl([request.signal]) });
    request.abort();
    expect(codeOf(outcome)).toBe('tool_error');
    // docs/clients.md: a failure the runner reports carries how long the run took.
    expect(outcome.kind === 'error' ? outcome.error.details : undefined).toEqual({ durationMs: 1 });
  });
});

describe("the journal's finally", () => {
  it('a runner that throws (a host bug) ends as internal with exactly one closing write', async () => {
    const h = harness(async () => {
      throw new Error('bug in a runner');
    });
    const outcome = await h.call('writer');
    expect(codeOf(outcome)).toBe('internal');
    expect(outcome.kind === 'error' ? outcome.error.details : undefined).toEqual({ stage: 'run' });
    expect(h.trace.filter((step) => step.startsWith('journal.'))).toEqual(['journal.begin', 'journal.finish']);
    expect(h.finishes).toMatchObject([{ status: 'failed', errorCode: 'internal' }]);
  });

  it('a journal that fails to close the record withholds the result: no answer without its record', async () => {
    const h = harness(async () => ok('{"done":true}'), { finish: new Error('connection reset') });
    const outcome = await h.call('writer');
    expect(outcome).toMatchObject({ kind: 'error', error: { code: 'internal', details: { reason: 'journal_unavailable', stage: 'journal' } } });
    expect(h.trace).toEqual(['journal.begin', 'tool.started', 'run', 'journal.finish', 'tool.failed']);
  });

  it('a cancelled call sends no lifecycle event after the cancel, but still closes its record', async () => {
    const request = new AbortController();
    const h = harness(async (options) => {
      request.abort();
      await options.control.stopped;
      return { ok: false, code: 'cancelled', message: 'stopped', details: {}, durationMs: 1 };
    });
    await h.call('writer', {}, { control: new CallControl([request.signal]) });
    expect(h.trace).toEqual(['journal.begin', 'tool.started', 'run', 'journal.finish']);
  });
});
