// tools/list entries: annotations derived from the enforced class and network
// (SPEC section 6), never from the manifest's own hints. Deterministic order.
// An upstream server's words in a listing (its description, title, schemas
// with their descriptions, defaults and examples, its `_meta`) are redacted
// like its results (SPEC sections 2.1 and 5 step 9); the names were checked
// when the tools were built (a name holding a secret is not offered).
import type { ToolView } from '../policy/types.js';
import { toolAnnotations } from '../registry/tool-definition.js';
import { redactJson, type Redactor } from './redact.js';
import type { ToolDeclaration } from './types.js';

/** Listed tools, sorted by name; `redact` is applied to what upstream servers wrote. */
export function declareTools(tools: ReadonlyMap<string, ToolView>, redact?: Redactor): ToolDeclaration[] {
  return [...tools.values()]
    .filter((view) => view.listed && !view.exclusion)
    .sort((a, b) => (a.manifest.name < b.manifest.name ? -1 : a.manifest.name > b.manifest.name ? 1 : 0))
    .map((view) => declareTool(view, redact));
}

/** One tool's declaration. */
function declareTool(view: ToolView, redact?: Redactor): ToolDeclaration {
  const manifest = view.manifest;
  const network = view.runSpec?.networkAllow ?? manifest.networkAllow;
  const upstream = manifest.upstream;
  // A first-party manifest's words are the host's own; a server's are redacted.
  const theirs = upstream !== undefined && redact !== undefined ? redact : undefined;
  const text = (value: string): string => (theirs ? theirs(value) : value);
  const json = <T>(value: T): T => (theirs ? (redactJson(value, theirs) as T) : value);
  return {
    name: manifest.name,
    ...(upstream?.title !== undefined ? { title: text(upstream.title) } : {}),
    description: text(manifest.description),
    inputSchema: json(manifest.input),
    ...(manifest.output ? { outputSchema: json(manifest.output) } : {}),
    annotations: toolAnnotations(manifest, network),
    ...(upstream?.meta !== undefined ? { meta: json(upstream.meta) } : {}),
    terminal: manifest.terminal,
  };
}
