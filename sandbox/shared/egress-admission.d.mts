// Types for egress-admission.mjs (the egress proxy's and ctx.fetch's admission rule).

export interface AllowEntry {
  /** Lower case, no brackets, no trailing dot. */
  readonly host: string;
  /** Undefined: a bare entry, which admits DEFAULT_EGRESS_PORT (443) only. */
  readonly port: number | undefined;
  /** The entry is an IP literal (the exact-address rule: any address class is admitted). */
  readonly isAddress: boolean;
}

export type AddressClass = 'public' | 'loopback' | 'private' | 'link_local' | 'unique_local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved' | 'invalid';

export interface EgressRules {
  /** network.allow in force (manifest ∩ policy): `host`, `host:port`, `[v6]:port`. */
  readonly allow: readonly string[];
  /** A read_only tool: methods held to GET, HEAD, OPTIONS where they can be seen. */
  readonly readOnly?: boolean;
  /** Resolves a name to its addresses (tests give one; default: the system resolver). */
  readonly resolve?: (host: string) => Promise<readonly string[]>;
}

export interface EgressTarget {
  /** As the tool wrote it (brackets for IPv6). */
  readonly host: string;
  readonly port: number;
  /** The HTTP method, when the request can be seen (plain HTTP, ctx.fetch); absent for a tunnel. */
  readonly method?: string;
}

/** Stable refusal reasons, journaled and logged. */
export type EgressRefusal =
  'non_canonical_host' | 'bad_port' | 'method_not_allowed_for_class' | 'host_not_allowed' | 'name_not_resolved' | `address_${Exclude<AddressClass, 'public' | 'invalid'>}`;

export type Admission =
  | { readonly ok: true; readonly host: string; readonly port: number; readonly address: string; readonly family: number }
  | { readonly ok: false; readonly reason: EgressRefusal; readonly host?: string; readonly address?: string };

/** admitByName's answer: no address yet (the proxy resolves). */
export type NameAdmission = { readonly ok: true; readonly host: string; readonly port: number } | { readonly ok: false; readonly reason: EgressRefusal; readonly host?: string };

export const DEFAULT_EGRESS_PORT: number;
export const READ_ONLY_METHODS: readonly string[];
export function parseAllowEntry(raw: unknown): AllowEntry | undefined;
export function canonicalHost(raw: string): string | undefined;
export function classifyAddress(address: string): AddressClass;
export function isMethodAdmitted(readOnly: boolean, method: string): boolean;
export function admitByName(rules: EgressRules, target: EgressTarget): NameAdmission;
export function admitEgress(rules: EgressRules, target: EgressTarget): Promise<Admission>;
