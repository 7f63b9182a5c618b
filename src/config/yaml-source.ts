// YAML parsed with positions, so every problem can be reported as
// file:line:col. Duplicate keys are a parse error (a typo must never be
// silently resolved by "last one wins").
import { readFileSync } from 'node:fs';
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
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true });
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
