// Hostile upstream servers (test/fixtures/servers/hostile.mjs): every fault of
// SPEC section 2.1 is a stable outcome with its code and details, bounded in
// memory, and the host and the server's other tools go on.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPSTREAM_RUNTIME_ALLOWANCE_MB, upstreamAddressSpaceMb } from '../../../../src/runner/upstream/address-space.js';
import { MAX_SERVER_LOG_LINE_CHARS, SERVER_LOG_BURST, SERVER_LOG_LINES_PER_SECOND } from '../../../../src/runner/upstream/server-log.js';
import { findMarkedProcesses, pollUntil } from '../../../helpers/proc-scan.js';
import { closeAllHosts, errorOf, resultOf, startHost, textOf, type TestHost } from '../../../helpers/supervisor-host.js';

const SERVERS = fileURLToPath(new URL('../../../fixtures/servers', import.meta.url));
// The built-in limits: each server declares memoryMb 256, held by its memory cgroup.
const POLICY = 'network:\n  allow: ["example.invalid"]';

let host: TestHost;
// The host's log, as pino writes it (JSON lines), for the server's stderr and log messages.
const logLines: Array<Record<string, unknown>> = [];
const logSink = new Writable({
  write: (chunk: Buffer, _encoding, done) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

beforeAll(async () => {
  host = await startHost({ host: { manifestDirs: [SERVERS], logger: pino({ level: 'info' }, logSink) }, policy: POLICY, env: { HOSTILE_TEST_SECRET_TOKEN: 'sekrit-value-123' } });
}, 180_000);
afterAll(async () => {
  const workspace = host.workspace;
  await closeAllHosts();
  // Every server process (its cmdline holds the workspace) is gone with the host.
  expect(await pollUntil(() => ({ done: findMarkedProcesses(workspace).length === 0, value: findMarkedProcesses(workspace) }), 10_000)).toEqual([]);
}, 180_000);

function reportOf(server: string) {
  const report = host.config.servers.find((candidate) => candidate.server === server);
  if (!report) throw new Error(`no report for ${server}`);
  return report;
}

describe('loading hostile servers', () => {
  it('a server that never completes the handshake is reported as not available, naming the timeout', () => {
    expect(reportOf('neverstarts').unavailable).toMatch(/within 1500 ms/);
    expect([...host.config.tools.keys()].some((name) => name.startsWith('neverstarts__'))).toBe(false);
  });

  it('a server that exits at start-up is reported with its exit code and the last lines of its stderr', () => {
    expect(reportOf('exits')).toMatchObject({
      unavailable: 'the server did not start: it exited during start-up (exit code 3)',
      stderrLines: ['hostile server: refusing to start'],
    });
  });

  it('a lying listing: external $ref, too deep, odd and colliding names are excluded with reasons; valid 2020-12 loads', () => {
    const byName = new Map(reportOf('lyinglist').tools.map((tool) => [tool.upstream, tool]));
    expect(byName.get('fine')).toMatchObject({ listed: 'lyinglist__fine' });
    expect(byName.get('fine')?.excluded).toBeUndefined();
    expect(byName.get('external_ref')?.excluded).toMatch(/refers outside itself/);
    expect(byName.get('too_deep')?.excluded).toMatch(/deeper than 64/);
    expect(byName.get('Odd Name!')).toMatchObject({ listed: 'lyinglist__odd_name_' });
    expect(byName.get('a-b')?.excluded).toMatch(/collides with a_b/);
    expect(byName.get('a_b')?.excluded).toMatch(/collides with a-b/);
    expect(byName.get('x'.repeat(80))?.excluded).toMatch(/does not fit/);
    // x-mcp-header, an unknown format and a required name without a property: valid 2020-12.
    expect(byName.get('conformance')?.excluded).toBeUndefined();
    expect(host.config.tools.get('lyinglist__conformance')?.listed).toBe(true);
  });

  it('a listing of 10,000 tools is cut at a bound, and says so', () => {
    const report = reportOf('manytools');
    expect(report.truncated).toBe(true);
    expect(report.tools.length).toBe(512);
  });
});

describe('calling hostile servers', () => {
  it('passes a good result on; an upstream isError is tool_error carrying its text', async () => {
    expect(textOf(await host.call('faults__ok'))).toBe('ok');
    const error = errorOf(await host.call('faults__upstream_error'));
    expect(error.code).toBe('tool_error');
    expect(error.message).toContain('it failed');
  });

  it('a line that is not JSON-RPC kills the server: tool_crashed, and the next call works', async () => {
    const error = errorOf(await host.call('faults__garbage'));
    expect(error.code).toBe('tool_crashed');
    expect(error.details).toMatchObject({ reason: 'not_json' });
    expect(textOf(await host.call('faults__ok'))).toBe('ok');
  });

  it('a 50 MB content block is spilled to an artifact with a bounded preview; the server goes on', async () => {
    const before = logLines.filter((entry) => entry['msg'] === 'upstream server broke the protocol; killing it').length;
    const result = resultOf(await host.call('faults__huge_block'));
    const [preview, link] = result.content;
    expect(Buffer.byteLength((preview as { text: string }).text)).toBeLessThanOrEqual(1024);
    expect(link).toMatchObject({ type: 'resource_link' });
    const stored = await host.supervisor.readArtifact((link as { uri: string }).uri);
    expect(stored?.bytes.byteLength).toBe(50 * 1000 * 1000);
    expect(logLines.filter((entry) => entry['msg'] === 'upstream server broke the protocol; killing it').length).toBe(before);
    expect(textOf(await host.call('faults__ok'))).toBe('ok');
  }, 120_000);

  it('a stdout flood without a newline is cut at the message bound: tool_crashed, bounded', async () => {
    const error = errorOf(await host.call('faults__flood_stdout'));
    expect(error.code).toBe('tool_crashed');
    expect(error.details).toMatchObject({ reason: 'message_too_large' });
    expect(textOf(await host.call('faults__ok'))).toBe('ok');
  });

  it('a stderr flood is drained into a bounded tail and the call still answers', async () => {
    expect(textOf(await host.call('faults__flood_stderr'))).toBe('after the flood');
    // 32 MiB without a newline reach the host's log as one line, cut while it arrived.
    const flood = await pollUntil(() => {
      const line = logLines.find((entry) => entry['msg'] === 'upstream server stderr' && String(entry['stderr']).startsWith('eeee'));
      return { done: line !== undefined, value: line };
    }, 20_000);
    expect(flood).toMatchObject({ server: 'faults:declared', cut: true });
    expect(String(flood?.['stderr']).length).toBeLessThanOrEqual(MAX_SERVER_LOG_LINE_CHARS);
  });

  it("the server's stderr and log messages reach the host's log, redacted", async () => {
    writeFileSync(join(host.workspace, 'log-secret.txt'), 'sekrit-value-123\n');
    expect(textOf(await host.call('faults__log'))).toBe('logged');
    const found = await pollUntil(() => {
      const stderr = logLines.find((entry) => String(entry['stderr']).startsWith('hostile stderr line'));
      const message = logLines.find((entry) => entry['msg'] === 'upstream server log' && String(entry['data']).includes('hostile log message'));
      return { done: stderr !== undefined && message !== undefined, value: { stderr, message } };
    }, 20_000);
    expect(found.stderr).toMatchObject({ server: 'faults:declared', stderr: 'hostile stderr line: [redacted]', level: 30 });
    expect(found.message).toMatchObject({
      server: 'faults:declared',
      upstreamLevel: 'warning',
      upstreamLogger: 'hostile',
      data: '{"note":"hostile log message: [redacted]"}',
      level: 40,
    });
    expect(JSON.stringify(logLines)).not.toContain('sekrit-value-123');
  });

  it("a flood of stderr lines and log messages is rate-limited in the host's log, and the server goes on", async () => {
    const before = logLines.length;
    const startedMs = performance.now();
    expect(textOf(await host.call('faults__log_flood'))).toBe('flooded');
    await pollUntil(() => ({ done: logLines.slice(before).some((entry) => entry['msg'] === 'upstream server logs too much: dropping lines'), value: true }), 20_000);
    expect(textOf(await host.call('faults__ok'))).toBe('ok');
    const elapsedS = (performance.now() - startedMs) / 1000;
    const flood = logLines.slice(before).filter((entry) => String(entry['data'] ?? entry['stderr'] ?? '').startsWith('flood '));
    // 10,000 lines sent; the bucket lets through its burst and its refill over the time that passed.
    expect(flood.length).toBeLessThanOrEqual(SERVER_LOG_BURST + Math.ceil(elapsedS * SERVER_LOG_LINES_PER_SECOND) + 1);
    expect(flood.length).toBeGreaterThan(0);
  });

  it("the server has no address-space cap: its memory cgroup holds its memoryMb (the runtime's allowance is only the fallback's)", async () => {
    const limits = textOf(await host.call('faults__limits'));
    const line = limits.split('\n').find((entry) => entry.startsWith('Max address space'));
    expect(line?.split(/\s{2,}/).slice(1, 3)).toEqual(['unlimited', 'unlimited']);
    expect(upstreamAddressSpaceMb(256)).toBe(UPSTREAM_RUNTIME_ALLOWANCE_MB + 256);
  });

  it('sampling and elicitation requests are refused; roots/list is answered with the workspace roots', async () => {
    const asked = JSON.parse(textOf(await host.call('faults__ask_client'))) as Record<string, unknown>;
    expect(asked).toEqual({ sampling: { error: -32601 }, elicit: { error: -32601 } });
    const roots = JSON.parse(textOf(await host.call('faults__roots'))) as { result: { roots: Array<{ uri: string }> } };
    expect(roots.result.roots.map((root) => root.uri)).toEqual([`file://${host.workspace}`]);
  });

  it('huge content is spilled to an artifact with a bounded preview', async () => {
    const result = resultOf(await host.call('faults__huge_text'));
    const [preview, link] = result.content;
    expect(preview).toMatchObject({ type: 'text' });
    expect(Buffer.byteLength((preview as { text: string }).text)).toBeLessThanOrEqual(1024);
    expect(link).toMatchObject({ type: 'resource_link', mimeType: 'text/plain; charset=utf-8' });
    const stored = await host.supervisor.readArtifact((link as { uri: string }).uri);
    expect(stored?.bytes.byteLength).toBe(200_000);
  });

  it.each([
    ['faults__bad_base64', 'invalid_base64'],
    ['faults__bad_mime', 'mime_type_not_allowed'],
    ['faults__unknown_block', 'unknown_content_type'],
    ['faults__structured_bad', 'output_schema'],
  ])('malformed content from %s is invalid_output (%s)', async (tool, reason) => {
    const error = errorOf(await host.call(tool));
    expect(error.code).toBe('invalid_output');
    expect(error.details).toMatchObject({ reason });
  });

  it('structuredContent that matches the output schema is passed on', async () => {
    expect(resultOf(await host.call('faults__structured_ok')).structuredContent).toEqual({ n: 1 });
  });

  it('a timeout cancels upstream (the server saw notifications/cancelled); a server that does not settle is killed and replaced', async () => {
    const error = errorOf(await host.call('faults__hang'));
    expect(error.code).toBe('timeout');
    const log = join(host.workspace, 'upstream.log');
    const seen = await pollUntil(() => {
      const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
      return { done: /cancelled \d+/.test(text), value: text };
    }, 10_000);
    expect(seen).toMatch(/hang (\d+)\ncancelled \1/);
    // The hung server answers no ping: it is killed, and the next call gets a fresh one.
    expect(textOf(await host.call('faults__ok'))).toBe('ok');
  });

  it('after a timed-out call, a server that does not settle is killed with its whole tree (a setsid grandchild that ignores SIGTERM too), and replaced', async () => {
    const marker = `hang-child-${host.workspace}`;
    const error = errorOf(await host.call('faults__hang_child'));
    expect(error.code).toBe('timeout');
    expect(readFileSync(join(host.workspace, 'upstream.log'), 'utf8')).toMatch(/hang_child \d+ child \d+/);
    // The answer waits for the settle check: by the time it arrives the server is being killed.
    const left = await pollUntil(() => ({ done: findMarkedProcesses(marker).length === 0, value: findMarkedProcesses(marker) }), 5_000);
    expect(left).toEqual([]);
    expect(textOf(await host.call('faults__ok'))).toBe('ok');
  }, 60_000);

  it('a server that stops reading its stdin while 150 MB of arguments are sent to it is killed at a bound, its calls tool_crashed; a fresh one serves the next call', async () => {
    expect(textOf(await host.call('faults__stop_reading'))).toBe('not reading any more');
    const large = 'a'.repeat(15 * 1000 * 1000);
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => host.call('faults__ok_read', { text: large })));
    const crashed = outcomes.filter((outcome) => outcome.kind === 'error').map((outcome) => errorOf(outcome));
    expect(crashed.length).toBeGreaterThan(0);
    for (const error of crashed) expect(error).toMatchObject({ code: 'tool_crashed', details: { reason: 'stdin_not_read' } });
    expect(textOf(await host.call('faults__ok_read'))).toBe('ok');
  }, 120_000);

  it('a server killed for not settling after a cancel fails its other in-flight calls tool_crashed; the next call gets a fresh instance', async () => {
    const slow = host.call('faults__slow');
    // The read-only instance has the slow call (it says so on stderr, which reaches the host's log).
    await pollUntil(() => ({ done: logLines.some((entry) => String(entry['stderr']).startsWith('slow received')), value: true }), 20_000);
    expect(errorOf(await host.call('faults__hang_read')).code).toBe('timeout');
    const crashed = errorOf(await slow);
    expect(crashed.code).toBe('tool_crashed');
    expect(crashed.details).toMatchObject({ reason: 'killed' });
    expect(textOf(await host.call('faults__ok_read'))).toBe('ok');
  });

  it('a resource link it returned is readable through the host, forwarded to that server only', async () => {
    const [link] = resultOf(await host.call('faults__link')).content;
    expect(link).toMatchObject({ type: 'resource_link', uri: 'hostile://doc/1' });
    const read = await host.supervisor.readArtifact('hostile://doc/1');
    expect(Buffer.from(read?.bytes ?? []).toString('utf8')).toBe('the doc at hostile://doc/1');
    // A URI the server never returned is not forwarded at all.
    expect(await host.supervisor.readArtifact('hostile://doc/2')).toBeUndefined();
    expect(readFileSync(join(host.workspace, 'upstream.log'), 'utf8')).not.toContain('hostile://doc/2');
  });

  it('a server with a network allow list gets only the egress proxy, nothing of the host environment', async () => {
    const env = JSON.parse(textOf(await host.call('net__env'))) as Record<string, string>;
    expect(Object.keys(env).filter((name) => /proxy/i.test(name)).length).toBeGreaterThan(0);
    expect(env['HOSTILE_TEST_SECRET_TOKEN']).toBeUndefined();
    expect(JSON.stringify(env)).not.toContain('sekrit-value-123');
  });

  it("the server's tools/list_changed reaches the host (serve reloads on it)", async () => {
    const changed: string[] = [];
    const unsubscribe = host.onUpstreamToolsChanged((server) => changed.push(server));
    expect(textOf(await host.call('faults__change'))).toBe('changed');
    expect(await pollUntil(() => ({ done: changed.length > 0, value: changed }), 10_000)).toEqual(['faults']);
    unsubscribe();
  });

  it('a server that exits mid-call is tool_crashed; one that then keeps failing to start is sandbox_unavailable, with backoff', async () => {
    writeFileSync(join(host.workspace, 'refuse-start'), '');
    const crashed = errorOf(await host.call('faults__exit_now'));
    expect(crashed.code).toBe('tool_crashed');
    expect(crashed.details).toMatchObject({ exitCode: 9 });
    const first = errorOf(await host.call('faults__ok'));
    expect(first.code).toBe('sandbox_unavailable');
    expect(first.details).toMatchObject({ reason: 'it exited during start-up (exit code 3)', stderrTail: 'hostile server: refusing to start' });
    // Within the backoff the server is not started again: the same reason, at once.
    const second = errorOf(await host.call('faults__ok'));
    expect(second.code).toBe('sandbox_unavailable');
    expect(second.details['retryAfterMs']).toBeGreaterThan(0);
  });
});
