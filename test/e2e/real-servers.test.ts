// Real MCP servers from npm through the built `toolhost serve`, driven by an
// SDK client, with the servers started once for the whole file (SPEC section
// 2.1). The project is set up by running the recipe of docs/manifests.md
// ("Sandbox an MCP server you already use") word for word: its shell lines, with `npx toolhost`
// as the built CLI and the `npm install` line as a copy of the installed dev
// dependency (nothing is downloaded), and its reviewed manifest as written.
// Served: @modelcontextprotocol/server-memory (the recipe: its data file in the
// workspace through a literal env value, state kept with instances: one),
// @modelcontextprotocol/server-everything (tools listed and called: echo, add,
// a long-running one with progress, an image, resource links read back).
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, REPO_ROOT, connectStdioClient, ensureBuilt } from '../helpers/mcp-clients.js';
import { waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { MARKER_ENV, type HostClient } from '../helpers/host-session.js';
import { wireErrorOf, wireTextOf } from '../helpers/wire-results.js';

// Inside the repository, so Node finds the servers' own dependencies in its node_modules.
const PROJECT = join(REPO_ROOT, 'test/fixtures', `recipe-work-${randomUUID()}`);
const MARKER = `toolhost-real-servers-${randomUUID()}`;
const RECIPE = 'server-memory';

interface RecipeStep {
  readonly kind: 'sh' | 'file';
  /** sh: the lines; file: the content. */
  readonly text: string;
  /** file: where the recipe says to save it. */
  readonly path?: string;
}

/** The blocks of docs/manifests.md marked `<!-- recipe: NAME [FILE] -->`, in order. */
function readRecipe(name: string): RecipeStep[] {
  const page = readFileSync(join(REPO_ROOT, 'docs/manifests.md'), 'utf8');
  const steps: RecipeStep[] = [];
  const marker = /<!-- recipe: (\S+)(?: (\S+))? -->\n```(sh|yaml)\n([\s\S]*?)```/g;
  for (let match = marker.exec(page); match !== null; match = marker.exec(page)) {
    if (match[1] !== name) continue;
    steps.push(match[3] === 'sh' ? { kind: 'sh', text: match[4]! } : { kind: 'file', text: match[4]!, ...(match[2] ? { path: match[2] } : {}) });
  }
  return steps;
}

// Other servers served beside the recipe's, by the recipe's own serve line (they are in its folder).
const EVERYTHING = `kind: Server
name: ev
description: The reference everything server.
command: ["node", "./everything.mjs", "\${WORKSPACE}"]
sandbox: { memoryMb: 256, startupTimeoutMs: 30000 }
workspace: { roots: [{ path: "\${WORKSPACE}", access: read }] }
timeoutMs: 20000
tools:
  echo: { sideEffect: read_only }
  get-sum: { sideEffect: read_only }
  get-tiny-image: { sideEffect: read_only }
  get-resource-links: { sideEffect: read_only }
  trigger-long-running-operation: { sideEffect: read_only }
  "*": { hidden: true }
`;

let client: HostClient;
const ran: string[] = [];

function toolhost(args: readonly string[]) {
  return spawnSync(process.execPath, ['--no-node-snapshot', BUILT_MAIN, ...args], {
    cwd: PROJECT,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, [MARKER_ENV]: MARKER },
  });
}

// One line of the recipe, as a person would type it in the project folder.
async function runLine(line: string): Promise<void> {
  ran.push(line);
  if (line === 'npm install --prefix servers @modelcontextprotocol/server-memory') {
    // The installed dev dependency and its dependencies instead of a download: the same
    // packages in the same place, their YAML files (CI workflows, FUNDING.yml) included.
    const packages = dependencyClosure('@modelcontextprotocol/server-memory');
    for (const name of packages) cpSync(join(REPO_ROOT, 'node_modules', name), join(PROJECT, 'servers/node_modules', name), { recursive: true, dereference: true });
    expect(packages.length).toBeGreaterThan(20);
    return;
  }
  const words = line.split(/\s+/);
  if (words[0] === 'npx' && words[1] === 'toolhost' && words[2] === 'serve') {
    client = await connectStdioClient({ args: words.slice(3), cwd: PROJECT, env: { [MARKER_ENV]: MARKER } }, { kind: 'v1-legacy' });
    return;
  }
  if (words[0] === 'npx' && words[1] === 'toolhost') {
    const run = toolhost(words.slice(2));
    expect(run.status, `${line}\n${run.stdout}\n${run.stderr}`).toBe(0);
    return;
  }
  const run = spawnSync('sh', ['-c', line], { cwd: PROJECT, encoding: 'utf8' });
  expect(run.status, `${line}\n${run.stderr}`).toBe(0);
}

/** `name` and every package it depends on, as npm lays them out flat (resolved in the repository's node_modules). */
function dependencyClosure(name: string): string[] {
  const found = new Set<string>();
  const visit = (pkg: string): void => {
    if (found.has(pkg) || !existsSync(join(REPO_ROOT, 'node_modules', pkg, 'package.json'))) return;
    found.add(pkg);
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(dependency);
  };
  visit(name);
  return [...found];
}

