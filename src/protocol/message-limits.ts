// The inbound message bounds every front shares. A leaf module (no SDK, no
// parser): serve's early front reads stdin with them before the rest loads.

/** `--max-message-bytes` default: 16 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Nesting allowed in one inbound message; the top-level object counts as 1. */
export const MAX_MESSAGE_DEPTH = 64;
/** How many leading bytes of an unparseable or oversized line are searched for its id. */
export const ID_SCAN_BYTES = 64 * 1024;

/** `--max-message-bytes`: a positive integer number of bytes (the default when absent), or undefined when `value` is not one. */
export function maxMessageBytesOf(value: unknown): number | undefined {
  if (value === undefined) return DEFAULT_MAX_MESSAGE_BYTES;
  const bytes = typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : NaN;
  return Number.isSafeInteger(bytes) && bytes >= 1 ? bytes : undefined;
}
