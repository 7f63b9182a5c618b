// `toolhost/render` and `toolhost/parse` (SPEC section 9): tool declarations
// for models without native tool calls, and their emitted calls read back.
// The tools are the ones the supervisor in force lists. A parsed call is never
// run here: the client sends it as an ordinary tools/call, which goes through
// every check (lookup, schema, policy, approval).
import { ProtocolError, type Server, type StandardSchemaV1 } from '@modelcontextprotocol/server';
import { FORMAT_NAMES, ParseError, type FormatName, type FormatTool } from '../formats/declaration.js';
import { parseCall } from '../formats/parse.js';
import { renderTools } from '../formats/render.js';
import type { Supervisor } from '../supervisor/types.js';
import type { RegisterMethods } from './server.js';
import { errorData } from '../errors.js';
import { JSONRPC_INVALID_PARAMS } from './jsonrpc-codes.js';

/** JSON-RPC "invalid params": a refused emission or bad params, with data {code: 'malformed_request', reason}. */

const RENDER_METHOD = 'toolhost/render';
const PARSE_METHOD = 'toolhost/parse';

/** Registers both methods on one server instance. */
export const registerFormatMethods: RegisterMethods = (server, context) => {
  register(server, RENDER_METHOD, (params) => renderResult(params, context.supervisor()));
  register(server, PARSE_METHOD, (params) => parseResult(params, context.supervisor()));
};

/** `{format?}` → `{format, text}` over the listed tools (default format json). */
function renderResult(params: unknown, supervisor: Supervisor): { format: FormatName; text: string } {
  const record = paramsRecord(params, ['format']);
  const format = formatParam(record['format']) ?? 'json';
  return { format, text: renderTools(formatToolsOf(supervisor), format) };
}

/** `{text, format?}` → `{name, arguments}`; a refused emission is a -32602 error saying why. */
function parseResult(params: unknown, supervisor: Supervisor): { name: string; arguments: Record<string, unknown> } {
  const record = paramsRecord(params, ['text', 'format']);
  const text = record['text'];
  if (typeof text !== 'string') throw malformed('"text" must be a string holding the emitted call');
  const format = formatParam(record['format']);
  try {
    const call = parseCall(text, formatToolsOf(supervisor), format);
    return { name: call.name, arguments: call.arguments };
  } catch (error) {
    if (error instanceof ParseError) throw malformed(error.reason);
    throw error;
  }
}

// Params are parsed by the handler itself, so every refusal has the same shape
// (the SDK's own schema failure would carry no `data.code`).
const ANY_PARAMS: StandardSchemaV1<unknown, unknown> = {
  '~standard': { version: 1, vendor: 'toolhost', validate: (value) => ({ value }) },
};

function register(server: Server, method: string, handle: (params: unknown) => Record<string, unknown>): void {
  server.setRequestHandler(method, { params: ANY_PARAMS }, async (params) => handle(params));
}

function formatToolsOf(supervisor: Supervisor): FormatTool[] {
  return supervisor.listTools().map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema, terminal: tool.terminal }));
}

/** The params object (absent = `{}`), with `_meta` ignored and any other unknown key refused. */
function paramsRecord(params: unknown, known: readonly string[]): Record<string, unknown> {
  if (params === undefined || params === null) return {};
  if (typeof params !== 'object' || Array.isArray(params)) throw malformed('params must be an object');
  const record = params as Record<string, unknown>;
  const unknown = Object.keys(record).find((key) => key !== '_meta' && !known.includes(key));
  if (unknown !== undefined) throw malformed(`unknown parameter "${unknown.slice(0, 64)}"; expected ${known.join(', ')}`);
  return record;
}

function formatParam(value: unknown): FormatName | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (FORMAT_NAMES as readonly string[]).includes(value)) return value as FormatName;
  throw malformed(`"format" must be one of ${FORMAT_NAMES.join(', ')}`);
}

function malformed(reason: string): ProtocolError {
  return new ProtocolError(JSONRPC_INVALID_PARAMS, `Invalid params: ${reason}`, errorData('malformed_request', { reason }));
}
