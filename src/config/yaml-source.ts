// YAML parsed with positions, so every problem can be reported as
// file:line:col. Duplicate keys are a parse error (a typo must never be
// silently resolved by "last one wins").
//
// Two parsers: `yaml` keeps every node's position and is the one that defines
// what a file means and says what is wrong with it, but it costs about a
// millisecond per small manifest (half the start-up of a host with a thousand
// tools). js-yaml, several times faster, reads the plain files most are: no
// anchors, aliases, tags, directives, complex keys or tabs, and plain scalars
// resolved by the same JSON Schema core rules as `yaml` (the types below). Its
// data is used as it is; the positional parse runs only when a problem needs
// a line. Anything else, and any file js-yaml refuses (a duplicate key among
// them), goes to `yaml` alone, so its errors are the ones reported.
import { readFileSync } from 'node:fs';
import * as jsYaml from 'js-yaml';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { Problem } from './problem.js';

export type YamlPath = readonly (string | number)[];

interface Position {
  readonly line: number;
  readonly col: number;
}

/** One parsed YAML file: its plain data and a way back from a data path to a line. */
export interface YamlSource {
  readonly file: string;
  readonly data: unknown;
  /** Where the value at `path` starts (the nearest existing ancestor when it is absent). */
  positionOf(path: YamlPath): Position;
  /** Where the key at `path` is written (for "unknown key" problems); falls back to the value. */
  keyPositionOf(path: YamlPath): Position;
  problemAt(path: YamlPath, reason: string, at?: 'key' | 'value'): Problem;
}

type ParseResult = { readonly ok: true; readonly source: YamlSource } | { readonly ok: false; readonly problems: Problem[] };

const START: Position = { line: 1, col: 1 };

/** Reads and parses one YAML file; I/O errors become problems at 1:1. */
export function readYamlFile(file: string, displayName = file): ParseResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? `cannot read file (${String(error.code)})` : 'cannot read file';
    return { ok: false, problems: [{ file: displayName, ...START, reason }] };
  }
  return parseYamlText(text, displayName);
}

export function parseYamlText(text: string, file: string): ParseResult {
  const data = fastData(text);
  if (data !== undefined) return { ok: true, source: lazySource(file, text, data) };
  return parsePositional(text, file);
}

function positionalDocument(text: string): { doc: Document; lineCounter: LineCounter } {
  const lineCounter = new LineCounter();
  return { doc: parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true }), lineCounter };
}

