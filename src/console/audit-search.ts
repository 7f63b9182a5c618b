// The audit search over the Journal interface as it stands: tool, status and
// since go to the store's query; principal, decision, code, rule and until are
// applied to the newest records it returns, at most SCAN_LIMIT of them, and
// the page says so when that bound was reached.
import type { CallRecord, Journal } from '../audit/journal.js';
import type { AuditFilter, AuditSearch, AuditSearchResult } from './console-data.js';

/** Records read for the filters the store cannot apply itself. */
export const SCAN_LIMIT = 5000;

/** A search over `journal.query`. */
export function journalAuditSearch(journal: Pick<Journal, 'query'>): AuditSearch {
  return {
    async search(filter: AuditFilter): Promise<AuditSearchResult> {
      const inMemory = filter.principal !== undefined || filter.decision !== undefined || filter.code !== undefined || filter.rule !== undefined || filter.until !== undefined;
      const records = await journal.query({
        ...(filter.tool !== undefined ? { tool: filter.tool } : {}),
        ...(filter.status !== undefined ? { status: filter.status } : {}),
        ...(filter.since !== undefined ? { since: filter.since } : {}),
        limit: inMemory ? SCAN_LIMIT : filter.limit,
      });
      if (!inMemory) return { records };
      const matching = records.filter((record) => matches(record, filter)).slice(0, filter.limit);
      return records.length >= SCAN_LIMIT ? { records: matching, scanned: SCAN_LIMIT } : { records: matching };
    },
  };
}

function matches(record: CallRecord, filter: AuditFilter): boolean {
  if (filter.principal !== undefined && record.principal !== filter.principal) return false;
  if (filter.decision !== undefined && record.decision !== filter.decision) return false;
  if (filter.code !== undefined && record.errorCode !== filter.code) return false;
  if (filter.rule !== undefined && !(record.rule ?? '').includes(filter.rule)) return false;
  if (filter.until !== undefined && record.startedAt > filter.until) return false;
  return true;
}
