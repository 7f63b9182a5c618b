// Command-line parsing shared by every command: the host flags of SPEC section 8
// and a UsageError that main.ts turns into exit code 2.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { resolve } from 'node:path';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Flags every host command takes: where the manifests, policies, workspace and state live. */
export const HOST_FLAGS = {
  manifests: { type: 'string', multiple: true },
  policy: { type: 'string', multiple: true },
  workspace: { type: 'string' },
  state: { type: 'string' },
  'log-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export interface HostFlags {
  /** Absolute manifest folders; default ./manifests. */
  readonly manifestDirs: readonly string[];
  /** Absolute organisation policy files, in the order given. */
  readonly policyFiles: readonly string[];
  /** Absolute workspace; default the working directory. */
  readonly workspace: string;
  /** Absolute state folder; default .toolhost/ under the working directory. */
  readonly stateDir: string;
  readonly logFile?: string;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses argv with the host flags plus `extra`; unknown flags are a UsageError. */
export function parseCommandArgs<E extends Options>(argv: readonly string[], extra: E, maxPositionals = Infinity) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: { ...HOST_FLAGS, ...extra }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new UsageError(`unexpected argument: ${parsed.positionals[maxPositionals]}`);
  }
  return parsed;
}

/** The host flags with defaults applied and paths made absolute. */
export function hostFlagsFrom(values: Record<string, unknown>, cwd = process.cwd()): HostFlags {
  const list = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);
  const manifests = list(values['manifests']);
  const logFile = values['log-file'];
  return {
    manifestDirs: (manifests.length > 0 ? manifests : ['manifests']).map((dir) => resolve(cwd, dir)),
    policyFiles: list(values['policy']).map((file) => resolve(cwd, file)),
    workspace: resolve(cwd, typeof values['workspace'] === 'string' ? values['workspace'] : '.'),
    stateDir: resolve(cwd, typeof values['state'] === 'string' ? values['state'] : '.toolhost'),
    ...(typeof logFile === 'string' ? { logFile: resolve(cwd, logFile) } : {}),
  };
}

export const HOST_FLAGS_HELP = `Host flags:
  --manifests DIR   a manifest folder, searched recursively (repeatable; default ./manifests)
  --policy FILE     an organisation policy file (repeatable); the workspace's policies/ is loaded after
  --workspace DIR   the workspace (default: the working directory)
  --state DIR       the state folder: journal and artifacts (default: .toolhost)
  --log-file F      write logs to F instead of stderr`;
