// The commands of the `toolhost` binary, in the order `toolhost --help` lists
// them. Each lives in src/cli/<name>.ts and exports `run`; the table is shared
// by main.ts (dispatch, "did you mean") and completion.ts (shell completion).

/** A command takes its own argv and returns the exit code. */
type Command = (argv: readonly string[]) => Promise<number>;

export const COMMANDS: Readonly<Record<string, { readonly summary: string }>> = {
  init: { summary: 'a working project here: toolhost.yaml, two tools, a policy, .mcp.json' },
  new: { summary: 'new tool NAME --mode isolate|process|worker: a manifest and a stub' },
  serve: { summary: 'the MCP stdio server' },
  validate: { summary: 'check manifests and policies (for CI)' },
  list: { summary: 'every tool with its class, sandbox and the policy decision' },
  explain: { summary: 'which policy rules decide what for a tool' },
  call: { summary: 'one call through the supervisor, at a terminal' },
  audit: { summary: 'read the journal' },
  reconcile: { summary: "an operator's decision on an interrupted call" },
  approvals: { summary: 'pending approvals waiting for an operator' },
  approve: { summary: "an operator's decision on a pending approval" },
  console: { summary: "the operator's web console: approvals, live calls, audit, tools" },
  render: { summary: 'render tool declarations for models without native tool calls' },
  parse: { summary: "parse a model's emitted call" },
  fuzz: { summary: "fuzz a tool's argument checks from its input schema" },
  doctor: { summary: 'which sandboxes this machine supports, and why not' },
  import: { summary: 'a kind: Server manifest from a running MCP server (classes suggested, unverified)' },
  lock: { summary: 'pin every tool definition in toolhost.lock (--check: what changed, for CI)' },
  completion: { summary: 'shell completion: completion bash|zsh|fish' },
};

/** Loads a command's module on demand, so `validate` does not pay for SQLite. */
export async function loadCommand(name: string): Promise<Command> {
  const { run } = (await import(`./${name}.js`)) as { run: Command };
  return run;
}
