// `toolhost completion bash|zsh|fish`: a completion script for the shell, with
// the commands, each command's options (read from its own --help, so the two
// never drift apart), modes, folders and files, and the names of the tools of
// the toolhost.yaml in force (`toolhost completion --tools`, asked by the script
// when a tool name is wanted: manifests only, no server is started).
import { parseCommandArgs, UsageError } from './args.js';
import { COMMANDS, loadCommand } from './commands.js';
import { loadConfigFromFlags } from './host-config-flags.js';

const HELP = `Usage: toolhost completion bash|zsh|fish

Prints a shell completion script. Install it with, for example:
  bash   toolhost completion bash > ~/.local/share/bash-completion/completions/toolhost
  zsh    toolhost completion zsh > "\${fpath[1]}/_toolhost"   (or: source <(toolhost completion zsh))
  fish   toolhost completion fish > ~/.config/fish/completions/toolhost.fish
It completes commands, options, --mode values, folders and files, and the
names of the tools of the toolhost.yaml in force for call, explain and fuzz.

  --tools   print the listed tool names, one a line (what the scripts ask for)
`;

const SHELLS = ['bash', 'zsh', 'fish'] as const;
/** Commands whose first argument is a tool name. */
const TOOL_COMMANDS = ['call', 'explain', 'fuzz'];

export async function run(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { tools: { type: 'boolean' } }, 1, { config: argv.includes('--tools') });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (values.tools === true) {
    const config = loadConfigFromFlags(values);
    process.stdout.write(
      [...config.tools.values()]
        .filter((view) => view.listed)
        .map((view) => `${view.manifest.name}\n`)
        .join(''),
    );
    return 0;
  }
  const shell = positionals[0];
  if (shell === undefined || !(SHELLS as readonly string[]).includes(shell)) throw new UsageError(`name the shell: ${SHELLS.join(', ')}`);
  const options = await optionsByCommand();
  process.stdout.write(
    shell === 'fish' ? fishScript(options) : shell === 'zsh' ? `#compdef toolhost\nautoload -U +X bashcompinit && bashcompinit\n${bashScript(options)}` : bashScript(options),
  );
  return 0;
}

/** Each command's long options, as its --help prints them. */
async function optionsByCommand(): Promise<Map<string, string[]>> {
  const options = new Map<string, string[]>();
  for (const name of Object.keys(COMMANDS)) {
    const help = await captureStdout(async () => (await loadCommand(name))(['--help']));
    // The options a help documents start its lines ("  --json   …", "  -h, --help").
    const documented = [...help.matchAll(/^\s+(?:-[a-zA-Z], )?(--[a-z][a-z0-9-]*[a-z0-9])/gm)].map((match) => match[1]!);
    options.set(name, [...new Set([...documented, '--help'])].sort());
  }
  return options;
}

async function captureStdout(action: () => Promise<unknown>): Promise<string> {
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stdout.write;
  try {
    await action();
  } finally {
    process.stdout.write = write;
  }
  return chunks.join('');
}

function bashScript(options: ReadonlyMap<string, string[]>): string {
  const cases = [...options].map(([name, list]) => `      ${name}) opts="${list.join(' ')}" ;;`).join('\n');
  return `# toolhost completion for bash (toolhost completion bash)
_toolhost() {
  local cur prev cmd opts
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmd="\${COMP_WORDS[1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${Object.keys(COMMANDS).join(' ')} --help --version" -- "$cur") )
    return
  fi
  case "$prev" in
    --mode) COMPREPLY=( $(compgen -W "isolate process worker" -- "$cur") ); return ;;
    --format) COMPREPLY=( $(compgen -W "json xml ptype jsonl csv" -- "$cur") ); return ;;
    --manifests|--workspace|--state) COMPREPLY=( $(compgen -d -- "$cur") ); return ;;
    --config|--policy|--log-file|--out|--auth-tokens) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
  esac
  if [[ "$cur" == -* ]]; then
    case "$cmd" in
${cases}
      *) opts="--help" ;;
    esac
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
    return
  fi
  case "$cmd" in
    ${TOOL_COMMANDS.join('|')})
      if [ "$COMP_CWORD" -eq 2 ]; then
        COMPREPLY=( $(compgen -W "$(toolhost completion --tools 2>/dev/null)" -- "$cur") )
        return
      fi ;;
    completion) COMPREPLY=( $(compgen -W "${SHELLS.join(' ')}" -- "$cur") ); return ;;
    new) if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=( $(compgen -W "tool" -- "$cur") ); return; fi ;;
  esac
  COMPREPLY=( $(compgen -f -- "$cur") )
}
complete -o filenames -F _toolhost toolhost
`;
}

function fishScript(options: ReadonlyMap<string, string[]>): string {
  const lines = ['# toolhost completion for fish (toolhost completion fish)', 'complete -c toolhost -f'];
  for (const [name, { summary }] of Object.entries(COMMANDS)) lines.push(`complete -c toolhost -n __fish_use_subcommand -a ${name} -d ${fishQuote(summary)}`);
  lines.push('complete -c toolhost -n __fish_use_subcommand -l version -d "print the version"');
  for (const [name, list] of options) {
    for (const option of list) lines.push(`complete -c toolhost -n "__fish_seen_subcommand_from ${name}" -l ${option.slice(2)}`);
  }
  lines.push(`complete -c toolhost -n "__fish_seen_subcommand_from ${TOOL_COMMANDS.join(' ')}" -a "(toolhost completion --tools 2>/dev/null)"`);
  lines.push(`complete -c toolhost -n "__fish_seen_subcommand_from completion" -a "${SHELLS.join(' ')}"`);
  lines.push('complete -c toolhost -n "__fish_seen_subcommand_from new" -a tool');
  lines.push('complete -c toolhost -l mode -x -a "isolate process worker"');
  lines.push('complete -c toolhost -l manifests -l workspace -l state -x -a "(__fish_complete_directories)"');
  lines.push('complete -c toolhost -l config -l policy -l log-file -r -F');
  return `${lines.join('\n')}\n`;
}

function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
