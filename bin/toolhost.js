#!/usr/bin/env -S node --max-semi-space-size=4 --inspect-port=192.0.2.1:9229
// CommonJS (bin/package.json says so), not an ES module like the rest of
// toolhost: Node starts a CommonJS file without its ES module loader, about 20 ms
// of CPU, an eighth of a whole `--help`. `--version` and `--help` are answered
// here from package.json and dist/usage.txt (written by the build from
// src/cli/usage.ts); every command, and --help when usage.txt is older than the
// build (a tsc run without the rest of `npm run build`), goes on to
// dist/src/cli/main.js.
//
// The host itself never loads isolated-vm (isolate tools run in isolate
// processes of their own, started with the flags they need), so it runs with
// Node's start-up snapshot: a start without it costs about 40 ms of CPU more,
// on every command. Only `doctor` loads isolated-vm here, to check it, and
// isolated-vm crashes on Node 20+ unless the snapshot is disabled, a flag that
// cannot be turned on from inside a running process: when `doctor` is started
// without --no-node-snapshot, this re-executes node once with it.
// --max-semi-space-size=4 (the shebang) is tuning, not a need: a 4 MB young
// generation (V8's default here is 16 MB) cuts the host's GC pauses from about
// 5 ms to under 2 ms each, at about 40% more collection time in all (the
// host's p99 over 3000 isolate calls 12 → 9 ms; docs/performance.md); client
// configurations pass it too (`node --max-semi-space-size=4 bin/toolhost.js`).
// --inspect-port=192.0.2.1:9229 (the shebang, and the configuration `init`
// writes) is not tuning: SIGUSR1 opens Node's inspector, and this address is one
// it can never listen on (src/node-inspector.ts). The first line of code below
// ignores SIGUSR1 for the rest of the process's life; the flag also covers Node's
// own start, before any line here runs.
//
// Signals, when re-executed: the host is the one that acts on them. A signal sent
// to this process alone (a client's SIGTERM to the pid it started) is relayed to
// the host; one sent to the whole process group (a terminal's Ctrl-C, `kill
// -INT -PGID`) reaches the host directly as well, and the host acts on the first
// and ignores the repeat. This wrapper never ends on a signal itself: it waits for
// the host and ends as the host ended (its exit code, or its signal).
'use strict';

// Before anything else: SIGUSR1 would open Node's inspector, through which any
// process of the same user could run code in the host, past every policy and
// the journal. `node --inspect bin/toolhost.js` still debugs it.
process.on('SIGUSR1', () => undefined);

const { readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');

const RELAYED = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const LOADS_ISOLATED_VM = ['doctor'];
const HELP = [undefined, '--help', '-h', 'help'];
const VERSION = ['--version', '-V', 'version'];
const ROOT = join(__dirname, '..');

/** The text of `toolhost --help` when the build wrote it after its last tsc run, else undefined. */
function currentUsage() {
  const file = join(ROOT, 'dist/usage.txt');
  try {
    if (statSync(file).mtimeMs < statSync(join(ROOT, 'dist/src/cli/main.js')).mtimeMs) return undefined;
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function runHost() {
  const { spawn } = require('node:child_process');
  const { constants } = require('node:os');
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', '--max-semi-space-size=4', '--inspect-port=192.0.2.1:9229', ...process.execArgv, __filename, ...process.argv.slice(2)],
    {
      stdio: 'inherit',
    },
  );
  const relay = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of RELAYED) process.on(signal, relay);
  child.on('exit', (code, signal) => {
    for (const relayed of RELAYED) process.off(relayed, relay);
    if (signal === null) process.exit(code ?? 1);
    // End as the host did: by its signal (handlers gone, so the default action applies), else 128 + its number.
    process.kill(process.pid, signal);
    process.exit(128 + (constants.signals[signal] ?? 0));
  });
}

const command = process.argv[2];
const usage = HELP.includes(command) ? currentUsage() : undefined;
if (VERSION.includes(command)) {
  process.stdout.write(`toolhost ${require('../package.json').version}\n`);
} else if (usage !== undefined) {
  process.stdout.write(usage);
  // With no command at all, the usage is the answer to a mistake (as in main.js).
  if (command === undefined) process.exitCode = 2;
} else if (!LOADS_ISOLATED_VM.includes(command ?? '') || process.execArgv.includes('--no-node-snapshot')) {
  import('../dist/src/cli/main.js');
} else {
  runHost();
}
