// A throwaway PostgreSQL cluster: initdb in a fresh temporary folder, started
// with pg_ctl on a Unix socket in that folder and a free loopback port,
// stopped and removed after. Used by the test setup (one cluster per test
// run) and by `npm run fleet-db` (one for a person trying the fleet mode).
// initdb refuses to run as root: as root, the cluster runs as the `postgres`
// user (Debian's package creates it), via runuser.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding initdb and pg_ctl: PATH first, then Debian's /usr/lib/postgresql/<version>/bin. */
export function findPostgresBin() {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir !== '' && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const dir = join(debian, version, 'bin');
      if (existsSync(join(dir, 'initdb'))) return dir;
    }
  }
  return undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function readText(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function userId(name) {
  try {
    return {
      uid: Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim()),
      gid: Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim()),
    };
  } catch {
    return undefined;
  }
}

/**
 * Starts a cluster. Returns {socketDir, port, superuser, passwordUser, password, stop()}.
 * The superuser connects through the socket without a password (trust); TCP on
 * 127.0.0.1 needs a password (scram-sha-256), for `passwordUser`.
 */
export async function startCluster({ bin = findPostgresBin(), log = () => {}, port: firstPort } = {}) {
  if (bin === undefined) throw new Error('PostgreSQL is not installed: no initdb on PATH or in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql)');
  const root = mkdtempSync(join(tmpdir(), 'toolhost-pg-'));
  const data = join(root, 'data');
  const isRoot = process.getuid?.() === 0;
  const owner = isRoot ? userId('postgres') : undefined;
  if (isRoot && owner === undefined) throw new Error('running as root, and there is no `postgres` user to run the cluster as (initdb refuses root)');
  if (owner) chownSync(root, owner.uid, owner.gid);
  const asOwner = (command, args) => (isRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]);
  const run = (command, args) => {
    const [file, argv] = asOwner(command, args);
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  };
  let port = firstPort ?? (await freePort());
  const password = randomBytes(18).toString('base64url');
  const startArgs = () => [
    '-D',
    data,
    '-l',
    join(root, 'server.log'),
    '-w',
    '-t',
    '30',
    '-o',
    `-k ${root} -p ${port} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`,
    'start',
  ];
  const passwordUser = 'toolhost_pw';
  // Before the server starts: a starter killed during pg_ctl start leaves nothing either.
  const watchdog = startWatchdog(root, data, asOwner(join(bin, 'pg_ctl'), []).flat());
  try {
    run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    log(`initdb done in ${data}`);
    for (let attempt = 1; ; attempt++) {
      try {
        run(join(bin, 'pg_ctl'), startArgs());
        break;
      } catch (error) {
        // The port was free when picked, and the server binds it later: another process
        // (a parallel test run) may have taken it meanwhile. Pick another.
        if (attempt >= 3 || !readText(join(root, 'server.log')).includes('already in use')) throw error;
        log(`port ${port} was taken; trying another`);
        port = await freePort();
      }
    }
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    watchdog.stdin.end();
    throw new Error(`could not start a throwaway PostgreSQL: ${error.stderr ?? error.message}`, { cause: error });
  }
  const psql = (sql) => run('psql', ['-h', root, '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-qAtc', sql]);
  // The password goes to psql on its command line only here, in a throwaway cluster made for tests.
  psql(`CREATE ROLE ${passwordUser} LOGIN CREATEDB PASSWORD '${password}'`);
  let stopped = false;
  const cluster = {
    root,
    socketDir: root,
    port,
    superuser: 'postgres',
    passwordUser,
    password,
    bin,
    psql,
    /** Stops the server (fast), keeping the data: start() brings it back. */
    pause() {
      run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    /** Starts a paused server again on the same socket and port. */
    resume() {
      run(join(bin, 'pg_ctl'), startArgs());
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(root, { recursive: true, force: true });
      // After the folder is gone: the watchdog sees the end of its pipe and finds nothing to stop.
      watchdog.stdin.end();
    },
  };
  return cluster;
}

/**
 * Starts cluster-watchdog.mjs, which stops the cluster and removes its folder
 * when this process ends without calling stop() (a SIGKILLed test run). Its
 * stdin is a pipe from here; neither it nor the pipe keeps this process alive.
 */
function startWatchdog(root, data, pgCtl) {
  const script = fileURLToPath(new URL('./cluster-watchdog.mjs', import.meta.url));
  const watchdog = spawn(process.execPath, [script, JSON.stringify({ root, data, pgCtl })], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  watchdog.unref();
  watchdog.stdin.unref?.();
  watchdog.stdin.on('error', () => undefined);
  return watchdog;
}
