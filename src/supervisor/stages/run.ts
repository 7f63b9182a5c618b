// The run stage (SPEC section 5 step 8): hand the validated arguments to the
// tool's runner with the effective timeout and the call's control, forward
// progress, and turn a failed RunOutcome into a HostError with the tool's
// words redacted. The call's control (call-control.ts) arms the deadline and
// tells the runner to stop; a backstop here makes sure a runner that never
// answers after that cannot hold a call (or a slot) forever. A protected path
// the tool created is removed and fails the call (protected-created.ts).
import { HostError } from '../../errors.js';
import type { Runner, RunSpec } from '../../runner/types.js';
import type { EgressAttempt, ProgressEvent, RunOutcome, RunOutput } from '../../runner/run-types.js';
import type { CallContext } from '../call-context.js';
import { concludeCall } from '../call-control.js';
import type { CallLogger } from '../call-logger.js';
import type { Redactor } from '../redact.js';
import { MAX_ERROR_MESSAGE_CHARS } from '../redact-error.js';
import { missingProtectedPaths, refuseCreatedProtectedPaths } from '../protected-created.js';

interface RunInput {
  readonly ctx: CallContext;
  readonly runner: Runner;
  /** The sandbox the tool runs in (absent for upstream tools): which protected paths it could create. */
  readonly runSpec: RunSpec | undefined;
  readonly args: Readonly<Record<string, unknown>>;
  readonly timeoutMs: number;
  readonly redact: Redactor;
  readonly onProgress?: (event: ProgressEvent) => void;
  /** Each network attempt of the run, as the sandbox reported it (the supervisor counts them for the journal). */
  readonly onEgress: (attempt: EgressAttempt) => void;
}

/** Characters of a tool's log message written to the host's log. */
const MAX_LOG_MESSAGE_CHARS = 4096;

/** How long past its timeout a runner may take to report before the supervisor gives up on it. */
const RUNNER_BACKSTOP_GRACE_MS = 5_000;

/** Runs the tool and returns its raw output; throws a HostError for every failure. */
export async function runTool(input: RunInput): Promise<RunOutput> {
  const missing = missingProtectedPaths(input.runSpec);
  try {
    return await runOnce(input);
  } finally {
    refuseCreatedProtectedPaths(missing, input.ctx.toolName);
  }
}

async function runOnce(input: RunInput): Promise<RunOutput> {
  const { ctx, runner, timeoutMs } = input;
  const control = ctx.control;
  const disarm = control.startDeadline(timeoutMs);
  let stopWatch: (() => void) | undefined;
  try {
    // The runner's outcome, or the backstop's once the call stopped and the runner stayed silent.
    const outcome = await new Promise<RunOutcome>((resolve, reject) => {
      stopWatch = control.onStopAfter(RUNNER_BACKSTOP_GRACE_MS, () => {
        ctx.logger.error({ reason: control.reason, timeoutMs, graceMs: RUNNER_BACKSTOP_GRACE_MS }, 'runner did not report after the call stopped; giving up on it');
        resolve({ ok: false, ...control.failure(), durationMs: Date.now() - ctx.startedAt });
      });
      runner
        .run(
          { callId: ctx.callId, args: input.args },
          {
            control,
            ...(input.onProgress ? { onProgress: input.onProgress } : {}),
            onLog: (level, message) => ctx.logger[level]({ toolLog: true }, input.redact.cut(String(message), MAX_LOG_MESSAGE_CHARS)),
            onDenied: (denial) => ctx.logger.warn({ denial }, 'sandbox refused a tool request'),
            onEgress: (attempt) => {
              input.onEgress(attempt);
              ctx.logger[attempt.admitted ? 'info' : 'warn']({ egress: attempt }, attempt.admitted ? 'egress admitted' : 'egress refused');
            },
          },
        )
        .then(resolve, reject);
    });
    if (outcome.ok) return outcome.output;
    return failWith(ctx, outcome, input.redact, ctx.logger);
  } finally {
    // The deadline is the run's: a late timer must not overrule a result already in hand.
    disarm();
    stopWatch?.();
  }
}

function failWith(ctx: CallContext, outcome: Extract<RunOutcome, { ok: false }>, redact: Redactor, logger: CallLogger): never {
  const ending = concludeCall(ctx.control, outcome);
  if (ending.code !== outcome.code) {
    logger.debug({ runnerCode: outcome.code, code: ending.code }, 'runner failure superseded by an earlier termination');
    throw new HostError(ending.code, ending.message, ending.details);
  }
  // Redacted before it is cut (the supervisor redacts every error's details again as it leaves).
  const message = redact.cut(ending.message, MAX_ERROR_MESSAGE_CHARS);
  const tail = ending.details['stderrTail'];
  throw new HostError(ending.code, typeof tail === 'string' && tail.trim() !== '' ? withStderrTail(message, redact.cut(tail, MAX_STDERR_IN_MESSAGE_CHARS, 'tail')) : message, {
    ...ending.details,
    durationMs: outcome.durationMs,
  });
}

/** Characters of a process's stderr tail shown in the model-visible message. */
const MAX_STDERR_IN_MESSAGE_CHARS = 1500;

// The model reads why the process failed (SPEC section 5): clients show the text, not _meta.
function withStderrTail(message: string, tail: string): string {
  return `${message} The end of its stderr:\n${tail.trimEnd()}`;
}
