// serve's logger (sync: false) gathers lines for LOG_COALESCE_MS: the process's
// exit still writes what is gathered, so the last lines before an exit are kept.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/mcp-clients.js';

describe('serve logger: lines gathered, written together', () => {
  it('a process that exits right after logging still writes its last lines (stderr, as serve logs)', () => {
    const log = pathToFileURL(join(REPO_ROOT, 'dist/src/log.js')).href;
    const script = `const { createLogger } = await import(${JSON.stringify(log)});
      const logger = createLogger({ sync: false });
      for (let i = 0; i <= 50; i++) logger.info({ i }, 'line');
      process.exit(0);`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.status).toBe(0);
    const lines = child.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { i: number });
    // All still gathered when it exits (same turn, no write begun): the exit handler writes them, in order.
    expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 51 }, (_, i) => i));
  });
});
