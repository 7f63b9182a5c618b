// `toolhost console` on its own (SPEC sections 7.4 and 8), as a person runs it:
// the built CLI over the journal a host wrote, the same authentication choices
// as `serve --http` (--no-auth refused off loopback), and a clean stop.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashArgs } from '../../src/audit/hash.js';
import { openSqliteStore } from '../../src/audit/sqlite/sqlite-store.js';
import { BUILT_MAIN, ensureBuilt } from '../helpers/mcp-clients.js';
import { until, waitForExit, type RawHost, makeHostDirs, type HostDirs } from '../helpers/host-session.js';
import { writeTokenFile } from '../helpers/http-host.js';

let dirs: HostDirs;

beforeAll(async () => {
  await ensureBuilt();
  dirs = makeHostDirs();
  const journal = openSqliteStore(dirs.stateDir);
  const now = Date.now();
  await journal.createApproval({
    id: 'a-1',
    tool: 'write_file',
    argsHash: hashArgs({}),
    sideEffect: 'local_mutation',
    rule: null,
    principal: 'agent',
    sessionId: 's',
    callId: 'c',
    createdAt: now,
    expiresAt: now + 600_000,
    arguments: { path: 'x' },
    effects: null,
  });
  await journal.close();
}, 300_000);
afterAll(() => dirs?.cleanup());

function run(args: readonly string[]): { child: RawHost; stderr: () => string } {
  const child = spawn(process.execPath, ['--no-node-snapshot', BUILT_MAIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] }) as RawHost;
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, stderr: () => stderr };
}

describe('toolhost console', () => {
  it('serves the console over the journal a host wrote, signed in with the token file, and stops on SIGTERM', async () => {
    const { file, tokens } = writeTokenFile(dirs, ['ops']);
    const journal = `sqlite:${join(dirs.stateDir, 'journal.sqlite')}`;
    const { child, stderr } = run(['console', '--http', '127.0.0.1:0', '--auth-tokens', file, '--journal', journal, '--manifests', join(dirs.root, 'none')]);
    let url: string | undefined;
    await until(
      () => {
        url ??= /"url":"(http:\/\/127\.0\.0\.1:\d+\/console)"[^\n]*serving the console over HTTP/.exec(stderr())?.[1];
        if (child.exitCode !== null) throw new Error(`exited early: ${stderr()}`);
        return url !== undefined;
      },
      'the console to listen',
      60_000,
    );
    const base = url!.replace(/\/console$/, '');
    const page = await fetch(`${base}/console/approvals`, { headers: { authorization: `Bearer ${tokens['ops']}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/console/approvals/a-1');
    expect((await fetch(`${base}/`, { redirect: 'manual' })).headers.get('location')).toBe('/console/approvals');
    expect((await fetch(`${base}/console/approvals`, { redirect: 'manual' })).status).toBe(303);
    child.kill('SIGTERM');
    expect((await waitForExit(child)).code).toBe(0);
  });

  it('refuses --no-auth beyond loopback, a missing journal, and serve --console without --http', async () => {
    const noAuth = run(['console', '--http', '0.0.0.0:0', '--no-auth', '--state', dirs.stateDir]);
    expect((await waitForExit(noAuth.child)).code).toBe(2);
    expect(noAuth.stderr()).toContain('--no-auth is allowed only on a loopback address');
    const missing = run(['console', '--http', '127.0.0.1:0', '--no-auth', '--state', join(dirs.root, 'nowhere')]);
    expect((await waitForExit(missing.child)).code).toBe(1);
    expect(missing.stderr()).toContain('no journal at');
    const serve = run(['serve', '--console', ...dirs.args]);
    expect((await waitForExit(serve.child)).code).toBe(2);
    expect(serve.stderr()).toContain('--console needs --http');
  });
});
