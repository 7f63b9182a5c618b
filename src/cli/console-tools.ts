// The tools page of the console from a host configuration: `toolhost list`'s
// summary and `toolhost explain`'s checks and keys for each tool, with the pin
// a tool carries (`toolhost lock`) when it carries one.
import type { HostConfig } from '../host-config.js';
import type { ConsoleTool, ConsoleToolDetail, ConsoleTools } from '../console/console-data.js';
import type { ToolView } from '../policy/types.js';
import { formatProblem } from '../config/problem.js';
import { explainTool } from './explain.js';
import { sandboxLabel, summarizeTool } from './tool-summary.js';
import { machineMemoryHold } from './memory-hold.js';
import type { MemoryHold } from '../runner/index.js';

/** The console's view of the tools of whichever configuration `current` returns (serve: the host in force). */
export function consoleToolsOf(current: () => HostConfig | undefined, why?: string): ConsoleTools {
  // How this machine holds a sandbox's memory: learned once, on the first page that shows a tool.
  let hold: MemoryHold | undefined;
  const toolOf = (view: ToolView, config: HostConfig): ConsoleTool => toolOfHeld(view, config, (hold ??= machineMemoryHold()));
  return {
    list: () => {
      const config = current();
      return config === undefined ? [] : [...config.tools.values()].sort((a, b) => (a.manifest.name < b.manifest.name ? -1 : 1)).map((view) => toolOf(view, config));
    },
    detail: (name) => {
      const config = current();
      const view = config?.tools.get(name);
      if (config === undefined || view === undefined) return undefined;
      const explained = explainTool(config, view, undefined);
      const detail: ConsoleToolDetail = {
        ...toolOf(view, config),
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

function toolOfHeld(view: ToolView, config: HostConfig, hold: MemoryHold): ConsoleTool {
  const summary = summarizeTool(view, hold);
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
    pin: pinOf(view, config),
    writes: view.manifest.effects?.writes ?? [],
  };
}

/** The digest `toolhost.lock` pins for a tool (SPEC section 4.2), or null when there is no lock or no pin for it. */
export function pinOf(view: ToolView, config: HostConfig): string | null {
  return config.pinning.lock?.entries.get(view.manifest.name)?.digest ?? null;
}
