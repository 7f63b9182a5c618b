// Columns for people and for scripts. On a terminal: aligned columns under a
// header that fit its width, by wrapping the columns of free text (rules,
// reasons) onto more lines and leaving out columns that say nothing (every cell
// empty or "-"); names, ids and codes are never cut, since a cut name cannot be
// copied into the next command. In a pipe: tab-separated lines, header first,
// so `cut -f` works. Widths are display columns (string-width), so CJK text and
// emoji in a tool's description keep the columns straight.
import stringWidth from 'string-width';

export interface Column {
  readonly header: string;
  /**
   * Free text (a rule, a reason) that gives way first on a narrow terminal: it wraps
   * onto more lines, and where even that leaves it too narrow it moves to a line of
   * its own under the row. Never cut.
   */
  readonly wrap?: boolean;
  /** May be left out, with a note saying so, when the table cannot fit otherwise (--json has every field). */
  readonly optional?: boolean;
  /** right: numbers. Default left. */
  readonly align?: 'left' | 'right';
}

export interface TableOptions {
  /** Aligned columns (a terminal) or tab-separated lines (a pipe). */
  readonly tty: boolean;
  /** The terminal's width in columns; default unlimited. */
  readonly width?: number;
}

/** A wrapped column narrower than this is read more easily on a line of its own. */
const MIN_WRAP_WIDTH = 20;
const GAP = '  ';
const DETAIL_INDENT = '    ';

/** How stdout is to be written: a terminal and its width, or a pipe. */
export function tableOptionsFor(stream: NodeJS.WriteStream = process.stdout): TableOptions {
  const tty = stream.isTTY === true;
  // A terminal that reports no size (0 or undefined) is treated as unlimited rather than 0 wide.
  return tty && stream.columns > 0 ? { tty, width: stream.columns } : { tty };
}

/** Renders rows under the columns; `options` true/false is shorthand for {tty}. */
export function formatTable(columns: readonly (string | Column)[], rows: readonly (readonly string[])[], options: boolean | TableOptions): string {
  const { tty, width = Infinity } = typeof options === 'boolean' ? { tty: options } : options;
  const specs: Column[] = columns.map((column) => (typeof column === 'string' ? { header: column } : column));
  const cells = rows.map((row) => specs.map((_, index) => sanitize(row[index] ?? '')));
  if (!tty) return [specs.map((spec) => sanitize(spec.header)), ...cells].map((row) => row.join('\t')).join('\n') + '\n';

  const layout = planLayout(specs, cells, width);
  const lines: string[] = [];
  const emit = (row: readonly string[], isHeader: boolean): void => {
    const wrapped = layout.shown.map((index, at) => wrapCell(row[index] ?? '', layout.widths[at]!));
    const height = Math.max(...wrapped.map((part) => part.length));
    for (let line = 0; line < height; line += 1) {
      const parts = layout.shown.map((index, at) => pad(wrapped[at]![line] ?? '', layout.widths[at]!, specs[index]!.align ?? 'left', at === layout.shown.length - 1));
      lines.push(parts.join(GAP).trimEnd());
    }
    if (isHeader) return;
    for (const index of layout.detached) {
      const text = row[index] ?? '';
      if (isEmpty(text)) continue;
      const label = `${DETAIL_INDENT}${specs[index]!.header.toLowerCase()}: `;
      wrapCell(text, Math.max(MIN_WRAP_WIDTH, width - stringWidth(label))).forEach((part, at) => lines.push(`${at === 0 ? label : ' '.repeat(stringWidth(label))}${part}`));
    }
  };
  emit(
    specs.map((spec) => spec.header),
    true,
  );
  lines.push(layout.widths.map((columnWidth) => '-'.repeat(columnWidth)).join(GAP));
  for (const row of cells) emit(row, false);
  if (layout.dropped.length > 0) lines.push(`(${layout.dropped.map((index) => specs[index]!.header).join(', ')} left out to fit ${width} columns; --json has every field)`);
  return `${lines.join('\n')}\n`;
}

interface Layout {
  /** Column indexes shown side by side, and their widths. */
  readonly shown: number[];
  readonly widths: number[];
  /** Wrap columns printed on lines of their own under each row. */
  readonly detached: number[];
  /** Optional columns left out. */
  readonly dropped: number[];
}

