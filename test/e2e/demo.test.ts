// `npm run demo` end to end (the scripted agent session of scripts/demo.mjs):
// it exits 0, and the bundled upstream server (manifests/servers/fs.yaml, the
// reference filesystem server from node_modules) is listed and called under
// the built-in policy: a listing, a write inside the workspace, a write outside
// refused. Its temporary folder is removed afterwards, and nothing it started
// outlives it.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { waitForNoMarkedProcesses } from '../helpers/proc-scan.js';

beforeAll(() => ensureBuilt(), 300_000);

describe('npm run demo', () => {
  it('walks the whole session, the bundled fs server included, and exits 0', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--no-node-snapshot', join(REPO_ROOT, 'scripts/demo.mjs')], {
      cwd: REPO_ROOT,
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const workspace = /workspace: (\S+)/.exec(stdout)?.[1];
    try {
      expect(stdout).toMatch(/fs__list_directory +readOnly/);
      expect(stdout).toMatch(/tools\/call fs__list_directory .*\n +✓ text/);
      expect(stdout).toContain('notes/todo.md on disk: true');
      expect(stdout).toMatch(/tools\/call fs__write_file .*outside\.txt.*\n +✗ tool_error/);
      expect(stdout).toContain('outside.txt on disk: false');
      expect(stdout).toContain('done.');
      // The demo's host and its servers are gone (their command lines name the demo's workspace).
      expect(workspace).toBeDefined();
      expect(await waitForNoMarkedProcesses(workspace!, 10_000)).toEqual([]);
    } finally {
      if (workspace) rmSync(dirname(workspace), { recursive: true, force: true });
    }
  }, 300_000);
});
