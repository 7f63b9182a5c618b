// No answer before its record (SPEC section 5 step 10): the built host is
// SIGKILLed the moment N read-only answers arrived on its stdout, and every
// call that was answered has its record in the journal. Read-only records are
// group committed (one commit per event-loop turn) before their answers are
// written; before that, they were committed ~10 ms after, and a kill at this
// moment lost about a third of them.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hashArgs } from '../../src/audit/hash.js';
import { openJournal } from '../../src/audit/open-journal.js';
import { verifyJournal } from '../../src/audit/verify-journal.js';
import { ensureBuilt } from '../helpers/mcp-clients.js';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres.js';
import { waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { makeHostDirs, spawnRawHost, until, waitForExit, type HostDirs, type RawHost } from '../helpers/host-session.js';

beforeAll(() => ensureBuilt(), 300_000);

const CALLS = 75;
const KILL_AFTER_ANSWERS = 24;

let dirs: HostDirs | undefined;
let host: RawHost | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  host?.kill('SIGKILL');
  if (dirs) await waitForNoMarkedProcesses(dirs.marker);
  dirs?.cleanup();
  await database?.drop();
  host = undefined;
  dirs = undefined;
  database = undefined;
});

describe.each(['sqlite', 'postgres'] as const)('on the %s store', (storeName) => {
  it.skipIf(storeName === 'postgres' && postgresUnavailable !== undefined)('SIGKILL the moment read-only answers arrive: every answered call has its record', async () => {
    database = storeName === 'postgres' ? await createTestDatabase() : undefined;
    const journalUrl = database?.url;
    dirs = makeHostDirs({
      extraArgs: journalUrl === undefined ? [] : ['--journal', journalUrl],
    });
    const child = spawnRawHost(dirs);
    host = child;
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    const answered: number[] = [];
    let initialized = false;
    let partial = '';
    child.stdout.on('data', (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const message = JSON.parse(line) as {
          id?: number;
          result?: { isError?: boolean };
        };
        if (message.id === 0) initialized = true;
        else if (typeof message.id === 'number' && message.result !== undefined && message.result.isError !== true) answered.push(message.id);
      }
      // In the same callback as the answers arrived: nothing of the host's runs after them.
      if (answered.length >= KILL_AFTER_ANSWERS && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    });
    await until(() => initialized, 'the initialize answer');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // One write, so the host reads many requests per turn and answers several in one turn, as a busy client's would be.
    child.stdin.write(
      Array.from(
        { length: CALLS },
        (_, index) => `${JSON.stringify({ jsonrpc: '2.0', id: index + 1, method: 'tools/call', params: { name: 'echo', arguments: { text: `call ${index + 1}` } } })}\n`,
      ).join(''),
    );
    expect(await waitForExit(child)).toEqual({
      code: null,
      signal: 'SIGKILL',
    });
    expect(answered.length).toBeGreaterThanOrEqual(KILL_AFTER_ANSWERS);

    const journal = await openJournal({
      url: journalUrl,
      stateDir: dirs.stateDir,
      asHost: false,
      recover: false,
    });
    try {
      const recorded = new Set((await journal.query({ tool: 'echo' })).map((record) => record.argsHash));
      const missing = answered.filter((id) => !recorded.has(hashArgs({ text: `call ${id}` })));
      expect(missing).toEqual([]);
      // The killed host's chain verifies as far as it was written; its unsigned tail is only a note.
      const report = await verifyJournal(journal);
      expect(report.firstBreak).toBeNull();
    } finally {
      await journal.close();
    }
  });
});
