// `toolhost import NAME [--out FILE] -- COMMAND...` (SPEC section 2.1): starts
// COMMAND as an upstream server in the namespace sandbox (the workspace
// read-only, nothing else of the host), reads its tools and writes a
// `kind: Server` manifest with one `tools:` entry per tool. Each class is only
// *suggested* from the server's own hints and marked unverified, so a person
// reviews it before the server is used; tools without hints stay unclassified.
import { existsSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createSilentLogger } from '../log.js';
import { resolveCommandElement } from '../registry/manifest-paths.js';
import { nodeModulesAbove } from '../registry/server-tools.js';
import { formatStderrLines, listOne, ProcessServices, type Listing, type RunSpec, type ServerInstance, type UpstreamTool } from '../runner/index.js';
import { POLICY_DEFAULTS } from '../policy/defaults.js';
import { FLOOD_CAP_BYTES } from '../registry/result-limits.js';
import { secretValuesOf } from '../host-config.js';
import { createRedactor } from '../supervisor/redact.js';
import { networkStartWarning, ownFolderWriteWarning } from './import-warnings.js';
import { parseCommandArgs, UsageError } from './args.js';

const HELP = `Usage: toolhost import NAME [--out FILE] [--workspace DIR] [--memory-mb N] [--startup-timeout-ms N] -- COMMAND...

Starts COMMAND as a stdio MCP server in the namespace sandbox (the workspace
read-only, no network, a clean environment), reads its tools and writes a
kind: Server manifest (default ./NAME.yaml; an existing file is never
overwritten). Every tool gets an entry whose class is SUGGESTED from the
server's own hints and marked unverified in a comment: review each one before
use. Tools without hints are left unclassified (refused under strict).
COMMAND's ./ elements are paths relative to the manifest's folder; an argument
equal to the workspace is written as \${WORKSPACE}.

  NAME                   the server name: a lowercase letter, then up to 15 lowercase letters or digits
  --out FILE             where to write the manifest (default ./NAME.yaml)
  --memory-mb N          the server's data, MiB (default 256; the sandbox adds 1536 for its runtime)
  --startup-timeout-ms N start + initialize + tools/list (default 20000)

Exit status: 0 written, 1 the server did not start or the file exists, 2 bad usage.
`;

export async function run(argv: readonly string[]): Promise<number> {
  const split = argv.indexOf('--');
  const own = split === -1 ? argv : argv.slice(0, split);
  const command = split === -1 ? [] : argv.slice(split + 1);
  const { values, positionals } = parseCommandArgs(own, { out: { type: 'string' }, 'memory-mb': { type: 'string' }, 'startup-timeout-ms': { type: 'string' } }, 1);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const name = positionals[0];
  if (name === undefined || !/^[a-z][a-z0-9]{0,15}$/.test(name)) throw new UsageError('NAME must be a lowercase letter followed by at most 15 lowercase letters or digits');
  if (command.length === 0) throw new UsageError('give the server command after --');
  const out = resolve(typeof values.out === 'string' ? values.out : `${name}.yaml`);
  if (existsSync(out)) {
    process.stderr.write(`toolhost import: ${out} exists; not overwritten\n`);
    return 1;
  }
  const dir = realpathSync(dirname(out));
  const workspace = realpathSync(resolve(typeof values.workspace === 'string' ? values.workspace : '.'));
  const memoryMb = positiveInt(values['memory-mb'], 256, '--memory-mb');
  const startupTimeoutMs = positiveInt(values['startup-timeout-ms'], 20_000, '--startup-timeout-ms');
  const resolved = command.map((element, index) => {
    const result = resolveCommandElement(dir, element, index);
    if (!result.ok) throw new UsageError(result.reason);
    return result.path;
  });

  const spec: RunSpec = {
    name: `${name}:import`,
    mode: 'process',
    manifestDir: dir,
    command: resolved,
    memoryMb,
    stdout: 'json',
    isolation: 'namespace',
    persistent: true,
    poolSize: 1,
    env: {},
    roots: [{ path: workspace, access: 'read' }],
    networkAllow: [],
    floodCapBytes: FLOOD_CAP_BYTES,
    protectedPaths: [],
    hiddenPaths: [],
    readOnlyPaths: nodeModulesAbove(dir),
    upstream: { server: name, tool: '', profile: 'read_only', startupTimeoutMs },
  };
  const networkWarning = networkStartWarning(command);
  if (networkWarning !== undefined) process.stderr.write(`toolhost import: ${networkWarning}\n`);
  const ownFolders = [dir, ...(spec.readOnlyPaths ?? [])];
  // What the server writes to stderr is shown redacted (the host's secret values; paths outside
  // the workspace, the manifest folder and its node_modules), as validate and list show it.
  const redact = createRedactor({ secretValues: secretValuesOf([...POLICY_DEFAULTS.envSecrets], process.env), visibleRoots: [workspace, ...ownFolders] });
  const redactLog = (text: string, maxChars: number): string => redact.cut(text, maxChars);
  // No host here: the server is listed through services of this command's own.
  const services = new ProcessServices();
  let kept: ServerInstance | undefined;
  let stderrLines: readonly string[] = [];
  let listing: Listing;
  try {
    listing = await listOne(spec, { logger: createSilentLogger(), services, redactLog }, (instance) => (kept = instance));
    if (kept) stderrLines = kept.stderrLines(await kept.killAndWait());
    else if (!listing.ok) stderrLines = listing.stderrLines ?? [];
  } finally {
    await services.close();
  }
  const writeWarning = ownFolderWriteWarning(stderrLines, ownFolders);
  if (!listing.ok) {
    process.stderr.write(`toolhost import: ${listing.reason}${stderrLines.length > 0 ? `; the last lines of its stderr:${formatStderrLines(stderrLines)}` : ''}\n`);
    if (writeWarning !== undefined) process.stderr.write(`toolhost import: ${writeWarning}\n`);
    return 1;
  }
  if (writeWarning !== undefined) process.stderr.write(`toolhost import: ${writeWarning}\n`);
  writeFileSync(
    out,
    renderManifest(
      name,
      command.map((element) => (element === workspace ? '${WORKSPACE}' : element)),
      memoryMb,
      startupTimeoutMs,
      listing.tools,
    ),
    { flag: 'wx' },
  );
  process.stdout.write(`wrote ${out}: ${listing.tools.length} tools, classes suggested from the server's hints (unverified): review them and instances: before use\n`);
  return 0;
}

