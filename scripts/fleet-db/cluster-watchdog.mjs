// Stops a throwaway cluster (cluster.mjs) when the process that started it is
// gone without stopping it: a SIGKILLed vitest never runs its globalSetup
// teardown, and pg_ctl's server lives on by itself (its parent is init).
// Started detached (a session of its own, so a Ctrl-C to the terminal's group
// does not end it first) with its stdin a pipe from that process: end of file
// means the starter exited or died. A cluster stopped normally ends the pipe
// after removing its folder, and this finds nothing to do.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';

const { root, data, pgCtl } = JSON.parse(process.argv[2] ?? '{}');

function stopCluster() {
  if (existsSync(data)) {
    try {
      const [file, ...args] = [...pgCtl, '-D', data, '-m', 'immediate', '-w', 'stop'];
      execFileSync(file, args, { stdio: 'ignore' });
    } catch {
      // not running (paused, or already stopped)
    }
  }
  rmSync(root, { recursive: true, force: true });
  process.exit(0);
}

process.stdin.on('error', stopCluster);
process.stdin.on('end', stopCluster);
process.stdin.on('close', stopCluster);
process.stdin.resume();
