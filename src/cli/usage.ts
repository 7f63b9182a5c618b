// `toolhost --help`: the commands with their summaries. The build also writes it
// to dist/usage.txt (scripts/write-usage.mjs), which bin/toolhost.js prints
// without loading any of the CLI's modules.
import { COMMANDS } from './commands.js';

export function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, { summary }]) => `  ${name.padEnd(width)}  ${summary}`);
  return (
    `Usage: toolhost <command> [options]\n\nCommands:\n${lines.join('\n')}\n\n` +
    'Settings come from toolhost.yaml in this folder or the nearest parent (or --config FILE);\n' +
    "a flag overrides its key. Run `toolhost <command> --help` for a command's options,\n" +
    '`toolhost --version` for the version.\n'
  );
}
