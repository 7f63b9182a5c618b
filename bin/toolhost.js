#!/usr/bin/env -S node --no-node-snapshot --max-semi-space-size=4
// isolated-vm crashes on Node 20+ unless the startup snapshot is disabled, and
// that flag cannot be turned on from inside a running process. The shebang
// passes it (so `npx toolhost` runs as one process, with no wrapper that could
// outlive a killed host); when started as `node bin/toolhost.js` without it,
// re-exec once with the flag. --max-semi-space-size=4 is tuning, not a need: a
// 4 MB young generation (V8's default here is 16 MB) cuts the host's GC pauses
// from about 5 ms to under 2 ms each, at about 40% more collection time in all
// (the host's p99 over 3000 isolate calls 12 → 9 ms; README, Performance).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (process.execArgv.includes('--no-node-snapshot')) {
  await import('../dist/src/cli/main.js');
} else {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--no-node-snapshot', '--max-semi-space-size=4', ...process.execArgv, self, ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('exit', (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
