// The host programs the sandbox is built from (bubblewrap, prlimit, a POSIX
// shell), found once per host (its SandboxFacts), synchronously, so building an
// argv never awaits. bubblewrap's --help is read ahead by the sandbox probe
// (learnBwrapHelp), off the event loop; the synchronous read is the fallback.
import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { SandboxFacts } from './sandbox-facts.js';

/** Where programs are looked up when neither the caller nor the environment says. */
const DEFAULT_SEARCH_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The first executable regular file called `name` on `searchPath` (or `name` itself when it has a slash). */
export function findExecutable(name: string, searchPath: string = process.env['PATH'] ?? DEFAULT_SEARCH_PATH): string | undefined {
  if (name.includes('/')) return isExecutableFile(name) ? name : undefined;
  for (const dir of searchPath.split(delimiter)) {
    // An empty PATH entry means the working directory to execvp; a sandbox never relies on that.
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** bubblewrap: the explicit path if given (a test seam), else `bwrap` on PATH or in the usual places. */
export function findBwrap(facts: SandboxFacts, bwrapPath?: string): string | undefined {
  if (bwrapPath !== undefined) return isExecutableFile(bwrapPath) ? bwrapPath : undefined;
  return findHostProgram(facts, 'bwrap');
}

/** prlimit from util-linux. */
export function findPrlimit(facts: SandboxFacts): string | undefined {
  return findHostProgram(facts, 'prlimit');
}

/** A program of the host's (nsenter, ip) on PATH or in the usual places, sbin included. */
export function findHostTool(facts: SandboxFacts, name: string): string | undefined {
  return findHostProgram(facts, name);
}

// Every sandbox start looked both programs up again: a stat and an access per PATH
// entry, the largest part of building an argv. A program found stays found (per
// PATH); if it is removed later, its spawn fails and the call fails closed. One not
// found is looked for again, so installing it needs no restart.
function findHostProgram(facts: SandboxFacts, name: string): string | undefined {
  const searchPath = `${process.env['PATH'] ?? ''}${delimiter}${DEFAULT_SEARCH_PATH}`;
  return facts.remember(
    `program\0${name}\0${searchPath}`,
    () => findExecutable(name, searchPath),
    (path) => path !== undefined,
  );
}

/** Whether this bubblewrap knows `flag` (read from its --help once per binary and host). */
export function bwrapSupports(facts: SandboxFacts, bwrapPath: string, flag: string): boolean {
  return new RegExp(`(^|\\s)${flag.replace(/[-]/g, '\\-')}(\\s|$)`, 'm').test(bwrapHelp(facts, bwrapPath) ?? '');
}

/** False when a signal (its timeout's included) ended bubblewrap's --help: then none of its flags is known. */
export function bwrapHelpIsKnown(facts: SandboxFacts, bwrapPath: string): boolean {
  return bwrapHelp(facts, bwrapPath) !== undefined;
}

const bwrapHelpKey = (bwrapPath: string) => `bwrap-help\0${bwrapPath}`;

function bwrapHelp(facts: SandboxFacts, bwrapPath: string): string | undefined {
  // An unknown help is not kept: the next sandbox asks again.
  return facts.remember(
    bwrapHelpKey(bwrapPath),
    () => readBwrapHelp(bwrapPath),
    (text) => text !== undefined,
  );
}

/** Reads bubblewrap's --help with an asynchronous child process and keeps it (known already: nothing runs); false when a signal ended it. */
export function learnBwrapHelp(facts: SandboxFacts, bwrapPath: string): Promise<boolean> {
  if (facts.knows(bwrapHelpKey(bwrapPath))) return Promise.resolve(true);
  return new Promise((resolve) => {
    execFile(bwrapPath, ['--help'], { ...HELP_OPTIONS, encoding: 'utf8' }, (error, stdout) => {
      const help = error === null ? stdout : helpAfterError(Object.assign(error, { stdout }));
      if (help !== undefined) facts.remember(bwrapHelpKey(bwrapPath), () => help);
      resolve(help !== undefined);
    });
  });
}

const HELP_OPTIONS = { timeout: 5000, env: {} };

function readBwrapHelp(bwrapPath: string): string | undefined {
  try {
    return execFileSync(bwrapPath, ['--help'], { ...HELP_OPTIONS, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    return helpAfterError(error);
  }
}

/** The help of a --help that failed: undefined when a signal (its timeout's included) ended it, else whatever it printed. */
function helpAfterError(error: unknown): string | undefined {
  const { stdout, signal } = error as { stdout?: unknown; signal?: unknown };
  if (typeof signal === 'string') return undefined;
  // bwrap --help exits 0, but be lenient: take whatever it printed.
  return typeof stdout === 'string' ? stdout : '';
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
