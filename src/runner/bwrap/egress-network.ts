// How an ordinary TCP client in the sandbox reaches an allowed destination
// without knowing about a proxy (a database driver, Node's global fetch, curl
// without proxy settings): the sandbox's own network namespace has only
// loopback, so each allowed destination gets a listener there, which the
// bridge (egress-bridge.ts) forwards to a Unix socket of the host's proxy for
// that destination alone (egress-proxy.ts: the same admission as a CONNECT).
//
//   - an allowed name gets a loopback address of its own (127.77.0.1, …),
//     which a generated /etc/hosts maps it to: the client's lookup finds it
//     there, and the proxy resolves the name itself and checks the addresses;
//   - an allowed address literal is listened on at that very address: a
//     loopback one is there already (127.0.0.0/8, ::1), any other is added to
//     the namespace's loopback by the host before the tool starts.
//
// Ports and names that are not allowed find nothing (a refused connect, a
// failed lookup: DNS has no route), as do UDP and every other address.
import { isIP } from 'node:net';
import { DEFAULT_EGRESS_PORT, parseAllowEntry } from '../../../sandbox/shared/egress-admission.mjs';

/** One listener in the sandbox: where a client connects, and the destination it stands for. */
export interface DirectListener {
  /** The allow entry's host (a canonical name or address) and port: what the proxy admits. */
  readonly destination: { readonly host: string; readonly port: number };
  /** The address in the sandbox's network namespace the listener binds. */
  readonly listenAddress: string;
  readonly family: 4 | 6;
  /** The Unix socket of the host's proxy for this destination, in the grant's folder. */
  readonly socketName: string;
  /** The address is not on the namespace's loopback until the host adds it (bound with IP_FREEBIND first). */
  readonly isAdded: boolean;
}

export interface EgressNetworkPlan {
  readonly listeners: readonly DirectListener[];
  /** The sandbox's /etc/hosts: localhost, and each allowed name at its loopback address. */
  readonly hostsFile: string;
  /** Address literals the host adds to the namespace's loopback before the tool starts. */
  readonly addedAddresses: readonly string[];
}

/** Destinations one sandbox reaches directly: each is a listener process in it, and a socket on the host. */
export const MAX_DIRECT_DESTINATIONS = 32;
/** Where the sandbox's own HTTP proxy listens (egress-bridge.ts): no destination may take it. */
export const PROXY_LISTEN = { address: '127.0.0.1', port: 3128 } as const;
/** Allowed names get addresses from here up (127.77.0.1, 127.77.0.2, …), all on the namespace's loopback. */
const NAME_ADDRESS_BASE = [127, 77, 0, 1] as const;

type EgressNetworkResult = { readonly ok: true; readonly plan: EgressNetworkPlan } | { readonly ok: false; readonly reason: string };

/** The listeners, /etc/hosts and added addresses for an allow list (already held to the policy). */
export function planEgressNetwork(allow: readonly string[]): EgressNetworkResult {
  const destinations = new Map<string, { host: string; port: number }>();
  for (const raw of allow) {
    const entry = parseAllowEntry(raw);
    if (entry === undefined) return { ok: false, reason: `network.allow entry ${JSON.stringify(raw)} is not a host or host:port` };
    const port = entry.port ?? DEFAULT_EGRESS_PORT;
    destinations.set(`${entry.host}\0${port}`, { host: entry.host, port });
  }
  if (destinations.size > MAX_DIRECT_DESTINATIONS) {
    return { ok: false, reason: `${destinations.size} network.allow destinations, more than the ${MAX_DIRECT_DESTINATIONS} one sandbox may reach directly` };
  }
  // In code-unit order, whatever the locale: the same allow list always gives the same plan.
  const sorted = [...destinations.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : a.port - b.port));
  const literals = new Set(sorted.filter((destination) => isIP(destination.host) !== 0).map((destination) => destination.host));
  const nameAddresses = new Map<string, string>();
  let next = 0;
  const listeners: DirectListener[] = [];
  for (const destination of sorted) {
    const family = isIP(destination.host);
    let listenAddress: string;
    if (family !== 0) listenAddress = destination.host;
    else {
      let address = nameAddresses.get(destination.host);
      while (address === undefined) {
        const candidate = nameAddress(next++);
        if (!literals.has(candidate)) address = candidate;
      }
      nameAddresses.set(destination.host, address);
      listenAddress = address;
    }
    if (listenAddress === PROXY_LISTEN.address && destination.port === PROXY_LISTEN.port) {
      return { ok: false, reason: `network.allow entry ${PROXY_LISTEN.address}:${PROXY_LISTEN.port} is where the sandbox's HTTP proxy listens` };
    }
    listeners.push({
      destination,
      listenAddress,
      family: family === 6 ? 6 : 4,
      socketName: `d${listeners.length}.sock`,
      isAdded: family !== 0 && !isLoopbackAddress(listenAddress),
    });
  }
  // An allowed `localhost` is a name like any other (the host resolves it, and refuses it as loopback): not the sandbox's own then.
  const ownLocalhost = nameAddresses.has('localhost') ? [] : ['127.0.0.1\tlocalhost'];
  const hosts = [
    ...ownLocalhost,
    `::1\t${ownLocalhost.length > 0 ? 'localhost ' : ''}ip6-localhost ip6-loopback`,
    ...[...nameAddresses].map(([name, address]) => `${address}\t${name}`),
  ];
  const addedAddresses = [...new Set(listeners.filter((listener) => listener.isAdded).map((listener) => listener.listenAddress))];
  return { ok: true, plan: { listeners, hostsFile: `${hosts.join('\n')}\n`, addedAddresses } };
}

/**
 * How /proc/net/tcp (tcp6) names `address`:`port`: the address as the kernel's 32-bit words,
 * each printed in host (little-endian) byte order, and the port in hex; upper case.
 */
export function procNetAddress(address: string, port: number): string {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const bytes = isIP(address) === 6 ? ipv6Bytes(address) : address.split('.').map(Number);
  let words = '';
  for (let at = 0; at < bytes.length; at += 4) {
    for (let byte = 3; byte >= 0; byte--) words += (bytes[at + byte] ?? 0).toString(16).toUpperCase().padStart(2, '0');
  }
  return `${words}:${hexPort}`;
}

function nameAddress(index: number): string {
  const value = ((NAME_ADDRESS_BASE[1] << 16) | (NAME_ADDRESS_BASE[2] << 8) | NAME_ADDRESS_BASE[3]) + index;
  return `${NAME_ADDRESS_BASE[0]}.${(value >> 16) & 0xff}.${(value >> 8) & 0xff}.${value & 0xff}`;
}

function isLoopbackAddress(address: string): boolean {
  return isIP(address) === 6 ? address === '::1' : address.startsWith('127.');
}

function ipv6Bytes(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.flatMap((group) => {
    const word = Number.parseInt(group, 16);
    return [(word >> 8) & 0xff, word & 0xff];
  });
}
