// One journal suite, two stores: every test written against the Journal
// interface runs on SQLite (a temp state folder) and on PostgreSQL (a fresh
// database in this run's throwaway cluster). PostgreSQL tests skip only where
// PostgreSQL is not installed, and never under CI (the setup fails there).
// The vitest project chooses the stores (TOOLHOST_JOURNAL_STORES): `unit` runs
// SQLite only, `journal-postgres` the same files on PostgreSQL; both when unset.
import { afterEach, beforeEach, describe } from 'vitest';
import type { Journal } from '../../src/audit/journal.js';
import { openJournal } from '../../src/audit/open-journal.js';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from './postgres.js';
import { makeTempParent } from './journal-fixtures.js';

export interface OpenOptions {
  asHost?: boolean;
  sessionId?: string;
  leaseMs?: number;
  checkpointEvery?: number;
  recover?: boolean;
  keyFile?: string;
}

/** One test's store: open as many journals on it as the test needs; all are closed after. */
export interface StoreUnderTest {
  readonly name: 'sqlite' | 'postgres';
  /** The --journal URL of this test's store (sqlite:PATH or postgres://…). */
  readonly url: string;
  readonly stateDir: string;
  /** Opens a journal on the store (a new host unless asHost is false). */
  open(options?: OpenOptions): Promise<Journal>;
  /** PostgreSQL only: SQL against the test database, for tampering. */
  readonly db: TestDatabase | undefined;
}

export const STORE_NAMES = ['sqlite', 'postgres'] as const;

const chosenStores: readonly string[] = process.env['TOOLHOST_JOURNAL_STORES']?.split(',') ?? STORE_NAMES;

/** Defines `body` once per store, under describe('<title> (<store> store)'). */
export function describeEachStore(title: string, body: (store: () => StoreUnderTest) => void): void {
  for (const name of STORE_NAMES) describeStore(name, title, body);
}

/** Defines `body` for one store only (its specifics); nothing when this project does not test that store. */
export function describeStore(name: (typeof STORE_NAMES)[number], title: string, body: (store: () => StoreUnderTest) => void): void {
  if (!chosenStores.includes(name)) return;
  const skip = name === 'postgres' ? postgresUnavailable : undefined;
  describe.skipIf(skip !== undefined)(`${title} (${name} store)`, () => {
    const current = useStore(name);
    body(current);
  });
}

function useStore(name: 'sqlite' | 'postgres'): () => StoreUnderTest {
  let store: StoreUnderTest | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  beforeEach(async () => {
    const temp = makeTempParent();
    const opened: Journal[] = [];
    const db = name === 'postgres' ? await createTestDatabase() : undefined;
    const url = db ? db.url : `sqlite:${temp.stateDir}/journal.sqlite`;
    store = {
      name,
      url,
      stateDir: temp.stateDir,
      db,
      async open(options = {}) {
        const journal = await openJournal({ url, stateDir: temp.stateDir, ...options });
        opened.push(journal);
        return journal;
      },
    };
    cleanup = async () => {
      for (const journal of opened.splice(0)) await journal.close();
      await db?.drop();
      temp.remove();
    };
  });
  afterEach(async () => {
    await cleanup?.();
    store = undefined;
  });
  return () => {
    if (store === undefined) throw new Error('the store exists only inside a test');
    return store;
  };
}

/** The JournalError code (and details) an async action rejects with. */
export async function rejection(action: () => Promise<unknown>): Promise<{ code: string; details: Record<string, unknown> }> {
  try {
    await action();
  } catch (error) {
    const { code, details } = error as { code?: unknown; details?: unknown };
    if (typeof code === 'string') return { code, details: (details ?? {}) as Record<string, unknown> };
    throw error;
  }
  throw new Error('expected a rejection');
}
