// Lookup (SPEC section 5 step 3): the tool by name, or the tool named by an
// `onUnknownTool: {rewrite: name}` policy. An unknown name is `unknown_tool`
// with the listed names in details.available; how it reaches the client
// (JSON-RPC error or error result) is the protocol layer's concern.
import { HostError } from '../../errors.js';
import type { OnUnknownTool, ToolView } from '../../policy/types.js';
import { quoteForModel } from '../prompt-text.js';

interface LookupResult {
  readonly view: ToolView;
  /** The name the caller used, when a rewrite replaced it. */
  readonly rewrittenFrom?: string;
}

/** Finds the tool for `name`, applying the onUnknownTool rewrite; `unknown_tool` otherwise. */
export function lookupTool(tools: ReadonlyMap<string, ToolView>, name: string, onUnknownTool: OnUnknownTool): LookupResult {
  const view = tools.get(name);
  if (view) return { view };
  if (typeof onUnknownTool === 'object') {
    const target = tools.get(onUnknownTool.rewrite);
    if (target) return { view: target, rewrittenFrom: name };
  }
  throw new HostError('unknown_tool', `There is no tool named ${quoteForModel(name, 80)}.`, { available: listedNames(tools) });
}

/** Names the client may call, in tools/list order. */
function listedNames(tools: ReadonlyMap<string, ToolView>): string[] {
  return [...tools.values()]
    .filter((view) => view.listed)
    .map((view) => view.manifest.name)
    .sort();
}

/** The tool a call will resolve to, without refusing: used to pick the slot kind before lookup runs. */
export function peekTool(tools: ReadonlyMap<string, ToolView>, name: string, onUnknownTool: OnUnknownTool): ToolView | undefined {
  return tools.get(name) ?? (typeof onUnknownTool === 'object' ? tools.get(onUnknownTool.rewrite) : undefined);
}
