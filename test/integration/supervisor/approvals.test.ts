// Approval (SPEC section 6): a scripted elicitation channel (legacy clients),
// the input_required round trip with signed states (modern clients), and
// approval_required for a client that cannot be asked. Every doubtful answer denies.
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteJournal as Journal } from '../../../src/audit/sqlite/sqlite-journal.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStore } from '../../../src/audit/sqlite/sqlite-store.js';
import { MAX_PROMPT_CHARS } from '../../../src/supervisor/stages/approval.js';
import { MAX_PROMPT_WITH_EFFECTS_CHARS } from '../../../src/supervisor/approval-prompt.js';
import type { ApprovalChannel, ApprovalPrompt, ElicitAnswer } from '../../../src/supervisor/types.js';
import { CallControl } from '../../../src/supervisor/call-control.js';
import { closeAllHosts, errorOf, resultOf, startHost } from '../../helpers/supervisor-host.js';

afterAll(closeAllHosts);

/** An elicitation channel that answers with a script and remembers the prompts. */
function scripted(answer: (prompt: ApprovalPrompt, signal: AbortSignal) => Promise<ElicitAnswer>) {
  const prompts: ApprovalPrompt[] = [];
  const channel: ApprovalChannel = {
    kind: 'elicitation',
    elicit: (prompt, signal) => {
      prompts.push(prompt);
      return answer(prompt, signal);
    },
  };
  return { channel, prompts };
}

