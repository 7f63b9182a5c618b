// tools/list entries: annotations derived from the enforced class and network
// (SPEC section 6), never from the manifest's own hints. Deterministic order.
import type { ToolView } from '../policy/types.js';
import { toolAnnotations } from '../registry/definition-digest.js';
import type { ToolDeclaration } from './types.js';

/** Listed tools, sorted by name. */
export function declareTools(tools: ReadonlyMap<string, ToolView>): ToolDeclaration[] {
  return [...tools.values()]
    .filter((view) => view.listed && !view.exclusion)
    .sort((a, b) => (a.manifest.name < b.manifest.name ? -1 : a.manifest.name > b.manifest.name ? 1 : 0))
    .map(declareTool);
}

/** One tool's declaration. */
export function declareTool(view: ToolView): ToolDeclaration {
  const manifest = view.manifest;
  return {
    name: manifest.name,
    description: manifest.description,
    inputSchema: manifest.input,
    ...(manifest.output ? { outputSchema: manifest.output } : {}),
    annotations: toolAnnotations(manifest, view.runSpec?.networkAllow ?? manifest.networkAllow),
    terminal: manifest.terminal,
  };
}
