// tools/list entries (tool-declarations.ts): an upstream server's words (title,
// description, schemas with their descriptions, defaults, examples and keys,
// _meta) are redacted; a manifest tool's own words are the host's and left alone.
import { describe, expect, it } from 'vitest';
import type { ToolView } from '../../../src/policy/types.js';
import { createRedactor } from '../../../src/supervisor/redact.js';
import { declareTools } from '../../../src/supervisor/tool-declarations.js';

const SECRET = 'hunter2-listing-secret';
const redact = createRedactor({ secretValues: [SECRET], visibleRoots: ['/ws'], hostRoots: ['/root', '/home'] });

function view(name: string, upstream: boolean): ToolView {
  const words = `uses ${SECRET} from /root/.aws/credentials`;
  return {
    listed: true,
    runSpec: { networkAllow: [] },
    manifest: {
      name,
      description: words,
      sideEffect: 'read_only',
      idempotent: true,
      terminal: false,
      networkAllow: [],
      input: { type: 'object', description: words, properties: { [SECRET]: { type: 'string', default: words, examples: [words] } }, required: [SECRET] },
      output: { type: 'object', properties: { p: { type: 'string', description: words } } },
      ...(upstream ? { upstream: { server: 'srv', tool: name, title: `Title ${SECRET}`, meta: { ui: { resourceUri: `ui://srv/${SECRET}` }, note: '/home/me/x' } } } : {}),
    },
  } as unknown as ToolView;
}

describe('declareTools', () => {
  it("redacts every word of an upstream server's listing", () => {
    const [tool] = declareTools(new Map([['srv__t', view('srv__t', true)]]), redact);
    const shown = JSON.stringify(tool);
    expect(shown).not.toContain(SECRET);
    expect(shown).not.toContain('/root/.aws');
    expect(shown).not.toContain('/home/me');
    expect(tool).toMatchObject({
      title: 'Title [redacted]',
      description: 'uses [redacted] from [path]',
      inputSchema: {
        description: 'uses [redacted] from [path]',
        properties: { '[redacted]': { default: 'uses [redacted] from [path]', examples: ['uses [redacted] from [path]'] } },
        required: ['[redacted]'],
      },
      outputSchema: { properties: { p: { description: 'uses [redacted] from [path]' } } },
      meta: { ui: { resourceUri: 'ui://srv/[redacted]' }, note: '[path]' },
    });
  });

  it("leaves a manifest tool's own words as written (they are the host's configuration)", () => {
    const [tool] = declareTools(new Map([['own', view('own', false)]]), redact);
    expect(tool?.description).toContain(SECRET);
    expect(tool).not.toHaveProperty('meta');
    expect(tool).not.toHaveProperty('title');
  });
});
