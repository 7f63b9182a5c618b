// Hostile filesystem tests for isolation: namespace, through the real bubblewrap
// argv: writes outside the workspace never reach the host, read-only roots stay
// read-only, secrets and homes are invisible, planted symlinks lead nowhere.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ETC_ALLOWLIST, PRIVATE_TMPFS_MAX_BYTES } from '../../../src/runner/bwrap/argv.js';
import { PROBE_PY, probeSpec, runProbe, runSandboxed, useSandboxTest } from '../../helpers/sandbox-run.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

describe('namespace sandbox: filesystem', () => {
  const sandbox = useSandboxTest('toolhost-sbx-ws-');
  let outside: ReturnType<typeof makeTempDir>;

  beforeEach(() => {
    outside = makeTempDir('toolhost-sbx-outside-');
  });

  afterEach(() => {
    outside.remove();
  });

  it("gives a process a HOME it can write, the private /tmp, and the host's home stays unseen", async () => {
    const script = 'const os = require("os"), fs = require("fs"); fs.mkdirSync(os.homedir() + "/.cache/x", { recursive: true }); console.log(os.homedir(), fs.existsSync("/root"))';
    const node = await runSandboxed(probeSpec(sandbox.marker, { command: [process.execPath, '-e', script], memoryMb: 4096 }), { cwd: sandbox.workspace.path });
    expect({ exit: node.exitCode, out: node.stdout.trim() }).toEqual({ exit: 0, out: '/tmp false' });
  });

  it('keeps writes outside the workspace off the host', async () => {
    const name = `escape-${sandbox.marker}`;
    const targets = [`/usr/${name}`, `/var/tmp/${name}`, `/tmp/${name}`, `/${name}`, `/etc/${name}`, join(outside.path, name)];
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read_write' }] });
    const results = await runProbe(
      spec,
      { cwd: sandbox.workspace.path },
      targets.map((path) => ({ op: 'write', path })),
    );
    // /tmp is a private tmpfs, and /var/tmp a link to it: writes may succeed there, but only there.
    expect([results[1], results[2]]).toEqual([{ ok: true }, { ok: true }]);
    for (const [index, result] of results.entries()) {
      if (index !== 1 && index !== 2) expect(result).toHaveProperty('error');
    }
    for (const path of targets) expect(existsSync(path)).toBe(false);
  });

  it('gives /var/tmp as the same private /tmp', async () => {
    const name = `scratch-${sandbox.marker}`;
    const ops = [
      { op: 'write', path: `/var/tmp/${name}`, text: 'kept' },
      { op: 'read', path: `/tmp/${name}` },
    ];
    expect(await runProbe(probeSpec(sandbox.marker), { cwd: sandbox.workspace.path }, ops)).toEqual([{ ok: true }, { ok: 'kept' }]);
    expect(existsSync(`/var/tmp/${name}`)).toBe(false);
  });

  it('lets the tool write in a read-write root, at its host path', async () => {
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read_write' }] });
    const target = join(sandbox.workspace.path, 'out.txt');
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [{ op: 'write', path: target, text: 'written inside' }]);
    expect(results).toEqual([{ ok: true }]);
    expect(readFileSync(target, 'utf8')).toBe('written inside');
  });

  it('refuses writes to a read-only root and to the manifest folder', async () => {
    writeFileSync(join(sandbox.workspace.path, 'keep.txt'), 'original');
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [
      { op: 'write', path: join(sandbox.workspace.path, 'keep.txt'), text: 'changed' },
      { op: 'write', path: join(sandbox.workspace.path, 'new.txt') },
      { op: 'write', path: join(spec.manifestDir, `planted-${sandbox.marker}.py`) },
      { op: 'read', path: join(sandbox.workspace.path, 'keep.txt') },
    ]);
    expect(results.slice(0, 3)).toEqual([{ error: 'EROFS' }, { error: 'EROFS' }, { error: 'EROFS' }]);
    expect(results[3]).toEqual({ ok: 'original' });
    expect(readFileSync(join(sandbox.workspace.path, 'keep.txt'), 'utf8')).toBe('original');
    expect(existsSync(join(sandbox.workspace.path, 'new.txt'))).toBe(false);
    expect(existsSync(join(spec.manifestDir, `planted-${sandbox.marker}.py`))).toBe(false);
  });

  it('hides /root, /home, /etc/shadow, other secrets in /etc and the host /tmp', async () => {
    const hostTmpFile = join(outside.path, 'host-tmp-secret.txt');
    writeFileSync(hostTmpFile, 'host secret');
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read_write' }] });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [
      { op: 'read', path: '/etc/shadow' },
      { op: 'read', path: '/etc/gshadow' },
      { op: 'read', path: '/root/.bashrc' },
      { op: 'read', path: '/root/.ssh/id_rsa' },
      { op: 'list', path: '/home' },
      { op: 'list', path: '/etc/ssl/private' },
      { op: 'read', path: hostTmpFile },
      { op: 'list', path: '/root' },
      { op: 'read', path: '/etc/passwd' },
    ]);
    expect(results.slice(0, 5)).toEqual([{ error: 'ENOENT' }, { error: 'ENOENT' }, { error: 'ENOENT' }, { error: 'ENOENT' }, { error: 'ENOENT' }]);
    expect(results[5]).toEqual({ ok: [] });
    expect(results[6]).toEqual({ error: 'ENOENT' });
    // /root exists only as the path to the interpreter's install (pyenv) when it lives there.
    const rootListing = results[7] as { ok?: string[]; error?: string };
    expect(rootListing.error === 'ENOENT' || (rootListing.ok ?? []).every((entry) => entry === '.pyenv')).toBe(true);
    expect(results[8]).toHaveProperty('ok');
  });

  it('shows the allowlisted /etc files as the host has them, read-only, and leaves the tool no descriptor of them', async () => {
    // Small regular files are copied into the sandbox (bubblewrap --file, from descriptors the
    // spawner opens), not bind-mounted: the same content and mode, under the same read-only root.
    const files = ETC_ALLOWLIST.map((name) => `/etc/${name}`).filter((path) => existsSync(path) && statSync(path).isFile());
    expect(files).toContain('/etc/passwd');
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read_write' }] });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [
      ...files.map((path) => ({ op: 'digest', path })),
      ...files.map((path) => ({ op: 'write', path, text: 'planted' })),
      { op: 'fds' },
    ]);
    const host = files.map((path) => ({
      ok: { sha256: createHash('sha256').update(readFileSync(path)).digest('hex'), mode: (statSync(path).mode & 0o7777).toString(8).padStart(4, '0') },
    }));
    expect(results.slice(0, files.length)).toEqual(host);
    expect(results.slice(files.length, 2 * files.length)).toEqual(files.map(() => ({ error: 'EROFS' })));
    // Only its three pipes: bubblewrap closed every descriptor it copied a file from.
    expect(Object.keys((results[2 * files.length] as { ok: Record<string, string> }).ok).sort()).toEqual(['0', '1', '2']);
    for (const path of files) expect(readFileSync(path, 'utf8')).not.toContain('planted');
  });

  it('keeps /etc/shadow unreadable even under a root declared at /etc', async () => {
    const spec = probeSpec(sandbox.marker, {
      roots: [
        { path: '/etc', access: 'read' },
        { path: sandbox.workspace.path, access: 'read' },
      ],
    });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [
      { op: 'read', path: '/etc/shadow' },
      { op: 'read', path: '/etc/gshadow' },
      { op: 'read', path: '/etc/hostname' },
    ]);
    // Masked by /dev/null, which a bind mount makes nodev: opening it is refused.
    expect(results.slice(0, 2)).toEqual([{ error: 'EACCES' }, { error: 'EACCES' }]);
    // The root itself is there: files outside the allowlist are visible through it.
    expect(results[2]).toHaveProperty('ok');
  });

  it('gives a symlink planted in a read-write root no access outside', async () => {
    writeFileSync(join(outside.path, 'secret.txt'), 'outside secret');
    mkdirSync(join(sandbox.workspace.path, 'sub'));
    symlinkSync(outside.path, join(sandbox.workspace.path, 'to-outside'));
    symlinkSync('/etc', join(sandbox.workspace.path, 'to-etc'));
    symlinkSync('../../../../../../../../', join(sandbox.workspace.path, 'sub', 'to-root'));
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read_write' }] });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [
      { op: 'read', path: 'to-outside/secret.txt' },
      { op: 'write', path: 'to-outside/planted.txt' },
      { op: 'read', path: 'to-etc/shadow' },
      { op: 'read', path: 'sub/to-root/etc/shadow' },
      { op: 'write', path: 'sub/to-root/usr/planted.txt' },
      { op: 'list', path: 'sub/to-root/root' },
    ]);
    expect(results.slice(0, 4)).toEqual([{ error: 'ENOENT' }, { error: 'ENOENT' }, { error: 'ENOENT' }, { error: 'ENOENT' }]);
    expect(results[4]).toEqual({ error: 'EROFS' });
    expect(existsSync(join(outside.path, 'planted.txt'))).toBe(false);
    expect(existsSync('/usr/planted.txt')).toBe(false);
    const rootListing = results[5] as { ok?: string[]; error?: string };
    expect(rootListing.error === 'ENOENT' || (rootListing.ok ?? []).every((entry) => entry === '.pyenv')).toBe(true);
  });

  it('runs in the first root with a read-only filesystem root and a private, writable /tmp', async () => {
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [
      { op: 'write', path: 'relative.txt' },
      { op: 'write', path: '/tmp/scratch.txt' },
      { op: 'read', path: '/tmp/scratch.txt' },
      { op: 'write', path: '/planted-at-root.txt' },
    ]);
    expect(results).toEqual([{ error: 'EROFS' }, { ok: true }, { ok: 'sandbox' }, { error: 'EROFS' }]);
  });

  it('keeps the manifest folder read-only inside a read-write root', async () => {
    const manifestDir = join(sandbox.workspace.path, 'tools');
    mkdirSync(manifestDir);
    copyFileSync(PROBE_PY, join(manifestDir, 'probe.py'));
    const spec = probeSpec(sandbox.marker, { manifestDir, command: ['python3', join(manifestDir, 'probe.py')], roots: [{ path: sandbox.workspace.path, access: 'read_write' }] });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [
      { op: 'write', path: join(manifestDir, 'tool.py') },
      { op: 'write', path: join(sandbox.workspace.path, 'beside.txt') },
    ]);
    expect(results).toEqual([{ error: 'EROFS' }, { ok: true }]);
    expect(existsSync(join(manifestDir, 'tool.py'))).toBe(false);
  });

  it("shows the caller's private directory as /tmp when given one", async () => {
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path, privateTmp: outside.path }, [{ op: 'write', path: '/tmp/kept.txt', text: 'kept' }]);
    expect(results).toEqual([{ ok: true }]);
    expect(readFileSync(join(outside.path, 'kept.txt'), 'utf8')).toBe('kept');
  });

  it('keeps global kernel settings in /proc/sys and /proc/sysrq-trigger unwritable', async () => {
    // Rewrites the host's current value, so even a failing sandbox changes nothing.
    const current = readFileSync('/proc/sys/kernel/printk_ratelimit', 'utf8');
    const spec = probeSpec(sandbox.marker, { roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [
      { op: 'write', path: '/proc/sys/kernel/printk_ratelimit', text: current },
      { op: 'writable', path: '/proc/sysrq-trigger' },
      { op: 'read', path: '/proc/self/status' },
    ]);
    expect(results.slice(0, 2)).toEqual([{ error: 'EROFS' }, { ok: false }]);
    expect(results[2]).toHaveProperty('ok');
  });

  it('caps the private /tmp, so filling it cannot exhaust host memory', async () => {
    // Its pages count against the sandbox's memory cgroup too: memoryMb room for the probe's own
    // buffer and a full /tmp, so the tmpfs size cap is what stops the write.
    const spec = probeSpec(sandbox.marker, { memoryMb: 1024, roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [{ op: 'write_bytes', path: '/tmp/fill.bin', bytes: PRIVATE_TMPFS_MAX_BYTES + 1024 * 1024 }]);
    expect(results).toEqual([{ error: 'ENOSPC' }]);
  });
});
