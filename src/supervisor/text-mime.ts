// Which MIME types are text (SPEC sections 2.1 and 5 step 9): what a tool or a
// server hands back under one of these is redacted as text, whatever the case
// of its type, and read back as text when it is UTF-8. One list for the
// result stage, resources/read of artifacts and of upstream resources.

// application/* types whose content is text (RFC 6838 names them; each is a format people read).
const TEXT_APPLICATION_TYPES: ReadonlySet<string> = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-javascript',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/sql',
  'application/graphql',
  'application/x-sh',
  'application/x-www-form-urlencoded',
  'application/ld+json',
  'application/x-ndjson',
  'application/jsonl',
]);

/** True for text/*, the text application types and any +json or +xml type; parameters and case ignored. */
export function isTextMimeType(mimeType: string): boolean {
  const essence = (mimeType.split(';')[0] ?? '').trim().toLowerCase();
  return essence.startsWith('text/') || TEXT_APPLICATION_TYPES.has(essence) || essence.endsWith('+json') || essence.endsWith('+xml');
}
