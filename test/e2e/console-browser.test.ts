// The web console in a real browser (SPEC section 7.4): Debian's Chromium
// against the built host serving `serve --http … --console`. An operator signs
// in with a token, sees a pending approval with its arguments and diff,
// approves it, and the waiting call runs once; the decision shows in the audit
// search and the chain verifies. A tool result holding <script> and a principal named
// `"><img src=x onerror=…>` render as text (no dialog, no element, no script
// run); a POST from another origin is refused; the CSP header is sent.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { connectHttpClient, ensureBuilt, REPO_ROOT, type TestClient } from '../helpers/mcp-clients.js';
import { FIXTURE_MANIFESTS, makeHostDirs, type HostDirs } from '../helpers/host-session.js';
import { startHttpHost, writeTokenFile, type HttpHost } from '../helpers/http-host.js';
import { wireErrorOf } from '../helpers/wire-results.js';

const POLICY = `kind: Policy
name: console-e2e
approvals:
  by: operator
sideEffects:
  requireApproval: [local_mutation]
`;
const HOSTILE_PRINCIPAL = `"><img src=x onerror="document.title='pwned'">`;
const SCRIPT = `<script>document.title='pwned'</script>`;

let browser: TestBrowser;
const stops: Array<() => Promise<unknown> | unknown> = [];

/** A manifest folder with the bundled write_file (it declares effects.writes). */
function writeFileTool(root: string): string {
  const dir = join(root, 'tools');
  mkdirSync(dir);
  for (const file of ['write_file.yaml', 'write_file.js']) copyFileSync(join(REPO_ROOT, 'manifests', file), join(dir, file));
  return dir;
}

beforeAll(async () => {
  await ensureBuilt();
  browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await browser?.close();
});

async function startConsoleHost(auth: (dirs: HostDirs) => Promise<readonly string[]> | readonly string[]): Promise<{ dirs: HostDirs; host: HttpHost }> {
  const probe = makeHostDirs();
  const dirs = makeHostDirs({ policy: POLICY, manifests: [FIXTURE_MANIFESTS, writeFileTool(probe.root)] });
  stops.push(
    () => probe.cleanup(),
    () => dirs.cleanup(),
  );
  const host = await startHttpHost(dirs, [...(await auth(dirs)), '--console']);
  stops.push(() => host.stop());
  return { dirs, host };
}

/** Signs in on the console's own form, with a token pasted as a person would (once per host: the browser keeps the cookie). */
async function signIn(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/console/approvals`);
  if (new URL(page.url()).pathname === '/console/approvals') return;
  expect(new URL(page.url()).pathname).toBe('/console/sign-in');
  await page.getByLabel(/Bearer token/).fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/console/approvals`);
}

