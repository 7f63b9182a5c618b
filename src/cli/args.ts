// Command-line parsing shared by every command: the host flags of SPEC section 8,
// the settings of toolhost.yaml under them (a flag overrides its key); bad usage
// is a UsageError (re-exported here for the commands).
import { statSync } from 'node:fs';
import { realPathOr } from '../config/real-path.js';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { closestKey } from '../config/closest-key.js';
import { formatProblem } from '../config/problem.js';
import { findToolhostFile, loadToolhostFile, type ToolhostFile } from './config-file.js';
import { JOURNAL_ENV } from '../audit/journal-url.js';
import { UsageError } from './usage-error.js';

export { UsageError };

/** Flags every host command takes: where the configuration, manifests, policies, workspace and state live. */
const HOST_FLAGS = {
  config: { type: 'string' },
  manifests: { type: 'string', multiple: true },
  policy: { type: 'string', multiple: true },
  workspace: { type: 'string' },
  state: { type: 'string' },
  'log-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export interface HostFlags {
  /** Absolute manifest folders; default ./manifests (beside toolhost.yaml when there is one). */
  readonly manifestDirs: readonly string[];
  /** Absolute organisation policy files, in the order given. */
  readonly policyFiles: readonly string[];
  /** Absolute workspace, an existing folder; default the working directory (toolhost.yaml's folder when there is one). */
  readonly workspace: string;
  /** Absolute state folder; default .toolhost/ under the working directory (beside toolhost.yaml when there is one). */
  readonly stateDir: string;
  readonly logFile?: string;
  /** The folder of the toolhost.yaml in force: organisation policy files are named relative to it. */
  readonly configDir?: string;
}

type Options = NonNullable<ParseArgsConfig['options']>;

interface ParseCommandOptions {
  /** Read toolhost.yaml (default true); false for commands that use none of its settings. */
  readonly config?: boolean;
}

// The toolhost.yaml each parse used, by its values object: hostFlagsFrom needs it
// for defaults and for saying where a bad setting came from.
const CONFIG_OF = new WeakMap<object, { readonly file: ToolhostFile; readonly keys: ReadonlyMap<string, string>; readonly isFound: boolean }>();

/**
 * Parses argv with the host flags plus `extra`; unknown flags are a UsageError (with
 * "did you mean"). The settings of toolhost.yaml fill every option the command takes
 * and the command line left out.
 */
export function parseCommandArgs<E extends Options>(argv: readonly string[], extra: E, maxPositionals = Infinity, options: ParseCommandOptions = {}) {
  const all = { ...HOST_FLAGS, ...extra };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: all, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(describeParseError(error, Object.keys(all)));
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new UsageError(`unexpected argument: ${parsed.positionals[maxPositionals]}`);
  }
  const values = parsed.values as Record<string, unknown>;
  if (options.config !== false && values['help'] !== true) {
    const named = typeof values['config'] === 'string' ? values['config'] : undefined;
    const file = configFileFor(named);
    if (file) {
      const keys = applySettings(file, values, new Set(Object.keys(all)));
      CONFIG_OF.set(values, { file, keys, isFound: named === undefined });
    }
  }
  return parsed;
}

/** The host flags with defaults applied and paths made absolute; a workspace that is not a folder is a UsageError. */
export function hostFlagsFrom(values: Record<string, unknown>, cwd = process.cwd()): HostFlags {
  const config = CONFIG_OF.get(values);
  // Without toolhost.yaml the defaults are the working directory's; with it, its folder's.
  const base = config?.file.dir ?? cwd;
  const list = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);
  const manifests = list(values['manifests']);
  const logFile = values['log-file'];
  const workspace = resolve(cwd, typeof values['workspace'] === 'string' ? values['workspace'] : base);
  checkWorkspace(workspace, config?.keys.has('workspace') === true ? config.file.file : undefined);
  const policyFiles = list(values['policy']).map((file) => resolve(cwd, file));
  if (config?.isFound === true && config.keys.has('policy')) checkOrganisationFiles(policyFiles, [workspace, config.file.dir], config.file.file);
  return {
    manifestDirs: manifests.length > 0 ? manifests.map((dir) => resolve(cwd, dir)) : [join(base, 'manifests')],
    policyFiles,
    workspace,
    stateDir: resolve(cwd, typeof values['state'] === 'string' ? values['state'] : join(base, '.toolhost')),
    ...(typeof logFile === 'string' ? { logFile: resolve(cwd, logFile) } : {}),
    ...(config !== undefined ? { configDir: config.file.dir } : {}),
  };
}

/** For the help of commands that read only the state folder or journal of toolhost.yaml. */
export const CONFIG_FLAG_HELP = `  --config FILE the settings file (default: toolhost.yaml here or in the nearest parent);
                its state and journal apply unless given here`;

