// The files `toolhost init` and `toolhost new tool` write: a tool manifest and
// its stub for each sandbox mode, toolhost.yaml, a commented repository policy
// and the .mcp.json MCP clients read. Every template is a working tool that
// passes `toolhost validate` as written.
import { closeSync, existsSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { schemaPath } from '../config/package-files.js';

export type ScaffoldMode = 'isolate' | 'process' | 'worker';
export const SCAFFOLD_MODES: readonly ScaffoldMode[] = ['isolate', 'process', 'worker'];

/** A tool name as manifests require it (SPEC section 2). */
export const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

interface ScaffoldFile {
  /** Relative to the folder being written. */
  readonly path: string;
  readonly text: string;
  /** Written executable (a process tool's script). */
  readonly executable?: boolean;
}

/** A manifest and its stub for a new tool NAME in `mode`, as files under a manifest folder. */
export function toolFiles(name: string, mode: ScaffoldMode, manifestDir: string): ScaffoldFile[] {
  const schema = schemaComment(manifestDir, 'manifest.schema.json');
  switch (mode) {
    case 'isolate':
      return [
        { path: `${name}.yaml`, text: isolateManifest(name, schema) },
        { path: `${name}.js`, text: isolateStub(name) },
      ];
    case 'worker':
      return [
        { path: `${name}.yaml`, text: workerManifest(name, schema) },
        { path: `${name}.js`, text: workerStub(name) },
      ];
    case 'process':
      return [
        { path: `${name}.yaml`, text: processManifest(name, schema) },
        { path: `${name}.py`, text: processStub(name), executable: true },
      ];
  }
}

/** Every file of a new project in `dir`, whose toolhost.yaml `.mcp.json` launches with `launch`. */
export function projectFiles(dir: string, launch: { readonly command: string; readonly args: readonly string[] }): ScaffoldFile[] {
  const manifests = join(dir, 'manifests');
  return [
    { path: 'toolhost.yaml', text: toolhostYaml(schemaComment(dir, 'toolhost.schema.json')) },
    ...toolFiles('greet', 'isolate', manifests).map((file) => ({ ...file, path: `manifests/${file.path}` })),
    ...toolFiles('word_count', 'process', manifests).map((file) => ({ ...file, path: `manifests/${file.path}` })),
    { path: 'policies/repository.yaml', text: repositoryPolicy(schemaComment(join(dir, 'policies'), 'policy.schema.json')) },
    { path: '.mcp.json', text: `${JSON.stringify({ mcpServers: { toolhost: { command: launch.command, args: launch.args } } }, null, 2)}\n` },
  ];
}

/** The paths of `files` that already exist under `dir` (nothing is ever overwritten). */
function existingFiles(dir: string, files: readonly ScaffoldFile[]): string[] {
  return files.filter((file) => existsSync(join(dir, file.path))).map((file) => file.path);
}

/**
 * Writes every file of `files` under `dir`, or none when any exists (said on stderr as
 * `toolhost COMMAND: …`); returns the listing of what was written, or undefined.
 */
export function writeAllOrNothing(command: string, dir: string, files: readonly ScaffoldFile[]): string | undefined {
  const existing = existingFiles(dir, files);
  if (existing.length > 0) {
    process.stderr.write(`toolhost ${command}: ${existing.join(', ')} already exist${existing.length === 1 ? 's' : ''} in ${dir}; nothing written\n`);
    return undefined;
  }
  mkdirSync(dir, { recursive: true });
  return `Wrote in ${dir}:\n${writeFiles(dir, files)
    .map((path) => `  ${path}\n`)
    .join('')}`;
}

/**
 * Writes each file with O_EXCL, so a file that appeared since the check is never
 * overwritten either; returns the paths written.
 */
function writeFiles(dir: string, files: readonly ScaffoldFile[]): string[] {
  const written: string[] = [];
  for (const file of files) {
    const path = join(dir, file.path);
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(path, 'wx', file.executable === true ? 0o755 : 0o644);
    try {
      writeSync(fd, file.text);
    } finally {
      closeSync(fd);
    }
    written.push(file.path);
  }
  return written;
}

// Editors with the YAML language server check the file while it is typed.
function schemaComment(fromDir: string, schema: string): string {
  return `# yaml-language-server: $schema=${relativeOrAbsolute(fromDir, schemaPath(schema))}\n`;
}

function relativeOrAbsolute(fromDir: string, path: string): string {
  const rel = relative(fromDir, path);
  return rel.startsWith('../../../') ? path : rel;
}

function toolhostYaml(schema: string): string {
  return `${schema}# toolhost's settings for this project. Every toolhost command run in this folder
# (or below it) reads them; a command-line flag overrides its key. Paths are
# relative to this file.

# Folders searched for tool manifests (*.yaml), recursively.
manifests: [manifests]

# The folder tools work in (\${WORKSPACE} in manifests). Its policies/ folder is
# the repository policy layer.
workspace: .

# The journal of every call, and stored artifacts. Hidden from every tool.
state: .toolhost

# Logs go here instead of stderr (\`toolhost call --verbose\` shows them too).
logFile: .toolhost/toolhost.log

# Organisation policy files, most authoritative first: only these can make a
# tool first party or loosen the built-in baseline.
# policies: [/etc/toolhost/acme.yaml]

# A journal shared by a fleet of hosts (the password from PGPASSWORD or ~/.pgpass).
# journal: postgres://toolhost@db.internal:5432/toolhost

# Serve MCP Streamable HTTP instead of stdio (toolhost serve --stdio still serves stdio).
# http:
#   listen: 127.0.0.1:8080
#   authTokens: tokens.txt
`;
}

function repositoryPolicy(schema: string): string {
  return `${schema}# The repository policy layer: every top-level policies/*.yaml of the workspace.
# It can only tighten what organisation files (toolhost.yaml's policies:) and the
# built-in baseline allow. Keys left out keep their defaults: strict, destructive
# calls need approval, community tools run only as isolate or namespaced
# process, no network.
kind: Policy
name: repository

tools:
  # Globs over tool names; deny beats allow.
  deny: []

sideEffects:
  # Classes that need a person's approval before each call.
  requireApproval: [destructive, remote_mutation]

# limits:
#   maxTimeoutMs: 30000        # no tool may declare a longer timeout
#   maxCallsPerSession: 500    # calls one agent session may make

# network:
#   allow: ["api.github.com"]  # hosts a manifest may ask for (default: none)
`;
}

function isolateManifest(name: string, schema: string): string {
  return `${schema}# A JavaScript tool in a fresh V8 isolate per call: no require, no process, no
# network; it reaches the workspace only through ctx.fs, within the roots below.
name: ${name}
description: Greet someone by name (a starting point for an isolate tool).
sideEffect: read_only
concurrencySafe: true
timeoutMs: 5000
sandbox:
  mode: isolate
  memoryMb: 64
entry: ./${name}.js
workspace:
  roots:
    - path: \${WORKSPACE}
      access: read
input:
  type: object
  additionalProperties: false
  required: [name]
  properties:
    name:
      type: string
      description: Who to greet.
      minLength: 1
      maxLength: 200
output:
  type: object
  additionalProperties: false
  required: [greeting]
  properties:
    greeting: { type: string }
`;
}

function isolateStub(name: string): string {
  return `// ${name}: the default export gets the call's arguments (already checked
// against the manifest's input schema) and ctx: ctx.fs.readText/writeText/list/
// stat within the manifest's roots, ctx.fetch to the hosts in network.allow,
// ctx.progress(done, total, message), ctx.log(level, message). Return a JSON value:
// an object becomes the result's structuredContent.
export default async function ${camel(name)}(args, ctx) {
  ctx.progress(1, 1, 'greeting');
  return { greeting: \`Hello, \${args.name}!\` };
}
`;
}

function workerManifest(name: string, schema: string): string {
  return `${schema}# A first-party JavaScript tool on a worker thread of the host: all of Node, and
# no security boundary. It runs only when an organisation policy makes this
# manifest first party (trust.firstParty); until then validate excludes it.
name: ${name}
description: Report the Node.js version the host runs (a starting point for a worker tool).
sideEffect: read_only
concurrencySafe: true
timeoutMs: 5000
sandbox:
  mode: worker
  memoryMb: 64
entry: ./${name}.js
input:
  type: object
  additionalProperties: false
  properties: {}
`;
}

function workerStub(name: string): string {
  return `// ${name}: runs on a worker thread with all of Node (first party only). The
// default export gets the checked arguments and ctx (ctx.signal aborts on
// cancel or timeout, ctx.progress, ctx.log); return a JSON value.
export default async function ${camel(name)}(_args, ctx) {
  ctx.log('info', 'reporting the Node.js version');
  return { node: process.version };
}
`;
}

function processManifest(name: string, schema: string): string {
  return `${schema}# A one-shot process in any language: the arguments arrive as JSON on stdin and
# the result is one JSON value on stdout. With isolation: namespace it runs in
# bubblewrap: no network, a read-only system, only the roots below.
name: ${name}
description: Count the words, lines and characters of a text (a starting point for a process tool).
sideEffect: read_only
concurrencySafe: true
timeoutMs: 5000
sandbox:
  mode: process
  memoryMb: 128
  command: ["python3", "./${name}.py"]
  stdout: json
  isolation: namespace
  env: [LANG]
input:
  type: object
  additionalProperties: false
  required: [text]
  properties:
    text:
      type: string
      description: The text to count.
      maxLength: 1000000
output:
  type: object
  additionalProperties: false
  required: [words, lines, chars]
  properties:
    words: { type: integer }
    lines: { type: integer }
    chars: { type: integer }
`;
}

function processStub(name: string): string {
  return `#!/usr/bin/env python3
"""${name}: one call per process. The arguments arrive as one JSON object on
stdin; print the result as one JSON value on stdout. A non-zero exit is a
tool_error carrying the end of stderr, so say there why it failed."""
import json
import sys


def main() -> int:
    args = json.load(sys.stdin)
    text = args["text"]
    json.dump({"words": len(text.split()), "lines": len(text.splitlines()), "chars": len(text)}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
`;
}

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}
