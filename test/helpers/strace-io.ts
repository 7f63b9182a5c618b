// What a running process reads and writes, seen from outside it: strace
// attached to its host pid (all its threads), tracing read/write/writev with
// whole buffers, to a file. A test reads the process's own pipes this way
// without changing the process (an upstream server in its sandbox: the host's
// root may trace into the sandbox's namespaces; the sandbox's seccomp filter
// binds the traced process, not the tracer).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { until } from './wait.js';

export interface TracedIo {
  /** The JSON-RPC messages the process read on `fd` (its stdin: 0) so far, in order. */
  readMessages(fd?: number): unknown[];
  /** The JSON-RPC messages the process wrote on `fd` (its stdout: 1) so far, in order. */
  writtenMessages(fd?: number): unknown[];
  /** The trace as strace wrote it (for diagnostics). */
  raw(): string;
  /** Detaches (SIGINT: strace detaches cleanly and flushes) and waits until strace exited. */
  stop(): Promise<void>;
}

/** Attaches strace to `pid`; resolves once every thread of it is attached. */
export async function traceIo(pid: number, file: string): Promise<TracedIo> {
  const tracer = spawn('strace', ['-f', '-e', 'trace=read,write,writev', '-e', 'signal=none', '-s', '65536', '-p', String(pid), '-o', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  tracer.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => tracer.once('exit', () => resolve()));
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  await until(() => stderr.includes(`Process ${pid} attached`) || hasExited, `strace attached to ${pid}`, 20_000);
  if (hasExited) throw new Error(`strace could not attach to ${pid}: ${stderr.trim()}`);
  return {
    readMessages: (fd = 0) => messagesOf(buffersOf(traceText(file), 'read', fd)),
    writtenMessages: (fd = 1) => messagesOf(buffersOf(traceText(file), 'write', fd)),
    raw: () => traceText(file),
    stop: async () => {
      if (!hasExited) tracer.kill('SIGINT');
      await exited;
    },
  };
}

function traceText(file: string): string {
  try {
    return readFileSync(file, 'latin1');
  } catch {
    return '';
  }
}

// The data of every read or write (writev) on `fd`, in trace order. With -f, strace splits a
// call that another thread interrupts into `read(0, <unfinished ...>` and `<... read resumed>"…"`:
// a read's data is in the resumed half, a write's in the first.
function buffersOf(text: string, kind: 'read' | 'write', fd: number): string[] {
  const buffers: string[] = [];
  const pendingRead = new Map<string, number>();
  for (const line of text.split('\n')) {
    const parts = /^(\d+)\s+(.*)$/.exec(line);
    if (!parts) continue;
    const pid = parts[1] as string;
    const body = parts[2] as string;
    if (kind === 'read') {
      const started = /^read\((\d+), (.*)$/.exec(body);
      if (started) {
        if (started[2]?.startsWith('<unfinished')) pendingRead.set(pid, Number(started[1]));
        else if (Number(started[1]) === fd) buffers.push(...quotedStrings(started[2] ?? '').slice(0, 1));
        continue;
      }
      const resumed = /^<\.\.\. read resumed>(.*)$/.exec(body);
      if (resumed && pendingRead.get(pid) === fd) buffers.push(...quotedStrings(resumed[1] ?? '').slice(0, 1));
      if (resumed) pendingRead.delete(pid);
    } else {
      const write = /^write\((\d+), (.*)$/.exec(body) ?? /^writev\((\d+), (.*)$/.exec(body);
      if (write && Number(write[1]) === fd) buffers.push(...quotedStrings(write[2] ?? ''));
    }
  }
  return buffers;
}

// The C-escaped strings strace prints ("…"), unescaped to their bytes (as latin1 text).
function quotedStrings(text: string): string[] {
  const strings: string[] = [];
  for (let i = text.indexOf('"'); i !== -1; i = text.indexOf('"', i + 1)) {
    let value = '';
    let j = i + 1;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] !== '\\') {
        value += text[j];
        continue;
      }
      const next = text[++j] ?? '';
      const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', v: '\v', f: '\f', '"': '"', '\\': '\\' };
      if (next in simple) value += simple[next];
      else if (next === 'x') {
        value += String.fromCharCode(parseInt(text.slice(j + 1, j + 3), 16));
        j += 2;
      } else if (/[0-7]/.test(next)) {
        const octal = /^[0-7]{1,3}/.exec(text.slice(j))?.[0] ?? '0';
        value += String.fromCharCode(parseInt(octal, 8));
        j += octal.length - 1;
      } else value += next;
    }
    strings.push(value);
    i = j;
  }
  return strings;
}

// Newline-delimited JSON-RPC from the concatenated buffers (a message may span two reads).
function messagesOf(buffers: readonly string[]): unknown[] {
  const text = Buffer.from(buffers.join(''), 'latin1').toString('utf8');
  const messages: unknown[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      messages.push(JSON.parse(line));
    } catch {
      // Not JSON (the start gate's line, a cut buffer): not a message.
    }
  }
  return messages;
}
