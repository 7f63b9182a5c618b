// The contract between the protocol layer (src/protocol) and the supervisor:
// what the server hands in for one tools/call and what it gets back. The
// protocol layer owns MCP shapes; the supervisor owns every decision.
import type { HostError } from '../errors.js';
import type { ProgressEvent } from '../runner/run-types.js';

/** How the host may ask the client for an approval (SPEC section 6). */
export type ApprovalChannel =
  /** Legacy era and the client declared elicitation: send elicitation/create. */
  | { readonly kind: 'elicitation'; elicit(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ElicitAnswer> }
  /** Modern era: answer input_required with a signed requestState; the client retries with it. */
  | { readonly kind: 'input_required' }
  /** The client cannot be asked: approval_required. */
  | { readonly kind: 'none' };

export interface ApprovalPrompt {
  /** Bounded, control characters escaped. */
  readonly message: string;
  readonly tool: string;
  readonly sideEffect: string;
}

/** What came back from elicitation/create, unparsed: the supervisor decides if it approves. */
export type ElicitAnswer = { readonly action: string; readonly content?: unknown } | { readonly error: string };

export interface CallRequest {
  readonly name: string;
  /** Untrusted: validated by the supervisor. `undefined` means `{}`. */
  readonly args: unknown;
  /** The request's `_meta` (idempotencyKey, progressToken, requestState...). */
  readonly meta: Readonly<Record<string, unknown>>;
  /**
   * The call's one termination control, built by whoever starts the call (the protocol
   * layer's door, `toolhost call`) and following the request's cancel: the supervisor
   * stops it on shutdown, arms its deadline in the run stage and disposes it when the call is over.
   */
  readonly control: import('./call-control.js').CallControl;
  readonly approval: ApprovalChannel;
  /** A signed approval state sent back by a modern client (input_required retry). */
  readonly requestState?: string;
  /**
   * The client's answer to the approval question of an input_required round, sent with
   * `requestState` on a modern retry (`inputResponses.approve`, unparsed). Absent when the
   * retry carried no answer: that is not an approval.
   */
  readonly approvalAnswer?: ElicitAnswer;
  readonly onProgress?: (event: ProgressEvent) => void;
  /**
   * Who calls: the session the call counts against (budget, failure run, terminal: SPEC 5.2),
   * with an HTTP principal's own slots. Absent: the supervisor's own session and slots (stdio).
   */
  readonly caller?: import('./call-session.js').Caller;
  /** Stage spans and the call span (SPEC section 6.2); absent means none. */
  readonly trace?: import('../telemetry/call-trace.js').CallTrace;
  /** Lifecycle events (tool.started, tool.completed, tool.failed) for the client's log stream. */
  readonly onEvent?: (event: LifecycleEvent) => void;
}

export interface LifecycleEvent {
  readonly type: 'tool.started' | 'tool.completed' | 'tool.failed';
  readonly callId: string;
  readonly tool: string;
  readonly code?: string;
  readonly durationMs?: number;
}

/** MCP content blocks the supervisor produces (plain data the SDK accepts as is). */
export type ContentBlock =
  | { readonly type: 'text'; readonly text: string }
  /** `data` is base64 that decodes; `mimeType` is on the allowlist (tool-output-parts.ts). */
  | { readonly type: 'image' | 'audio'; readonly data: string; readonly mimeType: string }
  | {
      readonly type: 'resource';
      readonly resource: { readonly uri: string; readonly mimeType: string; readonly text: string } | { readonly uri: string; readonly mimeType: string; readonly blob: string };
    }
  | {
      readonly type: 'resource_link';
      readonly uri: string;
      readonly name: string;
      readonly mimeType: string;
      readonly size?: number;
      readonly description?: string;
    };

export type CallOutcome =
  | {
      readonly kind: 'result';
      readonly callId: string;
      readonly content: readonly ContentBlock[];
      /** Only for object results within the byte limit. */
      readonly structuredContent?: Readonly<Record<string, unknown>>;
      /** The result's `_meta`: `toolhost/hostOnly` (SPEC 5.1), `toolhost/terminal` (SPEC 5.2). */
      readonly meta?: Readonly<Record<string, unknown>>;
    }
  /** Modern era: approval needed, ask the client to retry with this state. */
  | { readonly kind: 'input_required'; readonly callId: string; readonly requestState: string; readonly message: string }
  /** Any refusal or failure; the protocol layer renders it per ERRORS[code].surface. */
  | { readonly kind: 'error'; readonly callId: string; readonly error: HostError };

/** A tool as tools/list shows it: annotations derived from the enforced class and network. */
export interface ToolDeclaration {
  readonly name: string;
  /** An upstream tool's own title (redacted); absent for manifest tools. */
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations: {
    readonly readOnlyHint: boolean;
    readonly destructiveHint: boolean;
    readonly idempotentHint: boolean;
    readonly openWorldHint: boolean;
  };
  /** A success of this tool completes the agent's run (SPEC 5.2); listed as `_meta["toolhost/terminal"]`. */
  readonly terminal: boolean;
  /** An upstream tool's `_meta` as its server listed it (MCP Apps `ui.resourceUri`), bounded and redacted. */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/** What the protocol layer drives. Built by src/host.ts. */
export interface Supervisor {
  /** Listed tools in deterministic (name) order; with a principal, without the tools its `principals:` rules deny. */
  listTools(principal?: string | null): readonly ToolDeclaration[];
  /** A new session for `principal` (HTTP) under the limits in force now. */
  openSession(principal: string): import('./call-session.js').CallSession;
  callTool(request: CallRequest): Promise<CallOutcome>;
  /** `toolhost://artifacts/<sha256>`; undefined when unknown or expired. */
  readArtifact(uri: string): Promise<{ readonly mimeType: string; readonly bytes: Uint8Array } | undefined>;
  /** Session settings the protocol layer needs to shape refusals (onUnknownTool, onInvalidArguments). */
  readonly session: import('../policy/types.js').SessionPolicy;
  /** Cancels in-flight calls, kills every child, closes the journal. Idempotent. */
  close(): Promise<void>;
}
