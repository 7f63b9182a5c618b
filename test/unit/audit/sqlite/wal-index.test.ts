// The wal-index reader (wal-index.ts): the frames it reads as not yet
// checkpointed are the ones SQLite itself reports, before and after a checkpoint.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WalIndex } from '../../../../src/audit/sqlite/wal-index.js';
import { makeTempParent } from '../../../helpers/journal-fixtures.js';

let temp: ReturnType<typeof makeTempParent>;

beforeEach(() => {
  temp = makeTempParent();
});

afterEach(() => {
  temp.remove();
});

describe('WalIndex', () => {
  it("reads the WAL's frames not yet checkpointed as SQLite counts them", () => {
    const file = join(temp.parent, 'wal.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (v TEXT)');
    const index = new WalIndex(file);
    try {
      const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
      for (let i = 0; i < 50; i++) insert.run('x'.repeat(2000));
      const pending = index.pendingFrames();
      expect(pending).toBeGreaterThan(25);
      // PASSIVE reports the WAL's frames and how many it copied; nothing was copied before.
      const [report] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
      expect(report!.log).toBe(pending);
      expect(index.pendingFrames()).toBe(report!.log - report!.checkpointed);
      expect(index.pendingFrames()).toBe(0);
    } finally {
      db.close();
    }
  });

  it('reads nothing where there is no wal-index', () => {
    expect(new WalIndex(join(temp.parent, 'absent.sqlite')).pendingFrames()).toBeUndefined();
  });
});
