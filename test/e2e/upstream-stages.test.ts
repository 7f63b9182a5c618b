// An upstream server's tools go through every stage of the supervisor like any
// tool (SPEC 2.1, 5, 5.2, 7): journal records under the listed name, approval
// (refused without a capable client, asked by elicitation with one),
// idempotency keys replayed without calling the server again, terminal tools;
// and `serve` starts without a server that does not start, saying why. The
// fixture server counts its own calls in the workspace's calls.log, read from
// outside its sandbox.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteJournal as Journal } from '../../src/audit/sqlite/sqlite-journal.js';
import type { CallRecord } from '../../src/audit/call-record.js';
import { REPO_ROOT, ensureBuilt, type ElicitAnswerScript } from '../helpers/mcp-clients.js';
import { pollUntil, waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { makeHostDirs, startClient, stopClient, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf, wireTextOf } from '../helpers/wire-results.js';

beforeAll(() => ensureBuilt(), 300_000);

const FIXTURES = join(REPO_ROOT, 'test/e2e/fixtures/upstream-stages');
// The policy reaches upstream tools by their listed names and classes.
const POLICY = `kind: Policy
name: e2e_upstream_stages
tools:
  deny: ["counter__drop"]
sideEffects:
  requireApproval: [destructive, remote_mutation]   # a key set replaces the built-in [destructive]
`;
// Listed: every classified tool but counter__drop, which the policy denies.
const COUNTER_TOOLS = ['counter__ask', 'counter__bump', 'counter__finish', 'counter__peek', 'counter__send', 'counter__wipe'];

/** The calls the counter server itself received (its mutating tools append one line each). */
function serverCalls(dirs: HostDirs): string[] {
  const log = join(dirs.workspace, 'calls.log');
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
    : [];
}

function journalRecords(dirs: HostDirs, tool: string): CallRecord[] {
  const journal = Journal.open(dirs.stateDir, { asHost: false });
  try {
    return journal.query({ tool });
  } finally {
    journal.close();
  }
}

/** The tool's records once there is one and all are closed (a bounded poll, whatever the journal's batching). */
function settledRecords(dirs: HostDirs, tool: string): Promise<CallRecord[]> {
  return pollUntil(() => {
    const found = journalRecords(dirs, tool);
    return { done: found.length > 0 && found.every((record) => record.status !== 'started'), value: found };
  }, 20_000);
}

async function stop(client: HostClient | undefined, dirs: HostDirs): Promise<void> {
  await stopClient(client, dirs);
  // No server process (its cmdline names the workspace) outlives the host, given the same
  // grace as the host's own processes (the sandbox's carry no marker variable).
  expect(await waitForNoMarkedProcesses(dirs.workspace)).toEqual([]);
  dirs.cleanup();
}

describe('upstream tools through the supervisor, a client without elicitation', () => {
  let dirs: HostDirs;
  let client: HostClient;
  beforeAll(async () => {
    dirs = makeHostDirs({ manifests: [FIXTURES], policy: POLICY });
    client = await startClient(dirs, { kind: 'v2-legacy' });
  }, 180_000);
  afterAll(() => stop(client, dirs), 180_000);

  it('serve starts without servers that do not start, lists the other tools, and logs which server and why', async () => {
    const names = (await client.listTools()).tools.map((tool) => String(tool['name']));
    expect(names.filter((name) => name.startsWith('counter__')).sort()).toEqual(COUNTER_TOOLS);
    expect(names.filter((name) => name.startsWith('broken__') || name.startsWith('silent__'))).toEqual([]);
    const warnings = await pollUntil(() => {
      const lines = client
        .stderrText()
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .map((text) => JSON.parse(text) as Record<string, unknown>)
        .filter((entry) => entry['msg'] === 'upstream server not available: serving without its tools');
      return { done: lines.length >= 2, value: new Map(lines.map((line) => [line['server'], line])) };
    }, 30_000);
    expect([...warnings.keys()].sort()).toEqual(['broken', 'silent']);
    // One exits at once (its exit code is the reason, its stderr beside it), the other never answers initialize (startupTimeoutMs).
    expect(warnings.get('broken')).toMatchObject({
      level: 40,
      file: expect.stringContaining('broken.yaml'),
      reason: expect.stringContaining('exited during start-up (exit code 3)'),
      stderr: ['counter server: refusing to start'],
    });
    expect(warnings.get('silent')).toMatchObject({ level: 40, file: expect.stringContaining('silent.yaml'), reason: expect.stringContaining('within 2000 ms') });
  });

  it('journals an upstream call under its listed name, with its class and status', async () => {
    const result = await client.callTool({ name: 'counter__bump', arguments: { n: 1 } });
    expect(result['isError']).toBeFalsy();
    expect(wireTextOf(result)).toContain('bump call');
    expect(serverCalls(dirs)).toEqual(['bump {"n":1}']);
    const records = await settledRecords(dirs, 'counter__bump');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ tool: 'counter__bump', sideEffect: 'local_mutation', decision: 'allow', status: 'completed', errorCode: null });
  });

  it.each([
    ['a destructive tool', 'counter__wipe'],
    ['a tool whose entry says approval: always', 'counter__ask'],
    ['a remote_mutation tool', 'counter__send'],
  ])('%s is refused approval_required, never reaching the server, and journaled so', async (_name, tool) => {
    const before = serverCalls(dirs).length;
    const error = wireErrorOf(await client.callTool({ name: tool, arguments: { n: 2 } }));
    expect(error).toMatchObject({ code: 'approval_required', recovery: 'stop' });
    expect(serverCalls(dirs)).toHaveLength(before);
    const records = await settledRecords(dirs, tool);
    expect(records[0]).toMatchObject({ tool, decision: 'ask', approval: 'required', status: 'denied', errorCode: 'approval_required' });
  });

  it('a tool the policy denies by its listed name is policy_denied naming the rule, and never reaches the server', async () => {
    const before = serverCalls(dirs).length;
    const error = wireErrorOf(await client.callTool({ name: 'counter__drop', arguments: {} }));
    expect(error).toMatchObject({ code: 'policy_denied', rule: expect.stringContaining('org-policy.yaml') });
    expect(String(error['rule'])).toContain('tools.deny');
    expect(serverCalls(dirs)).toHaveLength(before);
  });

  it('an idempotency key replays the first answer without calling the server again', async () => {
    const call = { name: 'counter__bump', arguments: { n: 7 }, _meta: { idempotencyKey: 'stages-bump-7' } };
    const before = serverCalls(dirs).length;
    const first = await client.callTool(call);
    expect(first['isError']).toBeFalsy();
    expect(serverCalls(dirs)).toHaveLength(before + 1);
    const again = await client.callTool(call);
    expect(again['content']).toEqual(first['content']);
    // The server was called once: its log holds one line for n 7, and its own counter is in both answers.
    expect(serverCalls(dirs)).toHaveLength(before + 1);
    expect(serverCalls(dirs).filter((line) => line === 'bump {"n":7}')).toHaveLength(1);
    // The same key with other arguments is refused, and does not reach the server either.
    expect(wireErrorOf(await client.callTool({ ...call, arguments: { n: 8 } }))).toMatchObject({ code: 'invalid_arguments' });
    expect(serverCalls(dirs)).toHaveLength(before + 1);
    // A call without the key runs again: the count moves, so the replay above was not a stuck server.
    expect((await client.callTool({ name: 'counter__bump', arguments: { n: 7 } }))['isError']).toBeFalsy();
    expect(serverCalls(dirs)).toHaveLength(before + 2);
  });
});

