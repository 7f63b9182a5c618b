// The tools page of the console from a host configuration: `toolhost list`'s
// summary and `toolhost explain`'s checks and keys for each tool, with the pin
// a tool carries (`toolhost lock`) when it carries one.
import type { HostConfig } from '../host-config.js';
import type { ConsoleTool, ConsoleToolDetail, ConsoleTools } from '../console/console-data.js';
import type { ToolView } from '../policy/types.js';
import { formatProblem } from '../config/problem.js';
import { explainTool } from './explain.js';
import { sandboxLabel, summarizeTool } from './tool-summary.js';

/** The console's view of the tools of whichever configuration `current` returns (serve: the host in force). */
export function consoleToolsOf(current: () => HostConfig | undefined, why?: string): ConsoleTools {
  return {
    list: () => {
      const config = current();
      return config === undefined ? [] : [...config.tools.values()].sort((a, b) => (a.manifest.name < b.manifest.name ? -1 : 1)).map(toolOf);
    },
    detail: (name) => {
      const config = current();
      const view = config?.tools.get(name);
      if (config === undefined || view === undefined) return undefined;
      const explained = explainTool(config, view, undefined);
      const detail: ConsoleToolDetail = {
        ...toolOf(view),
        limits: explained.limits,
        allowedModes: explained.allowedModes,
        checks: explained.checks,
        keys: explained.keys.map((row) => ({ key: row.key, value: row.value, layer: row.layer, rule: row.rule })),
        upstream: explained.upstream === null ? null : { server: explained.upstream.server, tool: explained.upstream.tool },
      };
      return detail;
    },
    problems: () => {
      const config = current();
      if (config === undefined) return why === undefined ? [] : [why];
      return config.problems.map(formatProblem);
    },
  };
}

function toolOf(view: ToolView): ConsoleTool {
  const summary = summarizeTool(view);
  return {
    name: summary.name,
    file: summary.file,
    description: view.manifest.description,
    sideEffect: summary.sideEffect,
    sandbox: sandboxLabel(summary),
    trust: summary.trust,
    listed: summary.listed,
    decision: summary.decision,
    code: summary.code,
    rule: summary.rule,
    reason: summary.reason,
    pin: pinOf(view),
    writes: view.manifest.effects?.writes ?? [],
  };
}

/**
 * The pinned definition digest of a tool, when the policy layer put one on its view
 * (`toolhost lock`, SPEC section 4.2): read as an optional field, since a tool
 * without a lock has none. A string is the digest; an object names it `digest` or `sha256`.
 */
export function pinOf(view: ToolView): string | null {
  const pin = (view as ToolView & { readonly pin?: unknown }).pin;
  if (typeof pin === 'string') return pin;
  if (typeof pin !== 'object' || pin === null) return null;
  const digest = (pin as { digest?: unknown; sha256?: unknown }).digest ?? (pin as { sha256?: unknown }).sha256;
  return typeof digest === 'string' ? digest : null;
}
