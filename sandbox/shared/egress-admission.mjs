// Who a tool may reach (SPEC section 3.2): the one admission rule behind the
// host's egress proxy and ctx.fetch. A target is admitted only when
//   - its host is spelled canonically (no decimal, octal, hex or short IPv4,
//     no percent-encoding, no IPv4-mapped IPv6 spelled with a dotted quad),
//   - an allow entry names that host and port (a bare entry means port 443),
//   - every address the host resolves to is public, or the entry names that
//     exact address as a literal (so a name that resolves to 127.0.0.1 is
//     refused even when the name itself is allowed),
//   - and, for a read_only tool, the method is GET, HEAD or OPTIONS (when the
//     method can be seen: an HTTPS tunnel's cannot).
// Names are resolved here, once, and the caller connects to the address this
// returns: never resolve again between admission and connect.
// Plain ESM with no imports beyond node:, so sandbox/ code can load it as is.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isMethodAllowedForClass, READ_ONLY_METHODS } from './egress-methods.mjs';

export { READ_ONLY_METHODS };

/** The port a bare allow entry (`host`, no port) admits. */
export const DEFAULT_EGRESS_PORT = 443;
const MAX_HOST_CHARS = 253;

/**
 * Parses one network.allow entry (`host`, `host:port`, `[v6]:port`); undefined when malformed.
 * @returns {{ host: string, port: number | undefined, isAddress: boolean } | undefined}
 */
