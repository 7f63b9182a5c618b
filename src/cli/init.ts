// `toolhost init [DIR]`: a project that works at once: toolhost.yaml, an
// isolate tool and a process tool in manifests/, a commented repository policy
// and the .mcp.json that Claude Code (and other MCP clients) read to launch
// this toolhost. Nothing that exists is ever overwritten.
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UNREACHABLE_INSPECTOR_FLAG } from '../node-inspector.js';
import { packageRoot } from './package-version.js';
import { parseCommandArgs } from './args.js';
import { projectFiles, writeAllOrNothing } from './scaffold.js';

const HELP = `Usage: toolhost init [DIR]

Writes a working project into DIR (default: the working directory, created when
missing):
  toolhost.yaml             the host's settings (manifests, workspace, state, log file)
  manifests/greet.*         an isolate tool (JavaScript in a V8 isolate)
  manifests/word_count.*    a process tool (Python in the namespace sandbox)
  policies/repository.yaml  a commented repository policy
  .mcp.json                 launches \`toolhost serve\` for MCP clients (Claude Code)
Nothing is overwritten: when any of these exists, nothing is written (exit 1).
Then: toolhost validate; toolhost list; toolhost call greet '{"name":"Ada"}'.
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {}, 1, { config: false });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const dir = resolve(positionals[0] ?? '.');
  if (isNonFolder(dir)) {
    process.stderr.write(`toolhost init: ${dir} exists and is not a folder\n`);
    return 1;
  }
  const files = projectFiles(dir, launchCommand(join(dir, 'toolhost.yaml')));
  const written = writeAllOrNothing('init', dir, files);
  if (written === undefined) return 1;
  process.stdout.write(
    `${written}\n` +
      'Next:\n  toolhost validate\n  toolhost list\n  toolhost call greet \'{"name": "Ada"}\'\n  toolhost call word_count \'{"text": "one two three"}\'\n' +
      'MCP clients that read .mcp.json (Claude Code) start `toolhost serve` with this toolhost.yaml.\n',
  );
  return 0;
}

/**
 * How an MCP client starts this toolhost: node with bin/toolhost.js's flags (a small
 * young generation: shorter GC pauses; an inspector that can never listen, not even
 * during Node's start: node-inspector.ts), the absolute bin path, and this project's
 * toolhost.yaml, so the client's working directory does not matter.
 */
function launchCommand(configFile: string): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: ['--max-semi-space-size=4', UNREACHABLE_INSPECTOR_FLAG, join(packageRoot(), 'bin', 'toolhost.js'), 'serve', '--config', configFile],
  };
}

function isNonFolder(path: string): boolean {
  try {
    return !statSync(path).isDirectory();
  } catch {
    return false;
  }
}
