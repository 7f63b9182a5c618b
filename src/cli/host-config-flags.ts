// Loads the host configuration from a command's parsed flags: the one place the
// validate, list and explain commands turn argv into a HostConfig.
import { loadHostConfig, type HostConfig, type LoadHostConfigOptions } from '../host-config.js';
import { formatProblem, type Problem } from '../config/problem.js';
import { hostFlagsFrom, type HostFlags } from './args.js';
import { loadHostConfigWithServers, loadServersOf, serverOfTool, type ListingSource } from '../host-servers.js';
import { createSilentLogger } from '../log.js';

/** The configuration for the host flags in `values`. */
export function loadConfigFromFlags(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): HostConfig {
  return loadHostConfig(loadOptionsOf(hostFlagsFrom(values), env));
}

/**
 * The configuration for the host flags in `values`, with each upstream server started once
 * to read its tools (`validate`, `list`). `known`: listings that need no start (the seam for
 * a lock's pins, SPEC section 4.2).
 */
export function loadConfigWithServersFromFlags(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env, known?: ListingSource): Promise<HostConfig> {
  return loadHostConfigWithServers(loadOptionsOf(hostFlagsFrom(values), env), { logger: createSilentLogger(), ...(known ? { known } : {}) });
}

/** The configuration for one tool (`explain`): a server is started only when the tool is one of its. */
export async function loadConfigForToolFromFlags(values: Record<string, unknown>, tool: string, env: NodeJS.ProcessEnv = process.env): Promise<HostConfig> {
  const first = loadConfigFromFlags(values, env);
  if (first.tools.has(tool)) return first;
  return loadServersOf(first, loadOptionsOf(hostFlagsFrom(values), env), { logger: createSilentLogger(), only: serverOfTool(tool) });
}

/** Writes `file:line:col: reason` lines to stderr, one per problem. */
export function printProblems(problems: readonly Problem[], prefix = ''): void {
  for (const problem of problems) process.stderr.write(`${prefix}${formatProblem(problem)}\n`);
}

/** What loadHostConfig needs of the host flags (commands that run no tool: no state folder). */
export function loadOptionsOf(flags: HostFlags, env: NodeJS.ProcessEnv = process.env): LoadHostConfigOptions {
  return {
    manifestDirs: flags.manifestDirs,
    policyFiles: flags.policyFiles,
    workspace: flags.workspace,
    env,
    ...(flags.configDir !== undefined ? { configDir: flags.configDir } : {}),
  };
}
