// serve's logger (sync: false): the lines of LOG_COALESCE_MS reach the destination in
// one write; flush() hands them over at once (the exit's flush is in
// test/integration/log/exit-flush.test.ts: it needs a process that exits).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { coalescing, LOG_COALESCE_MS, redactingLogger } from '../../src/log.js';

type Destination = Parameters<typeof coalescing>[0];

function fakeDestination(): { destination: Destination; writes: string[] } {
  const writes: string[] = [];
  const destination = { fd: -1, write: (chunk: string) => writes.push(chunk), flush: (callback: () => void) => callback(), flushSync: () => undefined };
  return { destination: destination as unknown as Destination, writes };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('serve logger: lines gathered, written together', () => {
  it('hands the lines of one window to the destination in one write, in order', () => {
    vi.useFakeTimers();
    const { destination, writes } = fakeDestination();
    const coalesced = coalescing(destination);
    coalesced.write('{"n":1}\n');
    coalesced.write('{"n":2}\n');
    coalesced.write('{"n":3}\n');
    expect(writes).toEqual([]);
    vi.advanceTimersByTime(LOG_COALESCE_MS);
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n']);
    coalesced.write('{"n":4}\n');
    vi.advanceTimersByTime(LOG_COALESCE_MS);
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n', '{"n":4}\n']);
  });

  it('flush() hands over what is gathered at once', () => {
    vi.useFakeTimers();
    const { destination, writes } = fakeDestination();
    const coalesced = coalescing(destination);
    coalesced.write('{"n":1}\n');
    let flushed = false;
    coalesced.flush(() => (flushed = true));
    expect(writes).toEqual(['{"n":1}\n']);
    expect(flushed).toBe(true);
  });
});

// The logger censors what pino's `redact: env, *.env, secret, *.secret` censored, line for
// line, without running pino's redactor on every value (see redactingLogger).
describe('log lines: redaction', () => {
  const REDACT = { paths: ['env', '*.env', 'secret', '*.secret'], censor: '[redacted]' };
  const capture = (): { lines: Record<string, unknown>[]; write: (line: string) => void } => {
    const lines: Record<string, unknown>[] = [];
    return {
      lines,
      write: (line) => {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        delete parsed['time'];
        lines.push(parsed);
      },
    };
  };
  const error = Object.assign(new Error('boom'), { code: 'E_X', env: { TOKEN: 'tok-1' } });
  const bare = Object.assign(new Error('bare'), { secret: 'sec-2' });
  const cause = Object.assign(new Error('cause'), { env: 'env-3' });
  const cases: Array<[string, (logger: pino.Logger) => void]> = [
    ['top-level keys', (l) => l.info({ env: { A: 'a-1' }, secret: 'sec-1', n: 1 }, 'top')],
    ['one level in, not in arrays', (l) => l.info({ spec: { env: { A: 1 }, secret: 'x', keep: 2 }, list: [{ env: 'kept' }] }, 'nested')],
    ['two levels in is not censored', (l) => l.info({ deep: { a: { env: 'deep' } } }, 'deeper')],
    ['an error with env', (l) => l.error({ err: error }, 'failed')],
    ['an error logged alone', (l) => l.error(bare)],
    ['an error under another key', (l) => l.warn({ cause }, 'cause')],
    ['values of every kind', (l) => l.info({ env: undefined, secret: 0, when: new Date(0), none: null, yes: true }, 'kinds')],
    ['a plain message', (l) => l.info('plain')],
    ['child bindings', (l) => l.child({ callId: 'c1', env: { X: 1 }, spec: { secret: 's' } }).info({ n: 1 }, 'child')],
    [
      'a grandchild',
      (l) =>
        l
          .child({ a: 1 })
          .child({ secret: 'g-1', nested: { env: 'g-2' } })
          .warn({ env: 'g-3' }, 'grandchild'),
    ],
    ['an interpolated object', (l) => l.info('value %j', { env: 1, a: { secret: 2 }, b: [{ env: 3 }] })],
  ];

  it.each(cases)('%s: the same line as pino redact wrote', (_name, log) => {
    const ours = capture();
    const theirs = capture();
    log(redactingLogger('info', ours));
    log(pino({ level: 'info', base: { name: 'toolhost' }, redact: REDACT }, theirs));
    expect(ours.lines).toEqual(theirs.lines);
    expect(ours.lines).toHaveLength(1);
  });

  it('never writes a censored value', () => {
    const ours = capture();
    const logger = redactingLogger('info', ours);
    for (const [, log] of cases) log(logger);
    const text = JSON.stringify(ours.lines);
    for (const secret of ['a-1', 'sec-1', 'tok-1', 'sec-2', 'env-3', 'g-1', 'g-2', 'g-3']) expect(text).not.toContain(secret);
    expect(text).toContain('"deep"');
    expect(text).toContain('"kept"');
  });

  it('leaves a logged object without those keys as it is (no copy)', () => {
    const ours = capture();
    const facts = { stage: 'run', durationMs: 3, nested: { a: 1 } };
    redactingLogger('info', ours).info(facts, 'call completed');
    expect(facts).toEqual({ stage: 'run', durationMs: 3, nested: { a: 1 } });
    expect(ours.lines[0]).toMatchObject(facts);
  });
});
