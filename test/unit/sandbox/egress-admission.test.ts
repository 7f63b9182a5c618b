// The one admission rule of the egress proxy and ctx.fetch, table-driven:
// canonical spellings, allow entries (a bare host means 443), address classes,
// the exact-address rule, names resolved once and refused whole when any
// address is not public, read-only methods.
import { describe, expect, it } from 'vitest';
import { admitEgress, canonicalHost, classifyAddress, isMethodAdmitted, parseAllowEntry } from '../../../sandbox/shared/egress-admission.mjs';

describe('canonicalHost', () => {
  it.each([
    ['Example.COM.', 'example.com'],
    ['127.0.0.1', '127.0.0.1'],
    ['[::1]', '::1'],
    ['[::ffff:7f00:1]', '::ffff:7f00:1'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['0.0.0.0', '0.0.0.0'],
  ])('keeps %s as %s', (raw, canonical) => {
    expect(canonicalHost(raw)).toBe(canonical);
  });

  it.each([
    '2130706433',
    '0177.0.0.1',
    '0x7f.0.0.1',
    '0x7f000001',
    '127.1',
    '127.0.1',
    '01.2.3.4',
    '[::ffff:127.0.0.1]',
    '::1',
    '[::1',
    'a..b',
    '-a.example',
    'a_b%2e.example',
    '',
    'host.123',
  ])('refuses the spelling %s', (raw) => {
    expect(canonicalHost(raw)).toBeUndefined();
  });
});

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2002:7f00:1::1', 'reserved'],
    ['93.184.216.34', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['not-an-ip', 'invalid'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe('parseAllowEntry', () => {
  it('parses hosts, ports and literals', () => {
    expect(parseAllowEntry('api.github.com')).toEqual({ host: 'api.github.com', port: undefined, isAddress: false });
    expect(parseAllowEntry('127.0.0.1:8080')).toEqual({ host: '127.0.0.1', port: 8080, isAddress: true });
    expect(parseAllowEntry('[::1]:443')).toEqual({ host: '::1', port: 443, isAddress: true });
    for (const bad of ['', 'a b', 'http://x', 'x/y', 'x:0', 'x:99999', '2130706433', 'user@x', 'x?y', 5]) expect(parseAllowEntry(bad)).toBeUndefined();
  });
});

describe('admitEgress', () => {
  const names: Record<string, string[]> = {
    'public.test': ['93.184.216.34'],
    'loopback.test': ['127.0.0.1'],
    'mixed.test': ['93.184.216.34', '10.0.0.1'],
    'metadata.test': ['169.254.169.254'],
    'mapped.test': ['::ffff:7f00:1'],
  };
  const resolve = async (host: string): Promise<string[]> => names[host] ?? [];
  const rules = {
    allow: [
      'public.test',
      'public.test:8080',
      'loopback.test:80',
      'mixed.test',
      'metadata.test:80',
      'mapped.test',
      'nowhere.test',
      '127.0.0.1:5000',
      '169.254.169.254:80',
      '[::1]:5000',
    ],
    resolve,
  };

  it.each([
    ['public.test', 443, { ok: true, address: '93.184.216.34', family: 4 }],
    ['PUBLIC.test.', 8080, { ok: true, address: '93.184.216.34' }],
    // The exact-address rule: a literal the allow list names is admitted whatever its class.
    ['127.0.0.1', 5000, { ok: true, address: '127.0.0.1' }],
    ['169.254.169.254', 80, { ok: true, address: '169.254.169.254' }],
    ['[::1]', 5000, { ok: true, address: '::1', family: 6 }],
  ])('admits %s:%d', async (host, port, expected) => {
    expect(await admitEgress(rules, { host, port })).toMatchObject(expected);
  });

  it.each([
    ['public.test', 80, 'host_not_allowed'], // a bare entry means 443 only
    ['public.test', 8443, 'host_not_allowed'],
    ['127.0.0.1', 5001, 'host_not_allowed'],
    ['127.0.0.2', 5000, 'host_not_allowed'],
    ['loopback.test', 80, 'address_loopback'],
    ['mixed.test', 443, 'address_private'],
    ['metadata.test', 80, 'address_metadata'],
    ['mapped.test', 443, 'address_loopback'],
    ['nowhere.test', 443, 'name_not_resolved'],
    ['2130706433', 5000, 'non_canonical_host'],
    ['0177.0.0.1', 5000, 'non_canonical_host'],
    ['[::ffff:127.0.0.1]', 5000, 'non_canonical_host'],
    ['public.test', 0, 'bad_port'],
  ])('refuses %s:%d with %s', async (host, port, reason) => {
    expect(await admitEgress(rules, { host, port })).toMatchObject({ ok: false, reason });
  });

  it('refuses a name whose resolver throws', async () => {
    expect(await admitEgress({ allow: ['x.test'], resolve: () => Promise.reject(new Error('SERVFAIL')) }, { host: 'x.test', port: 443 })).toMatchObject({
      ok: false,
      reason: 'name_not_resolved',
    });
  });

  it('holds a read_only tool to GET, HEAD and OPTIONS where the method is known', async () => {
    const readOnly = { ...rules, readOnly: true };
    expect(await admitEgress(readOnly, { host: '127.0.0.1', port: 5000, method: 'POST' })).toMatchObject({ ok: false, reason: 'method_not_allowed_for_class' });
    expect(await admitEgress(readOnly, { host: '127.0.0.1', port: 5000, method: 'get' })).toMatchObject({ ok: true });
    // A tunnel's method cannot be seen: admitted by host and port alone.
    expect(await admitEgress(readOnly, { host: '127.0.0.1', port: 5000 })).toMatchObject({ ok: true });
    expect(isMethodAdmitted(false, 'DELETE')).toBe(true);
    expect(['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH'].map((method) => isMethodAdmitted(true, method))).toEqual([true, true, true, false, false]);
  });
});
