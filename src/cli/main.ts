// Entry point of the `toolhost` binary (bin/toolhost.js imports it). The CLI
// runs from dist/bundle/ (scripts/bundle.mjs, part of npm run build: a few
// files, where the modules tsc writes are hundreds Node must each resolve and
// load, most of a start) when that bundle was made from this build: it is then
// newer than this file. tsc rewrites this file on every build, so a bundle it
// leaves behind is never run; the modules tsc wrote (run-cli.js) run instead.
import { statSync } from 'node:fs';

const BUNDLED_ENTRY = '../../bundle/run-cli.js';

function bundleIsCurrent(): boolean {
  try {
    return statSync(new URL(BUNDLED_ENTRY, import.meta.url)).mtimeMs >= statSync(new URL(import.meta.url)).mtimeMs;
  } catch {
    return false;
  }
}

await (bundleIsCurrent() ? import(BUNDLED_ENTRY) : import('./run-cli.js'));
