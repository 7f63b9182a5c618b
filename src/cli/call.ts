// `toolhost call TOOL [JSON]`: one call through the same supervisor `serve`
// uses, for a person at a terminal. A result is printed as JSON on stdout; a
// failure once: at a terminal its sentence on stderr (--json: the whole error
// result on stdout instead), in a pipe the JSON on stdout and the sentence on
// stderr. Progress and approval prompts go to the terminal (stderr); logs go to
// the log file, or to stderr with --verbose. Exit 0 on a result, 1 on an error
// result, 2 on bad usage.
import { createInterface } from 'node:readline/promises';
import { ConfigError, formatProblem } from '../config/problem.js';
import { createHost } from '../host.js';
import { serverOfTool } from '../host-servers.js';
import { createLogger, createSilentLogger, type Logger } from '../log.js';
import { createProgressView, type ProgressView } from '../terminal/progress.js';
import { CallControl } from '../supervisor/call-control.js';
import { parseStrictJson } from '../supervisor/result/strict-json.js';
import type { ApprovalChannel, CallOutcome, ElicitAnswer } from '../supervisor/types.js';
import { HOST_FLAGS_HELP, hostFlagsFrom, parseCommandArgs, UsageError } from './args.js';
import { JOURNAL_FLAG, JOURNAL_FLAG_HELP, journalFlagFrom, journalKeyFrom } from './journal-flag.js';

const HELP = `Usage: toolhost call TOOL [JSON] [host flags] [--idempotency-key KEY] [--json] [--verbose]

Runs one call of TOOL with the JSON object of arguments (default {}) through the
supervisor: the same checks, policy, approvals, sandbox, limits and journal as
\`toolhost serve\`. Prints the result as JSON on stdout. A failure is printed
once: at a terminal as "code: sentence" on stderr (--json prints the whole error
result on stdout instead); in a pipe as JSON on stdout with the sentence on
stderr. While the call runs, a terminal shows its progress (a bar when the tool
reports a total, a spinner with its message otherwise). When the policy asks for
an approval and this is a terminal, you are asked; otherwise the call is refused
with approval_required.

  --json                  print the whole result as JSON on stdout, failures too
  --verbose               the host's log lines on stderr too (default: only the log file)
  --idempotency-key KEY   send _meta.idempotencyKey (a repeat replays the recorded result)
  --approval-id ID        repeat a call an operator approved (toolhost approve ID)
${JOURNAL_FLAG_HELP}

Exit codes: 0 result, 1 error result, 2 bad usage.

${HOST_FLAGS_HELP}
`;

// Arguments typed at a terminal get the same depth bound as a protocol request (SPEC section 5 step 1).
const MAX_ARGS_DEPTH = 64;

export async function run(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    { 'idempotency-key': { type: 'string' }, 'approval-id': { type: 'string' }, json: { type: 'boolean' }, verbose: { type: 'boolean' }, ...JOURNAL_FLAG },
    2,
  );
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [tool, json] = positionals;
  if (tool === undefined) throw new UsageError('missing TOOL');
  const args = parseArgsJson(json);
  const flags = hostFlagsFrom(values);
  const logger = callLogger(flags.logFile, values.verbose === true);

  let host;
  try {
    const journalUrl = journalFlagFrom(values);
    // Only the server whose tool this is gets started (a manifest tool starts none).
    const journalKeyFile = journalKeyFrom(values);
    host = await createHost({
      ...flags,
      ...(journalUrl !== undefined ? { journalUrl } : {}),
      ...(journalKeyFile !== undefined ? { journalKeyFile } : {}),
      logger,
      prepareSandboxes: false,
      onlyServers: serverOfTool(tool),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) process.stderr.write(`${formatProblem(problem)}\n`);
    return 1;
  }

  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;
  const progress = createProgressView(process.stderr);
  const controller = new AbortController();
  // Every SIGINT aborts (the first wins): one Ctrl-C can arrive twice through bin/toolhost.js.
  const onInterrupt = (): void => controller.abort();
  process.on('SIGINT', onInterrupt);
  try {
    const key = values['idempotency-key'];
    const outcome = await host.supervisor.callTool({
      name: tool,
      args,
      meta: {
        ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
        ...(typeof values['approval-id'] === 'string' ? { 'toolhost/approvalId': values['approval-id'] } : {}),
      },
      control: new CallControl([controller.signal]),
      approval: interactive ? terminalApproval(progress) : { kind: 'none' },
      ...(process.stderr.isTTY ? { onProgress: (event) => progress.update(event) } : {}),
    });
    progress.clear();
    return printOutcome(outcome, { json: values.json === true, terminal: process.stdout.isTTY === true });
  } finally {
    process.off('SIGINT', onInterrupt);
    await host.close();
  }
}

/**
 * Prints the outcome; returns the exit code. A failure is said once: at a terminal
 * the sentence (or with --json the whole result), in a pipe the JSON for the script
 * and the sentence for the person reading stderr.
 */
function printOutcome(outcome: CallOutcome, how: { readonly json: boolean; readonly terminal: boolean } = { json: false, terminal: false }): number {
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
      if (how.json || !how.terminal) process.stdout.write(`${JSON.stringify({ callId: outcome.callId, isError: true, code, message, details, recovery, ...parts }, null, 2)}\n`);
      if (!how.json) process.stderr.write(`toolhost call: ${code}: ${message}\n`);
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

/**
 * The host's logger for one call: the log file when there is one (toolhost.yaml's
 * logFile or --log-file), and stderr only with --verbose, so a person sees the
 * outcome once rather than again as log lines.
 */
function callLogger(logFile: string | undefined, verbose: boolean): Logger {
  if (verbose) return createLogger();
  if (logFile !== undefined) return createLogger({ file: logFile });
  return createSilentLogger();
}

// The prompt text is already bounded and escaped by the supervisor.
function terminalApproval(progress: ProgressView): ApprovalChannel {
  return {
    kind: 'elicitation',
    async elicit(prompt, signal): Promise<ElicitAnswer> {
      progress.clear();
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
