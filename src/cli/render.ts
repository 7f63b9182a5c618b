// `toolhost render [--format json|xml|ptype]`: the listed tools' declarations
// for models without native tool calls (SPEC section 9).
import { loadHostConfig } from '../host-config.js';
import { formatProblem } from '../config/problem.js';
import { FORMAT_NAMES, type FormatName, type FormatTool } from '../formats/declaration.js';
import { renderTools } from '../formats/render.js';
import { loadOptionsOf } from './host-config-flags.js';
import { HOST_FLAGS_HELP, hostFlagsFrom, parseCommandArgs, UsageError } from './args.js';

const HELP = `Usage: toolhost render [--format json|xml|ptype] [host flags]

Prints the declarations of every listed tool in the chosen format (default json):
  json   function-call schemas ({type: "function", function: {name, description, parameters}})
  xml    <tool name="…"> declarations with a usage line per tool
  ptype  one signature per line: search(query: string, limit?: integer)  # description

${HOST_FLAGS_HELP}
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { format: { type: 'string' } }, 0);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const format = parseFormat(values.format);
  const tools = loadListedTools(hostFlagsFrom(values));
  if (!tools) return 1;
  process.stdout.write(`${renderTools(tools, format)}\n`);
  return 0;
}

export function parseFormat(value: unknown): FormatName {
  if (value === undefined) return 'json';
  if (typeof value === 'string' && (FORMAT_NAMES as readonly string[]).includes(value)) return value as FormatName;
  throw new UsageError(`--format must be one of ${FORMAT_NAMES.join(', ')}`);
}

/** The listed tools as the formats see them; undefined (problems printed) when the configuration does not load. */
function loadListedTools(flags: ReturnType<typeof hostFlagsFrom>): FormatTool[] | undefined {
  const config = loadHostConfig(loadOptionsOf(flags));
  if (config.problems.length > 0) {
    for (const problem of config.problems) process.stderr.write(`${formatProblem(problem)}\n`);
    return undefined;
  }
  return [...config.tools.values()]
    .filter((view) => view.listed)
    .map((view) => ({ name: view.manifest.name, description: view.manifest.description, inputSchema: view.manifest.input, terminal: view.manifest.terminal }));
}
