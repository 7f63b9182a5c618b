// A supervisor double for protocol tests (unit scope: no real host behind it):
// one scripted behaviour per tool name, every request recorded; and the
// in-process protocol layer (boundary transport + SDK server) in front of it.
import { HostError } from '../../src/errors.js';
import { createSilentLogger } from '../../src/log.js';
import { serveToolhost, type ToolhostServer } from '../../src/protocol/server.js';
import { BoundaryStdioTransport, ProtocolOutput } from '../../src/protocol/stdio.js';
import { openCallSession, type CallSession } from '../../src/supervisor/call-session.js';
import type { CallOutcome, CallRequest, Supervisor, ToolDeclaration } from '../../src/supervisor/types.js';
import { createStreamPair } from './mcp-clients.js';

export const SCRIPTED_TOOLS: ToolDeclaration[] = [
  {
    name: 'echo',
    description: 'Echo the arguments back.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    terminal: false,
  },
  {
    name: 'write_note',
    description: 'Needs approval.',
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    terminal: false,
  },
];

/** The call's signal as a stage would see it: its control's (made when read). */
export function signalOf(request: CallRequest): AbortSignal {
  return request.control.signal;
}

/** A supervisor double that scripts one behaviour per tool name and records every request. */
export class ScriptedSupervisor implements Supervisor {
  readonly requests: CallRequest[] = [];
  readonly session = {
    maxCallsPerSession: 100,
    maxConcurrency: 4,
    maxConsecutiveFailures: 20,
    onUnknownTool: 'protocol_error',
    onInvalidArguments: 'error_result',
    secretNames: [],
  } as const;
  closed = false;
  /** Resolves when a `wait` call has started (its progress was emitted). */
  waitStarted!: Promise<void>;
  private markWaitStarted!: () => void;

  constructor() {
    this.waitStarted = new Promise((resolve) => (this.markWaitStarted = resolve));
  }

  listTools(): readonly ToolDeclaration[] {
    return SCRIPTED_TOOLS;
  }

  openSession(principal: string): CallSession {
    return openCallSession(principal, this.session);
  }

  async callTool(request: CallRequest): Promise<CallOutcome> {
    this.requests.push(request);
    const callId = `c${this.requests.length}`;
    request.onEvent?.({ type: 'tool.started', callId, tool: request.name });
    switch (request.name) {
      case 'echo':
        request.onEvent?.({ type: 'tool.completed', callId, tool: request.name, durationMs: 1 });
        return { kind: 'result', callId, content: [{ type: 'text', text: JSON.stringify(request.args) }], structuredContent: { echoed: request.args ?? {} } };
      case 'steps':
        request.onProgress?.({ progress: 1, total: 2 });
        request.onProgress?.({ progress: 2, total: 2 });
        return { kind: 'result', callId, content: [{ type: 'text', text: 'stepped' }] };
      case 'wait':
        request.onProgress?.({ progress: 1, total: 2, message: 'half' });
        request.onProgress?.({ progress: 1, total: 2, message: 'not increasing: dropped' });
        this.markWaitStarted();
        await new Promise<void>((resolve) => signalOf(request).addEventListener('abort', () => resolve(), { once: true }));
        return { kind: 'error', callId, error: new HostError('cancelled', 'The call was cancelled.', { reason: String(signalOf(request).reason?.details?.reason ?? 'client') }) };
      case 'rich':
        // Every block kind but text: the fast path hands these to the SDK's codec.
        return {
          kind: 'result',
          callId,
          content: [
            { type: 'text', text: 'see below' },
            { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
            { type: 'resource_link', uri: 'toolhost://artifacts/abc', name: 'artifact', mimeType: 'text/plain', size: 14 },
            { type: 'resource', resource: { uri: 'toolhost://artifacts/def', mimeType: 'text/plain', text: 'inline' } },
          ],
          meta: { 'toolhost/hostOnly': { kept: true } },
        };
      case 'text_first':
        // A text block whose keys come in the other order: zod rewrites it as type, text.
        return { kind: 'result', callId, content: [{ text: 'reordered', type: 'text' } as never] };
      case 'bad_result':
        // A block no MCP schema accepts: the SDK answers -32602 "Invalid tools/call result".
        return { kind: 'result', callId, content: [{ type: 'bogus', text: 'x' } as never] };
      case 'internal':
        return { kind: 'error', callId, error: new HostError('internal', 'Something broke inside the host.', {}) };
      case 'tool_error':
        return { kind: 'error', callId, error: new HostError('tool_error', 'The tool failed.', { exitCode: 3 }) };
      case 'throws':
        throw new Error('a supervisor bug');
      case 'write_note':
        return this.approve(request, callId);
      default:
        return { kind: 'error', callId, error: new HostError('unknown_tool', 'No such tool.', { available: SCRIPTED_TOOLS.map((tool) => tool.name) }) };
    }
  }

  private async approve(request: CallRequest, callId: string): Promise<CallOutcome> {
    const deny = (code: 'approval_denied' | 'approval_required') => ({ kind: 'error' as const, callId, error: new HostError(code, 'Not approved.', {}) });
    const ok = { kind: 'result' as const, callId, content: [{ type: 'text' as const, text: 'written' }] };
    const approves = (answer: unknown) =>
      typeof answer === 'object' &&
      answer !== null &&
      (answer as { action?: unknown }).action === 'accept' &&
      (answer as { content?: { approve?: unknown } }).content?.approve === true;
    if (request.approval.kind === 'none') return deny('approval_required');
    if (request.approval.kind === 'elicitation') {
      const answer = await request.approval.elicit({ message: 'Allow write_note?', tool: 'write_note', sideEffect: 'destructive' }, signalOf(request));
      return approves(answer) ? ok : deny('approval_denied');
    }
    if (request.requestState === undefined) return { kind: 'input_required', callId, requestState: 'state-1', message: 'Allow write_note?' };
    return request.requestState === 'state-1' && approves(request.approvalAnswer) ? ok : deny('approval_denied');
  }

  async readArtifact(uri: string) {
    return uri === 'toolhost://artifacts/abc' ? { mimeType: 'text/plain', bytes: new TextEncoder().encode('the whole text') } : undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** The protocol layer in process: the real boundary transport and SDK server over a stream pair, this double behind it. */
export interface ScriptedServer {
  readonly supervisor: ScriptedSupervisor;
  readonly server: ToolhostServer;
  /** Every line the server wrote, in order. */
  readonly lines: string[];
  readonly pair: ReturnType<typeof createStreamPair>;
  write(line: string | Buffer): void;
}

export function startScriptedServer(options: { coalesceMs?: number; maxMessageBytes?: number; callFastPath?: boolean } = {}): ScriptedServer {
  const supervisor = new ScriptedSupervisor();
  const pair = createStreamPair(options.coalesceMs !== undefined ? { coalesceMs: options.coalesceMs } : {});
  const logger = createSilentLogger();
  const output = new ProtocolOutput(pair.serverOutput, logger);
  const transport = new BoundaryStdioTransport({ input: pair.serverInput, output, maxMessageBytes: options.maxMessageBytes ?? 4096, logger });
  const server = serveToolhost(transport, {
    supervisor,
    logger,
    serverInfo: { name: 'toolhost', version: 'test' },
    ...(options.callFastPath !== undefined ? { callFastPath: options.callFastPath } : {}),
  });
  const lines: string[] = [];
  let buffered = '';
  pair.serverOutput.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
  });
  return { supervisor, server, lines, pair, write: (line) => pair.serverInput.write(line) };
}
