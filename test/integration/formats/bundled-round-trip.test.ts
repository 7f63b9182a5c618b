// Every bundled tool's declaration renders in each format, and a call emitted
// in each format parses back to the same arguments, which the tool's own
// compiled validator accepts.
import { resolve, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadHostConfig } from '../../../src/host-config.js';
import { FORMAT_NAMES } from '../../../src/formats/declaration.js';
import { parseCall } from '../../../src/formats/parse.js';
import { formatCall, renderTools } from '../../../src/formats/render.js';
import { generateCases } from '../../../src/fuzz/generate.js';

const repo = resolve(import.meta.dirname, '../../..');
const config = loadHostConfig({ manifestDirs: [join(repo, 'manifests')], policyFiles: [], workspace: repo });
const views = [...config.tools.values()];
const tools = views.map((view) => ({ name: view.manifest.name, description: view.manifest.description, inputSchema: view.manifest.input }));

describe('formats over the bundled tools', () => {
  it('loads the bundled tools without problems', () => {
    expect(config.problems).toEqual([]);
    expect(tools.length).toBeGreaterThanOrEqual(8);
  });

  it.each(FORMAT_NAMES)('renders every tool as %s', (format) => {
    const rendered = renderTools(tools, format);
    for (const tool of tools) expect(rendered).toContain(tool.name);
  });

  for (const view of views) {
    it.each(FORMAT_NAMES)(`${view.manifest.name}: round trip through %s`, (format) => {
      const tool = tools.find((candidate) => candidate.name === view.manifest.name)!;
      const { valid } = generateCases(view.manifest.input, 8, 5);
      expect(valid.length).toBe(8);
      for (const args of valid) {
        const parsed = parseCall(formatCall(tool, args, format), tools);
        expect(parsed).toEqual({ name: tool.name, arguments: args });
        expect(view.manifest.validateInput(parsed.arguments)).toBe(true);
      }
    });
  }
});
