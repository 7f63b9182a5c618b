// `toolhost explain TOOL [JSON] [--json]`: which policy rules decide what for
// TOOL, each with its layer, file and line; with arguments, whether they are
// valid and what a call with them would meet.
import type { HostConfig } from '../host-config.js';
import type { ToolCheck } from '../policy/assess-tool.js';
import { readToolDecision } from '../policy/tool-decision.js';
import { decideForPrincipal } from '../policy/principals.js';
import { describePolicy, type KeyRow } from '../policy/describe-policy.js';
import type { ToolView } from '../policy/types.js';
import { evaluateRules, evaluateShadowRules, traceRules } from '../policy/rules/evaluate-rules.js';
import { HOST_FLAGS_HELP, parseCommandArgs, UsageError } from './args.js';
import { loadConfigForToolFromFlags, printProblems } from './host-config-flags.js';
import { formatTable, tableOptionsFor, type TableOptions } from '../terminal/table.js';
import { classLabel, sandboxLabel, summarizeTool, type ToolSummary } from './tool-summary.js';
import { describeMemory, machineMemoryHold } from './memory-hold.js';

const HELP = `Usage: toolhost explain TOOL [JSON] [--json] [--principal NAME] [host flags]

Shows how the policy in force treats TOOL: whether it is listed, the decision
and the rule behind it, its trust, sandbox modes and limits, every check the
policy makes for it, and every policy key with each layer (organisation,
repository or built-in), file and line that set it, marking the value in force
and the values it overrode.

With JSON (the arguments of a call, e.g. '{"path": "notes.txt"}') it also checks
them against the tool's input schema and says what a call would meet.

  --json             print the explanation as one JSON object (documented in docs/cli.md)
  --principal NAME   also say what the principals: rules decide for this HTTP caller (SPEC 6.1)

Exit status: 0 explained; 1 unknown tool, or arguments the tool's schema
refuses; 2 bad usage (including JSON that does not parse).

${HOST_FLAGS_HELP}
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' }, principal: { type: 'string' } }, 2);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [name, argsText] = positionals;
  if (name === undefined) throw new UsageError('missing TOOL');
  const args = argsText === undefined ? undefined : parseArguments(argsText);
  // Only the server whose tool this is gets started (a manifest tool starts none).
  const config = await loadConfigForToolFromFlags(values, name);
  printProblems(config.problems);
  const view = config.tools.get(name);
  if (!view) {
    process.stderr.write(`toolhost explain: unknown tool "${name}"; known tools: ${[...config.tools.keys()].join(', ') || 'none'}\n`);
    return 1;
  }
  const principal = typeof values.principal === 'string' ? values.principal : undefined;
  const explanation = explainTool(config, view, args, principal);
  process.stdout.write(values.json ? `${JSON.stringify(explanation, null, 2)}\n` : renderExplanation(explanation, tableOptionsFor(process.stdout)));
  return explanation.arguments && !explanation.arguments.valid ? 1 : 0;
}

/** What `explain --json` prints. */
interface Explanation extends ToolSummary {
  readonly allowedModes: readonly string[];
  readonly checks: readonly { readonly key: string; readonly outcome: ToolCheck['outcome']; readonly rule: string | null; readonly text: string }[];
  readonly keys: readonly KeyRow[];
  /** Keys written in shadow-mode organisation files (not enforced). */
  readonly shadowKeys: readonly KeyRow[];
  readonly arguments?: {
    readonly valid: boolean;
    readonly errors: readonly { readonly path: string; readonly message: string }[];
    /** run | ask | deny | invalid_arguments */
    readonly outcome: string;
    readonly rule: string | null;
    /** Why, as a call with these arguments would be told (the same reason `serve` gives). */
    readonly reason: string | null;
    /** Each rule on arguments that names this tool (SPEC section 4.1), in layer order, with its result. */
    readonly rules: readonly RuleRow[];
  };
  /** With --principal: what the `principals:` rules decide for that caller (null rule: none applies). */
  readonly principal?: { readonly name: string; readonly decision: 'allow' | 'deny'; readonly rule: string | null; readonly reason: string | null };
}

/** One rule on arguments as `explain` shows it. */
interface RuleRow {
  /** `file:line rules.NAME`. */
  readonly rule: string;
  readonly file: string;
  readonly line: number;
  readonly layer: string;
  readonly shadow: boolean;
  readonly effect: 'deny' | 'ask';
  readonly when: string;
  /** False when its principals leave this caller out (stdio callers have no principal). */
  readonly applies: boolean;
  /** The condition's value for these arguments; null when it does not apply or could not be evaluated. */
  readonly matched: boolean | null;
  /** Why it could not be evaluated (the rule then denies). */
  readonly failure: string | null;
}

/** Builds the explanation of one tool (and, optionally, one set of arguments). */
export function explainTool(config: HostConfig, view: ToolView, args: unknown, principal?: string): Explanation {
  const assessment = config.policy.assessments.get(view.manifest.name);
  const shadowKeys = config.policy.withShadow ? describePolicy(config.policy.withShadow).filter((row) => row.shadow) : [];
  return {
    ...summarizeTool(view, machineMemoryHold()),
    allowedModes: view.allowedModes,
    checks: (assessment?.checks ?? []).map((check) => ({ key: check.key, outcome: check.outcome, rule: check.rule ?? null, text: check.text })),
    keys: describePolicy(config.policy.enforced),
    shadowKeys,
    ...(args === undefined ? {} : { arguments: checkArguments(config, view, args, principal ?? null) }),
    ...(principal === undefined ? {} : { principal: explainPrincipal(config, view, principal) }),
  };
}

function explainPrincipal(config: HostConfig, view: ToolView, name: string): NonNullable<Explanation['principal']> {
  const decision = decideForPrincipal(config.session.principalRules ?? [], view.manifest.name, name);
  if (decision.effect === 'deny') return { name, decision: 'deny', rule: decision.rule, reason: decision.reason };
  return { name, decision: 'allow', rule: null, reason: null };
}

function checkArguments(config: HostConfig, view: ToolView, args: unknown, principal: string | null): NonNullable<Explanation['arguments']> {
  const validate = view.manifest.validateInput;
  const valid = validate(args) === true;
  // Copy the errors at once: the compiled validator reuses its errors array.
  const errors = valid ? [] : (validate.errors ?? []).map((error) => ({ path: error.instancePath || '/', message: error.message ?? 'is invalid' }));
  if (!valid) {
    const mode = config.session.onInvalidArguments;
    return { valid, errors, outcome: 'invalid_arguments', rule: config.policy.enforced.onInvalidArguments.source.rule + ` (${mode})`, reason: null, rules: [] };
  }
  // The decision `serve` enforces for this call: the tool's (policy/tool-decision.ts), tightened by its rules on arguments.
  const { effect, rule, reason } = readToolDecision(view);
  const scope = view.rules;
  if (scope === undefined || effect === 'deny') return { valid, errors, outcome: effect === 'allow' ? 'run' : effect, rule, reason, rules: [] };
  const callArgs = args as Readonly<Record<string, unknown>>;
  const rows = traceRules(scope, callArgs, principal).map((trace): RuleRow => ({
    rule: trace.rule.ref,
    file: trace.rule.file,
    line: trace.rule.line,
    layer: trace.rule.layer,
    shadow: trace.rule.shadow,
    effect: trace.rule.effect,
    when: trace.rule.when,
    applies: trace.applies,
    matched: trace.matched,
    failure: trace.failure === undefined ? null : `${trace.failure}: ${trace.detail ?? ''}`,
  }));
  const verdict = evaluateRules(scope, callArgs, principal);
  const shadow = evaluateShadowRules(scope, callArgs, principal);
  const shadowNote = shadow.effect === 'deny' ? `; a shadow rule would deny (${shadow.rule.ref}), not enforced` : '';
  if (verdict.effect === 'deny') {
    const why =
      verdict.failure === undefined ? `the arguments match rule ${verdict.rule.name}` : `rule ${verdict.rule.name} cannot be evaluated (${verdict.failure}), so it denies`;
    return { valid, errors, outcome: 'deny', rule: verdict.rule.ref, reason: why, rules: rows };
  }
  if (verdict.effect === 'ask' && effect === 'allow')
    return { valid, errors, outcome: 'ask', rule: verdict.rule.ref, reason: `the arguments match rule ${verdict.rule.name}${shadowNote}`, rules: rows };
  return {
    valid,
    errors,
    outcome: effect === 'allow' ? 'run' : effect,
    rule,
    reason: reason === null ? (shadowNote === '' ? null : shadowNote.slice(2)) : reason + shadowNote,
    rules: rows,
  };
}

function parseArguments(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`JSON arguments do not parse: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError('JSON arguments must be an object');
  return value;
}