beforeAll(async () => {
  await ensureBuilt();
  mkdirSync(PROJECT, { recursive: true });
  for (const step of readRecipe(RECIPE)) {
    if (step.kind === 'file') {
      // The person's review: the manifest as the recipe shows it, over what import wrote.
      expect(existsSync(join(PROJECT, step.path ?? '')), `${step.path} was written by the import`).toBe(true);
      writeFileSync(join(PROJECT, step.path ?? ''), step.text);
      continue;
    }
    for (const line of step.text.split('\n').map((text) => text.trim())) {
      if (line === '' || line.startsWith('#')) continue;
      // Before the recipe validates and serves its folder, the other servers join it.
      if (line.startsWith('npx toolhost validate')) {
        writeFileSync(join(PROJECT, 'servers/ev.yaml'), EVERYTHING);
        cpSync(join(REPO_ROOT, 'test/e2e/fixtures/upstream/everything.mjs'), join(PROJECT, 'servers/everything.mjs'));
      }
      await runLine(line);
    }
  }
}, 300_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  const left = await waitForNoMarkedProcesses(MARKER, 15_000, { killSurvivors: true });
  rmSync(PROJECT, { recursive: true, force: true });
  expect(left).toEqual([]);
}, 120_000);

describe('the recipe for server-memory', () => {
  it('ran every line of it: install, import, validate, serve', () => {
    expect(ran).toEqual([
      'mkdir -p servers',
      'npm install --prefix servers @modelcontextprotocol/server-memory',
      'npx toolhost import memory --out servers/memory.yaml -- node ./node_modules/@modelcontextprotocol/server-memory/dist/index.js',
      'npx toolhost validate --manifests servers',
      'npx toolhost serve --manifests servers --workspace .',
    ]);
  });

  it('keeps what one tool stored for the next, in the data file the literal env value names, inside the workspace', async () => {
    const created = await client.callTool({
      name: 'memory__create_entities',
      arguments: { entities: [{ name: 'toolhost', entityType: 'project', observations: ['runs MCP servers in a sandbox'] }] },
    });
    expect(created['isError'], wireTextOf(created)).toBeFalsy();
    const graph = await client.callTool({ name: 'memory__read_graph', arguments: {} });
    expect(graph['isError'], wireTextOf(graph)).toBeFalsy();
    expect(wireTextOf(graph)).toContain('runs MCP servers in a sandbox');
    const file = join(PROJECT, '.memory.jsonl');
    expect(readFileSync(file, 'utf8')).toContain('"name":"toolhost"');
    // Its default file beside its own code was never written (that folder is read-only in the sandbox).
    expect(existsSync(join(PROJECT, 'servers/node_modules/@modelcontextprotocol/server-memory/dist/memory.jsonl'))).toBe(false);
  });

  it('lists its read_only tools as read-only to the client, and a destructive one needs approval', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool['name'], tool]));
    expect(byName.get('memory__read_graph')?.['annotations']).toMatchObject({ readOnlyHint: true });
    expect(byName.get('memory__delete_entities')?.['annotations']).toMatchObject({ destructiveHint: true });
    // The built-in policy asks approval for destructive calls; this client cannot be asked.
    expect(wireErrorOf(await client.callTool({ name: 'memory__delete_entities', arguments: { entityNames: ['toolhost'] } }))).toMatchObject({ code: 'approval_required' });
  });
});

describe('@modelcontextprotocol/server-everything', () => {
  it('its tools are listed', async () => {
    const names = (await client.listTools()).tools.map((tool) => String(tool['name']));
    expect(names).toEqual(expect.arrayContaining(['ev__echo', 'ev__get_sum', 'ev__get_tiny_image', 'ev__get_resource_links', 'ev__trigger_long_running_operation']));
  });

  it('echo and add answer', async () => {
    expect(wireTextOf(await client.callTool({ name: 'ev__echo', arguments: { message: 'hello through the sandbox' } }))).toContain('hello through the sandbox');
    expect(wireTextOf(await client.callTool({ name: 'ev__get_sum', arguments: { a: 2, b: 40 } }))).toContain('42');
  });

  it('a long-running operation reports its progress', async () => {
    const seen: number[] = [];
    const result = await client.callTool(
      { name: 'ev__trigger_long_running_operation', arguments: { duration: 0.3, steps: 3 } },
      { onprogress: (progress) => seen.push(progress.progress), timeout: 60_000 },
    );
    expect(result['isError']).toBeFalsy();
    expect(seen).toEqual([1, 2, 3]);
  });

  it('an image comes through as a PNG', async () => {
    const result = await client.callTool({ name: 'ev__get_tiny_image', arguments: {} });
    const image = (result['content'] as Array<Record<string, unknown>>).find((block) => block['type'] === 'image');
    expect(image?.['mimeType']).toBe('image/png');
    expect(Buffer.from(String(image?.['data']), 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it('the resource links it returns are read back through the host, from that server', async () => {
    const result = await client.callTool({ name: 'ev__get_resource_links', arguments: { count: 2 } });
    const links = (result['content'] as Array<Record<string, unknown>>).filter((block) => block['type'] === 'resource_link');
    expect(links).toHaveLength(2);
    for (const link of links) {
      const read = await client.readResource(String(link['uri']));
      expect(read.contents[0]).toMatchObject({ uri: link['uri'], mimeType: link['mimeType'] });
      const content = read.contents[0]!;
      expect(typeof content['text'] === 'string' || typeof content['blob'] === 'string').toBe(true);
    }
  });
});
