// --journal URLs: which store, where, and never a password.
import { describe, expect, it } from 'vitest';
import { journalFlagsFor, parseJournalUrl, shellQuote } from '../../../src/audit/journal-url.js';
import { JournalError } from '../../../src/audit/journal-error.js';

function refusal(text: string): JournalError {
  try {
    parseJournalUrl(text, '/state');
  } catch (error) {
    if (error instanceof JournalError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('parseJournalUrl', () => {
  it('defaults to the state folder SQLite file; sqlite:PATH is resolved against cwd', () => {
    expect(parseJournalUrl(undefined, '/state')).toEqual({ kind: 'sqlite', file: '/state/journal.sqlite' });
    expect(parseJournalUrl('sqlite:', '/state')).toEqual({ kind: 'sqlite', file: '/state/journal.sqlite' });
    expect(parseJournalUrl('sqlite:j/x.sqlite', '/state', '/work')).toEqual({ kind: 'sqlite', file: '/work/j/x.sqlite' });
    expect(parseJournalUrl('sqlite:/abs/x.sqlite', '/state')).toEqual({ kind: 'sqlite', file: '/abs/x.sqlite' });
  });

  it.each([
    ['postgres://toolhost@db.internal:5432/toolhost', 'postgres://toolhost@db.internal:5432/toolhost'],
    ['postgresql://toolhost@db.internal/toolhost?sslmode=require', 'postgres://toolhost@db.internal/toolhost'],
    ['postgres://toolhost@%2Frun%2Fpostgresql:5433/toolhost', 'postgres://toolhost@/run/postgresql:5433/toolhost'],
    ['postgres://toolhost@/toolhost?host=/run/postgresql', 'postgres://toolhost@/run/postgresql/toolhost'],
    ['postgres:///toolhost', 'postgres://(local socket)/toolhost'],
  ])('%s is PostgreSQL, shown as %s', (url, display) => {
    expect(parseJournalUrl(url, '/state')).toEqual({ kind: 'postgres', connectionString: url, display });
  });

  it.each(['postgres://alice:hunter2@db/toolhost', 'postgres://alice@db/toolhost?password=hunter2', 'postgresql://:hunter2@db/toolhost'])(
    'refuses the password in %s, pointing at PGPASSWORD, without echoing it',
    (url) => {
      const error = refusal(url);
      expect(error.code).toBe('journal_url_invalid');
      expect(error.details).toEqual({ reason: 'password_in_url' });
      expect(error.message).toContain('PGPASSWORD');
      expect(error.message).not.toContain('hunter2');
    },
  );

  it.each(['mysql://u:secret@db/x', 'file:/tmp/x', 'postgres://u@db/x#frag'])('refuses %s without echoing it', (url) => {
    const error = refusal(url);
    expect(error.code).toBe('journal_url_invalid');
    expect(error.message).not.toContain('secret');
  });
});

describe('journalFlagsFor (the journal in the exact approve command)', () => {
  it('names the state folder for its own journal, else the journal URL; absolute, quoted, never a password', () => {
    expect(journalFlagsFor(undefined, '.toolhost', '/srv/repo')).toBe('--state /srv/repo/.toolhost');
    expect(journalFlagsFor('sqlite:', '/srv/state', '/')).toBe('--state /srv/state');
    expect(journalFlagsFor('sqlite:shared.sqlite', '/srv/state', '/srv/repo')).toBe('--journal sqlite:/srv/repo/shared.sqlite');
    expect(journalFlagsFor(undefined, "/srv/tool host/it's", '/')).toBe(`--state '/srv/tool host/it'\\''s'`);
    expect(journalFlagsFor('postgres://toolhost@db.internal:5432/toolhost', '/s')).toBe('--journal postgres://toolhost@db.internal:5432/toolhost');
    expect(journalFlagsFor('postgres://toolhost@/toolhost?host=/run/postgresql', '/s')).toBe("--journal 'postgres://toolhost@/toolhost?host=/run/postgresql'");
    expect(() => journalFlagsFor('postgres://toolhost:secret@db/toolhost', '/s')).toThrow(JournalError);
  });

  it('shellQuote leaves plain words alone and single-quotes the rest', () => {
    expect(shellQuote('/a/b-c_d.e:f@g')).toBe('/a/b-c_d.e:f@g');
    expect(shellQuote('$(rm -rf /)')).toBe("'$(rm -rf /)'");
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