export function parseAllowEntry(raw) {
  if (typeof raw !== 'string' || raw === '' || /[/@\s\\?#%]/.test(raw)) return undefined;
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(raw);
  if (match === null) return undefined;
  const host = canonicalHost(match[1] ?? '');
  if (host === undefined) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  return { host, port, isAddress: isIP(host) !== 0 };
}

/**
 * The host as the allow list compares it (lower case, no brackets, no trailing dot), or
 * undefined when it is not written canonically: `2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`,
 * `%31.2.3.4`, `[::ffff:127.0.0.1]` and other spellings a resolver would quietly turn into an address.
 * @param {string} raw
 * @returns {string | undefined}
 */
export function canonicalHost(raw) {
  if (typeof raw !== 'string' || raw === '' || raw.length > MAX_HOST_CHARS + 2) return undefined;
  let host = raw.toLowerCase();
  if (host.startsWith('[')) {
    if (!host.endsWith(']')) return undefined;
    host = host.slice(1, -1);
    if (isIP(host) !== 6) return undefined;
    // Dotted quads inside IPv6 are how ::ffff:127.0.0.1 hides a v4 address: only the hex form is canonical.
    if (host.includes('.')) return undefined;
    return host;
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (isIP(host) === 4) return isCanonicalIpv4(host) ? host : undefined;
  if (isIP(host) === 6) return undefined; // IPv6 only in brackets
  const labels = host.split('.');
  // A name whose last label is a number is an IPv4 spelling to a resolver (inet_aton): refused.
  const last = labels[labels.length - 1] ?? '';
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(last)) return undefined;
  if (!labels.every((label) => /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/.test(label))) return undefined;
  return host;
}

/**
 * The class of an IP address: only `public` is reachable without an exact allow entry.
 * @param {string} address
 * @returns {'public' | 'loopback' | 'private' | 'link_local' | 'unique_local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved' | 'invalid'}
 */
export function classifyAddress(address) {
  const family = isIP(address);
  if (family === 4) return classifyIpv4(ipv4Bytes(address));
  if (family === 6) return classifyIpv6(address.toLowerCase());
  return 'invalid';
}

/**
 * Whether `method` may be sent by a tool of this class (a read_only tool: GET, HEAD, OPTIONS).
 * @param {boolean} readOnly
 * @param {string} method
 */
export function isMethodAdmitted(readOnly, method) {
  // One rule for ctx.fetch and the proxy: egress-methods.mjs.
  return isMethodAllowedForClass(readOnly ? 'read_only' : undefined, method);
}

/**
 * Admits one connection: host (as written by the tool) and port against the allow list, then the
 * addresses it resolves to. The caller connects to `address`, never to the name.
 * @param {import('./egress-admission.d.mts').EgressRules} rules
 * @param {import('./egress-admission.d.mts').EgressTarget} target
 * @returns {Promise<import('./egress-admission.d.mts').Admission>}
 */
export async function admitEgress(rules, target) {
  const named = admitByName(rules, target);
  if (!named.ok) return named;
  const { host, port } = named;
  const family = isIP(host);
  if (family !== 0) {
    // A literal: the entry names this exact address, so any class is admitted (SPEC 3.2).
    return { ok: true, host, port, address: host, family };
  }
  let addresses;
  try {
    addresses = await (rules.resolve ?? resolveSystem)(host);
  } catch {
    return refuse('name_not_resolved', host);
  }
  if (!Array.isArray(addresses) || addresses.length === 0) return refuse('name_not_resolved', host);
  // Every address must be public: a name that mixes in a loopback one is refused whole (rebinding).
  for (const address of addresses) {
    const kind = classifyAddress(address);
    if (kind !== 'public') return refuse(kind === 'invalid' ? 'name_not_resolved' : /** @type {const} */ (`address_${kind}`), host, address);
  }
  const address = addresses[0];
  return { ok: true, host, port, address, family: isIP(address) };
}

/**
 * The part of admitEgress that needs no name lookup (spelling, port, method, allow entry): what
 * an isolate process checks before it asks the proxy, which admits again and resolves.
 * @param {import('./egress-admission.d.mts').EgressRules} rules
 * @param {import('./egress-admission.d.mts').EgressTarget} target
 * @returns {import('./egress-admission.d.mts').NameAdmission}
 */
export function admitByName(rules, target) {
  const host = canonicalHost(target.host);
  const port = target.port;
  if (host === undefined) return refuse('non_canonical_host');
  if (!Number.isInteger(port) || port < 1 || port > 65535) return refuse('bad_port', host);
  if (target.method !== undefined && !isMethodAdmitted(rules.readOnly === true, target.method)) return refuse('method_not_allowed_for_class', host);
  const entries = rules.allow.map(parseAllowEntry).filter((entry) => entry !== undefined);
  const entry = entries.find((candidate) => candidate.host === host && (candidate.port ?? DEFAULT_EGRESS_PORT) === port);
  if (entry === undefined) return refuse('host_not_allowed', host);
  return { ok: true, host, port };
}

async function resolveSystem(host) {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

/**
 * @param {import('./egress-admission.d.mts').EgressRefusal} reason
 * @param {string} [host]
 * @param {string} [address]
 * @returns {{ ok: false, reason: import('./egress-admission.d.mts').EgressRefusal, host?: string, address?: string }}
 */
function refuse(reason, host, address) {
  return { ok: false, reason, ...(host === undefined ? {} : { host }), ...(address === undefined ? {} : { address }) };
}

function isCanonicalIpv4(host) {
  return host.split('.').every((part) => part === '0' || /^[1-9][0-9]{0,2}$/.test(part));
}

function ipv4Bytes(address) {
  return address.split('.').map(Number);
}

function classifyIpv4([a = 0, b = 0, c = 0, d = 0]) {
  if (a === 169 && b === 254 && c === 169 && d === 254) return 'metadata';
  if (a === 100 && b === 100 && c === 100 && d === 200) return 'metadata'; // Alibaba Cloud
  if (a === 0) return 'unspecified';
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'private'; // carrier-grade NAT, shared address space
  if (a === 169 && b === 254) return 'link_local';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved';
  if ((a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19))) return 'reserved';
  if ((a === 192 && b === 0 && c === 2) || (a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return 'reserved';
  return 'public';
}

function classifyIpv6(address) {
  // Eight 16-bit words when defined (ipv6Words checks the count): a tuple, so each index is a number.
  const words = /** @type {[number, number, number, number, number, number, number, number] | undefined} */ (ipv6Words(address));
  if (words === undefined) return 'invalid';
  if (words.every((word) => word === 0)) return 'unspecified';
  if (words.slice(0, 7).every((word) => word === 0) && words[7] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96): the v4 address decides.
  const embedsV4 =
    (words.slice(0, 5).every((word) => word === 0) && (words[5] === 0xffff || words[5] === 0)) ||
    (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((word) => word === 0));
  if (embedsV4) return classifyIpv4([words[6] >> 8, words[6] & 0xff, words[7] >> 8, words[7] & 0xff]);
  const first = words[0];
  if (first === 0xfd00 && words[1] === 0x0ec2 && words[7] === 0x254 && words.slice(2, 7).every((word) => word === 0)) return 'metadata'; // AWS
  if ((first & 0xfe00) === 0xfc00) return 'unique_local';
  if ((first & 0xffc0) === 0xfe80) return 'link_local';
  if ((first & 0xffc0) === 0xfec0) return 'reserved'; // site-local, deprecated
  if ((first & 0xff00) === 0xff00) return 'multicast';
  if (first === 0x2001 && words[1] === 0x0db8) return 'reserved'; // documentation
  if (first === 0x2002) return 'reserved'; // 6to4 hides a v4 address
  return 'public';
}

function ipv6Words(address) {
  const [head = '', tail, extra] = address.split('::');
  if (extra !== undefined) return undefined;
  const parse = (part) => (part === '' ? [] : part.split(':'));
  let left = parse(head);
  let right = tail === undefined ? [] : parse(tail);
  const expand = (groups) => {
    const last = groups[groups.length - 1];
    if (last === undefined || !last.includes('.')) return groups;
    const bytes = last.split('.').map(Number);
    return [...groups.slice(0, -1), ((bytes[0] << 8) | bytes[1]).toString(16), ((bytes[2] << 8) | bytes[3]).toString(16)];
  };
  if (tail === undefined) left = expand(left);
  else right = expand(right);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  const groups = [...left, ...Array(missing).fill('0'), ...right];
  const words = groups.map((group) => Number.parseInt(group, 16));
  return words.length === 8 && words.every((word) => Number.isInteger(word) && word >= 0 && word <= 0xffff) ? words : undefined;
}
