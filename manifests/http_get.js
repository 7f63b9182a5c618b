// http_get: runs inside an isolate, so no imports; the network is reached only
// through ctx.fetch, which the host limits to the manifest's network.allow.
const DEFAULT_MAX_CHARS = 100000;

export default async function httpGet(args, ctx) {
  const maxChars = args.maxChars ?? DEFAULT_MAX_CHARS;
  const response = await ctx.fetch(args.url, { method: 'GET', headers: { accept: 'application/json, text/plain;q=0.9, */*;q=0.1' } });
  // ctx.fetch responses carry text(); the plain body is a fallback for hosts that pass data only.
  const body = typeof response.text === 'function' ? await response.text() : String(response.body ?? '');
  return {
    status: response.status,
    contentType: headerOf(response.headers, 'content-type') ?? '',
    body: body.length > maxChars ? body.slice(0, maxChars) : body,
    truncated: body.length > maxChars,
  };
}

// Headers arrive as a copy: a plain object (any case) or, in a worker, a Headers instance.
function headerOf(headers, name) {
  if (!headers) return undefined;
  if (typeof headers.get === 'function') return headers.get(name) ?? undefined;
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return String(headers[key]);
  return undefined;
}
