// The console's audit search: the filters of `toolhost audit`, applied by the
// journal's own query (SQLite or PostgreSQL), newest first.
import type { Journal } from '../audit/journal.js';
import type { AuditFilter, AuditSearch, AuditSearchResult } from './console-data.js';

/** A search over `journal.query`. */
export function journalAuditSearch(journal: Pick<Journal, 'query'>): AuditSearch {
  return {
    async search(filter: AuditFilter): Promise<AuditSearchResult> {
      return { records: await journal.query({ ...filter }) };
    },
  };
}