export const HOST_FLAGS_HELP = `Host flags (each overrides its key in toolhost.yaml):
  --config FILE     the settings file (default: toolhost.yaml in this folder or the nearest parent)
  --manifests DIR   a manifest folder, searched recursively (repeatable; default ./manifests)
  --policy FILE     an organisation policy file (repeatable); the workspace's policies/ is loaded after
  --workspace DIR   the workspace, an existing folder (default: the working directory,
                    or toolhost.yaml's folder)
  --state DIR       the state folder: journal and artifacts (default: .toolhost)
  --log-file F      write logs to F instead of stderr`;

// Which command-line option each setting fills, when the command takes it.
const SETTING_OPTIONS: readonly (readonly [option: string, read: (file: ToolhostFile) => unknown, key: string])[] = [
  ['manifests', (file) => file.settings.manifests, 'manifests'],
  ['policy', (file) => file.settings.policies, 'policies'],
  ['workspace', (file) => file.settings.workspace, 'workspace'],
  ['state', (file) => file.settings.state, 'state'],
  ['journal', (file) => file.settings.journal, 'journal'],
  ['log-file', (file) => file.settings.logFile, 'logFile'],
  ['http', (file) => file.settings.http?.listen, 'http.listen'],
  ['auth-tokens', (file) => file.settings.http?.authTokens, 'http.authTokens'],
  ['auth-issuer', (file) => file.settings.http?.authIssuer, 'http.authIssuer'],
  ['auth-audience', (file) => file.settings.http?.authAudience, 'http.authAudience'],
  ['auth-jwks', (file) => file.settings.http?.authJwks, 'http.authJwks'],
  ['no-auth', (file) => file.settings.http?.noAuth, 'http.noAuth'],
  ['public-url', (file) => file.settings.http?.publicUrl, 'http.publicUrl'],
  ['allowed-host', (file) => file.settings.http?.allowedHosts, 'http.allowedHosts'],
];

/** Fills the options the command takes and argv left out; returns option → the key that filled it. */
function applySettings(file: ToolhostFile, values: Record<string, unknown>, known: ReadonlySet<string>): Map<string, string> {
  const filled = new Map<string, string>();
  // `serve --stdio` keeps a configured HTTP front out of this run.
  const skipHttp = values['stdio'] === true;
  for (const [option, read, key] of SETTING_OPTIONS) {
    if (!known.has(option) || values[option] !== undefined) continue;
    if (skipHttp && key.startsWith('http.')) continue;
    // The environment's journal beats the file's, as a flag beats both.
    if (option === 'journal' && (process.env[JOURNAL_ENV] ?? '') !== '') continue;
    const value = read(file);
    if (value === undefined) continue;
    values[option] = Array.isArray(value) ? [...(value as unknown[])] : value;
    filled.set(option, key);
  }
  return filled;
}

function configFileFor(flag: string | undefined): ToolhostFile | undefined {
  const path = flag !== undefined ? resolve(flag) : findToolhostFile(process.cwd());
  if (path === undefined) return undefined;
  const loaded = loadToolhostFile(path, flag ?? path);
  if (!loaded.ok) throw new UsageError(loaded.problems.map(formatProblem).join('\n'));
  return loaded.config;
}

// A workspace that is not there must stop the command: serve would start with no
// repository policy and calls would fail later as sandbox_unavailable or timeout.
function checkWorkspace(workspace: string, configFile: string | undefined): void {
  const origin = configFile !== undefined ? `workspace: in ${configFile}` : 'the workspace (--workspace, default the working directory)';
  let isFolder: boolean;
  try {
    isFolder = statSync(workspace).isDirectory();
  } catch {
    throw new UsageError(`${origin} is ${workspace}, which does not exist; create the folder or name another`);
  }
  if (!isFolder) throw new UsageError(`${origin} is ${workspace}, which is not a folder; name a folder`);
}

/**
 * An organisation layer is what a repository cannot loosen, so a toolhost.yaml found by
 * looking in the working directory and its parents (often a file of the repository itself)
 * may not name one inside the workspace or inside its own folder: a cloned repository could
 * otherwise grant its own tools first party. A file named with --config, and --policy
 * flags, are the person's own choice and are taken as given.
 */
function checkOrganisationFiles(files: readonly string[], repositoryFolders: readonly string[], configFile: string): void {
  const folders = repositoryFolders.map((path) => realPathOr(path));
  for (const file of files) {
    const real = realPathOr(file);
    const holder = folders.find((folder) => isWithin(real, folder));
    if (holder === undefined) continue;
    throw new UsageError(
      `policies: in ${configFile} (found from the working directory) names ${file}, which lies inside ${holder}: an organisation policy ` +
        `must come from outside the repository it governs (e.g. /etc/toolhost/), or the settings file be named with --config, or the ` +
        `policy given with --policy; repository rules go in the workspace's policies/ folder`,
    );
  }
}

function isWithin(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

// node:util's messages for an unknown option, with the nearest known one.
function describeParseError(error: unknown, known: readonly string[]): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return message;
  const match = /^Unknown option '(-{1,2})([^']*)'/.exec(message);
  if (!match) return message;
  const given = match[2] ?? '';
  const hint = closestKey(given.split('=')[0] ?? given, known);
  return `unknown option ${match[1]}${given}${hint !== undefined ? ` (did you mean --${hint}?)` : ''}`;
}
