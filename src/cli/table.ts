// Columns for people and for scripts: an aligned table with a header on a
// terminal, tab-separated lines (header first) otherwise, so `cut -f` works.

/** Renders rows under `headers`; `tty` chooses aligned columns over tabs. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[], tty: boolean): string {
  if (!tty) return [headers, ...rows].map((row) => row.map(sanitize).join('\t')).join('\n') + '\n';
  const widths = headers.map((header, index) => Math.max(header.length, ...rows.map((row) => sanitize(row[index] ?? '').length)));
  const line = (row: readonly string[]): string =>
    row
      .map((cell, index) => (index === row.length - 1 ? sanitize(cell) : sanitize(cell).padEnd(widths[index] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n') + '\n';
}

// A tab or newline inside a cell would break the columns; manifests are not trusted to avoid them.
function sanitize(cell: string): string {
  return cell.replace(/[\t\r\n\u0000-\u001f\u007f]/g, ' ');
}
