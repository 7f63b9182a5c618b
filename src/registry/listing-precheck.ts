// Checks a server's listing one tool at a time, yielding to the event loop
// between tools (SPEC section 3.1: work proportional to what a server sends is
// never done on the host's event loop unbounded). Compiling a tool's schemas is
// the costly part (tens of milliseconds for a schema of a few hundred
// properties); the compiler caches each result, so the configuration load that
// follows finds them compiled and does the rest at once.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ToolSchemaCompiler } from './ajv.js';
import { checkUpstreamSchema } from './schema-checks.js';
import type { ListedUpstreamTool } from './server-tools.js';

/** Compiles (into `compiler`'s cache) the schemas of each listed tool, one tool per event-loop turn. */
export async function precheckListing(tools: readonly ListedUpstreamTool[], compiler: ToolSchemaCompiler, isCancelled: () => boolean = () => false): Promise<void> {
  for (const tool of tools) {
    if (isCancelled()) return;
    checkUpstreamSchema(tool.inputSchema ?? { type: 'object' }, 'input', compiler);
    if (tool.outputSchema !== undefined) checkUpstreamSchema(tool.outputSchema, 'output', compiler);
    await nextTurn();
  }
}
