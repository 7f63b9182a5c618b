// Redaction of errors as they leave the supervisor (SPEC section 5 step 9):
// every error's message and every string and key of its details, whichever
// stage raised it, since details quote what tools wrote (an output key that
// is a secret, a stderr tail, a tool's own message). The tool's words are
// redacted first and cut to their visible length after.
import { HostError } from '../errors.js';
import { cutChars, redactJson, type Redactor } from './redact.js';

/** Characters of a tool's own error message the caller sees. */
export const MAX_ERROR_MESSAGE_CHARS = 1000;
/** Characters of any error message the caller sees (a tool's message plus a stderr tail fits). */
const MAX_SHOWN_MESSAGE_CHARS = 4096;
/** Characters of a stderr tail or a tool's own error text in details. */
const MAX_DETAIL_TEXT_CHARS = 2048;

// Details whose slashes are not host paths to hide: JSON pointers, and the policy
// rule, which is shown as named (`file:line key`, SPEC section 4). Only secrets are
// redacted in them.
// The approve command names the journal's folder or URL on purpose: an operator runs it as given.
const SECRETS_ONLY_KEYS: ReadonlySet<string> = new Set(['path', 'schemaPath', 'rule', 'approveCommand']);

/** A copy of `error` that is safe to show: message and details redacted and bounded. */
export function redactError(error: HostError, redact: Redactor): HostError {
  // Messages are the host's own sentences (a tool's words in them were redacted where they
  // were quoted); only secrets are removed here, so a rule keeps its file name (SPEC section 4).
  const message = cutChars(redact.secrets(error.message), MAX_SHOWN_MESSAGE_CHARS);
  const details: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error.details)) {
    Object.defineProperty(details, redact(key), { value: redactDetail(key, value, redact), enumerable: true, writable: true, configurable: true });
  }
  // The content blocks (a model_error's parts, an output_limit's preview) were redacted when shaped.
  return new HostError(error.code, message, details, {
    ...(error.cause !== undefined ? { cause: error.cause } : {}),
    recovery: error.recovery,
    content: error.content,
  });
}

function redactDetail(key: string, value: unknown, redact: Redactor): unknown {
  if (typeof value !== 'string') return redactJson(value, redact);
  if (SECRETS_ONLY_KEYS.has(key)) return redact.secrets(value);
  // A stderr tail keeps its end, where the reason usually is.
  return redact.cut(value, MAX_DETAIL_TEXT_CHARS, key === 'stderrTail' ? 'tail' : 'head');
}
