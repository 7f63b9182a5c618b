// Real MCP SDK clients for tests: the v1 SDK client (legacy era), the v2
// client pinned to the legacy era, and the v2 client pinned to 2026-07-28,
// each with or without the elicitation capability. Over stdio they spawn the
// BUILT host (`node --no-node-snapshot dist/src/cli/main.js serve ...`); over
// streams they talk to an in-process server (protocol unit tests).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioClientTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema as ElicitRequestSchemaV1 } from '@modelcontextprotocol/sdk/types.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BUILT_MAIN = join(REPO_ROOT, 'dist/src/cli/main.js');

/** The three client flavours every e2e test runs against. */
export type ClientKind = 'v1-legacy' | 'v2-legacy' | 'v2-modern';
export const CLIENT_KINDS: readonly ClientKind[] = ['v1-legacy', 'v2-legacy', 'v2-modern'];

/** How a scripted user answers an approval question. */
export type ElicitAnswerScript = (request: { message: string; requestedSchema: unknown }) => {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
};

export interface ClientOptions {
  readonly kind: ClientKind;
  /** When set, the client declares elicitation and answers with this script. */
  readonly elicit?: ElicitAnswerScript;
  /** Every elicitation the client was asked, in order. */
  readonly elicitations?: string[];
  /** Collects notifications/message params (lifecycle events). */
  readonly onLog?: (params: { level: string; logger?: string; data: unknown }) => void;
}

/** The common surface the tests drive, whatever the client flavour. */
export interface TestClient {
  readonly kind: ClientKind;
  listTools(): Promise<{ tools: Array<Record<string, unknown>> }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    options?: { signal?: AbortSignal; onprogress?: (progress: { progress: number; total?: number; message?: string }) => void; timeout?: number },
  ): Promise<Record<string, unknown>>;
  readResource(uri: string): Promise<{ contents: Array<Record<string, unknown>> }>;
  /** The raw client, for era checks. */
  readonly raw: ClientV1 | ClientV2;
  close(): Promise<void>;
}

/**
 * Runs `tsc -p .`, scripts/bundle.mjs and scripts/write-usage.mjs (npm run build) when dist is missing or
 * older than any file under src/ or sandbox/ (npm test builds first, so this only
 * matters for single-file runs).
 * Test files run in parallel: a lock folder lets one build while the others wait.
 */
