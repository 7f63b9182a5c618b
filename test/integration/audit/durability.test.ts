// What each journal write costs in fsyncs, observed with strace on a real
// process: the write-ahead record of a mutating call is on disk before begin()
// returns; a finish and a read-only call's record only reach the OS (durable
// across a host crash, not a power loss), which keeps them off the disk's
// flush latency. docs/audit.md documents the trade-off.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SqliteJournal as Journal } from '../../../src/audit/sqlite/sqlite-journal.js';
import { useJournalProcessTest } from '../../helpers/journal-processes.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/audit/journal-fsync.mjs', import.meta.url));

const t = useJournalProcessTest();

/** Runs the fixture under strace; returns the number of fsync/fdatasync calls between each step mark and the next. */
function fsyncsPerStep(): Record<string, number> {
  const trace = join(t.temp.parent, 'trace.txt');
  const run = spawnSync('strace', ['-f', '-qq', '-e', 'trace=fsync,fdatasync,write', '-e', 'signal=none', '-o', trace, process.execPath, FIXTURE, t.temp.stateDir, t.marker], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  const counts: Record<string, number> = {};
  let step: string | undefined;
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const mark = /write\(1, "STEP ([\w-]+)\\n"/.exec(line);
    if (mark) {
      step = mark[1] as string;
      counts[step] = 0;
    } else if (step !== undefined && /\b(fsync|fdatasync)\(/.test(line)) {
      counts[step] = (counts[step] ?? 0) + 1;
    }
  }
  return counts;
}

describe('journal durability', () => {
  it('fsyncs the write-ahead record before begin() returns, and not a finish or a read-only record', () => {
    const counts = fsyncsPerStep();
    expect(Object.keys(counts)).toEqual(['begin', 'finish', 'record', 'failed-begin', 'after-failure', 'end']);
    expect(counts['begin']).toBeGreaterThanOrEqual(1);
    expect(counts['finish']).toBe(0);
    expect(counts['record']).toBe(0);
    // A begin that fails leaves the connection in NORMAL mode: the next record costs no fsync.
    expect(counts['after-failure']).toBe(0);

    const journal = Journal.open(t.temp.stateDir, { asHost: false });
    expect(journal.get('write-call')).toMatchObject({ status: 'completed', sideEffect: 'write' });
    expect(journal.get('read-call-2')).toMatchObject({ status: 'completed', sideEffect: 'read_only' });
    journal.close();
  });
});
