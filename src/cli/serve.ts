// `toolhost serve`, its first moment. A stdio server answers `initialize` before
// its host is built: the modules loaded here are few and small (no MCP SDK, no
// YAML or JSON Schema parser, no SQLite, no logger), the protocol is moved off
// fd 1 and stdin is read at once by the early front (protocol/stdio-early.ts),
// while serve-host.ts loads and builds the host; its transport then takes over
// the lines held meanwhile. The early front starts only when nothing can make
// this an HTTP server (--http, or an http: section in toolhost.yaml) and the
// command line is not asking for help; otherwise serve-host.ts does it all, as
// before. When the host does not start after `initialize` was answered, the
// requests held get an error that says so, and the exit code is serve-host's.
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { errorData } from '../errors.js';
import { maxMessageBytesOf } from '../protocol/message-limits.js';
import { takeProtocolChannel } from '../protocol/protocol-fd.js';
import { EarlyStdio, type EarlyError } from '../protocol/stdio-early.js';
import { findToolhostFile, MAX_CONFIG_BYTES } from './config-file-find.js';
import { packageVersion } from './package-version.js';
import { UsageError } from './usage-error.js';
import { JSONRPC_INTERNAL_ERROR } from '../protocol/jsonrpc-codes.js';

export async function run(argv: readonly string[]): Promise<number> {
  const early = startEarlyFront(argv);
  const { runServe } = await import('./serve-host.js');
  if (early === undefined) return runServe(argv);
  let code: number;
  try {
    code = await runServe(argv, early);
  } catch (error) {
    await early.fail(notStarted(error instanceof UsageError ? 'its command line is not valid' : 'it failed while starting'));
    throw error;
  }
  if (!early.isReleased) await early.fail(notStarted(code === 0 ? 'it was stopped before it was ready' : 'its configuration does not load'));
  return code;
}

/** How many bytes of lines the early front holds, per byte of the largest message: two messages of the largest size. */
const HELD_MESSAGES = 2;

/** The early front reading stdin, or undefined when this run must not have one. */
function startEarlyFront(argv: readonly string[]): EarlyStdio | undefined {
  if (!isStdioCertain(argv)) return undefined;
  const maxMessageBytes = maxMessageBytesOf(flagValue(argv, '--max-message-bytes'));
  // Not a usable size: serve-host's parse says so, as a usage error.
  if (maxMessageBytes === undefined) return undefined;
  return new EarlyStdio({
    input: process.stdin,
    takeChannel: () => {
      const channel = takeProtocolChannel();
      // serve-host awaits it and reports a failure; this only keeps it from being unhandled meanwhile.
      channel.catch(() => undefined);
      return channel;
    },
    directFd: 1,
    serverInfo: { name: 'toolhost', version: packageVersion() },
    maxMessageBytes,
    maxHeldBytes: HELD_MESSAGES * maxMessageBytes,
  });
}

/**
 * True when this run serves stdio whatever its full parse finds: no --help, no --http
 * (nor --console, which needs it), and either --stdio or no toolhost.yaml that could
 * name an http: section. The file is only searched, not parsed: any `http:` outside a
 * comment (a key, a URL) leaves the decision to the full parse. Comments are skipped
 * because `toolhost init` writes an `http:` section commented out.
 */
export function isStdioCertain(argv: readonly string[], cwd = process.cwd()): boolean {
  for (const arg of argv) {
    if (arg === '--help' || arg === '-h' || arg === '--http' || arg.startsWith('--http=') || arg === '--console') return false;
  }
  if (argv.includes('--stdio')) return true;
  const named = flagValue(argv, '--config');
  const file = named !== undefined ? resolve(cwd, named) : findToolhostFile(cwd);
  if (file === undefined) return true;
  try {
    if (statSync(file).size > MAX_CONFIG_BYTES) return false;
    return !readFileSync(file, 'utf8')
      .split('\n')
      .some((line) => /http["']?\s*:/.test(line.replace(YAML_COMMENT, '')));
  } catch {
    return false;
  }
}

/** A YAML comment: from a `#` that starts the line or follows a space. */
const YAML_COMMENT = /(^|\s)#.*$/;

/** The value of `--name VALUE` or `--name=VALUE` (the last one given), or undefined. */
function flagValue(argv: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === name) value = argv[i + 1];
    else if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1);
  }
  return value;
}

/** The answer to a request held when the host did not start: what happened, and what to do. */
function notStarted(why: string): EarlyError {
  return {
    code: JSONRPC_INTERNAL_ERROR,
    message: `toolhost did not start: ${why}. The reasons are on the server's stderr (and in its log file); fix them and restart the server.`,
    data: errorData('internal', { reason: 'host_not_started' }),
  };
}
