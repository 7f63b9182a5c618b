// `npm install` says what it is about to build before the long native build
// starts: npm runs every dependency's preinstall before any install script, and
// the repository's .npmrc (foreground-scripts) makes it show their output. The
// order is checked with the real npm, offline, on a project of local tarballs:
// the notice package as toolhost ships it, and a dependency with an install
// script standing in for isolated-vm.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/mcp-clients.js';

const TARBALL = join(REPO_ROOT, 'scripts/install-notice.tgz');
let root: string;

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'toolhost-npm-'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the install notice', () => {
  it('is the packed scripts/install-notice/, byte for byte (npm pack is reproducible)', () => {
    const out = join(root, 'packed');
    mkdirSync(out);
    execFileSync('npm', ['pack', '--pack-destination', out, '--silent'], { cwd: join(REPO_ROOT, 'scripts/install-notice'), encoding: 'utf8' });
    expect(sha256(join(out, 'toolhost-install-notice-1.0.0.tgz'))).toBe(sha256(TARBALL));
  });

  it('is declared so that npm installs it and runs its script', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      optionalDependencies: Record<string, string>;
      allowScripts: Record<string, boolean>;
      files: string[];
    };
    expect(manifest.optionalDependencies['toolhost-install-notice']).toBe('file:scripts/install-notice.tgz');
    expect(manifest.allowScripts['file:scripts/install-notice.tgz']).toBe(true);
    expect(manifest.files).toContain('scripts/install-notice.tgz');
    expect(readFileSync(join(REPO_ROOT, '.npmrc'), 'utf8')).toMatch(/^foreground-scripts=true$/m);
  });

  it('is shown by npm before another dependency builds', () => {
    const project = join(root, 'project');
    const native = join(root, 'native');
    mkdirSync(project);
    mkdirSync(native);
    writeFileSync(join(native, 'package.json'), JSON.stringify({ name: 'aa-native', version: '1.0.0', scripts: { install: 'node -e "console.log(\'NATIVE BUILD STARTS\')"' } }));
    execFileSync('npm', ['pack', '--pack-destination', root, '--silent'], { cwd: native });
    copyFileSync(TARBALL, join(root, 'notice.tgz'));
    copyFileSync(join(REPO_ROOT, '.npmrc'), join(project, '.npmrc'));
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'project',
        version: '1.0.0',
        dependencies: { 'aa-native': 'file:../aa-native-1.0.0.tgz' },
        optionalDependencies: { 'toolhost-install-notice': 'file:../notice.tgz' },
      }),
    );
    const result = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund'], { cwd: project, encoding: 'utf8', timeout: 120_000 });
    expect(result.status, result.stderr).toBe(0);
    const notice = result.stdout.indexOf('toolhost: npm now builds its native dependencies');
    const build = result.stdout.indexOf('NATIVE BUILD STARTS');
    expect(notice).toBeGreaterThanOrEqual(0);
    expect(build).toBeGreaterThan(notice);
    expect(result.stdout).toContain('isolated-vm');
  });
});
