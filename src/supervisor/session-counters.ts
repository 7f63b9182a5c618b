// The counters of one session (SPEC section 5.2): the call budget spent, the
// run of consecutive failures, and whether a terminal tool has completed the
// run. A session is a stdio connection (or, later, an HTTP principal's MCP
// session), not a configuration: the serve layer builds this object once and
// every supervisor a reload builds counts against the same one, so a reload
// never hands a session a fresh budget or forgets that its run is over.
import { randomUUID } from 'node:crypto';
import { HostError, type ErrorCode } from '../errors.js';

/** The codes that extend a failure run (SPEC 5.2); every other failure leaves it as it is. */
export const FAILURE_RUN_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['tool_error', 'tool_crashed', 'timeout', 'memory_limit', 'invalid_output', 'invalid_arguments']);

/** The limits in force for this call (from the policy of the supervisor that takes it). */
interface SessionCaps {
  readonly maxCallsPerSession: number;
  readonly maxConsecutiveFailures: number;
}

export class SessionCounters {
  #calls = 0;
  #failureRun = 0;
  #terminal: { readonly tool: string; readonly callId: string } | undefined;

  /** Names the session in the journal. */
  constructor(readonly id: string = randomUUID()) {}

  /** Calls admitted so far. */
  get callCount(): number {
    return this.#calls;
  }

  /** Calls in a row that failed with one of FAILURE_RUN_CODES. */
  get failureRun(): number {
    return this.#failureRun;
  }

  /** The terminal tool whose success completed the run, if one did. */
  get terminatedBy(): { readonly tool: string; readonly callId: string } | undefined {
    return this.#terminal;
  }

  /** `call_limit` when the run is over: a terminal tool succeeded, or too many calls in a row failed. */
  checkOpen(caps: SessionCaps): void {
    if (this.#terminal) {
      throw new HostError('call_limit', `This session's run was completed by ${this.#terminal.tool}; start a new session to call more tools.`, {
        reason: 'terminal',
        tool: this.#terminal.tool,
        callId: this.#terminal.callId,
      });
    }
    if (this.#failureRun >= caps.maxConsecutiveFailures) {
      throw new HostError('call_limit', `This session stopped after ${this.#failureRun} calls in a row failed; start a new session.`, {
        reason: 'consecutive_failures',
        limit: caps.maxConsecutiveFailures,
        failures: this.#failureRun,
      });
    }
  }

  /** Counts one call against the budget; `call_limit` once it is spent. */
  admit(caps: Pick<SessionCaps, 'maxCallsPerSession'>): void {
    if (this.#calls >= caps.maxCallsPerSession) {
      throw new HostError('call_limit', `This session has used its budget of ${caps.maxCallsPerSession} tool calls.`, { limit: caps.maxCallsPerSession });
    }
    this.#calls++;
  }

  /** A call succeeded: the failure run is over; a terminal tool's success completes the run. */
  recordSuccess(tool: { readonly name: string; readonly terminal: boolean } | undefined, callId: string): void {
    this.#failureRun = 0;
    if (tool?.terminal) this.#terminal ??= { tool: tool.name, callId };
  }

  /** A call failed: the codes of SPEC 5.2 extend the run, the others (refusals, cancels) leave it. */
  recordFailure(code: ErrorCode): void {
    if (FAILURE_RUN_CODES.has(code)) this.#failureRun++;
  }
}
