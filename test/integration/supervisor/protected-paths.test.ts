// The host's own configuration and state are out of reach of the tools it runs
// (SPEC sections 3 and 4): the bundled write_file (isolate, read_write workspace)
// and a namespaced Python tool with a read_write workspace root cannot add a
// manifest, loosen a policy or touch the journal, however the path is spelled.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../../src/host.js';
import { createSilentLogger } from '../../../src/log.js';
import type { CallOutcome } from '../../../src/supervisor/types.js';
import { CallControl } from '../../../src/supervisor/call-control.js';
import { NONE, errorOf, resultOf, waitForNoProcesses } from '../../helpers/supervisor-host.js';

const BUNDLED = fileURLToPath(new URL('../../../manifests', import.meta.url));
const MARKER = `toolhost-protected-${process.pid}-${Date.now()}`;

const PY_WRITER_YAML = `name: py_writer
description: Writes or reads a file with Python, inside bubblewrap.
sideEffect: local_mutation
timeoutMs: 10000
sandbox:
  mode: process
  command: ["python3", "./py_writer.py"]
  stdout: json
  isolation: namespace
  env: [PATH, SUPERVISOR_TEST_MARKER]
workspace:
  roots:
    - path: \${WORKSPACE}
      access: read_write
input:
  type: object
  additionalProperties: false
  required: [op, path]
  properties:
    op: { enum: [write, read, list] }
    path: { type: string, maxLength: 4096 }
`;

// Reports the errno name instead of failing, so one call can show what the sandbox refused.
const PY_WRITER_PY = `import errno, json, os, sys
args = json.load(sys.stdin)
try:
    if args["op"] == "write":
        with open(args["path"], "w") as handle:
            handle.write("planted by the tool")
        out = {"ok": True}
    elif args["op"] == "read":
        with open(args["path"], "rb") as handle:
            out = {"ok": handle.read(64).decode("latin1")}
    else:
        out = {"ok": sorted(os.listdir(args["path"]))}
except OSError as exc:
    out = {"error": errno.errorcode.get(exc.errno, "OSError")}
print(json.dumps(out))
`;

