// `toolhost --help` and `--version` as a user runs them (`node bin/toolhost.js`,
// the binary npm links): answered by the CommonJS binary itself from
// package.json and dist/usage.txt, without Node's ES module loader, with the
// same text and exit codes as the CLI's own answer; a usage.txt older than the
// build is never printed.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usage } from '../../../src/cli/usage.js';
import { ensureBuilt, REPO_ROOT } from '../../helpers/mcp-clients.js';

const PROBE = join(REPO_ROOT, 'test/fixtures/cli/esm-loader-probe.cjs');
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function run(bin: string, args: readonly string[]) {
  const result = spawnSync(process.execPath, ['--max-semi-space-size=4', '-r', PROBE, bin, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

let scratch: string;

beforeAll(async () => {
  await ensureBuilt();
  scratch = mkdtempSync(join(tmpdir(), 'toolhost-bin-'));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('bin/toolhost.js answers --help and --version itself', () => {
  const BIN = join(REPO_ROOT, 'bin/toolhost.js');

  it('prints the usage for --help, -h and help (exit 0), and for no command (exit 2), without the ES module loader', () => {
    for (const args of [['--help'], ['-h'], ['help'], []]) {
      const result = run(BIN, args);
      expect(result.stdout, args.join(' ')).toBe(usage());
      expect(result.status, args.join(' ')).toBe(args.length === 0 ? 2 : 0);
      expect(result.stderr, args.join(' ')).toBe('esm-loader: not started\n');
    }
  });

  it("prints the package's version for --version, -V and version (exit 0), without the ES module loader", () => {
    for (const flag of ['--version', '-V', 'version']) {
      const result = run(BIN, [flag]);
      expect(result.stdout, flag).toBe(`toolhost ${VERSION}\n`);
      expect(result.status, flag).toBe(0);
      expect(result.stderr, flag).toBe('esm-loader: not started\n');
    }
  });

  it("leaves every command to the CLI's modules", () => {
    const result = run(BIN, ['validate', '--help']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('Usage: toolhost validate');
    expect(result.stderr).toContain('esm-loader: started\n');
  });
});

describe('a dist/usage.txt older than the build', () => {
  it('is not printed: dist/src/cli/main.js answers --help instead', () => {
    // A package of its own: the real binary beside a build whose usage.txt predates its main.js (a tsc run alone).
    const root = join(scratch, 'package');
    mkdirSync(join(root, 'dist/src/cli'), { recursive: true });
    cpSync(join(REPO_ROOT, 'bin'), join(root, 'bin'), { recursive: true });
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'toolhost', version: VERSION, type: 'module' }));
    writeFileSync(join(root, 'dist/usage.txt'), 'the usage of an older build\n');
    writeFileSync(join(root, 'dist/src/cli/main.js'), "process.stdout.write(`main.js: ${process.argv.slice(2).join(' ')}\\n`);\n");
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(join(root, 'dist/usage.txt'), anHourAgo, anHourAgo);

    const stale = run(join(root, 'bin/toolhost.js'), ['--help']);
    expect(stale.stdout).toBe('main.js: --help\n');
    expect(stale.status).toBe(0);

    // Made after main.js, the same file is the answer.
    utimesSync(join(root, 'dist/usage.txt'), new Date(), new Date());
    const current = run(join(root, 'bin/toolhost.js'), ['--help']);
    expect(current.stdout).toBe('the usage of an older build\n');
    expect(current.stderr).toBe('esm-loader: not started\n');
  });
});
