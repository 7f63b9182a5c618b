// The projected effect of a write to a named pipe (mkfifo is a process, so this
// lives here, not in the unit project): described, never opened for a read.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Manifest, ManifestRoot } from '../../../src/registry/manifest.js';
import { projectEffects } from '../../../src/supervisor/projected-effect.js';
import { createRedactor } from '../../../src/supervisor/redact.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const temp = makeTempDir('toolhost-effect-');
afterAll(() => temp.remove());
const ws = join(temp.path, 'ws');
const docs = join(ws, 'docs');
mkdirSync(docs, { recursive: true });

const redact = createRedactor({ secretValues: [], visibleRoots: [ws], hostRoots: [] });
const WRITABLE: ManifestRoot[] = [{ declared: '${WORKSPACE}', path: ws, access: 'read_write' }];
const WRITE = { name: 'write_file', roots: WRITABLE, effects: { writes: ['path'], content: 'text' } } as unknown as Manifest;

describe('projectEffects', () => {
  it('a named pipe in the workspace is described, never opened for a blocking read', async () => {
    execFileSync('mkfifo', [join(docs, 'pipe')]);
    expect((await projectEffects(WRITE, { path: 'docs/pipe', text: 'x' }, redact))[0]).toMatchObject({ summary: 'the path is a named pipe, not a regular file', diff: null });
  });
});