function parsePositional(text: string, file: string): ParseResult {
  const { doc, lineCounter } = positionalDocument(text);
  const errors = [...doc.errors];
  if (errors.length > 0) {
    return {
      ok: false,
      problems: errors.map((error) => {
        // linePos is only filled with prettyErrors; the offset is always there.
        const pos = error.linePos?.[0] ?? lineCounter.linePos(error.pos[0]);
        const what = error.code === 'DUPLICATE_KEY' ? 'duplicate key' : 'invalid YAML';
        return { file, line: pos.line, col: pos.col, reason: `${what}: ${firstLine(error.message)}` };
      }),
    };
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  return { ok: true, source: makeSource(file, doc, data, lineCounter) };
}

// The data of a plain file by js-yaml, or undefined for `yaml` to parse.
function fastData(text: string): unknown {
  if (NOT_PLAIN.test(text)) return undefined;
  let data: unknown;
  try {
    data = JS_YAML.load(text, { schema: CORE_SCHEMA });
  } catch {
    return undefined;
  }
  // An empty file is undefined here and null in `yaml`; keys need the same care (below).
  return data !== undefined && plainKeys(data) ? data : undefined;
}

/** Anchors and aliases (`yaml` bounds their expansion), tags, directives, complex and collection keys, tabs, reserved indicators. */
const NOT_PLAIN = /[&*!%@`\t]|^\s*\?|[\]}] *:|__proto__/m;

// js-yaml turns every key into a string; `yaml` turns a null, boolean or number
// key into a string its own way. Such keys are left to `yaml`.
function plainKeys(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (Array.isArray(value)) return value.every(plainKeys);
  for (const [key, child] of Object.entries(value)) {
    if (CORE_SCALARS.some((type) => type.test.test(key)) || !plainKeys(child)) return false;
  }
  return true;
}

/** js-yaml's own surface, as this module uses it (the package ships no types). */
interface JsYaml {
  load(text: string, options: { schema: unknown }): unknown;
  FAILSAFE_SCHEMA: { extend(types: { implicit: unknown[] }): unknown };
  Type: new (tag: string, options: { kind: 'scalar'; resolve: (data: string | null) => boolean; construct: (data: string | null) => unknown }) => unknown;
}

// Imported, not required: its ES module build is what scripts/bundle.mjs can bundle.
const JS_YAML = jsYaml as unknown as JsYaml;

// The plain scalars of YAML 1.2's core schema exactly as `yaml` resolves them
// (its schema/core: null, bool, int in base 8, 10 and 16, float), in its order;
// whatever matches none is a string.
const CORE_SCALARS: readonly { readonly tag: string; readonly test: RegExp; readonly value: (text: string) => unknown }[] = [
  { tag: 'null', test: /^(?:~|[Nn]ull|NULL)?$/, value: () => null },
  { tag: 'bool', test: /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, value: (text) => text[0] === 't' || text[0] === 'T' },
  { tag: 'int', test: /^0o[0-7]+$/, value: (text) => parseInt(text.substring(2), 8) },
  { tag: 'int', test: /^[-+]?[0-9]+$/, value: (text) => parseInt(text, 10) },
  { tag: 'int', test: /^0x[0-9a-fA-F]+$/, value: (text) => parseInt(text.substring(2), 16) },
  {
    tag: 'float',
    test: /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
    value: (text) => (text.slice(-3).toLowerCase() === 'nan' ? NaN : text[0] === '-' ? -Infinity : Infinity),
  },
  { tag: 'float', test: /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, value: (text) => parseFloat(text) },
  { tag: 'float', test: /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, value: (text) => parseFloat(text) },
];

// One js-yaml type per tag (a later type of the same tag would replace an earlier one).
const CORE_SCHEMA = JS_YAML.FAILSAFE_SCHEMA.extend({
  implicit: ['null', 'bool', 'int', 'float'].map((tag) => {
    const scalars = CORE_SCALARS.filter((scalar) => scalar.tag === tag);
    const matching = (text: string) => scalars.find((scalar) => scalar.test.test(text));
    return new JS_YAML.Type(`tag:yaml.org,2002:${tag}`, {
      kind: 'scalar',
      resolve: (data) => matching(data ?? '') !== undefined,
      construct: (data) => matching(data ?? '')?.value(data ?? ''),
    });
  }),
});

// Positions of a file js-yaml read: the positional parse runs on the first question.
function lazySource(file: string, text: string, data: unknown): YamlSource {
  let positional: YamlSource | undefined;
  const located = (): YamlSource => {
    if (positional === undefined) {
      const { doc, lineCounter } = positionalDocument(text);
      positional = makeSource(file, doc, data, lineCounter);
    }
    return positional;
  };
  return {
    file,
    data,
    positionOf: (path) => located().positionOf(path),
    keyPositionOf: (path) => located().keyPositionOf(path),
    problemAt: (path, reason, at) => located().problemAt(path, reason, at),
  };
}

function makeSource(file: string, doc: Document, data: unknown, lineCounter: LineCounter): YamlSource {
  const at = (offset: number | undefined): Position => (offset === undefined ? START : lineCounter.linePos(offset));
  const find = (path: YamlPath, wantKey: boolean): Position => {
    let node: unknown = doc.contents;
    let position = at((doc.contents as Node | null)?.range?.[0]);
    for (const segment of path) {
      if (isMap(node)) {
        const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && item.key.value === segment);
        if (!pair) return position;
        const keyNode = pair.key as Node;
        const valueNode = pair.value as Node | null;
        position = at(wantKey && segment === path[path.length - 1] ? keyNode.range?.[0] : (valueNode?.range?.[0] ?? keyNode.range?.[0]));
        node = valueNode;
      } else if (isSeq(node) && typeof segment === 'number') {
        const item = node.items[segment] as Node | undefined;
        if (!item) return position;
        position = at(item.range?.[0]);
        node = item;
      } else {
        return position;
      }
    }
    return position;
  };
  return {
    file,
    data,
    positionOf: (path) => find(path, false),
    keyPositionOf: (path) => find(path, true),
    problemAt(path, reason, where = 'value') {
      const pos = where === 'key' ? find(path, true) : find(path, false);
      return { file, line: pos.line, col: pos.col, reason };
    },
  };
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}