describe('upstream tools through the supervisor, a client with elicitation', () => {
  let dirs: HostDirs;
  let client: HostClient;
  const answers: Array<ReturnType<ElicitAnswerScript>> = [];
  const asked: string[] = [];
  beforeAll(async () => {
    dirs = makeHostDirs({ manifests: [FIXTURES], policy: POLICY });
    client = await startClient(dirs, {
      kind: 'v2-legacy',
      elicit: (request) => {
        asked.push(request.message);
        return answers.shift() ?? { action: 'cancel' };
      },
    });
  }, 180_000);
  afterAll(() => stop(client, dirs), 180_000);

  it('a destructive upstream tool runs after approval by elicitation, and is journaled approved', async () => {
    answers.push({ action: 'accept', content: { approve: true } });
    const before = asked.length;
    const result = await client.callTool({ name: 'counter__wipe', arguments: { n: 3 } });
    expect(result['isError']).toBeFalsy();
    expect(wireTextOf(result)).toContain('wipe call');
    expect(asked.slice(before)).toHaveLength(1);
    expect(asked[before]).toContain('counter__wipe');
    expect(asked[before]).toContain('destructive');
    expect(serverCalls(dirs)).toEqual(['wipe {"n":3}']);
    expect((await settledRecords(dirs, 'counter__wipe'))[0]).toMatchObject({ sideEffect: 'destructive', decision: 'ask', approval: 'approved', status: 'completed' });
  });

  it('a declined approval never reaches the server', async () => {
    answers.push({ action: 'decline' });
    expect(wireErrorOf(await client.callTool({ name: 'counter__ask', arguments: { n: 4 } }))).toMatchObject({ code: 'approval_denied' });
    expect(serverCalls(dirs).filter((line) => line.startsWith('ask '))).toEqual([]);
  });

  // Last in this session: after it every call is call_limit.
  it('terminal: true is listed with _meta["toolhost/terminal"]; its success ends the session with call_limit, reason terminal', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool['name'], tool]));
    expect((byName.get('counter__finish')?.['_meta'] as Record<string, unknown> | undefined)?.['toolhost/terminal']).toBe(true);
    expect((byName.get('counter__bump')?.['_meta'] as Record<string, unknown> | undefined)?.['toolhost/terminal']).toBeUndefined();
    const finished = await client.callTool({ name: 'counter__finish', arguments: {} });
    expect(finished['isError']).toBeFalsy();
    expect((finished['_meta'] as Record<string, unknown> | undefined)?.['toolhost/terminal']).toBe(true);
    const calls = serverCalls(dirs).length;
    for (const name of ['counter__bump', 'counter__peek']) {
      expect(wireErrorOf(await client.callTool({ name, arguments: {} }))).toMatchObject({ code: 'call_limit', reason: 'terminal', recovery: 'stop' });
    }
    expect(serverCalls(dirs)).toHaveLength(calls);
  });
});
