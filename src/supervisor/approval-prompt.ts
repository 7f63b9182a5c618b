// The text of an approval prompt (SPEC section 5 step 6): the tool, its class
// and its arguments on one line, then, for a tool that declares what it
// writes, each written path and the diff of a text write. Everything a caller
// or a file controls is escaped line by line (a control character, a bidi
// override or a forged newline shows as an escape), and the whole is bounded.
import type { ProjectedWrite } from '../audit/approval-record.js';
import { escapeForPrompt, escapeHeadAndTail } from './prompt-text.js';

/** Upper bound of the one-line question (characters). */
export const MAX_PROMPT_CHARS = 1000;
/** Upper bound of a prompt with its projected effect (characters). */
export const MAX_PROMPT_WITH_EFFECTS_CHARS = 8000;
const MAX_ARGS_CHARS = 520;
const MAX_EFFECT_LINE_CHARS = 300;

interface PromptFacts {
  readonly tool: string;
  readonly sideEffect: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly argsHash: string;
  readonly reason?: string;
  readonly effects?: readonly ProjectedWrite[];
}

/**
 * The prompt for one call. Long arguments show their head and their tail (a
 * dangerous tail cannot hide behind the cut) with the bytes left out, and the
 * argument hash names them exactly. Lines are separated by `\n`, the only
 * control character the text holds.
 */
export function formatApprovalPrompt(facts: PromptFacts): string {
  const tool = escapeForPrompt(facts.tool, 64);
  const argsText = escapeHeadAndTail(JSON.stringify(facts.args) ?? '{}', MAX_ARGS_CHARS);
  const why = facts.reason ? ` Reason: ${escapeForPrompt(facts.reason, 200)}.` : '';
  const hash = escapeForPrompt(facts.argsHash, 64);
  const question = escapeForPrompt(`Allow the tool ${tool} (${escapeForPrompt(facts.sideEffect, 32)}) to run with arguments ${argsText} (sha256 ${hash})?${why}`, MAX_PROMPT_CHARS);
  const effects = facts.effects ?? [];
  if (effects.length === 0) return question;
  return boundLines([question, ...effects.flatMap(effectLines)], MAX_PROMPT_WITH_EFFECTS_CHARS);
}

/** The lines of one projected write, each escaped and bounded. */
function effectLines(write: ProjectedWrite): string[] {
  const head = `Writes ${escapeForPrompt(write.path ?? `(${write.argument})`, 600)}: ${escapeForPrompt(write.summary, 300)}`;
  const diff = write.diff === null ? [] : write.diff.split('\n').map((line) => escapeForPrompt(line, MAX_EFFECT_LINE_CHARS));
  return [head, ...diff];
}

// Whole lines while they fit, then one that says the rest was left out.
function boundLines(lines: readonly string[], maxChars: number): string {
  const marker = '… (the rest of the projected effect left out)';
  const kept: string[] = [];
  let chars = 0;
  for (const line of lines) {
    if (chars + line.length + 1 > maxChars - marker.length - 1) {
      kept.push(marker);
      break;
    }
    kept.push(line);
    chars += line.length + 1;
  }
  return kept.join('\n');
}
