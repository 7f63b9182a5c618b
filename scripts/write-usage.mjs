// Writes dist/usage.txt, the text of `toolhost --help`, from the build's own
// src/cli/usage.ts (npm run build, after tsc). bin/toolhost.js prints it, when
// it is newer than dist/src/cli/main.js, without starting Node's ES module
// loader: that loader alone is about a sixth of an answer to --help.
import { writeFileSync } from 'node:fs';

const { usage } = await import('../dist/src/cli/usage.js');
writeFileSync(new URL('../dist/usage.txt', import.meta.url), usage());
