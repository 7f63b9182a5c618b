#!/usr/bin/env -S node --no-node-snapshot
// isolated-vm crashes on Node 20+ unless the startup snapshot is disabled, and
// that flag cannot be turned on from inside a running process. The shebang
// passes it (so `npx toolhost` runs as one process, with no wrapper that could
// outlive a killed host); when started as `node bin/toolhost.js` without it,
// re-exec once with the flag.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (process.execArgv.includes('--no-node-snapshot')) {
  await import('../dist/src/cli/main.js');
} else {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--no-node-snapshot', ...process.execArgv, self, ...process.argv.slice(2)], {
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
