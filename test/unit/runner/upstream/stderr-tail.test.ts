// The last lines of a server's stderr (stderr-tail.ts): oldest first, blank
// lines skipped, each redacted before it is cut, control characters replaced.
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../../../src/supervisor/redact.js';
import { formatStderrLines, lastStderrLines, STDERR_TAIL_LINE_CHARS, STDERR_TAIL_LINES } from '../../../../src/runner/upstream/stderr-tail.js';

describe('lastStderrLines', () => {
  it('keeps the last lines, oldest first, without blank ones or a trailing CR', () => {
    const tail = Array.from({ length: 9 }, (_, i) => `line ${i}\r`).join('\n\n') + '\n\n';
    expect(lastStderrLines(tail)).toEqual(Array.from({ length: STDERR_TAIL_LINES }, (_, i) => `line ${i + 9 - STDERR_TAIL_LINES}`));
  });

  it('redacts a secret before the cut, so a secret across the cut is not left in pieces', () => {
    const secret = 'hunter2-the-secret-value';
    const redact = createRedactor({ secretValues: [secret], visibleRoots: ['/ws'], hostRoots: ['/root'] });
    const line = `${'x'.repeat(STDERR_TAIL_LINE_CHARS - 10)}${secret}`;
    const [shown] = lastStderrLines(line, { redact: (text, max) => redact.cut(text, max) });
    expect(shown).not.toContain('hunter2-th');
    expect(shown?.length).toBeLessThanOrEqual(STDERR_TAIL_LINE_CHARS);
    expect(lastStderrLines(`Error: EROFS: read-only file system, open '/root/.config/x' with ${secret}`, { redact: (text, max) => redact.cut(text, max) })).toEqual([
      "Error: EROFS: read-only file system, open '[path]' with [redacted]",
    ]);
  });

  it('cuts long lines without a redactor and replaces terminal escapes', () => {
    expect(lastStderrLines(`\u001b[2J\u001b]0;title\u0007${'y'.repeat(1000)}`)).toEqual([`\ufffd[2J\ufffd]0;title\ufffd${'y'.repeat(STDERR_TAIL_LINE_CHARS - 14)}`]);
  });

  it('formats the lines as an indented block, nothing when there are none', () => {
    expect(formatStderrLines(['a', 'b'])).toBe('\n    a\n    b');
    expect(formatStderrLines([])).toBe('');
  });
});