/** The explanation for a person at a terminal. */
export function renderExplanation(e: Explanation, terminal: TableOptions = { tty: true }): string {
  // The tables are indented by two columns, and stay aligned in a pipe too (this is a report, not a list).
  const table = { tty: true, ...(terminal.width !== undefined ? { width: terminal.width - 2 } : {}) };
  const lines: string[] = [];
  lines.push(`${e.name} (${e.file})`);
  lines.push(`  class     ${classLabel(e)}`);
  if (e.upstream?.readOnlyEnforced === false) {
    lines.push(`            the server runs as one process (instances: one) with its declared access: the read_only class is declared, not enforced by the operating system`);
  }
  lines.push(`  sandbox   ${sandboxLabel(e)}; trust ${e.trust === 'first_party' ? 'first party' : 'community'}; allowed modes: ${e.allowedModes.join(', ') || 'none'}`);
  lines.push(`  listed    ${e.listed ? 'yes' : e.excluded ? 'no (excluded: conflicts with the policy as declared)' : 'no (denied)'}`);
  lines.push(`  decision  ${describeDecision(e.decision, e.code, e.reason)}`);
  if (e.rule) lines.push(`  rule      ${e.rule}`);
  if (e.shadow) lines.push(`  shadow    would ${e.shadow.decision}: ${e.shadow.reason} (${e.shadow.rule}); not enforced`);
  lines.push(`  limits    timeoutMs ${e.limits.timeoutMs}, maxResultBytes ${e.limits.maxResultBytes}, memoryMb ${e.limits.memoryMb} (${describeMemory(e.memory)})`);
  if (e.principal) {
    const p = e.principal;
    lines.push(`  principal ${p.name}: ${p.decision === 'allow' ? 'allowed (no principals: rule takes this tool away)' : `denied: ${p.reason ?? ''} (${p.rule ?? ''})`}`);
  }
  if (e.arguments) {
    const a = e.arguments;
    lines.push('', `Arguments: ${a.valid ? 'valid' : 'invalid'}`);
    for (const error of a.errors) lines.push(`  ${error.path}: ${error.message}`);
    lines.push(`  a call would: ${describeOutcome(a.outcome)}${a.rule ? ` (${a.rule})` : ''}`);
    if (a.rules.length > 0) {
      lines.push('', 'Rules on arguments for this tool:');
      lines.push(indent(formatTable(['RESULT', 'EFFECT', { header: 'RULE', wrap: true }, { header: 'WHEN', wrap: true }], a.rules.map(ruleRow), table)));
    }
  }
  lines.push('', 'Checks for this tool:');
  lines.push(
    indent(
      formatTable(
        ['OUTCOME', 'KEY', { header: 'WHY', wrap: true }, { header: 'RULE', wrap: true }],
        e.checks.map((c) => [c.outcome, c.key, c.text, c.rule ?? '-']),
        table,
      ),
    ),
  );
  lines.push('Policy keys (every layer that sets a key; STATUS says which value is in force):');
  lines.push(indent(formatTable(KEY_COLUMNS, e.keys.map(keyRow), table)));
  if (e.shadowKeys.length > 0) {
    lines.push('Shadow-mode keys (organisation files in mode: shadow; reported, not enforced):');
    lines.push(indent(formatTable(KEY_COLUMNS, e.shadowKeys.map(keyRow), table)));
  }
  return `${lines.join('\n')}\n`;
}

