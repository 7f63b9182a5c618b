// `toolhost parse TEXT`: reads a model's emitted call back into
// {name, arguments} and applies the checks a tools/call would get before it
// runs: the tool is listed, and the arguments pass its compiled schema.
import { loadHostConfig } from '../host-config.js';
import { formatProblem } from '../config/problem.js';
import { ParseError } from '../formats/declaration.js';
import { parseCall } from '../formats/parse.js';
import { loadOptionsOf } from './host-config-flags.js';
import { HOST_FLAGS_HELP, hostFlagsFrom, parseCommandArgs, UsageError } from './args.js';
import { parseFormat } from './render.js';

const HELP = `Usage: toolhost parse TEXT [--format json|xml|ptype] [host flags]

Parses one emitted call (the format is detected when --format is not given) and
prints {"name", "arguments"} as JSON on stdout. Exit 0 when the call would pass
the lookup and argument checks of tools/call, 1 otherwise (the reason on stderr).
Use - as TEXT to read it from standard input.

${HOST_FLAGS_HELP}
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { format: { type: 'string' } }, 1);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [text] = positionals;
  if (text === undefined) throw new UsageError('missing TEXT (the emitted call, or - for stdin)');
  const emission = text === '-' ? await readStdin() : text;
  const flags = hostFlagsFrom(values);
  const config = loadHostConfig(loadOptionsOf(flags));
  if (config.problems.length > 0) {
    for (const problem of config.problems) process.stderr.write(`${formatProblem(problem)}\n`);
    return 1;
  }
  const listed = [...config.tools.values()].filter((view) => view.listed);
  const tools = listed.map((view) => ({ name: view.manifest.name, description: view.manifest.description, inputSchema: view.manifest.input }));
  let call;
  try {
    call = parseCall(emission, tools, values.format === undefined ? undefined : parseFormat(values.format));
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    process.stderr.write(`code: malformed_request\nreason: ${error.reason}\n`);
    return 1;
  }
  process.stdout.write(`${JSON.stringify(call)}\n`);
  const view = config.tools.get(call.name);
  if (view && !view.manifest.validateInput(call.arguments)) {
    const error = view.manifest.validateInput.errors?.[0];
    process.stderr.write(`code: invalid_arguments\npath: ${error?.instancePath || '/'}\nreason: ${error?.message ?? 'does not match the input schema'}\n`);
    return 1;
  }
  return 0;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