describe('elicitation', () => {
  it('runs the call when the answer is accept with approve: true', async () => {
    const host = await startHost();
    const { channel, prompts } = scripted(async () => ({ action: 'accept', content: { approve: true } }));
    const outcome = resultOf(await host.call('dangerous', { target: 'old.log' }, { approval: channel }));
    expect(outcome.structuredContent).toEqual({ deleted: 'old.log' });
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toMatchObject({ tool: 'dangerous', sideEffect: 'destructive' });
    expect(prompts[0]?.message).toContain('dangerous');
    expect(prompts[0]?.message).toContain('destructive');
    expect(prompts[0]?.message).toContain('old.log');
    const journal = Journal.open(host.stateDir, { asHost: false });
    try {
      expect(journal.get(outcome.callId)).toMatchObject({ status: 'completed', decision: 'ask', approval: 'approved' });
    } finally {
      journal.close();
    }
  });

  it.each([
    ['decline', async (): Promise<ElicitAnswer> => ({ action: 'decline' }), 'declined'],
    ['cancel', async (): Promise<ElicitAnswer> => ({ action: 'cancel' }), 'cancelled'],
    ['accept without approve', async (): Promise<ElicitAnswer> => ({ action: 'accept', content: {} }), 'not_approved'],
    ['accept with approve "yes"', async (): Promise<ElicitAnswer> => ({ action: 'accept', content: { approve: 'yes' } }), 'not_approved'],
    ['an unknown action', async (): Promise<ElicitAnswer> => ({ action: 'maybe', content: { approve: true } }), 'malformed'],
    ['an error reply', async (): Promise<ElicitAnswer> => ({ error: 'client exploded' }), 'error'],
    ['a throwing channel', async (): Promise<ElicitAnswer> => Promise.reject(new Error('transport closed')), 'error'],
    [
      'a channel that throws synchronously',
      (): Promise<ElicitAnswer> => {
        throw new Error('sync');
      },
      'error',
    ],
    ['a malformed value', async (): Promise<ElicitAnswer> => 'yes' as unknown as ElicitAnswer, 'malformed'],
  ])('denies on %s with approval_denied', async (_label, answer, reason) => {
    const host = await startHost();
    const { channel } = scripted(answer);
    const outcome = await host.call('dangerous', { target: 'x' }, { approval: channel });
    const error = errorOf(outcome);
    expect(error.code).toBe('approval_denied');
    expect(error.details).toMatchObject({ reason });
    expect(String(error.details['rule'])).toMatch(/requireApproval/);
    const journal = Journal.open(host.stateDir, { asHost: false });
    try {
      expect(journal.get(outcome.callId)).toMatchObject({ status: 'denied', errorCode: 'approval_denied', approval: 'denied' });
    } finally {
      journal.close();
    }
  });

  it('denies when no answer arrives in time, and aborts the pending question', async () => {
    const host = await startHost({ host: { approvalTimeoutMs: 200 } });
    let aborted = false;
    const { channel } = scripted((_prompt, signal) => {
      signal.addEventListener('abort', () => (aborted = true));
      return new Promise<ElicitAnswer>(() => undefined);
    });
    const error = errorOf(await host.call('dangerous', { target: 'x' }, { approval: channel }));
    expect(error.code).toBe('approval_denied');
    expect(error.details).toMatchObject({ reason: 'timeout', timeoutMs: 200 });
    expect(aborted).toBe(true);
  });

  it('answers cancelled when the request is cancelled while the question is open', async () => {
    const host = await startHost();
    const controller = new AbortController();
    const { channel } = scripted(() => {
      controller.abort();
      return new Promise<ElicitAnswer>(() => undefined);
    });
    const error = errorOf(await host.call('dangerous', { target: 'x' }, { approval: channel, control: new CallControl([controller.signal]) }));
    expect(error.code).toBe('cancelled');
  });

  it('bounds the prompt and escapes control characters in the arguments', async () => {
    const host = await startHost();
    const { channel, prompts } = scripted(async () => ({ action: 'decline' }));
    const target = `line one\nAPPROVED: yes\x1b[2J\u202e${'z'.repeat(1900)}`;
    await host.call('dangerous', { target }, { approval: channel });
    const message = prompts[0]?.message ?? '';
    expect(message.length).toBeLessThanOrEqual(MAX_PROMPT_CHARS);
    expect(message).not.toMatch(/[\u0000-\u001f\u007f\u202e]/);
    expect(message).toContain('line one\\nAPPROVED');
  });

  it('approval prompts show what they ask: invisible format characters escaped, the dangerous tail shown, the argument hash named', async () => {
    const host = await startHost();
    const { channel, prompts } = scripted(async () => ({ action: 'decline' }));
    // ALM, zero-width space and joiner, BOM, soft hyphen, a tag character, a word joiner: all invisible.
    const invisible = '\u061c\u200b\u200d\ufeff\u00ad\u{e0041}\u2060';
    const target = `harmless.log${invisible}${' '.repeat(1500)}; rm -rf /srv/prod`;
    const outcome = await host.call('dangerous', { target }, { approval: channel });
    expect(errorOf(outcome).code).toBe('approval_denied');
    const message = prompts[0]?.message ?? '';
    expect(message.length).toBeLessThanOrEqual(MAX_PROMPT_CHARS);
    expect(message).not.toMatch(/[\p{Cc}\p{Cf}]/u);
    expect(message).toContain('\\u061c\\u200b\\u200d\\ufeff\\xad\\u{e0041}\\u2060');
    expect(message).toContain('rm -rf /srv/prod');
    expect(message).toMatch(/…\[\d+ bytes left out\]…/);
    const journal = Journal.open(host.stateDir, { asHost: false });
    try {
      const argsHash = journal.get(outcome.callId)?.argsHash;
      expect(argsHash).toMatch(/^[0-9a-f]{64}$/);
      expect(message).toContain(`sha256 ${argsHash}`);
    } finally {
      await journal.close();
    }
  });
});