export async function ensureBuilt(): Promise<void> {
  // Inside dist/ (ignored by git), which exists once anything was built.
  mkdirSync(join(REPO_ROOT, 'dist'), { recursive: true });
  const lock = join(REPO_ROOT, 'dist/.e2e-build-lock');
  for (const deadline = Date.now() + BUILD_WAIT_MS; ;) {
    if (existsSync(BUILT_MAIN) && statSync(BUILT_MAIN).mtimeMs >= newestMtimeMs([join(REPO_ROOT, 'src'), join(REPO_ROOT, 'sandbox')])) return;
    if (tryLock(lock)) break;
    if (Date.now() > deadline) throw new Error('timed out waiting for another test file to build dist/');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  try {
    const result = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', REPO_ROOT], { cwd: REPO_ROOT, encoding: 'utf8' });
    // tsc emits despite type errors elsewhere; only a missing entry point stops the tests.
    if (!existsSync(BUILT_MAIN)) throw new Error(`build failed:\n${result.stdout}\n${result.stderr}`);
    // Touch the entry so a type error elsewhere does not make every file rebuild again.
    utimesSync(BUILT_MAIN, new Date(), new Date());
    // Then bundle (as npm run build does): main.js runs the bundle only when it is the newer.
    const bundled = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/bundle.mjs')], { cwd: REPO_ROOT, encoding: 'utf8' });
    if (bundled.status !== 0) throw new Error(`bundling failed:\n${bundled.stdout}\n${bundled.stderr}`);
    // And the text bin/toolhost.js prints for --help (it prints it only when newer than main.js).
    const usage = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/write-usage.mjs')], { cwd: REPO_ROOT, encoding: 'utf8' });
    if (usage.status !== 0) throw new Error(`writing dist/usage.txt failed:\n${usage.stdout}\n${usage.stderr}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** How long a test file waits for another one's build. */
const BUILD_WAIT_MS = 240_000;

function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    return true;
  } catch {
    // A lock left by a killed run is stale after a few minutes.
    if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > BUILD_WAIT_MS) rmSync(lock, { recursive: true, force: true });
    return false;
  }
}

function newestMtimeMs(dirs: readonly string[]): number {
  let newest = 0;
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  return newest;
}

export interface SpawnedServer {
  readonly args: readonly string[];
  readonly env?: Record<string, string>;
  readonly cwd?: string;
  /** stderr of the host, for diagnosis. */
  readonly stderr?: 'pipe' | 'ignore' | 'inherit';
  /** A command the host is started through (its argv then follows), e.g. `unshare` with a private mount. */
  readonly launcher?: readonly string[];
}

/** Connects a client of `options.kind` to the built host over real stdio pipes. */
export async function connectStdioClient(server: SpawnedServer, options: ClientOptions): Promise<TestClient & { pid: number | null; stderrText: () => string }> {
  const [command = process.execPath, ...launcherArgs] = server.launcher ?? [];
  const params = {
    command,
    args: [...launcherArgs, ...(server.launcher === undefined ? [] : [process.execPath]), '--no-node-snapshot', BUILT_MAIN, 'serve', ...server.args],
    env: { ...(process.env as Record<string, string>), ...server.env },
    ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
    stderr: 'pipe' as const,
  };
  if (options.kind === 'v1-legacy') {
    const transport = new StdioClientTransportV1(params);
    const stderr = captureStderr(transport.stderr);
    const client = await connectV1(transport, options);
    return reportUnexpectedClose(client, { ...wrapV1(client, options.kind), pid: transport.pid, stderrText: stderr });
  }
  const transport = new StdioClientTransportV2(params);
  const stderr = captureStderr(transport.stderr);
  const client = await connectV2(transport, options);
  return reportUnexpectedClose(client, { ...wrapV2(client, options.kind), pid: transport.pid, stderrText: stderr });
}

/**
 * A host that ends while its test still talks to it leaves only "Connection closed" in the
 * test's failure: the end of its stderr is printed then (after a moment, for its last lines),
 * so a failure seen once in CI says why.
 */
function reportUnexpectedClose<T extends { close: () => Promise<void>; pid: number | null; stderrText: () => string }>(
  client: { onclose?: (() => void) | undefined },
  wrapped: T,
): T {
  let closing = false;
  const before = client.onclose;
  client.onclose = () => {
    before?.();
    if (closing) return;
    setTimeout(
      () => process.stderr.write(`the host (pid ${wrapped.pid}) closed the connection while the test used it; the end of its stderr:\n${wrapped.stderrText().slice(-4000)}\n`),
      200,
    ).unref();
  };
  return {
    ...wrapped,
    close: () => {
      closing = true;
      return wrapped.close();
    },
  };
}

/** Connects a client of `options.kind` to `serve --http` at `url` (…/mcp), sending `token` as a bearer token. */
export async function connectHttpClient(url: string, token: string | undefined, options: ClientOptions): Promise<TestClient> {
  const requestInit = token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } };
  if (options.kind === 'v1-legacy') {
    const transport = new StreamableHTTPClientTransportV1(new URL(url), { requestInit });
    return wrapV1(await connectV1(transport as never, options), options.kind);
  }
  const transport = new StreamableHTTPClientTransportV2(new URL(url), { requestInit });
  return wrapV2(await connectV2(transport as never, options), options.kind);
}

/** A client-side Transport over a pair of byte streams (newline-delimited JSON), for in-process servers. */
export class StreamClientTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: never) => void;
  private buffer = '';

  /**
   * @param coalesceMs when set, bytes are read in batches this far apart, as a busy client
   *   reading a pipe does: every line of a batch is handled in one go.
   */
  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly coalesceMs?: number,
  ) {}

  async start(): Promise<void> {
    this.input.setEncoding('utf8');
    let scheduled = false;
    this.input.on('data', (chunk: string) => {
      this.buffer += chunk;
      if (this.coalesceMs === undefined) return this.drain();
      if (scheduled) return;
      scheduled = true;
      setTimeout(() => {
        scheduled = false;
        this.drain();
      }, this.coalesceMs);
    });
    this.input.on('end', () => this.onclose?.());
  }

  private drain(): void {
    {
      let newline = this.buffer.indexOf('\n');
      while (newline !== -1) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        if (line.trim() !== '') this.onmessage?.(JSON.parse(line) as never);
        newline = this.buffer.indexOf('\n');
      }
    }
  }

  async send(message: unknown): Promise<void> {
    this.output.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    this.output.end();
    this.onclose?.();
  }
}

/** Two stream pairs: what the client writes the server reads, and back. */
export function createStreamPair(options: { coalesceMs?: number } = {}): { serverInput: PassThrough; serverOutput: PassThrough; client: StreamClientTransport } {
  const serverInput = new PassThrough();
  const serverOutput = new PassThrough();
  return { serverInput, serverOutput, client: new StreamClientTransport(serverOutput, serverInput, options.coalesceMs) };
}

/** Connects a client of `options.kind` over an already-built client transport. */
export async function connectClient(transport: StreamClientTransport, options: ClientOptions): Promise<TestClient> {
  if (options.kind === 'v1-legacy') return wrapV1(await connectV1(transport as never, options), options.kind);
  return wrapV2(await connectV2(transport as never, options), options.kind);
}

async function connectV1(transport: Parameters<ClientV1['connect']>[0], options: ClientOptions): Promise<ClientV1> {
  const client = new ClientV1({ name: 'test-v1', version: '1.0.0' }, { capabilities: options.elicit ? { elicitation: {} } : {} });
  if (options.elicit) {
    const script = options.elicit;
    client.setRequestHandler(ElicitRequestSchemaV1, async (request) => {
      const params = request.params as { message: string; requestedSchema?: unknown };
      options.elicitations?.push(params.message);
      return script({ message: params.message, requestedSchema: params.requestedSchema });
    });
  }
  if (options.onLog) {
    const onLog = options.onLog;
    client.fallbackNotificationHandler = async (notification) => {
      if (notification.method === 'notifications/message') onLog(notification.params as never);
    };
  }
  await client.connect(transport);
  return client;
}

async function connectV2(transport: Parameters<ClientV2['connect']>[0], options: ClientOptions): Promise<ClientV2> {
  const client = new ClientV2(
    { name: `test-${options.kind}`, version: '1.0.0' },
    {
      capabilities: options.elicit ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: options.kind === 'v2-modern' ? { pin: '2026-07-28' } : 'legacy' },
    },
  );
  if (options.elicit) {
    const script = options.elicit;
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { message: string; requestedSchema?: unknown };
      options.elicitations?.push(params.message);
      return script({ message: params.message, requestedSchema: params.requestedSchema });
    });
  }
  if (options.onLog) {
    const onLog = options.onLog;
    client.setNotificationHandler('notifications/message', (notification) => onLog(notification.params as never));
  }
  await client.connect(transport);
  return client;
}

function wrapV1(client: ClientV1, kind: ClientKind): TestClient {
  return {
    kind,
    raw: client,
    listTools: async () => (await client.listTools()) as never,
    callTool: async (params, options) => (await client.callTool(params, undefined, options)) as never,
    readResource: async (uri) => (await client.readResource({ uri })) as never,
    close: () => client.close(),
  };
}

function wrapV2(client: ClientV2, kind: ClientKind): TestClient {
  return {
    kind,
    raw: client,
    listTools: async () => (await client.listTools()) as never,
    callTool: async (params, options) => (await client.callTool(params, options)) as never,
    readResource: async (uri) => (await client.readResource({ uri })) as never,
    close: () => client.close(),
  };
}

function captureStderr(stream: import('node:stream').Stream | null): () => string {
  let text = '';
  stream?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    if (text.length > 1_000_000) text = text.slice(-500_000);
  });
  return () => text;
}
