// serve's logger (sync: false): the lines of LOG_COALESCE_MS reach the destination in
// one write; flush() hands them over at once, and the process's exit writes what is
// still gathered.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { coalescing, LOG_COALESCE_MS } from '../../src/log.js';
import { REPO_ROOT } from '../helpers/mcp-clients.js';

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

  it('a process that exits right after logging still writes its last lines (stderr, as serve logs)', () => {
    const log = pathToFileURL(join(REPO_ROOT, 'dist/src/log.js')).href;
    const script = `const { createLogger } = await import(${JSON.stringify(log)});
      const logger = createLogger({ sync: false });
      for (let i = 0; i <= 50; i++) logger.info({ i }, 'line');
      process.exit(0);`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.status).toBe(0);
    const lines = child.stderr.trim().split('\n').map((line) => JSON.parse(line) as { i: number });
    // All still gathered when it exits (same turn, no write begun): the exit handler writes them, in order.
    expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 51 }, (_, i) => i));
  });
});