// Gives way in steps until the table fits: columns with nothing to say (every cell
// empty or "-") go, free text wraps, then moves under its row, then optional
// columns go (right first). What still does not fit overflows: nothing is cut.
function planLayout(specs: readonly Column[], cells: readonly (readonly string[])[], width: number): Layout {
  let shown = specs.map((_, index) => index);
  const fits = (widths: readonly number[]): boolean => total(widths) <= width;
  let widths = naturalWidths(specs, cells, shown);
  if (fits(widths)) return { shown, widths, detached: [], dropped: [] };
  shown = shown.filter((index) => cells.some((row) => !isEmpty(row[index] ?? '')));
  widths = naturalWidths(specs, cells, shown);
  // Free text moves under its row one column at a time, the rightmost first, while the rest still wrap.
  const detached: number[] = [];
  for (;;) {
    widths = naturalWidths(specs, cells, shown);
    if (
      shrinkWrapColumns(
        shown.map((index) => specs[index]!),
        widths,
        width,
      )
    )
      return { shown, widths, detached, dropped: [] };
    const last = [...shown].reverse().find((index) => specs[index]!.wrap === true);
    if (last === undefined) break;
    detached.unshift(last);
    shown = shown.filter((index) => index !== last);
  }
  const dropped: number[] = [];
  widths = naturalWidths(specs, cells, shown);
  for (const index of [...shown].reverse()) {
    if (fits(widths)) break;
    if (specs[index]!.optional !== true) continue;
    dropped.unshift(index);
    shown = shown.filter((kept) => kept !== index);
    widths = naturalWidths(specs, cells, shown);
  }
  return { shown, widths, detached, dropped };
}

function naturalWidths(specs: readonly Column[], cells: readonly (readonly string[])[], shown: readonly number[]): number[] {
  return shown.map((index) => Math.max(stringWidth(specs[index]!.header), ...cells.map((row) => stringWidth(row[index] ?? ''))));
}

function total(widths: readonly number[]): number {
  return widths.reduce((sum, columnWidth) => sum + columnWidth, 0) + GAP.length * Math.max(0, widths.length - 1);
}

// Takes one column at a time from the widest wrap column until the table fits
// (true) or every wrap column is at its minimum (false).
function shrinkWrapColumns(specs: readonly Column[], widths: number[], width: number): boolean {
  const floor = (at: number): number => Math.max(MIN_WRAP_WIDTH, stringWidth(specs[at]!.header));
  let excess = total(widths) - width;
  while (excess > 0) {
    let widest = -1;
    for (let at = 0; at < specs.length; at += 1) {
      if (specs[at]!.wrap === true && widths[at]! > floor(at) && (widest === -1 || widths[at]! > widths[widest]!)) widest = at;
    }
    if (widest === -1) return false;
    widths[widest]! -= 1;
    excess -= 1;
  }
  return true;
}

/**
 * The cell as lines of at most `columnWidth` display columns: broken at spaces, and a
 * word longer than a line after a '/', ':', '.', ',', '-' or '_' where it can be (a
 * path or a rule name stays readable), else between characters.
 */
function wrapCell(text: string, columnWidth: number): string[] {
  if (stringWidth(text) <= columnWidth) return [text];
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter((part) => part !== '')) {
    const joined = line === '' ? word : `${line} ${word}`;
    if (stringWidth(joined) <= columnWidth) {
      line = joined;
      continue;
    }
    if (line !== '') lines.push(line);
    line = '';
    let rest = word;
    while (stringWidth(rest) > columnWidth) {
      const [head, tail] = splitWord(rest, columnWidth);
      lines.push(head);
      rest = tail;
    }
    line = rest;
  }
  if (line !== '') lines.push(line);
  return lines;
}

const SEGMENTER = new Intl.Segmenter();

// The longest head of `word` within `columnWidth`, ending after a separator when one is in it.
function splitWord(word: string, columnWidth: number): [string, string] {
  let head = '';
  let lastBreak = -1;
  for (const { segment } of SEGMENTER.segment(word)) {
    if (stringWidth(head + segment) > columnWidth) break;
    head += segment;
    if ('/:.,-_'.includes(segment)) lastBreak = head.length;
  }
  // A grapheme wider than the column still has to go somewhere: one per line.
  if (head === '') head = [...SEGMENTER.segment(word)][0]?.segment ?? word;
  const cut = lastBreak > 0 && lastBreak < word.length ? lastBreak : head.length;
  return [word.slice(0, cut), word.slice(cut)];
}

function pad(text: string, columnWidth: number, align: 'left' | 'right', isLast: boolean): string {
  const room = Math.max(0, columnWidth - stringWidth(text));
  if (align === 'right') return ' '.repeat(room) + text;
  return isLast ? text : text + ' '.repeat(room);
}

function isEmpty(cell: string): boolean {
  return cell === '' || cell === '-';
}

// A tab, a newline or an escape sequence inside a cell would break the columns or
// drive the terminal; manifests, policies and callers are not trusted to avoid them.
function sanitize(cell: string): string {
  // eslint-disable-next-line no-control-regex
  return cell.replace(/[\t\r\n\u0000-\u001f\u007f-\u009f]/g, ' ');
}
