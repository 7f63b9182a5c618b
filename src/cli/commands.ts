// The commands of the `toolhost` binary, in the order `toolhost --help` lists
// them. Each lives in src/cli/<name>.ts and exports `run`; the table is shared
// by main.ts (dispatch, "did you mean") and completion.ts (shell completion).

/** A command takes its own argv and returns the exit code. */
type Command = (argv: readonly string[]) => Promise<number>;

// Each loader names its module literally (not `./${name}.js`): a bundler follows
// only literal imports, and splits each command into a chunk of its own.
export const COMMANDS: Readonly<Record<string, { readonly summary: string; readonly load: () => Promise<{ run: Command }> }>> = {
  init: { summary: 'a working project here: toolhost.yaml, two tools, a policy, .mcp.json', load: () => import('./init.js') },
  new: { summary: 'new tool NAME --mode isolate|process|worker: a manifest and a stub', load: () => import('./new.js') },
  serve: { summary: 'the MCP stdio server', load: () => import('./serve.js') },
  validate: { summary: 'check manifests and policies (for CI)', load: () => import('./validate.js') },
  list: { summary: 'every tool with its class, sandbox and the policy decision', load: () => import('./list.js') },
  explain: { summary: 'which policy rules decide what for a tool', load: () => import('./explain.js') },
  call: { summary: 'one call through the supervisor, at a terminal', load: () => import('./call.js') },
  audit: { summary: 'read the journal', load: () => import('./audit.js') },
  reconcile: { summary: "an operator's decision on an interrupted call", load: () => import('./reconcile.js') },
  approvals: { summary: 'pending approvals waiting for an operator', load: () => import('./approvals.js') },
  approve: { summary: "an operator's decision on a pending approval", load: () => import('./approve.js') },
  console: { summary: "the operator's web console: approvals, live calls, audit, tools", load: () => import('./console.js') },
  render: { summary: 'render tool declarations for models without native tool calls', load: () => import('./render.js') },
  parse: { summary: "parse a model's emitted call", load: () => import('./parse.js') },
  fuzz: { summary: "fuzz a tool's argument checks from its input schema", load: () => import('./fuzz.js') },
  doctor: { summary: 'which sandboxes this machine supports, and why not', load: () => import('./doctor.js') },
  import: { summary: 'a kind: Server manifest from a running MCP server (classes suggested, unverified)', load: () => import('./import.js') },
  lock: { summary: 'pin every tool definition in toolhost.lock (--check: what changed, for CI)', load: () => import('./lock.js') },
  completion: { summary: 'shell completion: completion bash|zsh|fish', load: () => import('./completion.js') },
};

/** Loads a command's module on demand, so `validate` does not pay for SQLite. */
export async function loadCommand(name: string): Promise<Command> {
  const command = COMMANDS[name];
  if (command === undefined) throw new Error(`unknown command "${name}"`);
  const { run } = await command.load();
  return run;
}
