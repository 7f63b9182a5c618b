// `npm run demo`: a scripted agent session (no model) against `toolhost serve`.
// It starts the host with the bundled manifests (plus one demo-only slow tool)
// on a temporary copy of a small workspace, connects the real MCP SDK client
// over stdio and walks a realistic session, printing each step:
//   list tools, read and search files, look at an image (an image part), a
//   file that is not one (a model_error), a call the policy denies, an approval
//   the "user" answers (declined once, then approved), a timeout, a large
//   result fetched through its artifact link, and `finish`, the terminal tool
//   that ends the run (the call after it is refused).
// Host logs go to a file in the temporary folder, printed at the end.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { gradientPng } from './demo/png.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(REPO, 'bin/toolhost.js');
const BUILT = join(REPO, 'dist/src/cli/main.js');

const bold = (text) => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[0m` : text);
const dim = (text) => (process.stdout.isTTY ? `\x1b[2m${text}\x1b[0m` : text);
let stepNumber = 0;
function step(title) {
  stepNumber += 1;
  console.log(`\n${bold(`${stepNumber}. ${title}`)}`);
}
const say = (text) => console.log(`   ${text.replaceAll('\n', '\n   ')}`);
const clip = (text, max = 400) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text);

if (!existsSync(BUILT)) {
  console.error('dist/ is missing: run `npm install` (it builds) or `npm run build` first.');
  process.exit(1);
}

const root = mkdtempSync(join(tmpdir(), 'toolhost-demo-'));
const workspace = join(root, 'workspace');
const stateDir = join(root, 'state');
const logFile = join(root, 'toolhost.log');
createWorkspace(workspace);

console.log(bold('toolhost demo: a scripted agent session over MCP stdio'));
say(dim(`workspace: ${workspace}`));
say(dim(`command:   toolhost serve --manifests manifests --manifests scripts/demo/manifests --workspace <workspace> --state <state> --log-file <log>`));

/** The scripted user: declines the first approval, approves the next ones. */
let approvalsAsked = 0;
const client = new Client({ name: 'toolhost-demo-agent', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler('elicitation/create', async (request) => {
  approvalsAsked += 1;
  const approve = approvalsAsked > 1;
  say(`${bold('approval asked')} ${dim('(elicitation/create)')}:`);
  say(`  ${request.params.message.replaceAll('\n', '\n     ')}`);
  say(`  the user ${approve ? 'approves' : 'declines'}`);
  return approve ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
});

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [
    '--max-semi-space-size=4', // bin/toolhost.js's tuning (its shebang): shorter GC pauses
    BIN,
    'serve',
    // The bundled manifests, with manifests/servers/fs.yaml: an upstream MCP server (the
    // reference filesystem server, an npm dependency) under the supervisor and the built-in policy.
    '--manifests',
    join(REPO, 'manifests'),
    '--manifests',
    join(REPO, 'scripts/demo/manifests'),
    '--workspace',
    workspace,
    '--state',
    stateDir,
    '--log-file',
    logFile,
  ],
  env: { ...process.env, LANG: process.env.LANG ?? 'C.UTF-8' },
  stderr: 'inherit',
});

try {
  await client.connect(transport);
  await walkSession();
} finally {
  await client.close();
}
console.log(`\n${bold('done.')} The journal of this session: npx toolhost audit --state ${stateDir}`);
say(dim(`host log: ${logFile}`));

async function walkSession() {
  step('List the tools (tools/list)');
  const { tools } = await client.listTools();
  for (const tool of tools) {
    const hints = Object.entries(tool.annotations ?? {})
      .filter(([, on]) => on)
      .map(([hint]) => hint.replace(/Hint$/, ''))
      .join(', ');
    const terminal = tool._meta?.['toolhost/terminal'] ? '  [terminal]' : '';
    say(`${tool.name.padEnd(30)} ${dim(hints || '-')}${terminal}`);
  }

  step('An MCP server you already use, sandboxed: fs__list_directory (the reference filesystem server)');
  const listing = await call('fs__list_directory', { path: workspace });
  say(clip(listing.content.find((block) => block.type === 'text')?.text ?? ''));

  step('Its write_file is local_mutation and runs with the workspace writable: fs__write_file notes/todo.md');
  await call('fs__write_file', { path: join(workspace, 'notes/todo.md'), content: '- review the stock report\n' });
  say(`notes/todo.md on disk: ${existsSync(join(workspace, 'notes/todo.md'))}`);

  step('A write outside the workspace is refused: fs__write_file ../outside.txt');
  await call('fs__write_file', { path: join(dirname(workspace), 'outside.txt'), content: 'escaped' });
  say(`outside.txt on disk: ${existsSync(join(dirname(workspace), 'outside.txt'))}`);

  step('Read a file: read_file README.md');
  const readme = await call('read_file', { path: 'README.md' });
  if (readme.structuredContent) say(clip(String(readme.structuredContent.text)));

  step('Search the workspace: search_text "TODO"');
  const found = await call('search_text', { query: 'TODO' });
  for (const match of found.structuredContent?.matches ?? []) say(`${match.path}:${match.line}  ${match.text.trim()}`);

  step('Look at an image: view_image docs/stock-chart.png (rich parts: a line of text and the image)');
  const image = await call('view_image', { path: 'docs/stock-chart.png' });
  for (const block of image.content ?? []) {
    if (block.type === 'text') say(block.text);
    if (block.type === 'image') say(`image part: ${block.mimeType}, ${Buffer.from(block.data, 'base64').length} bytes (the file itself)`);
  }

  step('A file that is not an image: the tool refuses in words the model can act on (model_error)');
  const notImage = await call('view_image', { path: 'README.md' });
  const explanation = notImage.content?.[1];
  if (explanation?.type === 'text') say(`the model reads: ${explanation.text}`);

  step('A call the policy denies: http_get (the repository policy denies it by name)');
  await call('http_get', { url: 'https://api.github.com/zen' });

  step('A destructive call needs a person: delete_path logs/old.log');
  await call('delete_path', { path: 'logs/old.log' });

  step('Asked again, for scratch.txt, the user approves');
  const deleted = await call('delete_path', { path: 'scratch.txt' });
  if (!deleted.isError) say(`scratch.txt still on disk: ${existsSync(join(workspace, 'scratch.txt'))}`);

  step('A tool that hangs is stopped by its timeout: slow_report (timeoutMs 1500)');
  await call('slow_report', { period: 'last-week' });

  step('A result larger than its limit (256 KiB) becomes an artifact: read_file logs/big.log');
  // read_file advertises an outputSchema, so its spilled result is an output_limit error result
  // carrying the preview and the link (SPEC section 5 step 9): callTool reads it like any other.
  const big = await call('read_file', { path: 'logs/big.log', maxLines: 20000 });
  const link = big.content.find((block) => block.type === 'resource_link');
  if (link) {
    say(`resource_link: ${link.uri} (${link.mimeType}${link.size ? `, ${link.size} bytes` : ''})`);
    step(`Fetch the whole result through its link (resources/read)`);
    const read = await client.readResource({ uri: link.uri });
    const content = read.contents[0];
    const bytes = 'text' in content ? Buffer.from(content.text, 'utf8') : Buffer.from(content.blob, 'base64');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    say(`${bytes.length} bytes, sha256 ${sha256.slice(0, 16)}…, matches the link: ${link.uri.endsWith(sha256)}`);
  }

  step('The agent is done: finish (a terminal tool) ends the run');
  const finished = await call('finish', { summary: 'Read the README, listed the TODOs, looked at the stock chart, deleted scratch.txt.' });
  say(`${finished.content?.[0]?.text ?? ''}  ${dim(`_meta["toolhost/terminal"]: ${finished._meta?.['toolhost/terminal'] === true}`)}`);

  step('One more call after finish is refused: the run is over');
  await call('read_file', { path: 'README.md' });
}

/** One tools/call, printed: the arguments, then the result or the error code and its facts. */
async function call(name, args) {
  say(dim(`→ tools/call ${name} ${JSON.stringify(args)}`));
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) {
    const error = result._meta?.['toolhost/error'] ?? {};
    const facts = Object.entries(error)
      .filter(([key]) => key !== 'code')
      .filter(([key, value]) => key !== 'modelError' || value !== true)
      .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
      .join('  ');
    say(`${bold(`✗ ${error.code}`)}  ${result.content[0]?.text.split('\n').slice(1).join(' ') ?? ''}`);
    if (facts) say(dim(`  ${facts}`));
  } else {
    const blocks = result.content.map((block) => (block.type === 'text' ? `text ${Buffer.byteLength(block.text)} bytes` : block.type)).join(', ');
    say(`✓ ${blocks}${result.structuredContent ? ' + structuredContent' : ''}`);
  }
  return result;
}

/** A small project: docs, code with TODOs, a big log, files to delete, and its repository policy. */
function createWorkspace(dir) {
  const write = (path, text) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write('README.md', '# Inventory service\n\nKeeps stock counts for the warehouse.\nRun it with `node src/app.js`.\n');
  write('src/app.js', '// TODO: read the port from the environment\nconst port = 8080;\n\nexport function start() {\n  // TODO: graceful shutdown\n  return port;\n}\n');
  write('src/stock.js', 'export const stock = new Map();\n// TODO: persist to disk\n');
  write('notes/meeting.md', '- ship the stock report\n- TODO: ask about the retention policy\n');
  write('scratch.txt', 'temporary notes, safe to delete\n');
  // A real PNG, drawn here: view_image reads its format and size from its own bytes.
  mkdirSync(join(dir, 'docs'), { recursive: true });
  writeFileSync(join(dir, 'docs/stock-chart.png'), gradientPng(48, 32));
  write('logs/old.log', 'an old log the user wants to keep\n');
  const lines = [];
  for (let line = 1; line <= 6000; line++) lines.push(`2026-11-29T10:${String(line % 60).padStart(2, '0')}:00Z INFO request ${line} served in ${(line * 7) % 300} ms`);
  write('logs/big.log', `${lines.join('\n')}\n`);
  // The repository layer of policy (SPEC section 4): read from the workspace's policies/.
  write(
    'policies/demo.yaml',
    [
      'kind: Policy',
      'name: demo-repository',
      'network:',
      '  allow: ["api.github.com"]',
      'tools:',
      '  # Allowed by network, denied by name: this repository does not call out.',
      '  deny: ["http_get"]',
      'sideEffects:',
      '  requireApproval: [destructive, remote_mutation]',
      '',
    ].join('\n'),
  );
}