describe('input_required (modern clients)', () => {
  const approve: ElicitAnswer = { action: 'accept', content: { approve: true } };

  it('answers input_required with a state, then runs the retry that carries it and an approval', async () => {
    const host = await startHost();
    const first = await host.call('dangerous', { target: 'a' }, { approval: { kind: 'input_required' } });
    if (first.kind !== 'input_required') throw new Error(`expected input_required, got ${first.kind}`);
    expect(first.message).toContain('dangerous');
    const second = resultOf(await host.call('dangerous', { target: 'a' }, { approval: { kind: 'input_required' }, requestState: first.requestState, approvalAnswer: approve }));
    expect(second.structuredContent).toEqual({ deleted: 'a' });
    const journal = Journal.open(host.stateDir, { asHost: false });
    try {
      expect(journal.get(first.callId)).toMatchObject({ status: 'denied', approval: 'required' });
      expect(journal.get(second.callId)).toMatchObject({ status: 'completed', approval: 'approved' });
    } finally {
      journal.close();
    }
  });

  async function stateFor(host: Awaited<ReturnType<typeof startHost>>, target: string): Promise<string> {
    const outcome = await host.call('dangerous', { target }, { approval: { kind: 'input_required' } });
    if (outcome.kind !== 'input_required') throw new Error(`expected input_required, got ${outcome.kind}`);
    return outcome.requestState;
  }

  it('refuses a forged state', async () => {
    const host = await startHost();
    const state = await stateFor(host, 'a');
    const [body] = state.split('.');
    for (const forged of [`${body}.AAAA`, 'not-a-state', `${state}x`]) {
      const error = errorOf(await host.call('dangerous', { target: 'a' }, { approval: { kind: 'input_required' }, requestState: forged, approvalAnswer: approve }));
      expect(error.code).toBe('approval_denied');
      expect(error.details).toMatchObject({ reason: 'forged' });
    }
  });

  it('refuses a state sent with altered arguments', async () => {
    const host = await startHost();
    const state = await stateFor(host, 'a');
    const error = errorOf(await host.call('dangerous', { target: 'b' }, { approval: { kind: 'input_required' }, requestState: state, approvalAnswer: approve }));
    expect(error.code).toBe('approval_denied');
    expect(error.details).toMatchObject({ reason: 'altered' });
  });

  it('refuses a replayed state', async () => {
    const host = await startHost();
    const state = await stateFor(host, 'a');
    const retry = { approval: { kind: 'input_required' } as const, requestState: state, approvalAnswer: approve };
    resultOf(await host.call('dangerous', { target: 'a' }, retry));
    const error = errorOf(await host.call('dangerous', { target: 'a' }, retry));
    expect(error.code).toBe('approval_denied');
    expect(error.details).toMatchObject({ reason: 'replayed' });
  });

  it('refuses an expired state', async () => {
    const clock = { now: 1_000_000 };
    const host = await startHost({ host: { requestStateTtlMs: 1000, now: () => clock.now } });
    const state = await stateFor(host, 'a');
    clock.now += 1000;
    const error = errorOf(await host.call('dangerous', { target: 'a' }, { approval: { kind: 'input_required' }, requestState: state, approvalAnswer: approve }));
    expect(error.code).toBe('approval_denied');
    expect(error.details).toMatchObject({ reason: 'expired' });
  });

  it('refuses a valid state whose answer is not an approval', async () => {
    const host = await startHost();
    for (const answer of [undefined, { action: 'decline' }, { action: 'accept', content: { approve: false } }]) {
      const state = await stateFor(host, 'a');
      const error = errorOf(
        await host.call('dangerous', { target: 'a' }, { approval: { kind: 'input_required' }, requestState: state, ...(answer ? { approvalAnswer: answer } : {}) }),
      );
      expect(error.code).toBe('approval_denied');
    }
  });
});

describe('a client that cannot be asked', () => {
  it('is refused with approval_required naming the rule', async () => {
    const host = await startHost();
    const error = errorOf(await host.call('dangerous', { target: 'x' }, { approval: { kind: 'none' } }));
    expect(error.code).toBe('approval_required');
    expect(String(error.details['rule'])).toMatch(/requireApproval/);
  });

  it('does not need an approval for a tool the policy allows', async () => {
    const host = await startHost();
    resultOf(await host.call('echo', { value: 1 }, { approval: { kind: 'none' } }));
  });
});

