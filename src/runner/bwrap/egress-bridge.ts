// The inside end of the egress path: in its own network namespace a
// sandboxed process has only loopback, and socat processes started before the
// tool listen there and forward each connection to the host's proxy over Unix
// sockets in the grant's folder, bound at SANDBOX_EGRESS_DIR: one on
// SANDBOX_PROXY_PORT for the HTTP proxy, and one per allowed destination
// (egress-network.ts) at the address an ordinary client connects to. Why
// socat (Debian's) and not a bridge of our own: it is a small C program that
// does exactly this, starts in a millisecond, and needs no interpreter inside
// the sandbox; a Node bridge would cost ~40 MB and ~40 ms per sandbox.
// HTTP_PROXY and friends name the proxy, so clients that read them (curl,
// Python, pip, npm, Go) use it without being told.
import { procNetAddress, PROXY_LISTEN, type DirectListener } from './egress-network.js';

/** Where the sandbox sees its grant's folder (read-only): the proxy's socket and one per destination. */
export const SANDBOX_EGRESS_DIR = '/run/toolhost/egress';
/** Where the sandbox sees its grant's proxy socket. */
export const SANDBOX_EGRESS_SOCKET = `${SANDBOX_EGRESS_DIR}/proxy.sock`;
/** The proxy's port on the sandbox's own loopback. */
export const SANDBOX_PROXY_PORT = PROXY_LISTEN.port;
export const SANDBOX_PROXY_URL = `http://${PROXY_LISTEN.address}:${SANDBOX_PROXY_PORT}`;

/** Proxy connections accepted at once (each is one socat process, counted by the pids limit too). */
const MAX_BRIDGE_CHILDREN = 32;
/** Connections to one direct destination accepted at once. */
const MAX_DIRECT_CHILDREN = 16;
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

/** Processes the bridge keeps in a sandbox while idle: one listener for the proxy and one per destination. */
export function bridgeProcessCount(direct: readonly DirectListener[]): number {
  return 1 + direct.length;
}

/**
 * The shell commands, run by the start gate before it waits for its start line, that start the
 * bridge's listeners detached (their parent is the sandbox's init, not the tool) and wait until
 * every one listens. Fails (exit 125, the tool never starts) when one does not come up.
 */
export function bridgeScript(socatPath: string, direct: readonly DirectListener[] = []): string {
  const proxy = `TCP4-LISTEN:${SANDBOX_PROXY_PORT},bind=${PROXY_LISTEN.address},reuseaddr,fork,backlog=16,max-children=${MAX_BRIDGE_CHILDREN}`;
  const starts = [`(exec ${socatPath} ${proxy} UNIX-CONNECT:${SANDBOX_EGRESS_SOCKET} </dev/null >/dev/null 2>&1 &)`];
  for (const listener of direct) {
    const address =
      listener.family === 6
        ? `TCP6-LISTEN:${listener.destination.port},bind=[${listener.listenAddress}],ipv6only=1`
        : `TCP4-LISTEN:${listener.destination.port},bind=${listener.listenAddress}`;
    // An address the host adds after the sandbox started is bound ahead of it (IP_FREEBIND).
    const options = `reuseaddr,fork,backlog=16,max-children=${MAX_DIRECT_CHILDREN}${listener.isAdded ? ',ip-freebind' : ''}`;
    starts.push(`(exec ${socatPath} ${address},${options} UNIX-CONNECT:${SANDBOX_EGRESS_DIR}/${listener.socketName} </dev/null >/dev/null 2>&1 &)`);
  }
  // /proc/net/tcp and tcp6 of this namespace: each local address:port in state 0A (LISTEN).
  const wanted = [procNetAddress(PROXY_LISTEN.address, SANDBOX_PROXY_PORT), ...direct.map((listener) => procNetAddress(listener.listenAddress, listener.destination.port))];
  const patterns = wanted.map((entry) => `0A:${entry}`).join('|');
  return [
    ...starts,
    `up() { c=0; for f in /proc/net/tcp /proc/net/tcp6; do [ -r $f ] || continue; while read -r _ l _ s _; do case "$s:$l" in ${patterns}) c=$((c+1));; esac; done <$f; done; [ $c -ge ${wanted.length} ]; }`,
    `n=0; until up; do n=$((n+1)); [ $n -le ${MAX_BRIDGE_POLLS} ] || { echo 'toolhost: the egress bridge did not start' >&2; exit 125; }; sleep 0.005; done`,
  ].join('; ');
}
