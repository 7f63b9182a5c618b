// The raw line client of the bench: it writes one JSON-RPC request as a line
// on the server's stdin and reads the answer line from its stdout, nothing
// else (no schema validation, no client library), so a timing is the server's
// time plus a pipe round trip. The same code drives every target (the peer and
// toolhost alike); the SDK client stays as a second column (lib.mjs connect).
// It offers the `callTool` the bench's helpers use, so timeCalls and the
// throughput windows run unchanged on either client.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

export const PROTOCOL_VERSION = '2025-06-18';

/** Spawns `command args` as an MCP stdio server and completes the handshake; returns a client, its pid and the start-up time. */
export async function connectLine(command, args, { env = {}, cwd } = {}) {
  const started = performance.now();
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], ...(cwd !== undefined ? { cwd } : {}) });
  child.stderr.resume();
  const client = new LineClient(child);
  await client.request('initialize', { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'toolhost-bench-line', version: '1' } });
  client.notify('notifications/initialized');
  return { client, pid: child.pid, startupMs: performance.now() - started, close: () => client.close() };
}

/** A JSON-RPC client over a child's stdio, one message per line; any number of requests in flight. */
export class LineClient {
  #nextId = 1;
  #waiting = new Map();
  #partial = '';
  #child;

  constructor(child) {
    this.#child = child;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => this.#read(chunk));
    child.once('exit', (code, signal) => {
      const error = new Error(`server exited (${signal ?? code}) with ${this.#waiting.size} requests unanswered`);
      for (const { reject } of this.#waiting.values()) reject(error);
      this.#waiting.clear();
    });
  }

  /** Sends a request and resolves with its `result` (rejects with its `error`). */
  request(method, params) {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method, params) {
    this.#child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, ...(params !== undefined ? { params } : {}) })}\n`);
  }

  /** What lib.mjs's helpers call: the tools/call result. */
  callTool({ name, arguments: args }) {
    return this.request('tools/call', { name, arguments: args });
  }

  listTools() {
    return this.request('tools/list', {});
  }

  /** Ends the server's stdin (an MCP stdio server's cue to exit) and waits for it to exit. */
  async close() {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    this.#child.stdin.end();
    const timer = setTimeout(() => this.#child.kill('SIGTERM'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  #read(chunk) {
    this.#partial += chunk;
    for (let nl = this.#partial.indexOf('\n'); nl !== -1; nl = this.#partial.indexOf('\n')) {
      const line = this.#partial.slice(0, nl);
      this.#partial = this.#partial.slice(nl + 1);
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        continue; // not a JSON-RPC line
      }
      // Server requests and notifications (no pending id) need no answer here.
      const pending = message.id !== undefined && message.method === undefined ? this.#waiting.get(message.id) : undefined;
      if (pending === undefined) continue;
      this.#waiting.delete(message.id);
      if (message.error) pending.reject(new Error(`${message.error.code}: ${message.error.message}`));
      else pending.resolve(message.result);
    }
  }
}
