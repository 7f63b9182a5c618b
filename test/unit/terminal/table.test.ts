import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { formatTable } from '../../../src/terminal/table.js';

describe('formatTable', () => {
  const rows = [
    ['read_file', 'read_only', 'yes'],
    ['delete_path', 'destructive', 'no'],
  ];

  it('aligns columns under a header and a rule on a terminal', () => {
    expect(formatTable(['NAME', 'CLASS', 'LISTED'], rows, true).split('\n')).toEqual([
      'NAME         CLASS        LISTED',
      '-----------  -----------  ------',
      'read_file    read_only    yes',
      'delete_path  destructive  no',
      '',
    ]);
  });

  it('prints tab-separated lines, header first, in a pipe', () => {
    expect(formatTable(['NAME', 'CLASS', 'LISTED'], rows, false)).toBe('NAME\tCLASS\tLISTED\nread_file\tread_only\tyes\ndelete_path\tdestructive\tno\n');
  });

  it('keeps a cell with tabs or newlines from breaking the columns', () => {
    expect(formatTable(['A', 'B'], [['x\ty', 'line\nbreak\u001b[31m']], false)).toBe('A\tB\nx y\tline break [31m\n');
  });
});

describe('formatTable on a terminal of a given width', () => {
  const columns = [{ header: 'NAME' }, { header: 'CLASS' }, { header: 'TRUST', optional: true }, { header: 'RULE', wrap: true }];
  const rule = 'policies/org/acme-baseline.yaml:24 sideEffects.requireApproval';
  const rows = [
    ['fs__list_directory_with_sizes', 'read_only', 'community', '-'],
    ['delete_path', 'destructive', 'first party', rule],
  ];

  it('prints every column on one line each when the terminal is wide enough', () => {
    const lines = formatTable(columns, rows, { tty: true, width: 200 }).trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe(`delete_path                    destructive  first party  ${rule}`);
  });

  it('wraps free text at a separator, never cutting a name, and stays within the width', () => {
    const lines = formatTable(columns, rows, { tty: true, width: 90 }).trimEnd().split('\n');
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(90);
    const at = lines[0]!.indexOf('RULE');
    expect(lines.slice(3).map((line) => line.slice(at).trim())).toEqual(['policies/org/acme-baseline.yaml:', '24 sideEffects.requireApproval']);
    expect(lines[3]).toMatch(/^delete_path {2,}destructive/);
  });

  it('moves free text under its row, then leaves out optional columns with a note, at 50 columns', () => {
    const lines = formatTable(columns, rows, { tty: true, width: 50 }).trimEnd().split('\n');
    expect(lines[0]?.split(/\s{2,}/)).toEqual(['NAME', 'CLASS']);
    expect(lines).toContain('    rule: policies/org/acme-baseline.yaml:24');
    expect(lines).toContain('          sideEffects.requireApproval');
    expect(lines.at(-1)).toBe('(TRUST left out to fit 50 columns; --json has every field)');
    expect(
      Math.max(
        ...lines
          .slice(0, -1)
          .filter((line) => !line.startsWith('    rule'))
          .map((line) => line.length),
      ),
    ).toBeLessThanOrEqual(50);
  });

  it('counts display columns, not UTF-16 units, for wide characters', () => {
    const lines = formatTable(
      ['NAME', 'NOTE'],
      [
        ['日本語', 'x'],
        ['ab', 'y'],
      ],
      { tty: true, width: 200 },
    ).split('\n');
    // 日本語 takes six columns: both second cells start at display column 8.
    expect(stringWidth(lines[2]!.slice(0, lines[2]!.indexOf('x')))).toBe(8);
    expect(stringWidth(lines[3]!.slice(0, lines[3]!.indexOf('y')))).toBe(8);
  });
});
