// Parses a model's emitted call (JSON, XML or p-type) back into
// {name, arguments}, coercing text by the input schema and refusing anything
// ambiguous. The result is NOT trusted: it goes through the same checks as any
// tools/call (lookup, schema, policy, approval).
import { asRecord } from '../config/guards.js';
import { findTool, ParseError, parametersOf, typesOf, type FormatName, type FormatTool, type ParsedCall } from './declaration.js';
import { parseXml, type XmlElement } from './xml.js';

/** Emissions larger than this are refused before parsing. */
const MAX_EMISSION_BYTES = 1024 * 1024;

export function detectFormat(text: string): FormatName {
  const start = text.trimStart();
  if (start.startsWith('{')) return 'json';
  if (start.startsWith('<')) return 'xml';
  if (/^[a-z][a-z0-9_]*\s*\(/.test(start)) return 'ptype';
  throw new ParseError('no call found: expected a JSON object, an XML element or name(arguments)');
}

/** One call out of `text`; `format` defaults to the one the text looks like. */
export function parseCall(text: string, tools: readonly FormatTool[], format: FormatName = detectFormat(text)): ParsedCall {
  if (Buffer.byteLength(text, 'utf8') > MAX_EMISSION_BYTES) throw new ParseError(`emission larger than ${MAX_EMISSION_BYTES} bytes`);
  switch (format) {
    case 'json':
      return parseJsonCall(text, tools);
    case 'xml':
      return parseXmlCall(text, tools);
    case 'ptype':
      return parsePtypeCall(text, tools);
  }
}

function parseJsonCall(text: string, tools: readonly FormatTool[]): ParsedCall {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ParseError('not one JSON value (extra text, or invalid JSON)');
  }
  const outer = asRecord(value);
  // Accept {name, arguments} and the function-call envelope {type: "function", function: {name, arguments}}.
  const call = 'function' in outer ? asRecord(outer['function']) : outer;
  const extra = Object.keys(call).filter((key) => key !== 'name' && key !== 'arguments');
  if (extra.length > 0) throw new ParseError(`unexpected key "${extra[0]}": expected {"name", "arguments"}`);
  if (typeof call['name'] !== 'string') throw new ParseError('"name" must be a string');
  const tool = findTool(tools, call['name']);
  let args = call['arguments'] ?? {};
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      throw new ParseError('"arguments" is a string that is not JSON');
    }
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new ParseError('"arguments" must be an object');
  return { name: tool.name, arguments: args as Record<string, unknown> };
}

function parseXmlCall(text: string, tools: readonly FormatTool[]): ParsedCall {
  const root = parseXml(text);
  const tool = findTool(tools, root.name);
  if (!root.hasElements && root.text.trim() !== '') throw new ParseError(`<${root.name}> must hold one element per argument`);
  return { name: tool.name, arguments: coerceObject(root.children, tool.inputSchema, root.name) };
}

function coerceObject(children: readonly XmlElement[], schema: Readonly<Record<string, unknown>>, where: string): Record<string, unknown> {
  const properties = asRecord(schema['properties']);
  const groups = new Map<string, XmlElement[]>();
  for (const child of children) groups.set(child.name, [...(groups.get(child.name) ?? []), child]);
  const result: Record<string, unknown> = {};
  for (const [name, elements] of groups) {
    const propertySchema = asRecord(properties[name]);
    const types = typesOf(propertySchema);
    if (elements.length > 1) {
      // Repeated elements are an array's items, and only where the schema says array.
      if (!types.includes('array')) throw new ParseError(`<${name}> repeated in <${where}> but it is not an array`);
      result[name] = elements.map((element) => coerceElement(element, asRecord(propertySchema['items']), name));
    } else {
      result[name] = coerceElement(elements[0] as XmlElement, propertySchema, `${where}.${name}`);
    }
  }
  return result;
}

function coerceElement(element: XmlElement, schema: Readonly<Record<string, unknown>>, where: string): unknown {
  const types = typesOf(schema);
  if (element.hasElements) {
    if (types.includes('array') && element.children.every((child) => child.name === 'item')) {
      return element.children.map((child) => coerceElement(child, asRecord(schema['items']), `${where}[]`));
    }
    if (types.includes('object') || types.length === 0) return coerceObject(element.children, schema, where);
    throw new ParseError(`<${element.name}> holds elements but ${where} is ${types.join(' | ')}`);
  }
  return coerceText(element.text, types, where);
}