describe('protected paths: the host configuration and state are not writable by tools', () => {
  let root: string;
  let workspace: string;
  let manifests: string;
  let stateDir: string;
  let orgPolicy: string;
  let host: Host;
  let originals: Map<string, string>;

  const call = (name: string, args: Record<string, unknown>): Promise<CallOutcome> =>
    host.supervisor.callTool({ name, args, meta: {}, control: new CallControl(), approval: NONE });

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-protected-')));
    workspace = join(root, 'ws');
    manifests = join(workspace, 'manifests');
    stateDir = join(workspace, '.toolhost');
    mkdirSync(manifests, { recursive: true });
    for (const file of ['write_file.yaml', 'write_file.js', 'read_file.yaml', 'read_file.js']) cpSync(join(BUNDLED, file), join(manifests, file));
    writeFileSync(join(manifests, 'py_writer.yaml'), PY_WRITER_YAML);
    writeFileSync(join(manifests, 'py_writer.py'), PY_WRITER_PY);
    mkdirSync(join(workspace, 'policies'));
    writeFileSync(join(workspace, 'policies/repository.yaml'), 'kind: Policy\nname: repository\ntools:\n  deny: ["shell_*"]\n');
    orgPolicy = join(workspace, 'org.yaml');
    writeFileSync(orgPolicy, 'kind: Policy\nname: org\nenv:\n  allow: [PATH, LANG, SUPERVISOR_TEST_MARKER]\n');
    writeFileSync(join(workspace, 'notes.txt'), 'notes\n');
    // serve's logger opens its file (synchronously) before the host is built.
    writeFileSync(join(workspace, 'host.log'), '{"msg":"started"}\n');
    // A planted link to a protected folder, as an agent could leave one in the workspace.
    symlinkSync(manifests, join(workspace, 'tools-link'));
    symlinkSync(stateDir, join(workspace, 'state-link'));
    host = await createHost({
      manifestDirs: [manifests],
      policyFiles: [orgPolicy],
      workspace,
      stateDir,
      logFile: join(workspace, 'host.log'),
      logger: createSilentLogger(),
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', SUPERVISOR_TEST_MARKER: MARKER },
    });
    originals = snapshot([manifests, join(workspace, 'policies'), orgPolicy, join(workspace, 'host.log')]);
  });

  afterAll(async () => {
    await host?.close();
    expect(await waitForNoProcesses(MARKER)).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  });

  it('write_file still writes ordinary workspace files', async () => {
    const result = resultOf(await call('write_file', { path: 'notes.txt', text: 'changed\n' }));
    expect(result.structuredContent).toMatchObject({ path: 'notes.txt', created: false });
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('changed\n');
  });

  it.each([
    ['a new manifest', 'manifests/evil.yaml'],
    ['an existing manifest', 'manifests/write_file.yaml'],
    ['code beside a manifest', 'manifests/write_file.js'],
    ['the repository policy', 'policies/repository.yaml'],
    ['a new repository policy', 'policies/zz-loosen.yaml'],
    ['the organisation policy file', 'org.yaml'],
    ['the journal', '.toolhost/journal.sqlite'],
    ['a new file in the state folder', '.toolhost/planted'],
    ['the host log file', 'host.log'],
    ['a path through ../', 'notes/../manifests/evil.yaml'],
    ['a path leaving and re-entering the workspace', '../ws/policies/repository.yaml'],
    ['a symlink to the manifest folder', 'tools-link/evil.yaml'],
    ['a symlink to the state folder', 'state-link/journal.sqlite'],
  ])('write_file to %s (%s) is refused as policy_denied protected_path', async (_what, path) => {
    const error = errorOf(await call('write_file', { path, text: 'sandbox:\n  mode: worker\n' }));
    expect(error.code).toBe('tool_error');
    expect(error.details).toMatchObject({ errorCode: 'policy_denied' });
    expect(snapshot([manifests, join(workspace, 'policies'), orgPolicy, join(workspace, 'host.log')])).toEqual(originals);
  });

  it('an absolute path to a protected file is refused too', async () => {
    const error = errorOf(await call('write_file', { path: join(manifests, 'evil.yaml'), text: 'x' }));
    expect(error.details).toMatchObject({ errorCode: 'policy_denied' });
    expect(existsSync(join(manifests, 'evil.yaml'))).toBe(false);
  });

  it('read_file may read manifests and policies but not the state folder', async () => {
    expect(resultOf(await call('read_file', { path: 'policies/repository.yaml' })).content.length).toBeGreaterThan(0);
    for (const path of ['.toolhost/journal.sqlite', 'state-link/journal.sqlite']) {
      const error = errorOf(await call('read_file', { path }));
      expect(error.details).toMatchObject({ errorCode: 'policy_denied' });
    }
  });

  it('a namespaced Python tool with a read_write workspace cannot write the manifests, policies or state', async () => {
    const ok = resultOf(await call('py_writer', { op: 'write', path: join(workspace, 'py-out.txt') }));
    expect(ok.structuredContent).toEqual({ ok: true });
    expect(readFileSync(join(workspace, 'py-out.txt'), 'utf8')).toBe('planted by the tool');
    for (const path of [
      join(manifests, 'evil.yaml'),
      join(manifests, 'write_file.yaml'),
      join(workspace, 'policies/repository.yaml'),
      join(workspace, 'policies/zz-loosen.yaml'),
      orgPolicy,
      join(workspace, 'host.log'),
      join(workspace, 'tools-link/evil.yaml'),
    ]) {
      const outcome = resultOf(await call('py_writer', { op: 'write', path }));
      expect({ path, out: outcome.structuredContent }).toEqual({ path, out: { error: 'EROFS' } });
    }
    // The state folder is an empty read-only folder inside the sandbox.
    expect(resultOf(await call('py_writer', { op: 'list', path: stateDir })).structuredContent).toEqual({ ok: [] });
    expect(resultOf(await call('py_writer', { op: 'read', path: join(stateDir, 'journal.sqlite') })).structuredContent).toEqual({ error: 'ENOENT' });
    expect(resultOf(await call('py_writer', { op: 'write', path: join(stateDir, 'journal.sqlite') })).structuredContent).toEqual({ error: 'EROFS' });
    expect(snapshot([manifests, join(workspace, 'policies'), orgPolicy, join(workspace, 'host.log')])).toEqual(originals);
    expect(readdirSync(stateDir)).toContain('journal.sqlite');
  });
});

/** Every file under `paths` (folders or files) with its content. */
function snapshot(paths: readonly string[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const path of paths) {
    if (!existsSync(path)) continue;
    if (!statSync(path).isDirectory()) {
      files.set(path, readFileSync(path, 'utf8'));
      continue;
    }
    for (const entry of readdirSync(path, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) files.set(join(entry.parentPath, entry.name), readFileSync(join(entry.parentPath, entry.name), 'utf8'));
    }
  }
  return files;
}
