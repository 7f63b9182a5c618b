// Helpers of the bench: start a server as a child over stdio with the real MCP
// client, time calls, summarize, read a process's RSS and scan for orphans.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Starts `command args` as an MCP server and connects a client; returns the client, pid and startup time. */
export async function connect(command, args, env = {}) {
  const started = performance.now();
  const transport = new StdioClientTransport({ command, args, env: { ...process.env, ...env }, stderr: 'pipe', cwd: ROOT });
  transport.stderr?.on('data', () => {});
  const client = new Client({ name: 'toolhost-bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  const startupMs = performance.now() - started;
  return { client, pid: transport.pid, startupMs, close: () => client.close() };
}

/**
 * Starts `command args` as an HTTP MCP server, waits for its URL (`urlFrom` reads it from
 * stdout or stderr text), and connects the same SDK client over Streamable HTTP.
 */
export async function connectHttp(command, args, urlFrom, env = {}, headers = {}) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const url = await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      text += chunk.toString('utf8');
      const found = urlFrom(text);
      if (found) resolve(found);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before listening:\n${text.slice(-2000)}`)));
  });
  const client = new Client({ name: 'toolhost-bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return {
    client,
    pid: child.pid,
    url,
    async close() {
      await client.close().catch(() => undefined);
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

export function hostArgs({ manifests, policy, workspace, state, journal }) {
  // The flag bin/toolhost.js runs the host with (its shebang).
  return [
    '--max-semi-space-size=4',
    'dist/src/cli/main.js',
    'serve',
    '--manifests',
    manifests,
    '--policy',
    policy,
    '--workspace',
    workspace,
    '--state',
    state,
    ...(journal !== undefined ? ['--journal', journal] : []),
  ];
}

/** Times `count` sequential calls after `warmup` unmeasured ones; returns durations in ms. */
export async function timeCalls(client, name, args, count, warmup = 20) {
  for (let i = 0; i < warmup; i++) await callOk(client, name, args);
  const durations = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await callOk(client, name, args);
    durations.push(performance.now() - start);
  }
  return durations;
}

/** Calls per second with `inFlight` calls outstanding at all times. */
export async function throughput(client, name, args, total, inFlight) {
  let next = 0;
  const start = performance.now();
  const lane = async () => {
    while (next < total) {
      next++;
      await callOk(client, name, args);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return total / ((performance.now() - start) / 1000);
}

/**
 * Calls per second with `inFlight` calls at once over a window of at least `minMs` and
 * `minCalls` calls: a window of fixed length, not of a fixed count, so a fast target's
 * window is not over within one GC pause or one scheduling hiccup of a shared machine.
 */
export async function throughputOver(client, name, args, window) {
  return (await countedWindow(client, name, args, window)).perSecond;
}

/** throughputOver's window, with its count of calls. */
export async function countedWindow(client, name, args, { minMs, minCalls, inFlight }) {
  let done = 0;
  const start = performance.now();
  const more = () => done < minCalls || performance.now() - start < minMs;
  const lane = async () => {
    while (more()) {
      done++;
      await callOk(client, name, args);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return { perSecond: done / ((performance.now() - start) / 1000), calls: done };
}

export async function callOk(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
  return result;
}

export function summarize(durations) {
  const sorted = [...durations].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted[sorted.length - 1]) };
}

/**
 * CPU time (µs) used so far by `pid`'s main thread and by its whole process tree, from /proc.
 * The main thread's is its scheduler run time (schedstat, in ns). The tree's is utime + stime
 * of `pid` and of every descendant alive now, plus what the children they reaped used
 * (cutime + cstime: a one-shot sandbox that exited inside a window still counts), in clock
 * ticks of 10 ms (USER_HZ): precise over a whole run's windows, not within one short window.
 * Summed over the run, it says what one call costs a target, however loaded the machine was.
 */
export function cpuUs(pid) {
  const parents = new Map();
  const used = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(readProc(entry, 'stat'));
    if (fields === undefined) continue;
    parents.set(Number(entry), Number(fields[1]));
    used.set(Number(entry), Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]));
  }
  let ticks = 0;
  const visit = (at) => {
    ticks += used.get(at) ?? 0;
    for (const [child, parent] of parents) if (parent === at) visit(child);
  };
  visit(pid);
  const runNs = Number(readProc(`${pid}/task/${pid}`, 'schedstat').split(' ')[0] || 0);
  return { mainUs: runNs / 1000, treeUs: ticks * 10_000 };
}

/** The fields of a /proc stat line after the command name (state is [0], ppid [1], utime [11], stime [12]). */
function statFields(stat) {
  const close = stat.lastIndexOf(')');
  return close < 0 ? undefined : stat.slice(close + 2).split(' ');
}

export function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return round(kb / 1024);
}

/** Pids whose command line carries `marker`. */
/**
 * Pids of live processes whose argv contains `marker`. With `skipPrepared`, a
 * one-shot tool's sandbox prepared for the next call (a shell waiting at its
 * start gate, and the bubblewrap processes above it) is not counted.
 */
export function findMarked(marker, { skipPrepared = false } = {}) {
  const found = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const argv = readProc(entry, 'cmdline').split('\0');
    if (argv.join(' ').includes(marker)) found.set(Number(entry), argv);
  }
  if (!skipPrepared) return [...found.keys()];
  const prepared = new Set();
  for (const [pid, argv] of found) {
    if (argv[1] !== '-c' || !(argv[2] ?? '').endsWith('read -r start && exec "$@"')) continue;
    prepared.add(pid);
    for (let parent = parentOf(pid); parent > 1 && readProc(parent, 'comm').trim() === 'bwrap'; parent = parentOf(parent)) prepared.add(parent);
  }
  return [...found.keys()].filter((pid) => !prepared.has(pid));
}

function parentOf(pid) {
  return Number(statFields(readProc(pid, 'stat'))?.[1] ?? 0);
}

function readProc(pid, name) {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'latin1');
  } catch {
    return ''; // exited while scanning
  }
}

export function round(value, digits = 2) {
  return Number(value.toFixed(digits));
}

/** The median (the mean of the middle two for an even count); 0 for none. */
export function median(values) {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * A table of `header` and `rows`: for the terminal (`text`), columns padded to
 * their widest cell under a rule of dashes; for docs (`markdown`), a pipe table.
 */
export function table(header, rows, format = 'text') {
  if (format === 'markdown') {
    const cell = (value) => String(value ?? '').replace(/\|/g, '\\|');
    const line = (cells) => `| ${cells.map(cell).join(' | ')} |`;
    return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
  }
  const widths = header.map((h, i) => Math.max(String(h).length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => cells.map((cell, i) => String(cell).padEnd(widths[i])).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The JSON a host writes at exit (stage times, event-loop stats), once it is there; undefined after 5 s. */
export async function waitForFile(file) {
  for (let i = 0; i < 50; i++) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}