/** The class a server's hints suggest; undefined when it gives none. */
function suggestClass(annotations: unknown): string | undefined {
  if (typeof annotations !== 'object' || annotations === null) return undefined;
  const hints = annotations as Record<string, unknown>;
  if (hints['readOnlyHint'] === true) return 'read_only';
  if (hints['destructiveHint'] === true) return 'destructive';
  if (hints['openWorldHint'] === true) return 'remote_mutation';
  if (hints['readOnlyHint'] === false || hints['destructiveHint'] === false) return 'local_mutation';
  return undefined;
}

function renderManifest(name: string, command: readonly string[], memoryMb: number, startupTimeoutMs: number, tools: readonly UpstreamTool[]): string {
  const lines = [
    '# Written by `toolhost import`. REVIEW BEFORE USE: every sideEffect below is a suggestion',
    "# from the server's own hints, which the server could have got wrong or lied about.",
    '# The class is enforced by the sandbox: read_only tools get read-only roots.',
    'kind: Server',
    `name: ${name}`,
    `description: ${JSON.stringify(`The ${name} MCP server, imported by toolhost import.`)}`,
    `command: ${JSON.stringify(command)}`,
    'sandbox:',
    '  isolation: namespace',
    `  memoryMb: ${memoryMb}`,
    `  startupTimeoutMs: ${startupTimeoutMs}`,
    'workspace:',
    '  roots: [{ path: "${WORKSPACE}", access: read_write }]',
    'timeoutMs: 30000',
    '# split: the read_only tools get an instance of their own whose roots are all read-only (the class',
    '# is enforced), and in-memory state is not shared with the instance that serves the other tools.',
    '# A server that keeps state in memory between calls (a knowledge graph held in memory, a browser',
    '# session, variables it sets and reads back) needs one: a single process serves every tool, state',
    '# is kept, and the read_only class is then declared, not enforced by the operating system.',
    'instances: split',
    'tools:',
  ];
  for (const tool of tools) {
    const suggested = suggestClass(tool.annotations);
    const key = JSON.stringify(tool.name.slice(0, 128));
    const hints = typeof tool.annotations === 'object' && tool.annotations !== null ? JSON.stringify(tool.annotations).slice(0, 200) : 'none';
    lines.push(
      suggested
        ? `  ${key}: { sideEffect: ${suggested} }  # unverified: suggested from the server's hints ${hints}`
        : `  ${key}: {}  # unclassified: the server gives no hints; classify it or hide it`,
    );
  }
  lines.push('  "*": { hidden: true }  # tools the server adds later are not offered until reviewed', '');
  return lines.join('\n');
}

function positiveInt(value: unknown, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 1) throw new UsageError(`${flag} must be a positive integer`);
  return parsed;
}
