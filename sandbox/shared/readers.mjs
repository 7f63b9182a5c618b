// The receiving side's narrowing of what crossed: a value that arrived from
// the other side of a thread, process or isolate boundary is `unknown` until
// one of these says what it is. Each returns the typed value or undefined
// (a shape it does not know); it copies, never returns the object it was given.
// Plain ESM, no imports: both sides load it at run time.

/** @typedef {import('./messages.mjs').ProgressEvent} ProgressEvent */
/** @typedef {import('./messages.mjs').SandboxDenial} SandboxDenial */
/** @typedef {import('./messages.mjs').ToolLogLevel} ToolLogLevel */

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