describe('an operator approves a pending call in the console', () => {
  let base: string;
  let tokens: Record<string, string>;
  let dirs: HostDirs;
  let agent: TestClient;

  beforeAll(async () => {
    const started = await startConsoleHost((hostDirs) => {
      const written = writeTokenFile(hostDirs, ['ops', 'agent']);
      tokens = written.tokens;
      return ['--auth-tokens', written.file];
    });
    base = started.host.base;
    dirs = started.dirs;
    agent = await connectHttpClient(started.host.url, tokens['agent'], { kind: 'v1-legacy' });
    stops.push(() => agent.close());
  });

  const write = (text: string, approvalId?: string) =>
    agent.callTool({ name: 'write_file', arguments: { path: 'notes.txt', text }, ...(approvalId ? { _meta: { 'toolhost/approvalId': approvalId } } : {}) });

  it('signs in with a token, sees the arguments and the diff, approves; the waiting call runs once; the audit search shows who approved', async () => {
    const asked = wireErrorOf(await write('first line\nchanged line\n'));
    expect(asked.code).toBe('approval_required');
    const id = String(asked['approvalId']);

    const page = await browser.newPage();
    const response = await page.goto(`${base}/console/sign-in`);
    expect(response?.headers()['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(response?.headers()['x-frame-options']).toBe('DENY');
    await signIn(page, base, tokens['ops']!);
    await page.getByRole('link', { name: 'write_file' }).first().click();
    await page.waitForURL(`${base}/console/approvals/${id}`);
    const args = page.locator('section[aria-labelledby="args-h"]');
    await expect.poll(() => args.locator('dt').allTextContents()).toEqual(['path', 'text']);
    expect(await args.locator('dd').first().textContent()).toBe('"notes.txt"');
    expect(await args.locator('pre.v-string').textContent()).toBe('first line\nchanged line\n');
    const diff = page.locator('pre.diff');
    expect(await diff.locator('.d-del').allTextContents()).toEqual(['-second line']);
    expect(await diff.locator('.d-add').allTextContents()).toEqual(['+changed line']);
    expect(await page.locator('section.write code').first().textContent()).toBe(join(dirs.workspace, 'notes.txt'));
    expect(await page.locator('dl.facts').textContent()).toContain('agent');

    // The name is required: the browser will not send the form without it.
    await page.getByRole('button', { name: 'Approve this call once' }).click();
    expect(page.url()).toBe(`${base}/console/approvals/${id}`);
    await page.getByLabel(/Your name/).fill('Alice Operator');
    await page.getByLabel(/Note/).fill('reviewed the diff');
    await page.getByRole('button', { name: 'Approve this call once' }).click();
    await page.waitForURL(`${base}/console/approvals/${id}?decided=approved`);
    expect(await page.locator('.state').first().textContent()).toBe('approved');

    // The waiting caller's repeat runs once.
    const ran = await write('first line\nchanged line\n', id);
    expect(ran['isError']).not.toBe(true);
    expect(readFileSync(join(dirs.workspace, 'notes.txt'), 'utf8')).toBe('first line\nchanged line\n');
    expect(wireErrorOf(await write('first line\nchanged line\n', id))).toMatchObject({ code: 'approval_denied', reason: 'spent' });

    await page.goto(`${base}/console/audit?tool=write_file&status=completed`);
    const rows = page.locator('table.calls tbody tr');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().locator('td').nth(6).textContent()).toBe('approved by Alice Operator');
    // The operator's decision is in the chain, and the chain still verifies.
    expect(await page.locator('main').textContent()).toContain('Chain: verified. Every record and checkpoint checks out.');
    await rows.first().locator('a').click();
    expect(await page.locator('section[aria-labelledby="approved-h"]').textContent()).toContain('approved by Alice Operator');
    expect(await page.locator('main').textContent()).toContain('reviewed the diff');
    await page.close();
  });

  it('a POST from another origin is refused, even with the session cookie the browser sends along', async () => {
    const pending = String(wireErrorOf(await write('mallory was here\n'))['approvalId']);
    const page = await browser.newPage();
    await signIn(page, base, tokens['ops']!);
    // Another port of the same host: another origin, and the same site, so the cookie goes along.
    const attacker: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<form id="f" method="post" action="${base}/console/approvals/${pending}"><input name="decision" value="approve"><input name="operator" value="mallory"></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    stops.push(() => {
      // The browser keeps its connection alive: close it rather than wait for it.
      attacker.closeAllConnections();
      return new Promise((resolve) => attacker.close(resolve));
    });
    const refused = page.waitForResponse((response) => response.url().endsWith(`/console/approvals/${pending}`) && response.request().method() === 'POST');
    await page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
    expect((await refused).status()).toBe(403);
    await page.goto(`${base}/console/approvals/${pending}`);
    expect(await page.locator('.state').first().textContent()).toBe('pending');
    await page.close();
  });
});

describe('what tools and principals control renders as text', () => {
  let base: string;
  let opsToken: string;
  let hostile: TestClient;
  let hostileToken: string;

  beforeAll(async () => {
    const issuer = 'https://idp.example.test';
    const audience = 'https://tools.example.test/mcp';
    const keys = await generateKeyPair('ES256', { extractable: true });
    const sign = (sub: string) =>
      new SignJWT({ iss: issuer, aud: audience, sub }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuedAt().setExpirationTime('30m').sign(keys.privateKey);
    const started = await startConsoleHost(async (hostDirs) => {
      const jwks = join(hostDirs.root, 'jwks.json');
      writeFileSync(jwks, JSON.stringify({ keys: [{ ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] }));
      return ['--auth-issuer', issuer, '--auth-audience', audience, '--auth-jwks', jwks];
    });
    base = started.host.base;
    opsToken = await sign('ops');
    hostileToken = await sign(HOSTILE_PRINCIPAL);
    hostile = await connectHttpClient(started.host.url, hostileToken, { kind: 'v2-modern' });
    stops.push(() => hostile.close());
  });

  /** No dialog opened, no element the payloads would make exists, the title is untouched. */
  async function expectInert(page: Page): Promise<void> {
    expect(browser.dialogs).toEqual([]);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('main script').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');
  }

  it('on every page: approvals, the live feed (also rows added by its script), the audit search and a record', async () => {
    // The hostile principal's call with an idempotency key: its result (holding <script>) is kept for replay.
    const echoed = await hostile.callTool({ name: 'echo', arguments: { text: SCRIPT }, _meta: { idempotencyKey: 'xss-1' } });
    expect(echoed['isError']).not.toBe(true);
    const asked = wireErrorOf(await hostile.callTool({ name: 'write_file', arguments: { path: `${SCRIPT}.md`, text: `${HOSTILE_PRINCIPAL}\n${SCRIPT}\n` } }));
    expect(asked.code).toBe('approval_required');
    const id = String(asked['approvalId']);

    const page = await browser.newPage();
    await signIn(page, base, opsToken);
    expect(await page.locator('table tbody tr td').nth(3).textContent()).toBe(HOSTILE_PRINCIPAL);
    await expectInert(page);

    await page.goto(`${base}/console/approvals/${id}`);
    expect(await page.locator('dl.facts dd').nth(3).textContent()).toBe(HOSTILE_PRINCIPAL);
    expect(await page.locator('pre.v-string').textContent()).toBe(`${HOSTILE_PRINCIPAL}\n${SCRIPT}\n`);
    expect(await page.locator('pre.diff .d-add').allTextContents()).toEqual([`+${HOSTILE_PRINCIPAL}`, `+${SCRIPT}`]);
    await expectInert(page);

    await page.goto(`${base}/console/feed`);
    await expect.poll(() => page.locator('#feed-status').textContent()).toContain('Live');
    await hostile.callTool({ name: 'echo', arguments: { text: 'live row' }, _meta: { idempotencyKey: 'live-1' } });
    // Added by the feed's script from the event stream: three calls now, the newest on top.
    await expect.poll(() => page.locator('#feed-rows tr').count(), { timeout: 20_000 }).toBe(3);
    expect(await page.locator('#feed-rows tr').first().locator('td').nth(2).textContent()).toBe(HOSTILE_PRINCIPAL);
    await expectInert(page);

    await page.goto(`${base}/console/audit?principal=${encodeURIComponent(HOSTILE_PRINCIPAL)}&tool=echo`);
    const rows = page.locator('table.calls tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    await rows.last().locator('a').click();
    expect(await page.locator('pre.result').textContent()).toContain(SCRIPT);
    expect(await page.locator('dl.facts').textContent()).toContain(HOSTILE_PRINCIPAL);
    await expectInert(page);
    await page.close();
  });
});
