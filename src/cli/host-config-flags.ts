// Loads the host configuration from a command's parsed flags: the one place the
// validate, list and explain commands turn argv into a HostConfig.
import { loadHostConfig, type HostConfig, type LoadHostConfigOptions } from '../host-config.js';
import { formatProblem, type Problem } from '../config/problem.js';
import { hostFlagsFrom, type HostFlags } from './args.js';
import { loadHostConfigWithServers, loadServersOf, serverOfTool, type ListingSource } from '../host-servers.js';
import { createSilentLogger } from '../log.js';
import { listingsFromLock } from '../registry/lock-listing.js';

/** The configuration for the host flags in `values`. */
export function loadConfigFromFlags(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): HostConfig {
  return loadHostConfig(loadOptionsOf(hostFlagsFrom(values), env));
}

/**
 * The configuration for the host flags in `values`, with each upstream server's tools
 * (`validate`, `list`): from the lock's pins where pinning is in force (SPEC section 4.2),
 * else by starting the server once to read them. `known`: listings that need no start.
 */
export function loadConfigWithServersFromFlags(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env, known: ListingSource = pinnedListings): Promise<HostConfig> {
  return loadHostConfigWithServers(loadOptionsOf(hostFlagsFrom(values), env), { logger: createSilentLogger(), known });
}

/** The configuration for one tool (`explain`): a server is started only when the tool is one of its and no pin lists it. */
export async function loadConfigForToolFromFlags(values: Record<string, unknown>, tool: string, env: NodeJS.ProcessEnv = process.env): Promise<HostConfig> {
  const first = loadConfigFromFlags(values, env);
  if (first.tools.has(tool)) return first;
  return loadServersOf(first, loadOptionsOf(hostFlagsFrom(values), env), { logger: createSilentLogger(), only: serverOfTool(tool), known: pinnedListings });
}

/**
 * The servers' listings as the lock pinned them, when pins are in force: a tool that
 * differs from its pin would be excluded anyway, so the pins are what the host would
 * offer, and a command that only reports need not start the servers (each can take
 * seconds). The server's own listing is checked against them when `serve` starts it.
 */
const pinnedListings: ListingSource = (first) => {
  const { enforced, lock } = first.pinning;
  return enforced && lock !== null ? listingsFromLock(lock, first.serverProbes.keys()) : undefined;
};

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
