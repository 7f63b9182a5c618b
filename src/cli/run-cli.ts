// The `toolhost` binary, as main.ts starts it (from dist/bundle/ or from here):
// picks the command and maps its outcome to an exit code (0 success, 1 refusal or failed check, 2 bad usage). Each
// command lives in its own module, loaded on demand so `validate` does not
// pay for SQLite.
import { closestKey } from '../config/closest-key.js';
import { UsageError } from './usage-error.js';
import { COMMANDS, loadCommand } from './commands.js';
import { packageVersion } from './package-version.js';
import { usage } from './usage.js';

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`toolhost ${packageVersion()}\n`);
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    const hint = closestKey(name, Object.keys(COMMANDS));
    process.stderr.write(`toolhost: unknown command "${name}"${hint !== undefined ? ` (did you mean "${hint}"?)` : ''}\nRun \`toolhost --help\` for the commands.\n`);
    return 2;
  }
  try {
    const run = await loadCommand(name);
    return await run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      for (const line of error.message.split('\n')) process.stderr.write(`toolhost ${name}: ${line}\n`);
      process.stderr.write(`Run \`toolhost ${name} --help\` for usage.\n`);
      return 2;
    }
    process.stderr.write(`toolhost ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

// Exit only after stdout has drained: a piped `list --json` must not be cut.
const exitCode = await main(process.argv.slice(2));
process.stdout.write('', () => process.exit(exitCode));
