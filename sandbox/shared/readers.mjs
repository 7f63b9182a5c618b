// The receiving side's narrowing of what crossed: a value that arrived from
// the other side of a thread, process or isolate boundary is `unknown` until
// one of these says what it is. Event readers return the typed value (a copy)
// or undefined for a shape they do not know; message readers return the
// message, checked field by field against sandbox/shared/messages.d.mts (the
// value itself: it was just decoded, nobody else holds it), or a
// ProtocolViolation naming what was wrong. Strings are not cut here: the
// receiver cuts each to its bound where it uses it.
// Plain ESM, no imports: both sides load it at run time.

/** @typedef {import('./messages.mjs').ProgressEvent} ProgressEvent */
/** @typedef {import('./messages.mjs').SandboxDenial} SandboxDenial */
/** @typedef {import('./messages.mjs').ToolLogLevel} ToolLogLevel */
/** @typedef {import('./messages.mjs').ProtocolViolation} ProtocolViolation */
/** @typedef {import('./messages.mjs').IsolateToHostMessage} IsolateToHostMessage */
/** @typedef {import('./messages.mjs').HostToIsolateMessage} HostToIsolateMessage */
/** @typedef {import('./messages.mjs').WorkerEventMessage} WorkerEventMessage */
/** @typedef {import('./messages.mjs').WorkerAbortMessage} WorkerAbortMessage */
/** @typedef {import('./messages.mjs').WorkerLaneAnswer} WorkerLaneAnswer */
/** @typedef {import('./messages.mjs').WorkerTask} WorkerTask */