function ruleRow(row: RuleRow): string[] {
  const result = !row.applies ? 'not for this caller' : row.failure !== null ? `cannot evaluate (${row.failure}): denies` : row.matched ? 'matched' : 'not matched';
  return [row.shadow ? `${result} (shadow)` : result, row.effect, row.rule, row.when];
}

const KEY_COLUMNS = ['KEY', { header: 'VALUE', wrap: true }, 'LAYER', { header: 'STATUS', wrap: true }, { header: 'RULE', wrap: true }];

function keyRow(row: KeyRow): string[] {
  return [row.key, JSON.stringify(row.value), row.layer, statusOf(row), row.rule];
}

// The value in force is marked, and so are the rows it overrode (--json names what overrode each) and entries that add nothing.
function statusOf(row: KeyRow): string {
  if (row.status === 'overridden') return 'overridden';
  if (row.noEffect !== undefined && row.noEffect.length > 0) return `in force; no effect: ${row.noEffect.map((value) => JSON.stringify(value)).join(', ')}`;
  return 'in force';
}

function describeDecision(decision: string, code: string | null, reason: string | null): string {
  if (decision === 'allow') return 'allow';
  if (decision === 'ask') return `ask for approval: ${reason ?? ''}`;
  return `deny (${code ?? 'policy_denied'}): ${reason ?? ''}`;
}

function describeOutcome(outcome: string): string {
  switch (outcome) {
    case 'run':
      return 'run';
    case 'ask':
      return 'ask for approval, then run';
    case 'deny':
      return 'be refused';
    default:
      return 'be refused with invalid_arguments';
  }
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')
    .concat('\n');
}
