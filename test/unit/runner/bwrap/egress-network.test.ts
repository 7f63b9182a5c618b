// The plan that lets ordinary TCP clients reach allowed destinations: one
// listener per host:port, names at loopback addresses of their own (the
// sandbox's /etc/hosts), address literals at their own address (added by the
// host unless loopback), the proxy's own port kept free, and the bridge that
// starts and waits for exactly those listeners.
import { describe, expect, it } from 'vitest';
import { bridgeProcessCount, bridgeScript } from '../../../../src/runner/bwrap/egress-bridge.js';
import { MAX_DIRECT_DESTINATIONS, planEgressNetwork, procNetAddress } from '../../../../src/runner/bwrap/egress-network.js';
import { addressBatch, addressSetupArgv } from '../../../../src/runner/bwrap/sandbox-addresses.js';

describe('planEgressNetwork', () => {
  it('gives each name a loopback address of its own and each literal its own address', () => {
    const result = planEgressNetwork(['api.github.com', 'db.internal:5432', 'db.internal:6432', '127.0.0.1:8080', '[::1]:9000', '192.0.2.10:5432', '[fd00::2]:443']);
    if (!result.ok) throw new Error(result.reason);
    const { listeners, hostsFile, addedAddresses } = result.plan;
    expect(listeners.map((listener) => [listener.destination.host, listener.destination.port, listener.listenAddress, listener.family, listener.isAdded])).toEqual([
      ['127.0.0.1', 8080, '127.0.0.1', 4, false],
      ['192.0.2.10', 5432, '192.0.2.10', 4, true],
      ['::1', 9000, '::1', 6, false],
      ['api.github.com', 443, '127.77.0.1', 4, false],
      ['db.internal', 5432, '127.77.0.2', 4, false],
      ['db.internal', 6432, '127.77.0.2', 4, false],
      ['fd00::2', 443, 'fd00::2', 6, true],
    ]);
    expect(listeners.map((listener) => listener.socketName)).toEqual(['d0.sock', 'd1.sock', 'd2.sock', 'd3.sock', 'd4.sock', 'd5.sock', 'd6.sock']);
    expect(hostsFile).toBe('127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.77.0.1\tapi.github.com\n127.77.0.2\tdb.internal\n');
    expect(addedAddresses).toEqual(['192.0.2.10', 'fd00::2']);
  });

  it('treats an allowed localhost as a name like any other, skips a literal in the names range, and refuses the proxy port or too many destinations', () => {
    const plan = planEgressNetwork(['localhost:5432', '127.77.0.1:80', 'a.test:80']);
    expect(plan.ok && plan.plan.listeners.map((listener) => `${listener.destination.host} ${listener.listenAddress}`)).toEqual([
      '127.77.0.1 127.77.0.1',
      'a.test 127.77.0.2',
      'localhost 127.77.0.3',
    ]);
    // The host resolves it (to loopback, and refuses it, counted): the sandbox's own 127.0.0.1 is not localhost then.
    expect(plan.ok && plan.plan.hostsFile).toBe('::1\tip6-localhost ip6-loopback\n127.77.0.2\ta.test\n127.77.0.3\tlocalhost\n');
    expect(planEgressNetwork(['127.0.0.1:3128'])).toMatchObject({ ok: false, reason: expect.stringContaining('HTTP proxy') as string });
    const many = Array.from({ length: MAX_DIRECT_DESTINATIONS + 1 }, (_, index) => `h${index}.test:443`);
    expect(planEgressNetwork(many)).toMatchObject({ ok: false });
    expect(planEgressNetwork(['not a host'])).toMatchObject({ ok: false });
  });
});

describe('the bridge of a plan', () => {
  it('names each listener as /proc/net/tcp does', () => {
    expect(procNetAddress('127.0.0.1', 3128)).toBe('0100007F:0C38');
    expect(procNetAddress('127.77.0.2', 5432)).toBe('02004D7F:1538');
    expect(procNetAddress('::1', 80)).toBe('00000000000000000000000001000000:0050');
    expect(procNetAddress('fd00::2', 443)).toBe('000000FD000000000000000002000000:01BB');
  });

  it('starts the proxy listener and one per destination, binding an added address ahead, and waits for all of them', () => {
    const result = planEgressNetwork(['db.internal:5432', '192.0.2.10:5432', '[::1]:9000']);
    if (!result.ok) throw new Error(result.reason);
    const script = bridgeScript('/usr/bin/socat', result.plan.listeners);
    expect(script).toContain('TCP4-LISTEN:3128,bind=127.0.0.1,');
    expect(script).toContain('TCP4-LISTEN:5432,bind=192.0.2.10,reuseaddr,fork,backlog=16,max-children=16,ip-freebind UNIX-CONNECT:/run/toolhost/egress/d0.sock');
    expect(script).toContain('TCP6-LISTEN:9000,bind=[::1],ipv6only=1,reuseaddr,fork,backlog=16,max-children=16 UNIX-CONNECT:/run/toolhost/egress/d1.sock');
    expect(script).toContain('TCP4-LISTEN:5432,bind=127.77.0.1,reuseaddr,fork,backlog=16,max-children=16 UNIX-CONNECT:/run/toolhost/egress/d2.sock');
    expect(script).toContain('[ $c -ge 4 ]');
    expect(bridgeProcessCount(result.plan.listeners)).toBe(4);
  });

  it('adds literals to the loopback from outside: nsenter into the network namespace (and the user namespace where the host is not root)', () => {
    expect(addressSetupArgv({ nsenter: '/usr/bin/nsenter', ip: '/usr/sbin/ip' }, 42, true)).toEqual([
      '/usr/bin/nsenter',
      '--target',
      '42',
      '--net',
      '--',
      '/usr/sbin/ip',
      '-batch',
      '-',
    ]);
    expect(addressSetupArgv({ nsenter: 'n', ip: 'i' }, 42, false)).toEqual(['n', '--target', '42', '--user', '--net', '--preserve-credentials', '--', 'i', '-batch', '-']);
    expect(addressBatch(['192.0.2.10', 'fd00::2'])).toBe('address add 192.0.2.10/32 dev lo\naddress add fd00::2/128 dev lo nodad\n');
  });
});
