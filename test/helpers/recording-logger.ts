// A real pino logger whose JSON lines a test can read back: for assertions on
// what the host logged (and, as a signal, for waiting until it logged it).
import { Writable } from 'node:stream';
import { pino, type Level } from 'pino';
import type { Logger } from '../../src/log.js';

export interface RecordingLogger {
  readonly logger: Logger;
  /** Every line so far, parsed. */
  lines(): Array<Record<string, unknown>>;
  /** Their total size in bytes. */
  bytes(): number;
}

/** A logger at `level` (default info) that keeps what it writes. */
export function recordingLogger(level: Level = 'info'): RecordingLogger {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = pino({ level }, sink);
  const text = () => chunks.join('');
  return {
    logger,
    lines: () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    bytes: () => Buffer.byteLength(text()),
  };
}
