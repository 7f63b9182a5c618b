// Entry point of the `toolhost` binary (bin/toolhost.js imports it). The CLI
// runs from dist/bundle/ (scripts/bundle.mjs, part of npm run build: a few
// files, where the modules tsc writes are hundreds Node must each resolve and
// load, most of a start) when that bundle was made from this build: it is then
// newer than this file. tsc rewrites this file on every build, so a bundle it
// leaves behind is never run; the modules tsc wrote (run-cli.js) run instead.
import { statSync } from 'node:fs';

// SIGUSR1 opens Node's inspector on 127.0.0.1:9229 unless something listens for
// it: any process of the same user could then attach and run code in the host,
// past every policy and the journal (ptrace limits do not apply to a signal and
// a TCP connection). The host keeps it closed; start it with `node --inspect` to
// debug it.
process.on('SIGUSR1', () => undefined);

const BUNDLED_ENTRY = '../../bundle/run-cli.js';

function bundleIsCurrent(): boolean {
  try {
    return statSync(new URL(BUNDLED_ENTRY, import.meta.url)).mtimeMs >= statSync(new URL(import.meta.url)).mtimeMs;
  } catch {
    return false;
  }
}

await (bundleIsCurrent() ? import(BUNDLED_ENTRY) : import('./run-cli.js'));
