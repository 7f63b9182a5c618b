// How a URI an upstream server returned (a resource link, an embedded
// resource) is shown to the model (SPEC sections 2.1 and 5 step 9): as given
// when it says nothing it should not, else as an opaque URI of the host's,
// which resources/read still forwards to that server. Hidden: a URI holding a
// secret's value (also percent-encoded), a `file:` URI outside the workspace
// (however it is spelt: `file:/x`, `file://localhost/x`, `file://host/x`), and
// any other URI (not http or https) whose path names a host path outside the
// workspace.
import { createHash } from 'node:crypto';
import type { Redactor } from './redact.js';

/** The prefix of the URIs shown in place of an upstream URI that may not be shown. */
const OPAQUE_UPSTREAM_URI_PREFIX = 'toolhost://upstream/';

/** The URI the caller is shown for `uri`, which `server` returned. */
export function shownUpstreamUri(uri: string, server: string, redact: Redactor): string {
  return mayShowUri(uri, redact) ? uri : `${OPAQUE_UPSTREAM_URI_PREFIX}${server}/${createHash('sha256').update(uri).digest('hex').slice(0, 32)}`;
}

function mayShowUri(uri: string, redact: Redactor): boolean {
  const decoded = decodeOrSelf(uri);
  if (redact(uri) !== uri || redact(decoded) !== decoded) return false;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    // Not a URL a client could resolve either; only a file: one is refused unread.
    return !/^\s*file:/i.test(uri);
  }
  const path = decodeOrSelf(url.pathname);
  if (url.protocol === 'file:') {
    const isLocal = url.hostname === '' || url.hostname === 'localhost';
    return isLocal && redact.isVisiblePath?.(path) === true;
  }
  // A web URL's path names a page, not a file of this host.
  if (url.protocol === 'http:' || url.protocol === 'https:') return true;
  return !path.startsWith('/') || redact(path) === path;
}

function decodeOrSelf(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
