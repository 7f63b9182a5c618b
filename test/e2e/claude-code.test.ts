// Claude Code (@anthropic-ai/claude-code, a dev dependency whose native binary
// ships inside its platform's registry package, run from there: the wrapper's
// postinstall, which only copies it into place, is not allowed to run) configured with toolhost the way its docs show (`claude mcp add
// NAME -- COMMAND…`): `claude mcp list` checks each server's connection with no
// login, and reports toolhost connected. HOME is a temporary folder, so the
// user's own configuration is neither read nor written.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { FIXTURE_MANIFESTS, MARKER_ENV, makeHostDirs, waitForNoMarkedProcesses, type HostDirs } from '../helpers/host-session.js';

const CLAUDE = join(REPO_ROOT, `node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`);
let dirs: HostDirs;

beforeAll(async () => {
  await ensureBuilt();
  dirs = makeHostDirs();
}, 300_000);
afterAll(async () => {
  expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);
  dirs.cleanup();
}, 60_000);

describe('Claude Code', () => {
  it('`claude mcp list` reports toolhost connected', async () => {
    const home = join(dirs.root, 'home');
    const project = join(dirs.root, 'project');
    mkdirSync(home);
    mkdirSync(project);
    const env = { HOME: home, PATH: process.env['PATH'] ?? '/usr/bin:/bin', [MARKER_ENV]: dirs.marker };
    const serve = [
      process.execPath,
      '--no-node-snapshot',
      join(REPO_ROOT, 'bin/toolhost.js'),
      'serve',
      '--manifests',
      FIXTURE_MANIFESTS,
      '--workspace',
      dirs.workspace,
      '--state',
      dirs.stateDir,
    ];
    const added = await execa(CLAUDE, ['mcp', 'add', 'toolhost', '--', ...serve], { cwd: project, env, extendEnv: false, reject: false, timeout: 60_000 });
    expect(added.exitCode).toBe(0);
    const listed = await execa(CLAUDE, ['mcp', 'list'], { cwd: project, env, extendEnv: false, reject: false, timeout: 120_000 });
    expect(listed.exitCode).toBe(0);
    const line = String(listed.stdout)
      .split('\n')
      .find((entry) => entry.startsWith('toolhost:'));
    expect(line).toMatch(/✔ Connected$/);
  }, 180_000);
});
