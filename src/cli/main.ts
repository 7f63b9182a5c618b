// Entry point of the `toolhost` binary: picks the command and maps its outcome
// to an exit code (0 success, 1 refusal or failed check, 2 bad usage). Each
// command lives in its own module, loaded on demand so `validate` does not
// pay for isolated-vm or SQLite.
import { UsageError } from './args.js';

/** A command takes its own argv and returns the exit code. */
export type Command = (argv: readonly string[]) => Promise<number>;

// Each command lives in src/cli/<name>.ts and exports `run`.
const COMMANDS: Record<string, { summary: string }> = {
  serve: { summary: 'the MCP stdio server' },
  validate: { summary: 'check manifests and policies (for CI)' },
  list: { summary: 'every tool with its class, sandbox and the policy decision' },
  explain: { summary: 'which policy rules decide what for a tool' },
  call: { summary: 'one call through the supervisor, at a terminal' },
  audit: { summary: 'read the journal' },
  reconcile: { summary: "an operator's decision on an interrupted call", },
  approvals: { summary: 'pending approvals waiting for an operator' },
  approve: { summary: "an operator's decision on a pending approval" },
  console: { summary: "the operator's web console: approvals, live calls, audit, tools" },
  render: { summary: 'render tool declarations for models without native tool calls' },
  parse: { summary: "parse a model's emitted call", },
  fuzz: { summary: "fuzz a tool's argument checks from its input schema", },
  doctor: { summary: 'which sandboxes this machine supports, and why not' },
  import: { summary: 'a kind: Server manifest from a running MCP server (classes suggested, unverified)' },
  lock: { summary: 'pin every tool definition in toolhost.lock (--check: what changed, for CI)' },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, { summary }]) => `  ${name.padEnd(width)}  ${summary}`);
  return `Usage: toolhost <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun \`toolhost <command> --help\` for a command's options.\n`;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`toolhost: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  try {
    const { run } = (await import(`./${name}.js`)) as { run: Command };
    return await run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`toolhost ${name}: ${error.message}\nRun \`toolhost ${name} --help\` for usage.\n`);
      return 2;
    }
    process.stderr.write(`toolhost ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

// Exit only after stdout has drained: a piped `list --json` must not be cut.
const exitCode = await main(process.argv.slice(2));
process.stdout.write('', () => process.exit(exitCode));
