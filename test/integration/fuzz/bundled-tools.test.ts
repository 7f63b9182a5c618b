// `toolhost fuzz` over every bundled tool: valid arguments reach the tool,
// near misses are refused with invalid_arguments by the supervisor's own check.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadHostConfig } from '../../../src/host-config.js';
import { fuzzTool, mirrorWorkspace } from '../../../src/cli/fuzz.js';

const repo = resolve(import.meta.dirname, '../../..');
const flags = { manifestDirs: [join(repo, 'manifests')], policyFiles: [], workspace: repo, stateDir: '' };
const bundled = [...loadHostConfig({ manifestDirs: flags.manifestDirs, policyFiles: [], workspace: repo }).tools.keys()];
const scratch = mkdtempSync(join(tmpdir(), 'toolhost-fuzz-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('fuzz over the bundled tools', () => {
  it('covers every bundled tool', () => {
    expect(bundled.length).toBeGreaterThanOrEqual(8);
  });

  it.each(bundled)('%s: valid arguments reach the tool, near misses are refused', async (tool) => {
    const mirrored = mirrorWorkspace(flags, join(scratch, tool, 'workspace'));
    const report = await fuzzTool({ ...mirrored, stateDir: join(scratch, tool, 'state') }, tool, 6, 11, true);
    expect(report.failures).toEqual([]);
    expect(report.valid.reached).toBe(6);
    expect(report.invalid.total).toBeGreaterThan(0);
    expect(report.invalid.refused).toBe(report.invalid.total);
  });
});
