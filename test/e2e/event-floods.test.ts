// Event floods through a real host (SPEC section 3.1): a worker tool and a
// persistent process tool that send far more progress events and log lines
// than a call may, each message longer than one may be. What the host passes
// on is bounded by EVENT_LIMITS (events a call, characters a message, message
// bytes a call), the flooding call still answers, and the host answers a ping
// and another tool's call while it floods and after.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_LIMITS } from '../../sandbox/shared/limits.mjs';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { makeHostDirs, startClient, stopClient, type HostClient, type HostDirs } from '../helpers/host-session.js';

const FIXTURES = join(REPO_ROOT, 'test/e2e/fixtures/event-floods');
/** Three times the events a call may send, each message longer than one may be. */
const FLOOD = { times: 3 * EVENT_LIMITS.maxEventsPerCall, chars: EVENT_LIMITS.maxMessageChars + 1000 };

let dirs: HostDirs;
let client: HostClient | undefined;

beforeAll(async () => {
  await ensureBuilt();
  dirs = makeHostDirs({ manifests: [FIXTURES], policy: `kind: Policy\nname: event-floods\ntrust:\n  firstParty: ["${FIXTURES}/**"]\n`, extraArgs: ['--no-watch'] });
  client = await startClient(dirs, { kind: 'v2-legacy' });
}, 300_000);

afterAll(async () => {
  await stopClient(client, dirs);
  dirs.cleanup();
}, 60_000);

interface Progress {
  readonly progress: number;
  readonly message?: string;
}

/** Calls `name` with a progress token while a ping and an echo call go through the same host. */
async function floodWhileServing(name: string, args: Record<string, unknown>): Promise<{ result: Record<string, unknown>; progress: Progress[] }> {
  const progress: Progress[] = [];
  const flooding = client!.callTool({ name, arguments: args }, { timeout: 120_000, onprogress: (event) => progress.push(event) });
  const [result] = await Promise.all([flooding, expectHostServes()]);
  await expectHostServes();
  return { result, progress };
}

async function expectHostServes(): Promise<void> {
  await (client!.raw as unknown as { ping(): Promise<unknown> }).ping();
  const echoed = await client!.callTool({ name: 'echo_worker', arguments: { text: 'still here' } });
  expect(echoed['isError']).not.toBe(true);
  expect(echoed['structuredContent']).toEqual({ echo: 'still here' });
}

function expectBounded(progress: readonly Progress[]): void {
  expect(progress.length).toBeGreaterThan(0);
  expect(progress.length).toBeLessThanOrEqual(EVENT_LIMITS.maxEventsPerCall);
  const messages = progress.flatMap((event) => (event.message === undefined ? [] : [event.message]));
  expect(messages.length).toBeGreaterThan(0);
  for (const message of messages) expect(message.length).toBeLessThanOrEqual(EVENT_LIMITS.maxMessageChars);
  expect(messages.reduce((bytes, message) => bytes + Buffer.byteLength(message, 'utf8'), 0)).toBeLessThanOrEqual(EVENT_LIMITS.maxEventBytesPerCall);
}

describe('a tool that floods its call with events', () => {
  it('in a worker thread: its progress reaches the client bounded, and the host serves on', async () => {
    const { result, progress } = await floodWhileServing('flood_worker', { kind: 'progress', ...FLOOD });
    expect(result['isError']).not.toBe(true);
    expect(result['structuredContent']).toEqual({ sent: FLOOD.times });
    expectBounded(progress);
  }, 180_000);

  it('in a worker thread: its log lines are taken bounded, and the host serves on', async () => {
    const { result, progress } = await floodWhileServing('flood_worker', { kind: 'log', ...FLOOD });
    expect(result['isError']).not.toBe(true);
    expect(result['structuredContent']).toEqual({ sent: FLOOD.times });
    expect(progress).toEqual([]);
    // The host logs a tool's lines on its stderr: each cut to maxMessageChars, together within maxEventBytesPerCall.
    const messages = client!
      .stderrText()
      .split('\n')
      .filter((line) => line.includes('"toolLog":true'))
      .map((line) => String((JSON.parse(line) as { msg: unknown }).msg));
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) expect(message.length).toBeLessThanOrEqual(EVENT_LIMITS.maxMessageChars);
    expect(messages.length).toBeLessThanOrEqual(Math.floor(EVENT_LIMITS.maxEventBytesPerCall / EVENT_LIMITS.maxMessageChars));
  }, 180_000);

  it('as a persistent process: its progress lines reach the client bounded, call after call, and the host serves on', async () => {
    for (let call = 0; call < 2; call++) {
      const { result, progress } = await floodWhileServing('flood_persistent', FLOOD);
      expect(result['isError']).not.toBe(true);
      expect(result['structuredContent']).toEqual({ sent: FLOOD.times });
      expectBounded(progress);
    }
  }, 180_000);
});
