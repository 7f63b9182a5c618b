// `toolhost call TOOL [JSON]`: one call through the same supervisor `serve`
// uses, for a person at a terminal. The outcome is printed as JSON on stdout;
// progress and approval prompts go to the terminal (stderr). Exit 0 on a
// result, 1 on an error result (its code on stderr), 2 on bad usage.
import { createInterface } from 'node:readline/promises';
import { ConfigError, formatProblem } from '../config/problem.js';
import { createHost } from '../host.js';
import { createLogger } from '../log.js';
import { parseStrictJson } from '../supervisor/strict-json.js';
import type { ApprovalChannel, CallOutcome, ElicitAnswer } from '../supervisor/types.js';
import { HOST_FLAGS_HELP, hostFlagsFrom, parseCommandArgs, UsageError } from './args.js';
import { JOURNAL_FLAG, JOURNAL_FLAG_HELP, journalFlagFrom, journalKeyFrom } from './journal-flag.js';

const HELP = `Usage: toolhost call TOOL [JSON] [host flags] [--idempotency-key KEY]

Runs one call of TOOL with the JSON object of arguments (default {}) through the
supervisor: the same checks, policy, approvals, sandbox, limits and journal as
\`toolhost serve\`. Prints the result as JSON on stdout. When the policy asks for
an approval and this is a terminal, you are asked; otherwise the call is refused
with approval_required.

  --idempotency-key KEY   send _meta.idempotencyKey (a repeat replays the recorded result)
  --approval-id ID        repeat a call an operator approved (toolhost approve ID)
${JOURNAL_FLAG_HELP}

Exit codes: 0 result, 1 error result (code on stderr), 2 bad usage.

${HOST_FLAGS_HELP}
`;

// Arguments typed at a terminal get the same depth bound as a protocol request (SPEC section 5 step 1).
const MAX_ARGS_DEPTH = 64;

export async function run(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { 'idempotency-key': { type: 'string' }, 'approval-id': { type: 'string' }, ...JOURNAL_FLAG }, 2);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [tool, json] = positionals;
  if (tool === undefined) throw new UsageError('missing TOOL');
  const args = parseArgsJson(json);
  const flags = hostFlagsFrom(values);
  const logger = createLogger({
    ...(flags.logFile !== undefined ? { file: flags.logFile } : {}),
    // A person reads stderr here: only warnings unless asked for more.
    ...(process.env['TOOLHOST_LOG_LEVEL'] === undefined ? { level: 'warn' } : {}),
  });

  let host;
  try {
    const journalUrl = journalFlagFrom(values);
    const journalKeyFile = journalKeyFrom(values);
    host = await createHost({ ...flags, ...(journalUrl !== undefined ? { journalUrl } : {}), ...(journalKeyFile !== undefined ? { journalKeyFile } : {}), logger, prepareSandboxes: false });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) process.stderr.write(`${formatProblem(problem)}\n`);
    return 1;
  }

  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;
  const controller = new AbortController();
  const onInterrupt = (): void => controller.abort();
  process.once('SIGINT', onInterrupt);
  try {
    const key = values['idempotency-key'];
    const outcome = await host.supervisor.callTool({
      name: tool,
      args,
      meta: {
        ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
        ...(typeof values['approval-id'] === 'string' ? { 'toolhost/approvalId': values['approval-id'] } : {}),
      },
      signal: controller.signal,
      approval: interactive ? terminalApproval() : { kind: 'none' },
      ...(process.stderr.isTTY ? { onProgress: showProgress } : {}),
    });
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
    return printOutcome(outcome);
  } finally {
    process.off('SIGINT', onInterrupt);
    await host.close();
  }
}

/** Prints the outcome; returns the exit code. */
export function printOutcome(outcome: CallOutcome): number {
  switch (outcome.kind) {
    case 'result':
      process.stdout.write(
        `${JSON.stringify(
          {
            callId: outcome.callId,
            content: outcome.content,
            ...(outcome.structuredContent ? { structuredContent: outcome.structuredContent } : {}),
            ...(outcome.meta ? { _meta: outcome.meta } : {}),
          },
          null,
          2,
        )}\n`,
      );
      return 0;
    case 'error': {
      const { code, message, details, recovery, content } = outcome.error;
      const parts = content.length > 0 ? { content } : {};
      process.stdout.write(`${JSON.stringify({ callId: outcome.callId, isError: true, code, message, details, recovery, ...parts }, null, 2)}\n`);
      process.stderr.write(`toolhost call: ${code}: ${message}\n`);
      return 1;
    }
    case 'input_required':
      // Not reachable with the channels used here; a refusal all the same.
      process.stderr.write(`toolhost call: approval_required: ${outcome.message}\n`);
      return 1;
  }
}

function parseArgsJson(json: string | undefined): unknown {
  if (json === undefined) return {};
  const parsed = parseStrictJson(json, MAX_ARGS_DEPTH);
  if (!parsed.ok) throw new UsageError(`JSON arguments: ${parsed.reason.replace(/_/g, ' ')} at offset ${parsed.offset}`);
  return parsed.value;
}

function showProgress(event: { progress: number; total?: number; message?: string }): void {
  const total = event.total !== undefined ? `/${event.total}` : '';
  const message = event.message !== undefined ? ` ${event.message}` : '';
  process.stderr.write(`\r\x1b[K${event.progress}${total}${message}`.slice(0, 200));
}

// The prompt text is already bounded and escaped by the supervisor.
function terminalApproval(): ApprovalChannel {
  return {
    kind: 'elicitation',
    async elicit(prompt, signal): Promise<ElicitAnswer> {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        const answer = await rl.question(`${prompt.message} [y/N] `, { signal });
        return /^y(es)?$/i.test(answer.trim()) ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
      } finally {
        rl.close();
      }
    },
  };
}
