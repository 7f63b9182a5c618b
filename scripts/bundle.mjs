// The CLI bundled (npm run build, after tsc): dist/src/cli/run-cli.js and the
// pure-JavaScript packages every start loads (the MCP SDK and zod, the YAML
// parsers, Ajv, CEL) into a few files under dist/bundle/, one chunk per
// command and per lazily imported module. `serve` then loads about 50 ES
// modules and 60 CommonJS files instead of about 410 and 260, and spends a
// quarter less CPU before it answers its first tools/list.
// dist/src/cli/main.js runs the bundle when it is newer than main.js itself
// (a later tsc leaves it stale, and the modules tsc wrote run instead).
//
// Left outside: native addons (better-sqlite3, isolated-vm), packages that
// start threads or processes from files of their own (piscina, pino's
// transports), and whatever only some commands load (PostgreSQL, OpenTelemetry,
// the CLI's terminal helpers); Node resolves them from node_modules as before.
// Files found by `new URL('…', import.meta.url)` (host helpers, sandbox code,
// the journal's writer thread) stay where tsc wrote them: each such URL is
// rewritten relative to dist/bundle/.
//
// rolldown comes with vite (a devDependency); it is not a dependency of its own.
import { rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist/bundle');
const ENTRY = join(ROOT, 'dist/src/cli/run-cli.js');

/** Packages bundled, with every package they import in turn. */
const INLINED = [
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/core',
  '@marcbachmann/cel-js',
  '@oxc-project/runtime',
  'zod',
  'yaml',
  'js-yaml',
  'ajv',
  'ajv-formats',
  'canonicalize',
  'diff',
];
/** Never bundled, even when an inlined package imports them: native, or they load files of their own. */
const KEPT_OUT = ['better-sqlite3', 'isolated-vm', 'piscina', 'pino', 'thread-stream'];

const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
const inNodeModules = (file) => file !== undefined && file.split(sep).includes('node_modules');

function isExternal(id, importer) {
  if (id.startsWith('node:')) return true;
  if (id.startsWith('.') || id.startsWith('/') || id.startsWith('\0')) return false;
  const name = packageOf(id);
  if (KEPT_OUT.includes(name)) return true;
  // A package an inlined package imports comes with it (Ajv's fast-uri, fast-deep-equal).
  return !(INLINED.includes(name) || inNodeModules(importer));
}

const IMPORT_META_URL = /new URL\((['"])([^'"]+)\1,\s*import\.meta\.url\)/g;
/** A URL built from import.meta.url out of anything but a literal: this script could not rebase it. */
const UNREBASABLE = /new URL\(\s*[^'"\s][^)]*,\s*import\.meta\.url\s*\)/;

/** `new URL('rel', import.meta.url)` in a dist/ module, made to name the same file from dist/bundle/. */
const rebaseImportMetaUrls = {
  name: 'rebase-import-meta-urls',
  transform(code, id) {
    if (inNodeModules(id) || !code.includes('import.meta.url')) return null;
    if (UNREBASABLE.test(code)) throw new Error(`${id}: a URL relative to import.meta.url that is not a string literal cannot be bundled`);
    return code.replace(IMPORT_META_URL, (_all, _quote, rel) => {
      let rebased = relative(OUT, resolve(dirname(id), rel));
      if (!rebased.startsWith('.')) rebased = `./${rebased}`;
      if (rel.endsWith('/')) rebased += '/';
      return `new URL(${JSON.stringify(rebased)}, import.meta.url)`;
    });
  },
};

rmSync(OUT, { recursive: true, force: true });
const bundle = await rolldown({
  input: { 'run-cli': ENTRY },
  platform: 'node',
  external: isExternal,
  plugins: [rebaseImportMetaUrls],
  logLevel: 'warn',
});
await bundle.write({ dir: OUT, format: 'esm', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js', sourcemap: false });
await bundle.close();
