// The address literals of an allow list that are not loopback addresses
// (192.0.2.10:5432, [fd00::2]:443) must exist on the sandbox's own loopback
// for an ordinary client there to connect to them (egress-network.ts). Nothing
// inside may add them: its network namespace belongs to a user namespace with
// no capability left (its filter lets netlink's NETLINK_ROUTE read addresses,
// and changing one needs CAP_NET_ADMIN). The host adds
// them from outside, before the tool starts: `nsenter` into the sandbox's
// network namespace (as the owner of its user namespace, where the host is
// not root) runs `ip -batch -` with one `address add` per literal. The bridge
// binds them ahead with IP_FREEBIND, so the order does not matter to it.
import { findHostTool } from './binaries.js';
import type { SandboxFacts } from './sandbox-facts.js';

type NetworkSetup = { readonly ok: true; readonly nsenter: string; readonly ip: string } | { readonly ok: false; readonly reason: string; readonly fix: string };

/** nsenter (util-linux) and ip (iproute2) on this host, or what to install. */
export function findNetworkSetup(facts: SandboxFacts): NetworkSetup {
  const nsenter = findHostTool(facts, 'nsenter');
  if (nsenter === undefined) return { ok: false, reason: 'nsenter is not installed (an address literal in network.allow)', fix: 'install util-linux: apt-get install util-linux' };
  const ip = findHostTool(facts, 'ip');
  if (ip === undefined) return { ok: false, reason: 'ip is not installed (an address literal in network.allow)', fix: 'install iproute2: apt-get install iproute2' };
  return { ok: true, nsenter, ip };
}

/** The argv that runs `ip -batch -` in the network namespace of the sandbox whose first process is `childPid`. */
export function addressSetupArgv(setup: { readonly nsenter: string; readonly ip: string }, childPid: number, isRoot: boolean = process.getuid?.() === 0): string[] {
  // Root acts on any network namespace; anyone else enters the sandbox's user namespace first, which they own.
  const namespaces = isRoot ? ['--net'] : ['--user', '--net', '--preserve-credentials'];
  return [setup.nsenter, '--target', String(childPid), ...namespaces, '--', setup.ip, '-batch', '-'];
}

/** `ip -batch` lines adding each address to the loopback, as a host route (/32, /128). */
export function addressBatch(addresses: readonly string[]): string {
  return addresses.map((address) => (address.includes(':') ? `address add ${address}/128 dev lo nodad\n` : `address add ${address}/32 dev lo\n`)).join('');
}