/** The levels of ctx.log; anything else is read as `info`. */
export const TOOL_LOG_LEVELS = Object.freeze(/** @type {const} */ (['debug', 'info', 'warn', 'error']));

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
export function isRecord(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * @param {unknown} value
 * @returns {value is ToolLogLevel}
 */
export function isToolLogLevel(value) {
  return typeof value === 'string' && /** @type {readonly string[]} */ (TOOL_LOG_LEVELS).includes(value);
}

/**
 * A log level as sent; `info` for anything that is not one.
 * @param {unknown} value
 * @returns {ToolLogLevel}
 */
export function readLogLevel(value) {
  return isToolLogLevel(value) ? value : 'info';
}

/**
 * `{ progress, total?, message? }` with a finite progress; a total that is not a finite
 * number and a message that is not a string are left out. Messages are not cut here.
 * @param {unknown} value
 * @returns {ProgressEvent | undefined}
 */
export function readProgress(value) {
  if (!isRecord(value)) return undefined;
  const { progress, total, message } = value;
  if (typeof progress !== 'number' || !Number.isFinite(progress)) return undefined;
  return {
    progress,
    ...(typeof total === 'number' && Number.isFinite(total) ? { total } : {}),
    ...(typeof message === 'string' ? { message } : {}),
  };
}

/**
 * `{ op, target, reason }`, each a string (a field that is not one reads as empty). Not cut here.
 * @param {unknown} value
 * @returns {SandboxDenial | undefined}
 */
export function readDenial(value) {
  if (!isRecord(value)) return undefined;
  const text = (/** @type {unknown} */ field) => (typeof field === 'string' ? field : '');
  return { op: text(value['op']), target: text(value['target']), reason: text(value['reason']) };
}

// ---- messages --------------------------------------------------------------

/**
 * @param {string} reason
 * @returns {ProtocolViolation}
 */
export function violation(reason) {
  return { type: 'violation', reason };
}

/** @param {unknown} value */
const isCallId = (value) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
/** @param {unknown} value */
const isOptional = (value, /** @type {string} */ type) => value === undefined || typeof value === type;
/** @param {unknown} value */
const isStringOrNull = (value) => value === null || typeof value === 'string';
/** @param {unknown} value */
const isStringArray = (value) => Array.isArray(value) && value.every((entry) => typeof entry === 'string');

const NOT_AN_OBJECT = 'a message that is not an object';
const UNKNOWN_TYPE = 'an unknown message type';
const NO_CALL = 'a message for a call that was never started';

/**
 * A frame header from the isolate process. The host still checks that a call id is one it gave out.
 * @param {unknown} value
 * @returns {IsolateToHostMessage | ProtocolViolation}
 */
export function readIsolateMessage(value) {
  if (!isRecord(value)) return violation(NOT_AN_OBJECT);
  const message = /** @type {Record<string, any>} */ (value);
  switch (message['type']) {
    case 'loaded':
    case 'ready':
      return /** @type {IsolateToHostMessage} */ (message);
    case 'start_failed':
      return typeof message['reason'] === 'string' ? /** @type {IsolateToHostMessage} */ (message) : violation('a start failure without a reason');
    default:
      break;
  }
  if (!isCallId(message['id'])) return violation(typeof message['type'] === 'string' ? NO_CALL : UNKNOWN_TYPE);
  switch (message['type']) {
    case 'stopped':
      return /** @type {IsolateToHostMessage} */ (message);
    case 'result':
      return readResult(message);
    case 'progress':
      return typeof message['progress'] === 'number' && isOptional(message['total'], 'number') && isOptional(message['message'], 'string')
        ? /** @type {IsolateToHostMessage} */ (message)
        : violation('a progress message of the wrong shape');
    case 'log':
      return typeof message['level'] === 'string' && typeof message['message'] === 'string'
        ? /** @type {IsolateToHostMessage} */ (message)
        : violation('a log message of the wrong shape');
    case 'denied':
      return typeof message['op'] === 'string' && typeof message['target'] === 'string' && typeof message['reason'] === 'string'
        ? /** @type {IsolateToHostMessage} */ (message)
        : violation('a denial of the wrong shape');
    case 'egress':
      return typeof message['host'] === 'string' &&
        (message['port'] === null || typeof message['port'] === 'number') &&
        isStringOrNull(message['method']) &&
        typeof message['reason'] === 'string'
        ? /** @type {IsolateToHostMessage} */ (message)
        : violation('an egress refusal of the wrong shape');
    default:
      return violation(UNKNOWN_TYPE);
  }
}

const STAGES = ['prepare', 'evaluate', 'run'];
const HOST_DISPOSE_REASONS = ['retired', 'wedged', 'closed'];

/**
 * @param {Record<string, any>} message
 * @returns {IsolateToHostMessage | ProtocolViolation}
 */
function readResult(message) {
  switch (message['kind']) {
    case 'envelope':
      if (!isRecord(message['envelope'])) return violation('a result without its envelope');
      return message['times'] === undefined || isStageTimes(message['times']) ? /** @type {IsolateToHostMessage} */ (message) : violation('stage times of the wrong shape');
    case 'load_error':
      return typeof message['message'] === 'string' ? /** @type {IsolateToHostMessage} */ (message) : violation('a load error without its message');
    case 'ivm_error':
      return typeof message['message'] === 'string' &&
        STAGES.includes(/** @type {string} */ (message['stage'])) &&
        typeof message['isolateDisposed'] === 'boolean' &&
        (message['hostDisposeReason'] === undefined || HOST_DISPOSE_REASONS.includes(/** @type {string} */ (message['hostDisposeReason'])))
        ? /** @type {IsolateToHostMessage} */ (message)
        : violation('an isolated-vm failure of the wrong shape');
    default:
      return violation('a result of an unknown kind');
  }
}

const STAGE_TIME_KEYS = ['slotUs', 'runUs', 'encodeUs', 'inboundUs', 'sentAtUs'];

/** @param {unknown} value */
function isStageTimes(value) {
  return isRecord(value) && STAGE_TIME_KEYS.every((key) => typeof value[key] === 'number' && Number.isFinite(value[key]) && value[key] >= 0);
}

/**
 * A frame header from the host, read by the isolate process.
 * @param {unknown} value
 * @returns {HostToIsolateMessage | ProtocolViolation}
 */
export function readHostToIsolateMessage(value) {
  if (!isRecord(value)) return violation(NOT_AN_OBJECT);
  const message = /** @type {Record<string, any>} */ (value);
  switch (message['type']) {
    case 'init': {
      const egress = message['egress'];
      const fine =
        ['toolName', 'ivmPath', 'entryPath', 'preludePath'].every((key) => typeof message[key] === 'string') &&
        ['memoryMb', 'floodCapBytes', 'maxIsolates'].every((key) => typeof message[key] === 'number') &&
        Array.isArray(message['roots']) &&
        message['roots'].every((root) => isRecord(root) && typeof root['path'] === 'string' && (root['access'] === 'read' || root['access'] === 'read_write')) &&
        isStringArray(message['protectedPaths']) &&
        isStringArray(message['hiddenPaths']) &&
        isOptional(message['sideEffect'], 'string') &&
        isOptional(message['stageTimes'], 'boolean') &&
        (egress === undefined || (isRecord(egress) && typeof egress['proxyUrl'] === 'string' && isStringArray(egress['allow'])));
      return fine ? /** @type {HostToIsolateMessage} */ (message) : violation('an init message of the wrong shape');
    }
    case 'run':
      return isCallId(message['id']) &&
        typeof message['callId'] === 'string' &&
        isRecord(message['args']) &&
        typeof message['timeoutMs'] === 'number' &&
        isOptional(message['egressToken'], 'string') &&
        isOptional(message['sentAtUs'], 'number')
        ? /** @type {HostToIsolateMessage} */ (message)
        : violation('a run message of the wrong shape');
    case 'stop':
      return isCallId(message['id']) ? /** @type {HostToIsolateMessage} */ (message) : violation(NO_CALL);
    default:
      return violation(UNKNOWN_TYPE);
  }
}

/**
 * An event of a worker pool's channel, read by the host; undefined for anything else on it
 * (the host's own aborts come back on the same channel).
 * @param {unknown} value
 * @returns {WorkerEventMessage | undefined}
 */
export function readWorkerEvent(value) {
  if (!isRecord(value) || typeof value['callId'] !== 'string') return undefined;
  const type = value['type'];
  return type === 'progress' || type === 'log' || type === 'denied' ? /** @type {WorkerEventMessage} */ (value) : undefined;
}

/**
 * A host's abort on a worker pool's channel, read by the worker thread; undefined for anything else
 * (the other threads' events travel on the same channel).
 * @param {unknown} value
 * @returns {WorkerAbortMessage | undefined}
 */
export function readWorkerAbort(value) {
  return isRecord(value) && value['type'] === 'abort' && typeof value['callId'] === 'string' ? /** @type {WorkerAbortMessage} */ (/** @type {unknown} */ (value)) : undefined;
}

/**
 * A worker thread's answer on its lane, read by the host.
 * @param {unknown} value
 * @returns {WorkerLaneAnswer | ProtocolViolation}
 */
export function readLaneAnswer(value) {
  if (!isRecord(value)) return violation(NOT_AN_OBJECT);
  if (typeof value['slot'] !== 'number' || typeof value['ticket'] !== 'number') return violation(NO_CALL);
  return value['failed'] === undefined || value['failed'] === true ? /** @type {WorkerLaneAnswer} */ (value) : violation('an answer of the wrong shape');
}

/**
 * The calls the host posts on a lane, read by the worker thread.
 * @param {unknown} value
 * @returns {readonly WorkerTask[] | ProtocolViolation}
 */
export function readWorkerTasks(value) {
  if (!Array.isArray(value)) return violation('tasks that are not a list');
  const fine = value.every((task) => isRecord(task) && typeof task['callId'] === 'string' && typeof task['slot'] === 'number' && typeof task['ticket'] === 'number');
  return fine ? /** @type {WorkerTask[]} */ (value) : violation('a task of the wrong shape');
}
