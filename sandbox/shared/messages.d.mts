// The messages that cross between the host and the far side (the isolate
// process over frames, worker threads through Piscina and their channels): plain,
// structured-cloneable data. No Error object, no function, no host reference
// crosses a thread, isolate or process boundary. Both sides import these types;
// the host's in-process runner interface is src/runner/run-types.ts.

export interface ProgressEvent {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export type ToolLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** A ctx.fs or ctx.fetch attempt refused by the sandbox's own checks (journaled by the supervisor). */
export interface SandboxDenial {
  readonly op: string;
  readonly target: string;
  readonly reason: string;
}

/** One attempt to reach the network (the egress proxy or ctx.fetch), admitted or refused. */
export interface EgressAttempt {
  /**
   * `connect`: a CONNECT tunnel; `http`: a plain-HTTP request through the proxy; `tcp`: a TCP client's
   * direct connection to an allowed destination (bridged); `fetch`: ctx.fetch; `malformed`: no usable request.
   */
  readonly kind: 'connect' | 'http' | 'tcp' | 'fetch' | 'malformed';
  /** Canonical when admitted; as the tool wrote it (bounded) when refused. */
  readonly host: string;
  readonly port: number | null;
  readonly method: string | null;
  readonly admitted: boolean;
  /** A stable code when refused (host_not_allowed, address_loopback, method_not_allowed_for_class, …). */
  readonly reason: string | null;
  /** The address connected to, when admitted. */
  readonly address: string | null;
  /** What the refusal saw, when there is more to say than the reason (the HTTP parser's error code). */
  readonly detail?: string;
}

// ---------------------------------------------------------------------------
// The isolate process (sandbox/isolate/isolate-process.mjs): frames over its
// stdin and stdout (sandbox/shared/frames.mjs). Headers are JSON; `body` marks
// what travels as the frame's raw body. Every string the far side sends is cut
// to the bound of ISOLATE_WIRE_LIMITS (sandbox/shared/limits.mjs) before it is
// framed, and the host checks each field again on arrival.
// ---------------------------------------------------------------------------

/** The isolate process's configuration, sent once after its start gate opens. */
export interface IsolateInitMessage {
  readonly type: 'init';
  readonly toolName: string;
  /** Absolute path of isolated-vm's main file (CommonJS), bound read-only in the sandbox. */
  readonly ivmPath: string;
  readonly entryPath: string;
  readonly preludePath: string;
  readonly memoryMb: number;
  readonly floodCapBytes: number;
  /** Most isolates (and so concurrent calls) the process runs; more calls queue there. */
  readonly maxIsolates: number;
  readonly roots: readonly { readonly path: string; readonly access: 'read' | 'read_write' }[];
  readonly protectedPaths: readonly string[];
  readonly hiddenPaths: readonly string[];
  /** The tool's class: a read_only tool's ctx.fetch may only send GET, HEAD and OPTIONS. */
  readonly sideEffect?: string;
  /**
   * A tool with a network allow list: ctx.fetch goes out through the egress proxy at `proxyUrl`
   * (the bridge of the process's grant), admitted by name against `allow` first. Absent: no network.
   */
  readonly egress?: { readonly proxyUrl: string; readonly allow: readonly string[] };
  /** The host records stage times (the bench): each result then says where its call's time went (`times`). */
  readonly stageTimes?: boolean;
}

/** One call; `id` names it on this channel until its `result`. */
export interface IsolateRunMessage {
  readonly type: 'run';
  readonly id: number;
  readonly callId: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly timeoutMs: number;
  /** The call's token at the egress proxy (its grant's openCall): each of its requests carries it. */
  readonly egressToken?: string;
  /** When the host sent it, in µs of the machine's monotonic clock, while stage times are recorded. */
  readonly sentAtUs?: number;
}

/** The host gave up on call `id` (deadline or cancel): its isolate is disposed, then `stopped`. */
export interface IsolateStopMessage {
  readonly type: 'stop';
  readonly id: number;
}

export type HostToIsolateMessage = IsolateInitMessage | IsolateRunMessage | IsolateStopMessage;

/**
 * How call `id` ended over there. `envelope`: the prelude's answer (read by
 * parseToolEnvelope; a successful result's JSON is the frame's body); `ivm_error`:
 * an isolated-vm failure, classified by the host (isolate-errors.ts); `load_error`:
 * the tool module did not compile or link.
 */
export type IsolateResultMessage =
  | {
      readonly type: 'result';
      readonly id: number;
      readonly kind: 'envelope';
      readonly envelope: Readonly<Record<string, unknown>>;
      /** Where the call's time went over there, when init asked for stage times. */
      readonly times?: IsolateStageTimes;
    }
  | {
      readonly type: 'result';
      readonly id: number;
      readonly kind: 'ivm_error';
      /** Where it failed: preparing a context, evaluating the module's top level, or running the call. */
      readonly stage: 'prepare' | 'evaluate' | 'run';
      readonly message: string;
      readonly isolateDisposed: boolean;
      readonly hostDisposeReason?: 'retired' | 'wedged' | 'closed';
    }
  | { readonly type: 'result'; readonly id: number; readonly kind: 'load_error'; readonly message: string };

/**
 * One call's time in the isolate process, in microseconds: `slotUs` from its run frame to
 * a prepared context of its own, `runUs` the tool's run in it (arguments in, result out),
 * `encodeUs` its result's JSON encoded to the bytes that cross; `inboundUs` from the host's
 * `sentAtUs` to the call's start here (the pipe, the frame's decoding, a busy event loop);
 * `sentAtUs` when the result was sent, on the machine's monotonic clock as the host's.
 */
export interface IsolateStageTimes {
  readonly slotUs: number;
  readonly runUs: number;
  readonly encodeUs: number;
  readonly inboundUs: number;
  readonly sentAtUs: number;
}

/** A ctx.fetch refused in the isolate process before any connection (the proxy reports the others). */
export interface IsolateEgressMessage {
  readonly type: 'egress';
  readonly id: number;
  readonly host: string;
  readonly port: number | null;
  readonly method: string | null;
  readonly reason: string;
}

export type IsolateToHostMessage =
  /** isolated-vm, the prelude and the tool's module compiled and linked (our code only); its top level runs next. */
  | { readonly type: 'loaded' }
  /** Loaded and warm (the top level ran ahead, or timed out and runs in each call): the first call will find a context prepared. */
  | { readonly type: 'ready' }
  /** The process could not start (the tool's entry file cannot be read, say): `reason` is bounded, free of file names. */
  | { readonly type: 'start_failed'; readonly reason: string }
  | IsolateResultMessage
  | { readonly type: 'stopped'; readonly id: number }
  | { readonly type: 'progress'; readonly id: number; readonly progress: number; readonly total?: number; readonly message?: string }
  | { readonly type: 'log'; readonly id: number; readonly level: ToolLogLevel; readonly message: string }
  | { readonly type: 'denied'; readonly id: number; readonly op: string; readonly target: string; readonly reason: string }
  | IsolateEgressMessage;

// ---- host ↔ worker threads (sandbox/worker/worker-entry.mjs, through Piscina) ----

/** What every call of one worker tool shares: Piscina's workerData, sent once per thread. */
export interface WorkerPoolData {
  readonly entryPath: string;
  readonly roots: ReadonlyArray<{ readonly path: string; readonly access: 'read' | 'read_write' }>;
  readonly protectedPaths?: readonly string[];
  readonly hiddenPaths?: readonly string[];
  readonly networkAllow: readonly string[];
  readonly sideEffect?: string;
  readonly floodCapBytes: number;
  /** The BroadcastChannel name of this pool's events (both directions). */
  readonly eventChannel: string;
  /** The start gates of the calls handed to the pool (src/runner/worker/call-gates.ts): one Int32 per task. */
  readonly gates: SharedArrayBuffer;
  readonly gateMarks: WorkerGateMarks;
}

/** The values a start gate takes besides a task's ticket (a positive int32). */
export interface WorkerGateMarks {
  /** The host withdrew the call before its thread began it: the thread skips it. */
  readonly withdrawn: number;
  /** The thread finished the call (the host may still be told its answer). */
  readonly done: number;
  /** The host is ending the thread running the call: it begins nothing more. */
  readonly killing: number;
  /** Begun on thread t: the gate holds `startedBase - t`. */
  readonly startedBase: number;
}

/** One call, as posted on its thread's lane; the thread begins it only if it wins the gate at `slot` from `ticket`. */
export interface WorkerTask {
  readonly callId: string;
  readonly args: unknown;
  readonly slot: number;
  readonly ticket: number;
}

/**
 * Worker thread → host, on the lane: the answer to the call of gate `slot`/`ticket` (its
 * envelope, or WorkerWithdrawnAnswer), or `failed` when the thread could not run it.
 */
export type WorkerLaneAnswer =
  | { readonly slot: number; readonly ticket: number; readonly answer: unknown; readonly failed?: undefined }
  | { readonly slot: number; readonly ticket: number; readonly failed: true; readonly answer?: undefined };

/** The worker thread's answer for a call the host withdrew before it began: never shown to anyone. */
export interface WorkerWithdrawnAnswer {
  readonly withdrawn: true;
}

/** Host → worker thread, on the pool's channel: stop this call. */
export interface WorkerAbortMessage {
  readonly type: 'abort';
  readonly callId: string;
}

/** Worker thread → host, on the pool's channel, each tagged with its call. */
export type WorkerEventMessage = { readonly callId: string } & (
  | { readonly type: 'progress'; readonly progress: number; readonly total?: number; readonly message?: string }
  | { readonly type: 'log'; readonly level: ToolLogLevel; readonly message: string }
  | { readonly type: 'denied'; readonly denial: SandboxDenial }
);

/** What a receiver says of a message it cannot read: the sender broke the protocol. */
export interface ProtocolViolation {
  readonly type: 'violation';
  /** A short sentence for the host's log, free of the message's content. */
  readonly reason: string;
}
