import { describe, expect, it } from 'vitest';
import { formatTable } from '../../../src/cli/table.js';

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
