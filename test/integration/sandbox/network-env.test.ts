// Network and environment isolation through the real bubblewrap argv: a
// loopback listener on the host is unreachable by a raw connect, with or
// without network.allow (its own network namespace, always); a secret in the host's environment never reaches the tool;
// the tool runs in its own session (no TIOCSTI injection into a terminal).
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SANDBOX_DEFAULT_PATH, SANDBOX_HOME } from '../../../src/runner/bwrap/argv.js';
import { MARKER_VARIABLE, PROBE_PY, probeSpec, runProbe, useSandboxTest, waitForNoMarkedProcessesOrKill } from '../../helpers/sandbox-run.js';
import { newMarker } from '../../helpers/proc-scan.js';

const SECRET_NAME = 'TOOLHOST_TEST_SECRET_TOKEN';

describe('namespace sandbox: network', () => {
  let marker: string;
  let server: Server;
  let port: number;
  let connections: number;

  beforeEach(async () => {
    marker = newMarker('sandbox');
    connections = 0;
    server = createServer((socket) => {
      connections += 1;
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
  });

  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
    expect(await waitForNoMarkedProcessesOrKill(marker)).toEqual([]);
  });

  it('cannot reach a host loopback listener when network.allow is empty', async () => {
    const spec = probeSpec(marker, { networkAllow: [] });
    const results = await runProbe(spec, { cwd: spec.manifestDir }, [{ op: 'connect', host: '127.0.0.1', port }]);
    // The sandbox has its own loopback, with nothing listening on it.
    expect(results).toEqual([{ error: 'ECONNREFUSED' }]);
    expect(connections).toBe(0);
  });

  it('without its egress grant, cannot reach it by a raw connect even when network.allow names it (fail closed)', async () => {
    // (egress-direct.test.ts: with the grant a runner opens, the allowed host:port is reachable, through the host's admission.)
    const spec = probeSpec(marker, { networkAllow: [`127.0.0.1:${port}`] });
    const results = await runProbe(spec, { cwd: spec.manifestDir }, [{ op: 'connect', host: '127.0.0.1', port }]);
    expect(results).toEqual([{ error: 'ECONNREFUSED' }]);
    expect(connections).toBe(0);
  });
});

describe.each(['namespace', 'none'] as const)('isolation %s: environment and session', (isolation) => {
  const sandbox = useSandboxTest('toolhost-sbx-env-', { hostSecret: SECRET_NAME });

  it('gives the tool exactly spec.env: a host secret is invisible, also in /proc', async () => {
    const env = { LANG: 'C.UTF-8', [MARKER_VARIABLE]: sandbox.marker };
    const spec = probeSpec(sandbox.marker, { isolation, env, command: [hostPython(), PROBE_PY], roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    const results = await runProbe(spec, { cwd: sandbox.workspace.path }, [{ op: 'env' }, { op: 'read', path: '/proc/1/environ' }, { op: 'read', path: '/proc/self/environ' }]);
    // PATH is the documented default when spec.env has none, and HOME the private /tmp in a namespace
    // (isolation none sees the host's filesystem: no HOME is made up); PWD comes from the cgroup-joining shell.
    const home = isolation === 'namespace' ? { HOME: SANDBOX_HOME } : {};
    expect(results[0]).toEqual({ ok: expect.objectContaining({ ...env, PATH: SANDBOX_DEFAULT_PATH, ...home }) });
    const seen = Object.keys((results[0] as { ok: Record<string, string> }).ok).sort();
    expect(seen.filter((name) => ![...Object.keys(home), 'LANG', MARKER_VARIABLE, 'PATH', 'PWD', 'LC_CTYPE'].includes(name))).toEqual([]);
    for (const result of results) expect(JSON.stringify(result)).not.toContain(`secret-${sandbox.marker}`);
  });

  it('starts the tool in a new session, so it has no controlling terminal to inject into', async () => {
    const spec = probeSpec(sandbox.marker, { isolation, roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    const [session] = await runProbe(spec, { cwd: sandbox.workspace.path }, [{ op: 'session' }]);
    const facts = (session as { ok: { pid: number; sid: number; tty: string } }).ok;
    // getsid() is 0 when the session leader is outside the caller's pid namespace:
    // a sid of 1 (bubblewrap's init) or the tool itself proves a session of the sandbox's own.
    expect([1, facts.pid]).toContain(facts.sid);
    expect(facts.tty).toBe('ENXIO');
  });
});

// The host's python3 as an absolute path: this spec's env has no PATH to find it by.
function hostPython(): string {
  // Through a version manager's shim this is the real binary, not the shim script.
  return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
}
