// serve's answer to a legacy `initialize` before the host and the MCP SDK have
// loaded (stdio-early.ts). It must be the answer the SDK Server gives later,
// byte for byte in meaning, so it is given only to an opening `initialize`
// whose every part the SDK is known to accept: a plain JSON-RPC request with
// the three params the schema names, a clientInfo of strings, and only the
// client capabilities whose shape is checked here. Anything else (a `_meta`,
// icons, the tasks capability, a modern envelope) waits for the SDK, which then
// answers it as it always did. The SDK still sees the request once the host is
// ready (its client capabilities and negotiated version matter to approvals);
// its own answer to it is dropped then, after a comparison (stdio.ts).
import { isRecord } from '../config/guards.js';
import { scanJson } from './json-scan.js';
import { MAX_MESSAGE_DEPTH } from './message-limits.js';
import { LEGACY_PROTOCOL_VERSIONS, SERVER_CAPABILITIES, SERVER_INSTRUCTIONS } from './server-identity.js';

/** The name and version serve gives as its serverInfo. */
export interface ServerIdentity {
  readonly name: string;
  readonly version: string;
}

/** The answer to an opening `initialize`, and the request's id. */
export interface EarlyInitialize {
  readonly id: string | number;
  readonly response: { readonly jsonrpc: '2.0'; readonly id: string | number; readonly result: InitializeResult };
}

interface InitializeResult {
  readonly protocolVersion: string;
  readonly capabilities: typeof SERVER_CAPABILITIES;
  readonly serverInfo: ServerIdentity;
  readonly instructions: string;
}

/** An `initialize` line longer than this is left to the SDK: real ones are a few hundred bytes. */
const MAX_EARLY_LINE_BYTES = 64 * 1024;

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The answer to `line` when it is an `initialize` the SDK would answer the same way; else undefined. */
export function answerInitializeEarly(line: Uint8Array, serverInfo: ServerIdentity, maxMessageBytes: number): EarlyInitialize | undefined {
  if (line.byteLength > Math.min(MAX_EARLY_LINE_BYTES, maxMessageBytes)) return undefined;
  let text: string;
  try {
    text = STRICT_UTF8.decode(line);
  } catch {
    return undefined;
  }
  // The boundary's raw checks (boundary.ts): a line they would refuse is not answered here.
  const scan = scanJson(text, MAX_MESSAGE_DEPTH);
  if (!scan.ok || scan.topLevel !== 'object' || scan.maxDepth > MAX_MESSAGE_DEPTH || scan.duplicateKey !== undefined || scan.protoKey !== undefined) return undefined;
  const message: unknown = JSON.parse(text);
  if (!isRecord(message) || !hasOnlyKeys(message, REQUEST_KEYS) || message['jsonrpc'] !== '2.0' || message['method'] !== 'initialize') return undefined;
  const id = message['id'];
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  const params = message['params'];
  if (!isRecord(params) || !hasOnlyKeys(params, PARAMS_KEYS)) return undefined;
  const { protocolVersion, capabilities, clientInfo } = params;
  if (typeof protocolVersion !== 'string' || !isPlainClientInfo(clientInfo) || !isPlainCapabilities(capabilities)) return undefined;
  const result: InitializeResult = {
    // The SDK Server's rule: the client's revision when it is a legacy one it supports, else its newest.
    protocolVersion: LEGACY_PROTOCOL_VERSIONS.includes(protocolVersion) ? protocolVersion : LEGACY_PROTOCOL_VERSIONS[0]!,
    capabilities: SERVER_CAPABILITIES,
    serverInfo: { name: serverInfo.name, version: serverInfo.version },
    instructions: SERVER_INSTRUCTIONS,
  };
  return { id, response: { jsonrpc: '2.0', id, result } };
}

const REQUEST_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS: ReadonlySet<string> = new Set(['protocolVersion', 'capabilities', 'clientInfo']);
const CLIENT_INFO_KEYS: ReadonlySet<string> = new Set(['name', 'title', 'version', 'websiteUrl', 'description']);

function hasOnlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  return Object.keys(value).every((key) => allowed.has(key));
}

/** name and version, and the optional title, websiteUrl and description: all strings. */
function isPlainClientInfo(value: unknown): boolean {
  if (!isRecord(value) || !hasOnlyKeys(value, CLIENT_INFO_KEYS)) return false;
  if (typeof value['name'] !== 'string' || typeof value['version'] !== 'string') return false;
  return ['title', 'websiteUrl', 'description'].every((key) => value[key] === undefined || typeof value[key] === 'string');
}

/** The client capabilities whose schema is plain enough to check here; any other key waits for the SDK. */
function isPlainCapabilities(value: unknown): boolean {
  if (!isRecord(value)) return false;
  return Object.entries(value).every(([key, capability]) => CAPABILITY_CHECKS[key]?.(capability) === true);
}

const CAPABILITY_CHECKS: Readonly<Record<string, (value: unknown) => boolean>> = {
  experimental: isRecordOfRecords,
  extensions: isRecordOfRecords,
  roots: (value) => isRecord(value) && hasOnlyKeys(value, new Set(['listChanged'])) && (value['listChanged'] === undefined || typeof value['listChanged'] === 'boolean'),
  sampling: (value) => isRecord(value) && hasOnlyKeys(value, new Set(['context', 'tools'])) && Object.values(value).every(isRecord),
  elicitation: (value) =>
    isRecord(value) &&
    hasOnlyKeys(value, new Set(['form', 'url'])) &&
    Object.values(value).every(isRecord) &&
    (!isRecord(value['form']) || value['form']['applyDefaults'] === undefined || typeof value['form']['applyDefaults'] === 'boolean'),
};

function isRecordOfRecords(value: unknown): boolean {
  return isRecord(value) && Object.values(value).every(isRecord);
}
