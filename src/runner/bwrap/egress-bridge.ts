// The inside end of the egress path: in its own network namespace a
// sandboxed process has only loopback, and a socat started before the tool
// listens on SANDBOX_PROXY_PORT there and forwards each connection to the
// host's proxy over the Unix socket bound at SANDBOX_EGRESS_SOCKET. Why socat
// (Debian's) and not a bridge of our own: it is a small C program that does
// exactly this, starts in a millisecond, and needs no interpreter inside the
// sandbox; a Node bridge would cost ~40 MB and ~40 ms per sandbox.
// HTTP_PROXY and friends name it, so ordinary clients (curl, Python, pip,
// npm, Go) use it without being told.

/** Where the sandbox sees its grant's proxy socket. */
export const SANDBOX_EGRESS_SOCKET = '/run/toolhost/egress.sock';
/** The proxy's port on the sandbox's own loopback. */
export const SANDBOX_PROXY_PORT = 3128;
export const SANDBOX_PROXY_URL = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;

/** Bridge connections accepted at once (each is one socat process, counted by the pids limit too). */
const MAX_BRIDGE_CHILDREN = 32;
/** How long the gate waits for socat to listen: polls of 5 ms. */
const MAX_BRIDGE_POLLS = 1000;

/** The proxy variables every client library reads, both spellings. */
export function egressEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    env[name] = SANDBOX_PROXY_URL;
    env[name.toLowerCase()] = SANDBOX_PROXY_URL;
  }
  return env;
}

/**
 * The shell commands, run by the start gate before it waits for its start line, that start the
 * bridge detached (its parent is the sandbox's init, not the tool) and wait until it listens.
 * Fails (exit 125, the tool never starts) when it does not come up.
 */
export function bridgeScript(socatPath: string): string {
  const hexPort = SANDBOX_PROXY_PORT.toString(16).toUpperCase().padStart(4, '0');
  const listen = `TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,reuseaddr,fork,backlog=16,max-children=${MAX_BRIDGE_CHILDREN}`;
  return [
    `(exec ${socatPath} ${listen} UNIX-CONNECT:${SANDBOX_EGRESS_SOCKET} </dev/null >/dev/null 2>&1 &)`,
    // /proc/net/tcp of this namespace: local address 127.0.0.1:PORT in state 0A (LISTEN).
    `up() { while read -r _ l _ s _; do [ "$l" = 0100007F:${hexPort} ] && [ "$s" = 0A ] && return 0; done </proc/net/tcp; return 1; }`,
    `n=0; until up; do n=$((n+1)); [ $n -le ${MAX_BRIDGE_POLLS} ] || { echo 'toolhost: the egress bridge did not start' >&2; exit 125; }; sleep 0.005; done`,
  ].join('; ');
}
