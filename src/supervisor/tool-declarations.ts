// tools/list entries: annotations derived from the enforced class and network
// (SPEC section 6), never from the manifest's own hints. Deterministic order.
import type { ToolView } from '../policy/types.js';
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
  const sideEffect = manifest.sideEffect;
  const network = view.runSpec?.networkAllow ?? manifest.networkAllow;
  return {
    name: manifest.name,
    description: manifest.description,
    inputSchema: manifest.input,
    ...(manifest.output ? { outputSchema: manifest.output } : {}),
    annotations: {
      readOnlyHint: sideEffect === 'read_only',
      // An unclassified tool (allowed only by a non-strict policy) is assumed to be the worst.
      destructiveHint: sideEffect === 'destructive' || sideEffect === undefined,
      idempotentHint: manifest.idempotent,
      openWorldHint: network.length > 0 || sideEffect === 'remote_mutation',
    },
    terminal: manifest.terminal,
  };
}