/** Text to the one type the schema allows; several plausible readings are refused as ambiguous. */
function coerceText(raw: string, types: readonly string[], where: string): unknown {
  if (types.length === 0 || (types.length === 1 && types[0] === 'string')) return raw;
  const text = raw.trim();
  const readings: unknown[] = [];
  for (const type of types) {
    if ((type === 'number' || type === 'integer') && text !== '' && Number.isFinite(Number(text))) {
      const number = Number(text);
      if (type === 'number' || Number.isInteger(number)) readings.push(number);
    } else if (type === 'boolean' && (text === 'true' || text === 'false')) {
      readings.push(text === 'true');
    } else if (type === 'null' && (text === '' || text === 'null')) {
      readings.push(null);
    } else if (type === 'string') {
      readings.push(raw);
    } else if (type === 'array' && text === '') {
      readings.push([]);
    } else if (type === 'object' && text === '') {
      readings.push({});
    }
  }
  const distinct = readings.filter((value, index) => readings.findIndex((other) => Object.is(other, value) || JSON.stringify(other) === JSON.stringify(value)) === index);
  if (distinct.length === 0) throw new ParseError(`${where}: "${bounded(text)}" is not ${types.join(' | ')}`);
  if (distinct.length > 1) throw new ParseError(`${where}: "${bounded(text)}" is ambiguous (${types.join(' | ')})`);
  return distinct[0];
}

function parsePtypeCall(text: string, tools: readonly FormatTool[]): ParsedCall {
  const trimmed = text.trim();
  const open = trimmed.indexOf('(');
  if (open < 0 || !trimmed.endsWith(')')) throw new ParseError('expected name(arguments) and nothing after it');
  const name = trimmed.slice(0, open).trim();
  const tool = findTool(tools, name);
  const parts = splitArguments(trimmed.slice(open + 1, -1));
  const params = parametersOf(tool);
  const args: Record<string, unknown> = {};
  let sawKeyword = false;
  parts.forEach((part, index) => {
    const keyword = /^([A-Za-z_][A-Za-z0-9_]*)\s*[=:]\s*([\s\S]*)$/.exec(part);
    if (keyword) {
      sawKeyword = true;
      const key = keyword[1] as string;
      if (key in args) throw new ParseError(`argument "${key}" given twice`);
      args[key] = readLiteral(keyword[2] as string, key);
    } else {
      if (sawKeyword) throw new ParseError('a positional argument after a keyword argument');
      const param = params[index];
      if (!param) throw new ParseError(`${name} takes at most ${params.length} arguments, got ${parts.length}`);
      args[param.name] = readLiteral(part, param.name);
    }
  });
  return { name: tool.name, arguments: args };
}

/** Splits on top-level commas, honouring quotes and brackets. */
function splitArguments(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let current = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (quote) {
      current += ch;
      if (ch === '\\') current += body[++i] ?? '';
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '[' || ch === '{' || ch === '(') depth++;
    else if (ch === ']' || ch === '}' || ch === ')') depth--;
    if (depth < 0) throw new ParseError('unbalanced brackets in the arguments');
    if (ch === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else {
      current += ch;
    }
  }
  if (quote) throw new ParseError('unclosed string in the arguments');
  if (depth !== 0) throw new ParseError('unbalanced brackets in the arguments');
  if (current.trim() !== '') parts.push(current.trim());
  else if (parts.length > 0) throw new ParseError('empty argument after a comma');
  return parts;
}

/** A JSON literal, or a single-quoted string as models often write. */
function readLiteral(text: string, where: string): unknown {
  const value = text.trim();
  if (/^'(?:[^'\\]|\\.)*'$/.test(value)) {
    return JSON.parse(`"${value.slice(1, -1).replace(/\\'/g, "'").replace(/"/g, '\\"')}"`);
  }
  try {
    return JSON.parse(value);
  } catch {
    throw new ParseError(`${where}: ${bounded(value)} is not a literal (quote strings)`);
  }
}

function bounded(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