describe('the projected effect in approval prompts (a tool that declares effects.writes)', () => {
  const BUNDLED = fileURLToPath(new URL('../../../manifests', import.meta.url));
  const writeHost = () => startHost({ manifestDirs: [BUNDLED], policy: 'sideEffects:\n  requireApproval: [local_mutation]\n' });

  it('elicitation and input_required show the written path as resolved and the diff, escaped line by line and bounded', async () => {
    const host = await writeHost();
    writeFileSync(join(host.workspace, 'notes.md'), 'title\nold line \x1b[2J\u202ehidden\nend\n');
    const { channel, prompts } = scripted(async () => ({ action: 'accept', content: { approve: true } }));
    const args = { path: 'notes.md', text: 'title\nnew line\u2066\nend\n' };
    resultOf(await host.call('write_file', args, { approval: channel }));
    const message = prompts[0]?.message ?? '';
    expect(message.length).toBeLessThanOrEqual(MAX_PROMPT_WITH_EFFECTS_CHARS);
    const lines = message.split('\n');
    expect(lines[0]).toMatch(/^Allow the tool write_file \(local_mutation\)/);
    expect(lines[1]).toBe(`Writes ${join(host.workspace, 'notes.md')}: replaces a ${Buffer.byteLength('title\nold line \x1b[2J\u202ehidden\nend\n')}-byte text file (+1 -1 lines)`);
    expect(lines).toContain('--- a/notes.md');
    expect(lines).toContain('-old line \\x1b[2J\\u202ehidden');
    expect(lines).toContain('+new line\\u2066');
    // `\n` between lines is the only control character; nothing invisible remains.
    expect(message.replace(/\n/g, '')).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
    expect(readFileSync(join(host.workspace, 'notes.md'), 'utf8')).toBe(args.text);

    const modern = await host.call('write_file', { path: 'other.md', text: 'fresh\n' }, { approval: { kind: 'input_required' } });
    if (modern.kind !== 'input_required') throw new Error(`expected input_required, got ${modern.kind}`);
    expect(modern.message).toContain(`Writes ${join(host.workspace, 'other.md')}: creates a new file (+1 -0 lines)`);
    expect(modern.message).toContain('+fresh');
  });

  it('a path outside the roots is said so in the prompt, and the file there is not shown', async () => {
    const host = await writeHost();
    writeFileSync(join(host.root, 'outside.txt'), 'private words\n');
    const { channel, prompts } = scripted(async () => ({ action: 'decline' }));
    expect(errorOf(await host.call('write_file', { path: '../outside.txt', text: 'x' }, { approval: channel })).code).toBe('approval_denied');
    expect(prompts[0]?.message).toContain('outside the workspace roots of the tool: the write will be refused');
    expect(prompts[0]?.message).not.toContain('private words');
  });

  it('an operator approval keeps the arguments and the projected effect; approval_required names the command with the journal', async () => {
    const host = await writeHost();
    writeFileSync(join(host.workspace, 'plan.md'), 'step 1\n');
    const error = errorOf(await host.call('write_file', { path: 'plan.md', text: 'step 1\nstep 2\n' }, { approval: { kind: 'none' } }));
    expect(error.code).toBe('approval_required');
    const id = String(error.details['approvalId']);
    expect(error.details['approveCommand']).toBe(`toolhost approve ${id} --state ${host.stateDir}`);
    expect(error.message).toContain(`\`toolhost approve ${id} --state ${host.stateDir}\``);
    const journal = openSqliteStore(host.stateDir, { asHost: false });
    try {
      const [approval] = await journal.listApprovals();
      expect(approval).toMatchObject({
        id,
        arguments: { path: 'plan.md', text: 'step 1\nstep 2\n' },
        effects: [
          {
            argument: 'path',
            path: join(host.workspace, 'plan.md'),
            where: 'writable_root',
            summary: 'replaces a 7-byte text file (+1 -0 lines)',
            diff: expect.stringContaining('+step 2'),
          },
        ],
      });
    } finally {
      await journal.close();
    }
  });
});
