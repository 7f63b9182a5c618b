// A journal that cannot be written because the disk is full (SPEC 5.2, 7.1):
// a call that must be journaled before it runs gets an `internal` *result*
// (`details.reason: "disk_full"`, recovery `retry`), its tool does not run, and
// the host keeps serving once there is space again. The disk is a real one:
// the host runs in a mount namespace of its own (unshare) where its state
// folder is a small tmpfs, which the test fills through /proc/PID/root until
// the kernel answers ENOSPC, so SQLite meets the very error a full disk gives.
import { mkdirSync, openSync, closeSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectStdioClient, ensureBuilt, REPO_ROOT } from '../helpers/mcp-clients.js';
import { makeHostDirs, MARKER_ENV, stopClient, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

const MANIFESTS = join(REPO_ROOT, 'test/e2e/fixtures/journal-full');
const TMPFS_SIZE = '8m';

describe('a journal on a full disk', () => {
  let dirs: HostDirs | undefined;
  let client: HostClient | undefined;
  beforeAll(async () => ensureBuilt(), 300_000);
  afterEach(async () => {
    if (dirs) await stopClient(client, dirs);
    dirs?.cleanup();
    dirs = undefined;
    client = undefined;
  });

  it('fails a mutating call before its tool runs with an internal result, reason disk_full; the host serves again once there is space', async () => {
    dirs = makeHostDirs({ manifests: [MANIFESTS] });
    mkdirSync(dirs.stateDir, { mode: 0o700 });
    const launcher = [
      'unshare',
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      `mount -t tmpfs -o size=${TMPFS_SIZE},mode=0700 toolhost-full "$0" && exec "$@"`,
      dirs.stateDir,
    ];
    const host = await connectStdioClient({ args: dirs.args, env: { [MARKER_ENV]: dirs.marker }, launcher }, { kind: 'v2-legacy' });
    client = host;
    const stamps = (): string => readFileSync(join(dirs!.workspace, 'stamps.txt'), 'utf8');
    expect((await host.callTool({ name: 'stamp', arguments: { line: 'before' } }))['structuredContent']).toEqual({ stamped: 'before' });

    // The host's view of its state folder: the tmpfs, seen through its own root.
    const filler = `/proc/${host.pid}/root${dirs.stateDir}/filler`;
    fillUntilFull(filler);
    const refused = await host.callTool({ name: 'stamp', arguments: { line: 'during' } });
    expect(wireErrorOf(refused)).toEqual({ code: 'internal', reason: 'disk_full', stage: 'journal', recovery: 'retry' });
    expect(stamps()).toBe('before\n');

    unlinkSync(filler);
    expect((await host.callTool({ name: 'stamp', arguments: { line: 'after' } }))['structuredContent']).toEqual({ stamped: 'after' });
    expect(stamps()).toBe('before\nafter\n');
  });
});

/** Writes zeros to `file` until the file system has no block left (ENOSPC). */
function fillUntilFull(file: string): void {
  const chunk = Buffer.alloc(64 * 1024);
  const fd = openSync(file, 'w');
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}
