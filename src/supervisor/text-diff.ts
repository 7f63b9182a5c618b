// The unified diff an approver reads (SPEC section 5 step 6): jsdiff's line
// diff, bounded in the work it may do on the host's event loop (edit length
// and time) and in what it returns (lines and characters), since both texts
// come from the caller or the workspace.
import { createTwoFilesPatch } from 'diff';

/**
 * Most changed lines the diff algorithm may consider before it gives up (work bound:
 * measured, jsdiff gives up on 20,000 wholly changed lines in about 55 ms at 300).
 */
export const MAX_EDIT_LINES = 300;
/** Time the diff may take before it gives up (a backstop of the edit bound), in ms. */
const MAX_DIFF_TIME_MS = 100;
/** Lines of diff kept for people. */
export const MAX_DIFF_LINES = 200;
/** Characters of diff kept for people. */
const MAX_DIFF_CHARS = 16_000;
/** Characters of one diff line kept (a minified file is one long line). */
const MAX_DIFF_LINE_CHARS = 1000;

type TextDiff =
  | { readonly ok: true; readonly diff: string; readonly added: number; readonly removed: number; readonly truncated: boolean }
  | { readonly ok: false; readonly reason: 'too_different' };

/** The unified diff of `before` → `after`, labelled `a/<label>` and `b/<label>` (`/dev/null` for a new file). */
export function diffTexts(label: string, before: string | null, after: string): TextDiff {
  if (before === null) return newFileDiff(label, after);
  const patch = createTwoFilesPatch(`a/${label}`, `b/${label}`, before, after, undefined, undefined, {
    context: 3,
    maxEditLength: MAX_EDIT_LINES,
    timeout: MAX_DIFF_TIME_MS,
  });
  if (patch === undefined) return { ok: false, reason: 'too_different' };
  // jsdiff opens with a line of `=` (its "Index" separator): not part of a unified diff.
  const lines = patch.split('\n').filter((line, index) => !(index === 0 && /^=+$/.test(line)));
  if (lines[lines.length - 1] === '') lines.pop();
  let added = 0;
  let removed = 0;
  for (const line of lines.slice(2)) {
    if (line.startsWith('+')) added++;
    else if (line.startsWith('-')) removed++;
  }
  const { text, truncated } = boundLines(lines);
  return { ok: true, diff: text, added, removed, truncated };
}

// A new file is all additions: written out directly, so a long one costs only the lines kept
// (jsdiff spends ~0.4 s on 30,000 added lines).
function newFileDiff(label: string, after: string): TextDiff {
  const lines = after.split('\n');
  const endsWithNewline = lines[lines.length - 1] === '';
  if (endsWithNewline) lines.pop();
  const added = lines.length;
  const shown = lines.slice(0, MAX_DIFF_LINES + 1).map((line) => `+${line}`);
  if (!endsWithNewline && shown.length === added) shown.push('\\ No newline at end of file');
  const { text, truncated } = boundLines(['--- /dev/null', `+++ b/${label}`, `@@ -0,0 +1,${added} @@`, ...shown], added - Math.min(added, shown.length));
  return { ok: true, diff: text, added, removed: 0, truncated };
}

// Whole lines up to both bounds, then one line that says how many were left out.
function boundLines(lines: readonly string[], notGiven = 0): { text: string; truncated: boolean } {
  const kept: string[] = [];
  let chars = 0;
  for (const whole of lines) {
    const line = whole.length > MAX_DIFF_LINE_CHARS ? `${whole.slice(0, MAX_DIFF_LINE_CHARS)}… [${whole.length - MAX_DIFF_LINE_CHARS} more characters]` : whole;
    if (kept.length >= MAX_DIFF_LINES || chars + line.length + 1 > MAX_DIFF_CHARS) break;
    kept.push(line);
    chars += line.length + 1;
  }
  if (kept.length === lines.length && notGiven <= 0) return { text: kept.join('\n'), truncated: false };
  kept.push(`… ${lines.length - kept.length + Math.max(0, notGiven)} more lines of the diff left out`);
  return { text: kept.join('\n'), truncated: true };
}
