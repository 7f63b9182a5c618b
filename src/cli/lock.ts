// `toolhost lock [--check]` (SPEC section 4.2): pins the definition of every
// tool (manifest tools and each server's tools, the servers started in their
// sandboxes to read them) in toolhost.lock beside the workspace's policies/.
// --check writes nothing: it exits 1 and prints what changed since the lock
// (for CI), 0 when every tool is pinned as it is.
import { hostFlagsFrom, HOST_FLAGS_HELP, parseCommandArgs } from './args.js';
import { printProblems } from './host-config-flags.js';
import { serverProblems } from './server-report.js';
import { loadHostConfigWithServers } from '../host-servers.js';
import { createSilentLogger } from '../log.js';
import type { ToolDefinition } from '../registry/definition-digest.js';
import { diffPins, formatPinChanges } from '../registry/lock-diff.js';
import { LOCK_FILE_NAME, readLock, renderLock, writeLock } from '../registry/lock-file.js';
import { definitionOf } from '../registry/tool-definition.js';

const HELP = `Usage: toolhost lock [--check] [host flags]

Pins the definition of every tool (name, description, input and output schema,
annotations and the class entry that applies) in ${LOCK_FILE_NAME} beside the
workspace's policies/: manifest tools, and each server's tools (the servers are
started in their sandboxes to list them). With a lock, a tool whose definition
differs from its pin, or that has no pin, is excluded until this runs again.

  --check   write nothing; print what changed since the lock (a diff of
            descriptions and schemas) and exit 1 if anything did

Exit status: 0 written (or, with --check, nothing changed); 1 a change (--check),
a problem in the manifests or policies, or a server that could not be listed
(the lock is then not written); 2 bad usage.

${HOST_FLAGS_HELP}
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { check: { type: 'boolean' } }, 0);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const flags = hostFlagsFrom(values);
  const config = await loadHostConfigWithServers(
    { manifestDirs: flags.manifestDirs, policyFiles: flags.policyFiles, workspace: flags.workspace, ignorePins: true },
    { logger: createSilentLogger() },
  );
  // Servers excluded by the policy offer no tool to pin; one that could not start would lose its pins.
  const unavailable = serverProblems(config.servers.filter((server) => server.isExcludedByPolicy !== true));
  printProblems(config.problems);
  printProblems(unavailable);
  if (config.problems.length + unavailable.length > 0) {
    process.stderr.write(`toolhost lock: ${values.check ? 'cannot check' : 'not written'}: fix the problems above first\n`);
    return 1;
  }
  const manifests = [...config.tools.values()].map((view) => view.manifest);
  const current = new Map<string, ToolDefinition>(manifests.map((manifest) => [manifest.name, definitionOf(manifest)]));
  const read = readLock(config.workspace);
  if (values.check) {
    if (!read.ok) {
      printProblems(read.problems);
      return 1;
    }
    if (read.lock === null) {
      process.stderr.write(`toolhost lock --check: no ${LOCK_FILE_NAME} in ${config.workspace}; run toolhost lock\n`);
      return 1;
    }
    const pinned = new Map([...read.lock.entries].map(([name, entry]) => [name, entry.definition] as const));
    const changes = diffPins(pinned, current);
    if (changes.length === 0) {
      process.stdout.write(`ok: ${current.size} tools pinned as they are in ${LOCK_FILE_NAME}\n`);
      return 0;
    }
    process.stdout.write(formatPinChanges(changes));
    process.stderr.write(`toolhost lock --check: ${changes.length} tool${changes.length === 1 ? '' : 's'} differ from ${LOCK_FILE_NAME}; review and run toolhost lock\n`);
    return 1;
  }
  const previous = read.ok && read.lock !== null ? new Map([...read.lock.entries].map(([name, entry]) => [name, entry.definition] as const)) : new Map<string, ToolDefinition>();
  const changes = diffPins(previous, current);
  const path = writeLock(config.workspace, renderLock(manifests));
  const count = (kind: string): number => changes.filter((change) => change.kind === kind).length;
  process.stdout.write(`wrote ${path}: ${current.size} tools (${count('added')} added, ${count('changed')} changed, ${count('removed')} removed)\n`);
  return 0;
}
