// Upstream MCP servers under the supervisor, end to end (SPEC section 2.1):
// the REAL reference servers from npm (@modelcontextprotocol/server-filesystem
// and server-everything) run by the built `toolhost serve`, driven by SDK v1
// and v2 clients over real pipes. Classification, strict refusal, hidden tools,
// the OS refusing writes the class does not allow, image content, the
// server's environment, cancellation, a SIGKILLed server and cleanup.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_KINDS, REPO_ROOT, connectStdioClient, ensureBuilt, type ClientKind } from '../helpers/mcp-clients.js';
import { findMarkedProcesses, pollUntil, waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { traceIo } from '../helpers/strace-io.js';
import { MARKER_ENV, countToolListChanges, makeHostDirs, stopClient, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf, wireTextOf } from '../helpers/wire-results.js';

beforeAll(() => ensureBuilt(), 300_000);

const FIXTURES = join(REPO_ROOT, 'test/e2e/fixtures/upstream');
// The built-in limits: each server declares memoryMb 256, and the sandbox adds the runtime's allowance.
const POLICY = `kind: Policy
name: e2e_upstream
`;
const SECRET = 'hunter2-upstream-secret-value';

const FS_LISTED = [
  'fs__edit_file',
  'fs__list_allowed_directories',
  'fs__list_directory',
  'fs__list_directory_with_sizes',
  'fs__read_text_file',
  'fs__write_file',
  'fs__create_directory',
].sort();

/** Host pids of the server's node process (its cmdline names the launcher and this test's workspace). */
function serverPids(dirs: HostDirs, launcher: string): number[] {
  return findMarkedProcesses(dirs.workspace)
    .filter((entry) => entry.cmdline.startsWith('node ') && entry.cmdline.includes(launcher))
    .map((entry) => entry.pid);
}

describe.each(CLIENT_KINDS)('%s client, real upstream servers', (kind: ClientKind) => {
  let dirs: HostDirs;
  let client: HostClient;

  beforeAll(async () => {
    dirs = makeHostDirs({ manifests: [FIXTURES], policy: POLICY });
    writeFileSync(join(dirs.workspace, 'notes.txt'), 'first line\nsecond line\n');
    client = await connect(dirs, kind);
  }, 180_000);
  afterAll(async () => {
    await stopClient(client, dirs);
    // No server process (matched by the workspace in its cmdline) outlives the host: the
    // sandbox's processes carry no marker variable (bwrap clears the environment), so they
    // get the same grace as the host's own, the kernel's teardown after the spawner exits.
    expect(await waitForNoMarkedProcesses(dirs.workspace)).toEqual([]);
    dirs.cleanup();
  }, 180_000);

  it('lists each classified tool as <server>__<tool>; unclassified and hidden tools are not listed', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => String(tool['name']));
    expect(names.filter((name) => name.startsWith('fs__')).sort()).toEqual(FS_LISTED);
    expect(names).toEqual(expect.arrayContaining(['ev__echo', 'ev__get_env', 'ev__get_tiny_image', 'ev__trigger_long_running_operation']));
    // hidden (move_file, the "*" rest, toggle-*) and unclassified under strict (get_file_info, get-sum) never appear.
    for (const absent of ['fs__move_file', 'fs__search_files', 'fs__get_file_info', 'ev__get_sum', 'ev__toggle_simulated_logging', 'ev__trigger_sampling_request'])
      expect(names).not.toContain(absent);
    const byName = new Map(tools.map((tool) => [tool['name'], tool]));
    // Annotations come from the manifest's class, not from the server.
    expect(byName.get('fs__read_text_file')?.['annotations']).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('fs__write_file')?.['annotations']).toMatchObject({ readOnlyHint: false });
  });

  it('refuses an unclassified tool under strict, and a hidden one as unknown', async () => {
    expect(wireErrorOf(await client.callTool({ name: 'ev__get_sum', arguments: { a: 1, b: 2 } }))).toMatchObject({ code: 'unclassified_tool' });
    await expect(client.callTool({ name: 'fs__move_file', arguments: { source: 'a', destination: 'b' } })).rejects.toMatchObject({ code: -32602 });
  });

  it('reads and writes inside the workspace', async () => {
    const read = await client.callTool({ name: 'fs__read_text_file', arguments: { path: join(dirs.workspace, 'notes.txt') } });
    expect(read['isError']).toBeFalsy();
    expect(wireTextOf(read)).toContain('second line');
    const wrote = await client.callTool({ name: 'fs__write_file', arguments: { path: join(dirs.workspace, `out-${kind}.txt`), content: 'written' } });
    expect(wrote['isError']).toBeFalsy();
    expect(readFileSync(join(dirs.workspace, `out-${kind}.txt`), 'utf8')).toBe('written');
  });

  it('a write through a read_only tool fails in the operating system (its instance has read-only roots)', async () => {
    const result = await client.callTool({ name: 'fs__edit_file', arguments: { path: join(dirs.workspace, 'notes.txt'), edits: [{ oldText: 'first', newText: 'FIRST' }] } });
    expect(wireErrorOf(result)).toMatchObject({ code: 'tool_error' });
    expect(wireTextOf(result)).toMatch(/EROFS|read-only/i);
    expect(readFileSync(join(dirs.workspace, 'notes.txt'), 'utf8')).toBe('first line\nsecond line\n');
  });

  it('a write outside the workspace fails although the server itself allows /', async () => {
    const outside = join(dirs.root, `outside-${kind}.txt`);
    const result = await client.callTool({ name: 'fs__write_file', arguments: { path: outside, content: 'escaped' } });
    expect(wireErrorOf(result)).toMatchObject({ code: 'tool_error' });
    expect(existsSync(outside)).toBe(false);
  });

  it('passes image content on intact (the same bytes the server sends a direct client)', async () => {
    const result = await client.callTool({ name: 'ev__get_tiny_image', arguments: {} });
    expect(result['isError']).toBeFalsy();
    const image = (result['content'] as Array<Record<string, unknown>>).find((block) => block['type'] === 'image');
    expect(image?.['mimeType']).toBe('image/png');
    expect(image?.['data']).toBe(await directTinyImage());
    expect(Buffer.from(String(image?.['data']), 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it("the server's environment holds nothing of the host's", async () => {
    const result = await client.callTool({ name: 'ev__get_env', arguments: {} });
    expect(result['isError']).toBeFalsy();
    const env = JSON.parse(wireTextOf(result)) as Record<string, string>;
    // PATH and HOME (the sandbox's defaults: HOME is its private /tmp, which the answer shows redacted as a path) and PWD (set by the start-gate shell); nothing inherited.
    expect(Object.keys(env).sort()).toEqual(['HOME', 'PATH', 'PWD']);
    expect(wireTextOf(result)).not.toContain(dirs.marker);
    expect(wireTextOf(result)).not.toContain(SECRET);
  });

  it("passes the server's own progress on to a client that asked with a progressToken", async () => {
    const seen: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool(
      { name: 'ev__trigger_long_running_operation', arguments: { duration: 0.4, steps: 4 } },
      { onprogress: (progress) => seen.push({ progress: progress.progress, ...(progress.total !== undefined ? { total: progress.total } : {}) }), timeout: 60_000 },
    );
    expect(result['isError']).toBeFalsy();
    expect(wireTextOf(result)).toContain('Steps: 4');
    // Every step the server reported, in order, with its total: the host answers after the last one.
    expect(seen).toEqual([1, 2, 3, 4].map((progress) => ({ progress, total: 4 })));
  }, 180_000);

  it("the server's stderr reaches the host's log (pino JSON on the host's stderr)", async () => {
    // Both reference servers announce themselves on stderr at start-up.
    const lines = await pollUntil(() => {
      const logged = client
        .stderrText()
        .split('\n')
        .filter((line) => line.includes('"upstream server stderr"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      return { done: logged.some((line) => String(line['server']).startsWith('fs:')), value: logged };
    }, 20_000);
    expect(lines.find((line) => String(line['server']).startsWith('fs:'))).toMatchObject({
      name: 'toolhost',
      stderr: expect.stringContaining('Secure MCP Filesystem Server running on stdio'),
    });
  });

  it('a cancel reaches the server: it reads notifications/cancelled for that request and never answers it, and goes on serving', async () => {
    // A first call: the host is serving (a modern client's connect waits for nothing) and the
    // instance that serves ev's tools is the one running.
    expect(wireTextOf(await client.callTool({ name: 'ev__echo', arguments: { message: 'before' } }))).toContain('before');
    const pids = serverPids(dirs, 'everything.mjs');
    expect(pids.length, JSON.stringify(findMarkedProcesses(dirs.workspace))).toBe(1);
    // The server's own pipes, seen from outside it (strace on its host pid): what it read and wrote.
    const trace = await traceIo(pids[0]!, join(dirs.root, `server-io-${kind}.trace`));
    try {
      const controller = new AbortController();
      let progressed!: () => void;
      const firstProgress = new Promise<void>((resolve) => (progressed = resolve));
      const call = client.callTool(
        { name: 'ev__trigger_long_running_operation', arguments: { duration: 3, steps: 3 } },
        { signal: controller.signal, onprogress: () => progressed(), timeout: 120_000 },
      );
      await firstProgress;
      controller.abort();
      await expect(call).rejects.toThrow();
      // The host's tools/call as the server read it, then notifications/cancelled for its id.
      const read = await pollUntil(() => {
        const messages = trace.readMessages() as Array<Record<string, any>>;
        const request = messages.find((message) => message['method'] === 'tools/call' && message['params']?.['name'] === 'trigger-long-running-operation');
        const cancel = messages.find((message) => message['method'] === 'notifications/cancelled' && message['params']?.['requestId'] === request?.['id']);
        return { done: request !== undefined && cancel !== undefined, value: { request, cancel } };
      }, 30_000);
      expect(read.cancel, `the server read no notifications/cancelled for the call; it read: ${JSON.stringify(trace.readMessages()).slice(-2000)}`).toBeDefined();
      const requestId = read.request?.['id'] as number;
      const token = read.request?.['params']?.['_meta']?.['progressToken'];
      // The operation itself ignores the signal and runs to its end (its last progress is written),
      // but the server's SDK saw the cancel and drops the answer: no response with that id.
      const lastStep = await pollUntil(() => {
        const written = trace.writtenMessages() as Array<Record<string, any>>;
        return {
          done: written.some(
            (message) => message['method'] === 'notifications/progress' && message['params']?.['progressToken'] === token && message['params']?.['progress'] === 3,
          ),
          value: written,
        };
      }, 30_000);
      expect(lastStep.some((message) => message['params']?.['progressToken'] === token && message['params']?.['progress'] === 3)).toBe(true);
      // A later call, answered after the cancelled one's end in the server's own output order,
      // and an uncancelled one: both answered, so an answer to the cancelled call would show.
      const echo = await client.callTool({ name: 'ev__echo', arguments: { message: 'after cancel' } });
      expect(wireTextOf(echo)).toContain('after cancel');
      expect(wireTextOf(await client.callTool({ name: 'ev__trigger_long_running_operation', arguments: { duration: 0.1, steps: 1 } }))).toContain('Steps: 1');
      const written = await pollUntil(() => {
        const messages = trace.writtenMessages() as Array<Record<string, any>>;
        return { done: messages.some((message) => String(message['result']?.['content']?.[0]?.['text']).includes('Steps: 1')), value: messages };
      }, 30_000);
      const answers = written.filter((message) => message['id'] !== undefined && message['method'] === undefined);
      expect(answers.some((message) => String(message['result']?.['content']?.[0]?.['text']).includes('after cancel'))).toBe(true);
      expect(answers.some((message) => String(message['result']?.['content']?.[0]?.['text']).includes('Steps: 1'))).toBe(true);
      expect(answers.filter((message) => message['id'] === requestId)).toEqual([]);
    } finally {
      await trace.stop();
    }
  }, 180_000);

  it('a server SIGKILLed mid-call: the call fails tool_crashed and the next call gets a fresh server', async () => {
    let progressed!: () => void;
    const firstProgress = new Promise<void>((resolve) => (progressed = resolve));
    const call = client.callTool({ name: 'ev__trigger_long_running_operation', arguments: { duration: 60, steps: 60 } }, { onprogress: () => progressed(), timeout: 120_000 });
    await firstProgress;
    const pids = serverPids(dirs, 'everything.mjs');
    expect(pids.length, JSON.stringify(findMarkedProcesses(dirs.workspace))).toBe(1);
    process.kill(pids[0]!, 'SIGKILL');
    expect(wireErrorOf(await call)).toMatchObject({ code: 'tool_crashed' });
    const echo = await client.callTool({ name: 'ev__echo', arguments: { message: 'fresh' } });
    expect(wireTextOf(echo)).toContain('fresh');
    const fresh = await pollUntil(() => {
      const now = serverPids(dirs, 'everything.mjs');
      return { done: now.length === 1, value: now };
    }, 10_000);
    expect(fresh[0]).not.toBe(pids[0]);
  }, 180_000);
});

// The host's environment holds the marker and a secret-named variable; neither may reach the server.
function connect(dirs: HostDirs, kind: ClientKind): Promise<HostClient> {
  return connectStdioClient({ args: dirs.args, env: { [MARKER_ENV]: dirs.marker, UPSTREAM_API_TOKEN: SECRET } }, { kind });
}

let tinyImage: Promise<string> | undefined;
// The image as the everything server sends it to an SDK client that talks to it directly.
function directTinyImage(): Promise<string> {
  tinyImage ??= (async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [join(FIXTURES, 'everything.mjs')], stderr: 'ignore' });
    const client = new Client({ name: 'direct', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'get-tiny-image', arguments: {} });
      const image = (result.content as Array<Record<string, unknown>>).find((block) => block['type'] === 'image');
      return String(image?.['data']);
    } finally {
      await client.close();
    }
  })();
  return tinyImage;
}

describe('an upstream tools/list_changed through serve', () => {
  const HOSTILE = join(REPO_ROOT, 'test/fixtures/servers');
  let dirs: HostDirs;
  let client: HostClient;
  beforeAll(async () => {
    dirs = makeHostDirs({ manifests: [HOSTILE], policy: POLICY });
    client = await connect(dirs, 'v2-legacy');
  }, 180_000);
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
  }, 180_000);

  it("reloads that server's tools (classified by the same entries) and sends the host's own list_changed", async () => {
    const changes = await countToolListChanges(client);
    const before = (await client.listTools()).tools.map((tool) => tool['name']);
    expect(before).not.toContain('faults__added_later');
    // The servers' first listings went in force with list_changed too, which may still be arriving.
    const base = changes();
    expect(wireTextOf(await client.callTool({ name: 'faults__change', arguments: {} }))).toBe('changed');
    const after = await pollUntil(
      async () => {
        const names = (await client.listTools()).tools.map((tool) => tool['name']);
        return { done: names.includes('faults__added_later') && changes() > base, value: names };
      },
      60_000,
      100,
    );
    expect(after).toContain('faults__added_later');
    expect(changes()).toBeGreaterThan(base);
  }, 180_000);
});
