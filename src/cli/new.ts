// `toolhost new tool NAME --mode isolate|process|worker`: a manifest and a stub
// in the first manifest folder (toolhost.yaml's manifests, or --manifests),
// written so that `toolhost validate` passes. Nothing is overwritten.
import { isAbsolute, join, relative } from 'node:path';
import { HOST_FLAGS_HELP, hostFlagsFrom, parseCommandArgs, UsageError } from './args.js';
import { SCAFFOLD_MODES, TOOL_NAME, toolFiles, writeAllOrNothing, type ScaffoldMode } from './scaffold.js';

const HELP = `Usage: toolhost new tool NAME --mode isolate|process|worker [host flags]

Adds NAME.yaml and its stub to the first manifest folder:
  isolate   NAME.js, JavaScript in a fresh V8 isolate per call (untrusted code welcome)
  process   NAME.py, a one-shot Python process in the namespace sandbox
  worker    NAME.js, first-party JavaScript on a worker thread with all of Node; it runs
            only when an organisation policy makes it first party (trust.firstParty)
NAME: a lowercase letter, then lowercase letters, digits or _ (at most 64).
Exit 1 when a file exists (nothing is overwritten), 2 bad usage.

  --mode M   the sandbox mode (required)

${HOST_FLAGS_HELP}
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { mode: { type: 'string' } }, 2);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [what, name] = positionals;
  if (what !== 'tool')
    throw new UsageError(
      what === undefined ? 'missing what to create: toolhost new tool NAME --mode M' : `toolhost new makes a tool, not "${what}": toolhost new tool NAME --mode M`,
    );
  if (name === undefined) throw new UsageError('missing NAME');
  if (!TOOL_NAME.test(name)) throw new UsageError(`NAME "${name}" must be a lowercase letter, then lowercase letters, digits or _ (at most 64 in all)`);
  const mode = values.mode;
  if (mode === undefined) throw new UsageError(`--mode is required: one of ${SCAFFOLD_MODES.join(', ')}`);
  if (!(SCAFFOLD_MODES as readonly string[]).includes(mode)) throw new UsageError(`--mode must be one of ${SCAFFOLD_MODES.join(', ')}; got "${mode}"`);

  const flags = hostFlagsFrom(values);
  const dir = flags.manifestDirs[0]!;
  const written = writeAllOrNothing('new', dir, toolFiles(name, mode as ScaffoldMode, dir));
  if (written === undefined) return 1;
  const trust = mode === 'worker' ? firstPartyHint(join(dir, `${name}.yaml`), flags.workspace) : '';
  process.stdout.write(`${written}${trust}Check it with: toolhost validate; try it with: toolhost call ${name} '{...}'\n`);
  return 0;
}

// A worker tool is refused until an organisation layer makes it first party;
// printing the policy that does (with this manifest's own path) saves a trip to the docs.
function firstPartyHint(manifest: string, workspace: string): string {
  const fromWorkspace = relative(workspace, manifest);
  const glob = fromWorkspace.startsWith('..') || isAbsolute(fromWorkspace) ? manifest : fromWorkspace;
  return [
    'A worker tool runs only when an organisation policy makes it first party (trust.firstParty).',
    'One that does, saved as first-party.yaml outside policies/ and passed with --policy first-party.yaml:',
    '  kind: Policy',
    '  name: first-party',
    '  trust:',
    `    firstParty: [${JSON.stringify(glob)}]`,
    '',
  ].join('\n');
}
