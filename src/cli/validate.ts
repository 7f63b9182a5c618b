// `toolhost validate`: checks manifests and policies the way `serve` loads
// them, for CI in the repositories that hold them. Exit 0 when everything
// loads and no tool conflicts with the policy; 1 with `file:line:col: reason`
// lines on stderr; 2 on bad usage.
import { HOST_FLAGS_HELP, parseCommandArgs } from './args.js';
import { loadConfigWithServersFromFlags, printProblems } from './host-config-flags.js';
import { excludedToolProblems, formatServerReports, serverProblems } from './server-report.js';
import { ineffectiveRepositoryKeys } from '../policy/ineffective-keys.js';

const HELP = `Usage: toolhost validate [host flags]

Loads every manifest and policy file as \`toolhost serve\` would and checks each
tool against the policy in force. Prints one \`file:line:col: reason\` line on
stderr per problem: invalid YAML, unknown keys, bad values, and tools the policy
excludes (limits above the policy's, a sandbox mode their trust may not use,
roots, env names or network hosts the policy does not allow), naming the rule.
Upstream servers (kind: Server) are started in their sandboxes to read their
tools, unless toolhost.lock pins them and pinning is in force (then the pins
are their tools and no server starts); each tool is shown with its listed name,
class and tools: entry. A server that cannot start within startupTimeoutMs is a
problem (with the last lines of its stderr), and so is every upstream tool that
is not offered for a reason other than hidden: true in its tools: entry.
What shadow-mode organisation files would exclude is printed as a warning, and
so is every repository policy key that is looser than the value in force (a
repository layer can only tighten, so such a key has no effect).

Exit status: 0 all good, 1 a problem or an exclusion, 2 bad usage.

${HOST_FLAGS_HELP}
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, {}, 0);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const config = await loadConfigWithServersFromFlags(values);
  const unavailable = serverProblems(config.servers);
  const excludedTools = excludedToolProblems(config.servers);
  printProblems(config.problems);
  printProblems(unavailable);
  printProblems(excludedTools);
  printProblems(config.exclusions);
  printProblems(config.shadowExclusions);
  printProblems(ineffectiveRepositoryKeys(config.policy.enforced));
  // Upstream servers were started to read their tools: what each offers, and what not and why.
  process.stdout.write(formatServerReports(config.servers));
  const failures = config.problems.length + unavailable.length + excludedTools.length + config.exclusions.length;
  const views = [...config.tools.values()];
  const listed = views.filter((view) => view.listed).length;
  const summary = `${count(views.length, 'tool')} (${listed} listed), ${count(config.policy.files.length, 'policy file')}`;
  if (failures > 0) {
    process.stderr.write(`toolhost validate: ${count(failures, 'problem')}; ${summary}\n`);
    return 1;
  }
  process.stdout.write(`ok: ${summary}\n`);
  return 0;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
