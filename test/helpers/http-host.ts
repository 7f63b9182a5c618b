// The built host serving `serve --http 127.0.0.1:0` for e2e tests: spawned
// with a unique marker, its URL read from the log line it writes on stderr
// once it listens, stopped by SIGTERM. Token files are written mode 0600.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { BUILT_MAIN } from './mcp-clients.js';
import { MARKER_ENV, type HostDirs, type RawHost, until, waitForExit, waitForNoMarkedProcesses } from './host-session.js';

export interface HttpHost {
  /** http://127.0.0.1:PORT */
  readonly base: string;
  /** base + /mcp */
  readonly url: string;
  readonly process: RawHost;
  stderr(): string;
  /** SIGTERM, then the exit; throws when a process of the host outlives it. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A token and its file line. */
export interface NamedToken {
  readonly principal: string;
  readonly token: string;
}

/** Writes a token file (mode 0600) for these principals; returns their tokens. */
export function writeTokenFile(dirs: HostDirs, principals: readonly string[], name = 'tokens.txt'): { file: string; tokens: Record<string, string> } {
  const tokens: Record<string, string> = {};
  const lines = ['# principal: sha256 of the token'];
  for (const principal of principals) {
    const token = randomBytes(24).toString('base64url');
    tokens[principal] = token;
    lines.push(`${principal}: ${createHash('sha256').update(token).digest('hex')}`);
  }
  const file = join(dirs.root, name);
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return { file, tokens };
}

/** Starts the built host over HTTP with `authArgs`; resolves once it listens. */
export async function startHttpHost(dirs: HostDirs, authArgs: readonly string[], env: Record<string, string> = {}): Promise<HttpHost> {
  const child: RawHost = spawn(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'serve', ...dirs.args, '--http', '127.0.0.1:0', ...authArgs], {
    env: { ...process.env, ...env, [MARKER_ENV]: dirs.marker },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  let base: string | undefined;
  await until(
    () => {
      base ??= listeningUrl(stderr);
      if (child.exitCode !== null) throw new Error(`the host exited (${child.exitCode}) before listening:\n${stderr}`);
      return base !== undefined;
    },
    'the host to listen',
    60_000,
  );
  const url = `${base!}/mcp`.replace(/\/mcp\/mcp$/, '/mcp');
  return {
    base: url.replace(/\/mcp$/, ''),
    url,
    process: child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const exit = await waitForExit(child);
      if (stdout !== '') throw new Error(`serve --http wrote to stdout: ${stdout.slice(0, 200)}`);
      const left = await waitForNoMarkedProcesses(dirs.marker);
      if (left.length > 0) throw new Error(`processes outlived the host: ${left.map((entry) => `${entry.pid} ${entry.cmdline}`).join('; ')}`);
      return exit;
    },
  };
}

function listeningUrl(stderr: string): string | undefined {
  for (const line of stderr.split('\n')) {
    if (!line.includes('serving MCP over HTTP')) continue;
    try {
      const record = JSON.parse(line) as { url?: string };
      if (typeof record.url === 'string') return record.url;
    } catch {
      // a partial line: wait for the rest
    }
  }
  return undefined;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A POST with full control of the headers (Host included), as a hostile client sends it. */
export function post(url: string, body: string, headers: Record<string, string>, options: { chunked?: boolean } = {}): Promise<RawResponse> {
  return send(url, 'POST', body, { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, options);
}

export function get(url: string): Promise<RawResponse> {
  return send(url, 'GET', undefined, {}, {});
}

function send(url: string, method: string, body: string | undefined, headers: Record<string, string>, options: { chunked?: boolean }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method,
        headers: { ...(body !== undefined && !options.chunked ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          // An SSE answer stays open: the first event is all these tests read.
          if (response.headers['content-type']?.startsWith('text/event-stream') && text.includes('\n\n')) response.destroy();
        });
        const done = () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text });
        response.on('end', done);
        response.on('close', done);
      },
    );
    // The host may answer (413) and close before the whole body is written.
    request.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    if (body !== undefined) {
      if (options.chunked) {
        for (let at = 0; at < body.length; at += 8192) request.write(body.slice(at, at + 8192));
      } else request.write(body);
    }
    request.end();
  });
}
