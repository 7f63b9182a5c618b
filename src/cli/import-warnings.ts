// What `toolhost import` warns about before a person is left with a server
// that will not work in the sandbox: a command that downloads its package when
// it starts (the sandbox has no network and nothing is installed at run time),
// and a server that writes beside its own code (its folder and node_modules
// are read-only in the sandbox). Pure: argv and stderr lines in, sentences out.
import { basename } from 'node:path';

// Launchers that fetch a package from a registry before they run it.
const DOWNLOADING_LAUNCHERS: ReadonlySet<string> = new Set(['npx', 'pnpx', 'bunx', 'uvx', 'pipx']);
// Package managers whose subcommand (second element) downloads and runs.
const DOWNLOADING_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  npm: ['exec', 'x'],
  pnpm: ['dlx', 'exec'],
  yarn: ['dlx'],
  bun: ['x'],
  uv: ['tool'],
  deno: ['run'],
  docker: ['run'],
  podman: ['run'],
};

/** A warning when `command` needs the network to start; undefined otherwise. */
export function networkStartWarning(command: readonly string[]): string | undefined {
  const program = basename(command[0] ?? '');
  const sub = command[1] ?? '';
  const downloads = DOWNLOADING_LAUNCHERS.has(program) || (DOWNLOADING_SUBCOMMANDS[program]?.includes(sub) ?? false);
  if (!downloads) return undefined;
  return (
    `warning: "${[program, sub].join(' ').trim()} …" downloads its package when it starts, and the sandbox has no network and installs nothing at run time. ` +
    'Install the package beside the manifest first (npm install --prefix DIR PACKAGE, or pip install --target DIR PACKAGE) and name its entry file in the command, ' +
    'e.g. -- node ./node_modules/PACKAGE/dist/index.js'
  );
}

/** Error codes of a write refused by a read-only or forbidden folder. */
const WRITE_REFUSED = /\b(EROFS|EACCES)\b/;

/**
 * A warning when the server's stderr says a write was refused (EROFS, EACCES) in one of
 * `ownFolders` (its manifest folder, the node_modules it runs from); undefined otherwise.
 */
export function ownFolderWriteWarning(stderrLines: readonly string[], ownFolders: readonly string[]): string | undefined {
  const line = stderrLines.find((candidate) => WRITE_REFUSED.test(candidate) && ownFolders.some((folder) => candidate.includes(folder)));
  if (line === undefined) return undefined;
  const code = WRITE_REFUSED.exec(line)?.[1] ?? 'EROFS';
  return (
    `warning: the server tried to write beside its own code (${code}): its folder and node_modules are read-only in the sandbox. ` +
    'Point its data file into the workspace with a literal env value, e.g. sandbox.env: { MEMORY_FILE_PATH: "${WORKSPACE}/.memory.jsonl" } ' +
    "(the server's README names its variable), and give the workspace root access: read_write."
  );
}
