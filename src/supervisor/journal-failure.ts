// A journal that cannot be written (or read) before a tool runs (SPEC 5.2 and
// 7.1): the host knows the cause, so the caller gets an `internal` *result*
// with `recovery: retry` and `details.reason` (`disk_full`, or
// `journal_unavailable` for a database away, a lock held too long, a file that
// cannot be written), and the tool has not run. The journal's own message names
// files and hosts: it goes to the log (as the cause), never to the caller.
import type { JournalError } from '../audit/journal.js';
import { lostRecordReason } from '../audit/lost-record-reason.js';
import { hostError, type HostError, type InternalResultReason } from '../errors.js';
import { STAGES, type Stage } from './stages.js';

/** Whether a failure in `stage` happened before the tool was handed the call (a journal failure there is a result). */
export function isBeforeRun(stage: Stage): boolean {
  return STAGES.indexOf(stage) < STAGES.indexOf('run');
}

/** The `internal` result of a journal failure before the tool ran. */
export function journalFailure(error: JournalError, stage: Stage): HostError {
  const reason = journalFailureReason(error);
  return hostError('internal', { reason, stage }, { cause: error });
}

/** Why the journal failed, as the caller is told: a full disk, or a journal that does not answer. */
function journalFailureReason(error: JournalError): InternalResultReason {
  return lostRecordReason(error);
}
