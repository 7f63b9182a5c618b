// The console's chain status: `toolhost audit verify` over the journal it
// serves (src/audit/verify-journal.ts), reduced to whole or the first break.
import type { Journal } from '../audit/journal.js';
import { verifyJournal } from '../audit/verify-journal.js';
import type { ChainVerdict, ChainVerifier } from './console-data.js';

/** The verifier of `journal`'s chains, as `toolhost audit verify` checks them. */
export function journalChainVerifier(journal: Pick<Journal, 'readSnapshot'>): ChainVerifier {
  return {
    async verify(): Promise<ChainVerdict> {
      const report = await verifyJournal(journal);
      const found = report.firstBreak;
      if (report.ok || found === null) return { ok: true };
      return { ok: false, recordId: found.recordId ?? `${found.chain ?? 'tables'}#${found.seq ?? '-'}`, kind: found.kind };
    },
  };
}
