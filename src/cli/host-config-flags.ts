// Loads the host configuration from a command's parsed flags: the one place the
// validate, list and explain commands turn argv into a HostConfig.
import { loadHostConfig, type HostConfig } from '../host-config.js';
import { formatProblem, type Problem } from '../config/problem.js';
import { hostFlagsFrom } from './args.js';

/** The configuration for the host flags in `values`. */
export function loadConfigFromFlags(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): HostConfig {
  const flags = hostFlagsFrom(values);
  return loadHostConfig({ manifestDirs: flags.manifestDirs, policyFiles: flags.policyFiles, workspace: flags.workspace, env });
}

/** Writes `file:line:col: reason` lines to stderr, one per problem. */
export function printProblems(problems: readonly Problem[], prefix = ''): void {
  for (const problem of problems) process.stderr.write(`${prefix}${formatProblem(problem)}\n`);
}
