// What the formats need of a tool: its name, description and input schema.
// Shared by rendering and parsing, so both read one schema the same way.
import { asRecord } from '../config/guards.js';

export interface FormatTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /** A success completes the agent's run (SPEC 5.2): every format says so. */
  readonly terminal?: boolean;
}

/** The sentence every format adds to a terminal tool's description, so a model reading any of them knows. */
const TERMINAL_NOTE = 'Terminal: a successful call ends the run; call it last.';

/** The description as a model should read it: with the terminal note for a terminal tool. */
export function describedAs(tool: FormatTool): string {
  return tool.terminal ? `${tool.description} (${TERMINAL_NOTE})` : tool.description;
}

export type FormatName = 'json' | 'xml' | 'ptype';
export const FORMAT_NAMES: readonly FormatName[] = ['json', 'xml', 'ptype'];

/** A parsed call: it still goes through every check of an ordinary tools/call. */
export interface ParsedCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** A refused emission; `reason` says what to fix. */
export class ParseError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'ParseError';
  }
}

interface Parameter {
  readonly name: string;
  readonly schema: Readonly<Record<string, unknown>>;
  readonly required: boolean;
}

/** The top-level parameters in declaration order: required ones first, as signatures show them. */
export function parametersOf(tool: FormatTool): Parameter[] {
  const properties = asRecord(tool.inputSchema['properties']);
  const required = new Set(Array.isArray(tool.inputSchema['required']) ? tool.inputSchema['required'].map(String) : []);
  const all = Object.entries(properties).map(([name, schema]) => ({ name, schema: asRecord(schema), required: required.has(name) }));
  return [...all.filter((p) => p.required), ...all.filter((p) => !p.required)];
}

/** The JSON Schema type names a schema admits ("any" when it does not say). */
export function typesOf(schema: Readonly<Record<string, unknown>>): string[] {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.map(String);
  if (Array.isArray(schema['enum'])) {
    return [...new Set(schema['enum'].map((value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value)))];
  }
  if ('properties' in schema) return ['object'];
  if ('items' in schema) return ['array'];
  return [];
}

export function findTool(tools: readonly FormatTool[], name: string): FormatTool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new ParseError(`unknown tool "${name}"; available: ${tools.map((t) => t.name).join(', ')}`);
  return tool;
}
