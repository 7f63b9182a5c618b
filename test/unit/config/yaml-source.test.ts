// A YAML file means the same whichever parser reads it: plain files are read by
// the fast parser, the rest by `yaml`, and both must give `yaml`'s data, refuse
// what `yaml` refuses, and place problems where they are written.
import { LineCounter, parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseYamlText } from '../../../src/config/yaml-source.js';

const SCALARS = ['300', '-12', '+12', '007', '0o17', '-0o17', '0x1F', '-0x1F', '0b101', '1_000', '.5', '+.5', '1.', '1e3', '1.5e+3', '-.inf', '.NaN'];
const WORDS = ['~', '', 'null', 'Null', 'nULL', 'true', 'True', 'tRue', 'Yes', 'on', '2001-12-14', '12:30:00', '"12"', "'it''s'", 'a b # c', '"\\u00e9"'];
const DOCUMENTS = [
  'a: |\n  x\n  y\n\nb: 1\n',
  'a: >-\n  x\n  y\n',
  'a:\n- 1\n- b\n',
  '- - a\n  - b\n- c\n',
  'x: {a: 1, b: [c, 2.5]}\n',
  '1: a\n',
  'true: x\n',
  '[a, b]: c\n',
  '? a\n: b\n',
  'a: &x [1]\nb: *x\n',
  'a: !!str 1\n',
  '# only a comment\n',
  // Hostile spellings the fast parser's plain-file check does not see: an escaped __proto__ key, a merge key.
  '"__pro\\u0074o__":\n  polluted: 1\n',
  '<<: {a: 1}\n',
];

function yamlData(text: string): unknown {
  return parseDocument(text, { lineCounter: new LineCounter(), uniqueKeys: true, prettyErrors: false, strict: true }).toJS({ maxAliasCount: 100 });
}

describe('parseYamlText', () => {
  it("gives yaml's data for plain scalars, keys and documents", () => {
    for (const text of [...[...SCALARS, ...WORDS].map((value) => `k: ${value}\n`), ...DOCUMENTS]) {
      const parsed = parseYamlText(text, 'f.yaml');
      if (!parsed.ok) throw new Error(`refused ${JSON.stringify(text)}`);
      expect(parsed.source.data, JSON.stringify(text)).toStrictEqual(yamlData(text));
    }
    // An escaped __proto__ key is an own key of the data, never the prototype of every object.
    expect((Object.prototype as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('refuses a duplicate key and invalid YAML with their positions', () => {
    expect(parseYamlText('a: 1\nb: 2\na: 3\n', 'f.yaml')).toMatchObject({
      ok: false,
      problems: [{ file: 'f.yaml', line: 3, col: 1, reason: expect.stringMatching(/^duplicate key/) }],
    });
    // The same key written two ways is still a duplicate.
    expect(parseYamlText('"a": 1\n"\\x61": 2\n', 'f.yaml')).toMatchObject({ ok: false, problems: [{ line: 2, reason: expect.stringMatching(/^duplicate key/) }] });
    expect(parseYamlText('a: "open\n', 'f.yaml')).toMatchObject({ ok: false, problems: [{ reason: expect.stringMatching(/^invalid YAML/) }] });
  });

  it('places a problem of a plain file at its key and value', () => {
    const parsed = parseYamlText('name: x\nsandbox:\n  mode: isolate\n  memoryMb:   64\n', 'f.yaml');
    if (!parsed.ok) throw new Error('refused');
    expect(parsed.source.positionOf(['sandbox', 'memoryMb'])).toEqual({ line: 4, col: 15 });
    expect(parsed.source.problemAt(['sandbox', 'mode'], 'why', 'key')).toEqual({ file: 'f.yaml', line: 3, col: 3, reason: 'why' });
  });
});
