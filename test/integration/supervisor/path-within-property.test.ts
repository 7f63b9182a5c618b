// Property: path.under (and so path.within) agrees with what the sandbox
// actually lets a tool open. Random paths (traversal, absolute spellings,
// links that stay inside, leave, or come back in) go through the real ctx.fs
// of an isolate tool whose one root is docs/, and through the helper:
//   - whatever the sandbox opens, the helper calls inside docs/;
//   - whatever the helper calls outside docs/, the sandbox refuses;
//   - the only paths the helper calls inside and the sandbox refuses are those
//     spelled through a folder outside docs/ (the sandbox also checks the
//     spelling; a rule judges where the path leads).
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPathUnder, PathHelperError } from '../../../src/policy/rules/path-helpers.js';
import { closeAllHosts, resultOf, startHost, type TestHost } from '../../helpers/supervisor-host.js';

const MANIFESTS = fileURLToPath(new URL('../../fixtures/policy-rules/manifests', import.meta.url));

let host: TestHost;
let ws: string;

beforeAll(async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-within-')));
  ws = join(root, 'ws');
  mkdirSync(join(ws, 'docs/sub'), { recursive: true });
  mkdirSync(join(ws, '.git'), { recursive: true });
  writeFileSync(join(ws, 'docs/readme.md'), 'r');
  writeFileSync(join(ws, 'docs/sub/a.txt'), 'a');
  writeFileSync(join(ws, '.git/config'), 'c');
  symlinkSync('sub', join(ws, 'docs/in-link'));
  symlinkSync('../.git', join(ws, 'docs/out-link'));
  symlinkSync('docs', join(ws, 'up-link'));
  host = await startHost({ root, manifestDirs: [MANIFESTS] });
}, 60_000);

afterAll(closeAllHosts);

const SEGMENTS = ['docs', '..', '.', 'readme.md', 'sub', 'a.txt', 'in-link', 'out-link', 'up-link', 'missing', '.git', 'config', 'ws'];

function pathArbitrary(): fc.Arbitrary<string> {
  const relativePath = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 6 }).map((parts) => parts.join('/'));
  return fc.oneof(
    relativePath,
    relativePath.map((rest) => `${ws}/${rest}`),
    relativePath.map((rest) => `${ws}/docs/${rest}`),
    relativePath.map((rest) => `/etc/${rest}`),
  );
}

describe('path.under agrees with the sandbox', () => {
  it('for random paths through a real isolate tool with one root (docs/)', async () => {
    const base = { root: join(ws, 'docs'), workspace: ws };
    const seen = { opened: 0, denied: 0, missing: 0 };
    await fc.assert(
      fc.asyncProperty(pathArbitrary(), async (p) => {
        const result = resultOf(await host.call('fs_probe', { path: p }));
        const outcome = (result.structuredContent as { outcome: 'opened' | 'denied' | 'missing' }).outcome;
        seen[outcome]++;
        let under: boolean;
        try {
          under = isPathUnder(p, 'docs', base);
        } catch (error) {
          // The helper refuses (a rule then denies): the safe direction, nothing to compare.
          expect(error).toBeInstanceOf(PathHelperError);
          return;
        }
        if (outcome === 'opened') expect(under, `${p} was opened but the helper puts it outside docs/`).toBe(true);
        if (!under) expect(outcome, `${p} is outside docs/ by the helper but the sandbox did not refuse it`).toBe('denied');
        if (under && outcome === 'denied') {
          const lexical = relative(join(ws, 'docs'), resolve(join(ws, 'docs'), p));
          expect(lexical.startsWith('..'), `${p}: only a spelling outside docs/ may be refused while it leads inside`).toBe(true);
        }
      }),
      { numRuns: 150, seed: 20260428 },
    );
    // The run met every kind of outcome: the property was not vacuous.
    expect(seen.opened).toBeGreaterThan(0);
    expect(seen.denied).toBeGreaterThan(0);
  }, 120_000);
});
