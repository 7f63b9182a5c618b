// Differential: the end-of-call lines built by writeFlatLine (via the call logger and
// logCallEnd) are byte for byte the lines pino writes for the same call, time included,
// through the host's logger's own pino path and through plain pino with pino's redact;
// lines that need pino (objects, err, censored keys) are left to it and still identical.
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HostError } from '../../src/errors.js';
import { redactingLogger, type Logger } from '../../src/log.js';
import { namesJson, pinoString, writeFlatLine } from '../../src/log-flat-line.js';
import type { CallContext } from '../../src/supervisor/call-context.js';
import { logCallEnd } from '../../src/supervisor/call-events.js';
import { callLogger } from '../../src/supervisor/call-logger.js';
import type { CallEnd } from '../../src/supervisor/stages/finish.js';

const REDACT = { paths: ['env', '*.env', 'secret', '*.secret'], censor: '[redacted]' };

/** Three loggers writing into arrays: the host's; a child of it with no bindings (never the flat path); plain pino with redact. */
function loggers(level = 'info'): { host: Logger; viaPino: Logger; plain: Logger; lines: { host: string[]; viaPino: string[]; plain: string[] } } {
  const lines = { host: [] as string[], viaPino: [] as string[], plain: [] as string[] };
  const hostRoot = redactingLogger(level, { write: (line: string) => void lines.host.push(line) });
  const pinoRoot = redactingLogger(level, { write: (line: string) => void lines.viaPino.push(line) });
  const plain = pino({ level, base: { name: 'toolhost' }, redact: REDACT }, { write: (line: string) => void lines.plain.push(line) });
  return { host: hostRoot, viaPino: pinoRoot.child({}), plain, lines };
}

const odd = [
  'plain',
  'quote " and backslash \\ inside',
  'control \u0001 char and \n newline \t tab',
  'unicode: héllo wörld 日本語 🎉',
  'lone surrogate \ud800 here',
  'line sep \u2028 para sep \u2029',
  'x'.repeat(101) + '"\\',
  '\ud83d' + 'y'.repeat(120),
  '',
  '%s %d %j %o',
];

function context(logger: Logger, names: { callId: string; tool: string; principal: string | null }, facts: Partial<CallContext>): CallContext {
  return { stage: 'run', decision: 'allow', rule: 'read-only', approval: null, ...facts, logger: callLogger(logger, names) } as unknown as CallContext;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('flat log lines', () => {
  it('logCallEnd writes byte-identical lines through the flat path and through pino, for a corpus of calls', () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_764_000_000_123);
    const { host, viaPino, plain, lines } = loggers('trace');
    const ends: CallEnd[] = [
      { kind: 'result', payloadHash: null, payloadBytes: null, replay: null },
      { kind: 'input_required' },
      { kind: 'error', error: new HostError('timeout', 'The tool ran out of time.', { limitMs: 100 }) },
      { kind: 'error', error: new HostError('policy_denied', 'Denied.', { rule: 'deny-all', env: { TOKEN: 'tok' }, secret: 's' }) },
      { kind: 'error', error: new HostError('tool_crashed', 'Failed.', {}, { cause: Object.assign(new Error('boom "x"'), { env: { A: 'b' } }) }) },
    ];
    const variants: Partial<CallContext>[] = [
      {},
      { rule: null, decision: 'deny', stage: 'policy' },
      { approval: 'approved' as CallContext['approval'] },
      ...odd.map((text) => ({ rule: text, stage: text as CallContext['stage'] })),
    ];
    let count = 0;
    for (const principal of [null, 'alice', 'bob "the" \u0007 ☃']) {
      for (const tool of ['echo_worker', ...odd.slice(1, 6)]) {
        for (const variant of variants) {
          for (const end of ends) {
            for (const durationMs of [0, 1.5, -0, Number.NaN, 12345678901]) {
              const names = { callId: `c-${count++}`, tool, principal };
              for (const logger of [host, viaPino, plain]) logCallEnd(context(logger, names, variant), end, durationMs);
            }
          }
        }
      }
    }
    expect(lines.host).toHaveLength(count);
    expect(lines.host).toEqual(lines.viaPino);
    // pino's redact option writes every value with JSON.stringify, which escapes a lone
    // surrogate that the host's logger (before this path too) writes raw: all else is equal.
    const lone = /\\ud[89a-f][0-9a-f]{2}/;
    const comparable = lines.plain.flatMap((line, i) => (lone.test(line) ? [] : [[line, lines.host[i]]]));
    expect(comparable.length).toBeGreaterThan(count / 2);
    for (const [plainLine, hostLine] of comparable) expect(hostLine).toBe(plainLine);
    // Every line parses and is redacted; the flat lines carry the fixed shape in order.
    for (const line of lines.host) {
      expect(line.endsWith('}\n')).toBe(true);
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed['details'] !== undefined) expect(JSON.stringify(parsed['details'])).not.toMatch(/tok|"s"/);
    }
    expect(lines.host[0]).toBe(
      '{"level":30,"time":1764000000123,"name":"toolhost","callId":"c-0","tool":"echo_worker","stage":"run","durationMs":0,"decision":"allow","rule":"read-only","approval":null,"msg":"call completed"}\n',
    );
  });

  it('takes the flat path for flat facts only, and only on the host logger itself', () => {
    const { host, viaPino, plain } = loggers();
    const names = namesJson('c-1', 't', null) ?? '';
    expect(writeFlatLine(host, 'info', names, { stage: 'run', durationMs: 1, rule: null, flag: true, gone: undefined }, 'call completed')).toBe(true);
    for (const facts of [
      { details: {} },
      { err: new Error('x') },
      { env: 'x' },
      { secret: 1 },
      { tool: 'other' },
      { 0: 'a' },
      { socket: 1 },
      { f: () => 1 },
      { n: 1n },
      { s: Symbol('s') },
    ]) {
      expect(writeFlatLine(host, 'info', names, facts, 'm')).toBe(false);
    }
    expect(writeFlatLine(viaPino, 'info', names, { a: 1 }, 'm')).toBe(false);
    expect(writeFlatLine(plain, 'info', names, { a: 1 }, 'm')).toBe(false);
    expect(namesJson(1, 't', null)).toBeUndefined();
  });

  it('writes flat lines at the host level only, and with bindings set later', () => {
    vi.spyOn(Date, 'now').mockReturnValue(5);
    const { host, viaPino, lines } = loggers('warn');
    for (const logger of [host, viaPino]) {
      const log = callLogger(logger, { callId: 'c', tool: 't', principal: null });
      log.info({ a: 1 }, 'hidden');
      log.warn({ a: 2 }, 'shown');
      logger.setBindings({ extra: 'x', env: 'hidden' });
      log.error({ a: 3, odd: odd[2] ?? '' }, 'after bindings');
    }
    expect(lines.host).toHaveLength(2);
    expect(lines.host).toEqual(lines.viaPino);
    expect(lines.host[1]).toContain('"extra":"x","env":"[redacted]","callId":"c"');
  });

  it('writes strings as pino does (JSON.stringify but for short lone surrogates)', () => {
    for (const text of odd) expect(JSON.parse(pinoString(text))).toBe(text);
    expect(pinoString('a\ud800')).toBe('"a\ud800"');
    expect(pinoString('a\u0001\ud800')).toBe(JSON.stringify('a\u0001\ud800'));
  });
});
