// The call logger writes the lines a pino child bound to the call would write
// (same keys, same order, same redaction), without building a child per call.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { redactingLogger, type Logger } from '../../../src/log.js';
import { callLogger } from '../../../src/supervisor/call-logger.js';

/**
 * A logger writing into `lines` (without their timestamps): the host's (createLogger's
 * redactingLogger), or a plain pino logger with pino's own redact option.
 */
function capture(level = 'info', kind: 'host' | 'pino' = 'host'): { readonly logger: Logger; readonly lines: string[] } {
  const lines: string[] = [];
  const write = (line: string): void => void lines.push(line.replace(/"time":\d+,/, ''));
  const logger =
    kind === 'host'
      ? redactingLogger(level, { write })
      : pino({ level, base: { name: 'toolhost' }, redact: { paths: ['env', '*.env', 'secret', '*.secret'], censor: '[redacted]' } }, { write });
  return { logger, lines };
}

describe('callLogger', () => {
  it.each(['host', 'pino'] as const)('writes byte for byte the line of a child bound to callId, tool and principal (%s logger)', (kind) => {
    for (const principal of [null, 'alice']) {
      const { logger, lines } = capture('info', kind);
      const bindings = { callId: 'c-1', tool: 'echo', ...(principal !== null ? { principal } : {}) };
      const facts = { stage: 'run', durationMs: 3, details: { secret: 'hunter2', env: { A: 'b' } }, env: 'x' };
      logger.child(bindings).warn(facts, 'call refused or failed: timeout');
      callLogger(logger, { callId: 'c-1', tool: 'echo', principal }).warn(facts, 'call refused or failed: timeout');
      expect(lines).toHaveLength(2);
      expect(lines[1]).toBe(lines[0]);
      expect(JSON.parse(lines[1] ?? '')).toMatchObject({ callId: 'c-1', tool: 'echo', details: { secret: '[redacted]', env: '[redacted]' }, env: '[redacted]' });
    }
  });

  it('serializes an err fact as pino does', () => {
    const { logger, lines } = capture();
    const err = new Error('boom');
    logger.child({ callId: 'c-2', tool: 't' }).error({ err }, 'failed');
    callLogger(logger, { callId: 'c-2', tool: 't', principal: null }).error({ err }, 'failed');
    expect(lines[1]).toBe(lines[0]);
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({ err: { type: 'Error', message: 'boom' } });
  });

  it('writes nothing below the host logger level, and follows a change of it', () => {
    const { logger, lines } = capture('info');
    const log = callLogger(logger, { callId: 'c-3', tool: 't', principal: null });
    log.debug({ a: 1 }, 'hidden');
    log.trace({ a: 1 }, 'hidden');
    expect(lines).toEqual([]);
    logger.level = 'debug';
    log.debug({ a: 1 }, 'shown');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ level: 20, callId: 'c-3', tool: 't', a: 1, msg: 'shown' });
  });
});
