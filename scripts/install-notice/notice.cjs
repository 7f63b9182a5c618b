// Printed by npm before any dependency's install script runs (npm runs every
// preinstall first, and .npmrc's foreground-scripts shows the output): the
// native build that follows takes minutes and would otherwise print nothing.
'use strict';
const { execFileSync } = require('node:child_process');

function has(program) {
  try {
    execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const lines = [
  '',
  'toolhost: npm now builds its native dependencies. isolated-vm (the V8 isolates that',
  'run untrusted JavaScript tools) is compiled from source with node-gyp where no',
  'prebuilt binary fits: this takes a few minutes (two to five on two cores) and needs',
  'Python 3, make and a C++ compiler. better-sqlite3 (the journal) uses a prebuilt',
  'binary when it can, else compiles too.',
];
const missing = ['python3', 'make', 'c++'].filter((program) => !has(program));
if (missing.length > 0) {
  lines.push(
    '',
    `toolhost: not found on PATH: ${missing.join(', ')}. The build will fail without them:`,
    '  Debian/Ubuntu: sudo apt-get install python3 make g++',
    '  Fedora:        sudo dnf install python3 make gcc-c++',
    '  macOS:         xcode-select --install',
  );
}
lines.push('', 'When npm is done, `npx toolhost doctor` checks the sandboxes (bubblewrap, socat, seccomp).', '');
process.stdout.write(`${lines.join('\n')}\n`);
