// What an upstream server hands back through the host's resources/read (a
// resource link it returned, an MCP Apps `ui://` resource): redacted like its
// results (SPEC sections 2.1 and 5 step 9). Text of any text MIME type
// (text-mime.ts, whatever its case) has secrets and host paths replaced; the
// MIME type is the server's word too. Binary content cannot be redacted
// without corrupting it, so one that holds a secret's value is not served.
import { bytesHoldSecret, type Redactor } from './redact.js';
import { isTextMimeType } from './text-mime.js';

interface ResourceBytes {
  readonly mimeType: string;
  readonly bytes: Uint8Array;
}

type RedactedResource = { readonly ok: true; readonly resource: ResourceBytes } | { readonly ok: false; readonly reason: 'secret_in_binary' };

/** The resource as the caller may see it, or why it may not. */
export function redactUpstreamResource(read: ResourceBytes, redact: Redactor): RedactedResource {
  const mimeType = redact(read.mimeType);
  const text = isTextMimeType(read.mimeType) ? decodeStrict(read.bytes) : undefined;
  if (text !== undefined) return { ok: true, resource: { mimeType, bytes: Buffer.from(redact(text), 'utf8') } };
  if (bytesHoldSecret(read.bytes, redact)) return { ok: false, reason: 'secret_in_binary' };
  return { ok: true, resource: { mimeType, bytes: read.bytes } };
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// Text that is not UTF-8 is not text: it is checked as binary.
function decodeStrict(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}
