// Screenshots of the console for the operator's and the auditor's guide
// (docs/images/console-*.png), taken by the suite from deterministic data: a
// journal written with fixed ids and times, the console's clock fixed, the
// bundled manifests, a fixed viewport. Each page is also checked for what the
// guide says it shows.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewApproval } from '../../src/audit/approval-record.js';
import { hashArgs } from '../../src/audit/hash.js';
import { openJournal } from '../../src/audit/open-journal.js';
import { openSqliteStore } from '../../src/audit/sqlite/sqlite-store.js';
import type { Journal } from '../../src/audit/journal.js';
import { consoleToolsOf } from '../../src/cli/console-tools.js';
import { createConsole, type ConsoleHandler } from '../../src/console/console-server.js';
import { serveConsoleHttp, type ConsoleHttpServer } from '../../src/console/console-http.js';
import { loadHostConfig } from '../../src/host-config.js';
import { createSilentLogger } from '../../src/log.js';
import { hashToken, tokenAuthenticator } from '../../src/protocol/auth/token-file.js';
import { launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { REPO_ROOT } from '../helpers/mcp-clients.js';

const NOW = Date.parse('2026-11-30T10:15:00Z');
const TOKEN = 'screenshot-token-0123456789';
const IMAGES = join(REPO_ROOT, 'docs/images');
const HOST = 'host-7d1e0c52';

let root: string;
let reader: Journal;
let handler: ConsoleHandler;
let server: ConsoleHttpServer;
let browser: TestBrowser;

const minutes = (count: number) => count * 60_000;

async function writeJournal(stateDir: string): Promise<void> {
  const journal = openSqliteStore(stateDir, { sessionId: 'session-ci-42' });
  const approval = (overrides: Partial<NewApproval> & Pick<NewApproval, 'id' | 'tool' | 'arguments'>): NewApproval => ({
    argsHash: hashArgs(overrides.arguments),
    sideEffect: 'local_mutation',
    rule: 'policies/org/acme-baseline.yaml:14 sideEffects.requireApproval',
    principal: 'ci-bot',
    sessionId: 'session-ci-42',
    callId: `call-${overrides.id}`,
    createdAt: NOW - minutes(3),
    expiresAt: NOW + minutes(57),
    effects: null,
    ...overrides,
  });
  await journal.createApproval(
    approval({
      id: '3f0c2a1e-5b7d-4c1e-9d0a-2b3c4d5e6f70',
      tool: 'write_file',
      arguments: { path: 'docs/deploy.md', text: '# Deploying\n\nRun `make release` from a clean tree.\nTag the release before you push.\n' },
      effects: [
        {
          argument: 'path',
          path: '/srv/acme/repo/docs/deploy.md',
          where: 'writable_root',
          summary: 'replaces a 74-byte text file (+2 -1 lines)',
          diff: '--- a/docs/deploy.md\n+++ b/docs/deploy.md\n@@ -1,3 +1,4 @@\n # Deploying\n \n-Run `make release`.\n+Run `make release` from a clean tree.\n+Tag the release before you push.',
        },
      ],
    }),
  );
  await journal.createApproval(
    approval({
      id: '9b1d6e2a-0c3f-4a8b-b7e6-5d4c3b2a1f00',
      tool: 'delete_path',
      sideEffect: 'destructive',
      principal: 'release-agent',
      arguments: { path: 'build/cache' },
      createdAt: NOW - minutes(12),
      rule: 'manifests/delete_path.yaml:9 approval',
    }),
  );
  const calls: Array<[string, string, string | null, 'completed' | 'denied' | 'failed', string | null, number, 'allow' | 'deny' | 'ask']> = [
    ['c-0007', 'read_file', 'ci-bot', 'completed', null, 1, 'allow'],
    ['c-0006', 'write_file', 'ci-bot', 'denied', 'approval_required', 3, 'ask'],
    ['c-0005', 'search_text', 'release-agent', 'completed', null, 5, 'allow'],
    ['c-0004', 'http_get', 'release-agent', 'failed', 'timeout', 7, 'allow'],
    ['c-0003', 'delete_path', 'release-agent', 'denied', 'approval_required', 12, 'ask'],
    ['c-0002', 'list_dir', 'ci-bot', 'completed', null, 20, 'allow'],
    ['c-0001', 'shell_exec', 'ci-bot', 'denied', 'policy_denied', 25, 'deny'],
  ];
  for (const [id, tool, principal, status, errorCode, ago, decision] of calls) {
    const startedAt = NOW - minutes(ago);
    await journal.record(
      {
        id,
        sessionId: 'session-ci-42',
        principal,
        tool,
        argsHash: hashArgs({ id }),
        sideEffect: tool === 'write_file' ? 'local_mutation' : 'read_only',
        decision,
        rule: decision === 'allow' ? null : 'policies/org/acme-baseline.yaml:14 sideEffects.requireApproval',
        approval: decision === 'ask' ? 'required' : 'not_needed',
        idempotencyKey: null,
        startedAt,
      },
      { status, errorCode, resultHash: status === 'completed' ? 'ab'.repeat(32) : null, resultBytes: status === 'completed' ? 812 : null, replay: null, endedAt: startedAt + 42 },
    );
  }
  await journal.close();
  // A host id is random: the pictures show a fixed one.
  const db = new Database(join(stateDir, 'journal.sqlite'));
  db.prepare('UPDATE approvals SET host_id = ?').run(HOST);
  db.close();
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'toolhost-shots-'));
  const stateDir = join(root, 'state');
  await writeJournal(stateDir);
  reader = await openJournal({ stateDir, asHost: false });
  const config = loadHostConfig({
    manifestDirs: [join(REPO_ROOT, 'manifests')],
    policyFiles: [join(REPO_ROOT, 'policies/org/acme-baseline.yaml')],
    workspace: REPO_ROOT,
    cwd: REPO_ROOT,
    env: { PATH: '/usr/bin:/bin' },
  });
  handler = createConsole({
    journal: reader,
    authenticator: tokenAuthenticator([{ principal: 'ops', hash: Buffer.from(hashToken(TOKEN), 'hex') }]),
    tools: consoleToolsOf(() => config),
    logger: createSilentLogger(),
    now: () => NOW,
  });
  server = await serveConsoleHttp({ console: handler, host: '127.0.0.1', port: 0, logger: createSilentLogger() });
  browser = await launchBrowser({ width: 1280, height: 800 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await reader?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('console screenshots for the guide', () => {
  it('takes each page from fixed data', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/console/sign-in`);
    await page.screenshot({ path: join(IMAGES, 'console-sign-in.png') });
    await page.getByLabel(/Bearer token/).fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/console/approvals`);
    expect(await page.locator('table tbody tr').count()).toBe(2);
    await page.screenshot({ path: join(IMAGES, 'console-approvals.png'), fullPage: true });

    await page.goto(`${server.url}/console/approvals/3f0c2a1e-5b7d-4c1e-9d0a-2b3c4d5e6f70`);
    expect(await page.locator('pre.diff .d-add').count()).toBe(2);
    expect(await page.locator('dl.facts').textContent()).toContain(HOST);
    await page.getByLabel(/Your name/).fill('Alice Operator');
    await page.getByLabel(/Note/).fill('Docs only; checked the diff.');
    await page.screenshot({ path: join(IMAGES, 'console-approval.png'), fullPage: true });

    await page.goto(`${server.url}/console/feed`);
    await expect.poll(() => page.locator('#feed-status').textContent()).toContain('Live');
    expect(await page.locator('#feed-rows tr').count()).toBe(7);
    await page.screenshot({ path: join(IMAGES, 'console-feed.png'), fullPage: true });

    await page.goto(`${server.url}/console/audit?principal=ci-bot`);
    expect(await page.locator('table.calls tbody tr').count()).toBe(4);
    await page.screenshot({ path: join(IMAGES, 'console-audit.png'), fullPage: true });

    await page.goto(`${server.url}/console/tools`);
    expect(await page.locator('table tbody tr').count()).toBeGreaterThan(5);
    await page.screenshot({ path: join(IMAGES, 'console-tools.png'), fullPage: true });
    await page.close();
    for (const name of ['sign-in', 'approvals', 'approval', 'feed', 'audit', 'tools']) expect(statSync(join(IMAGES, `console-${name}.png`)).size).toBeGreaterThan(10_000);
  });
});
