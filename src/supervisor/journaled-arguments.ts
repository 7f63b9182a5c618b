// The arguments a call record keeps under `journal.arguments: redacted`
// (SPEC section 7.1): their JSON with secret values and host paths outside the
// workspace replaced, as everything the model sees is, and bounded, so a
// record never holds a secret nor grows with what a caller sends.
import type { Redactor } from './redact.js';

/** At most this many characters of arguments are kept per record. */
export const MAX_JOURNALED_ARGUMENT_CHARS = 4096;

/** The redacted, bounded JSON text of a call's arguments (cut text ends with "…"). */
export function journaledArguments(args: unknown, redact: Redactor): string {
  return redact.cut(JSON.stringify(args ?? {}) ?? '{}', MAX_JOURNALED_ARGUMENT_CHARS);
}
