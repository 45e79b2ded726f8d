// The blocked-destination table: security/ssrf/blocked-ranges.yaml, compiled into the bundle by
// esbuild and validated here when the module loads (malformed data throws: fail closed).
import ipaddr from 'ipaddr.js';
import rawTable from '../../../security/ssrf/blocked-ranges.yaml';
import { type IpAddress, parseIpAddress, parseCanonicalIpv4, parseIpv6, sameIp } from './address';

export type EmbeddedFormat = 'last32' | '6to4' | 'teredo';
export type EmbeddedBlock = 'always' | 'if_embedded_blocked';

export interface Examples {
  readonly match: readonly string[];
  readonly no_match: readonly string[];
}

export interface RangeEntry {
  readonly cidr: string;
  readonly name: string;
  /** `ssrf.range.<name>` */
  readonly rule: string;
  readonly reason: string;
  readonly network: IpAddress;
  readonly prefix: number;
  readonly embedded?: { readonly format: EmbeddedFormat; readonly block: EmbeddedBlock };
  readonly examples: Examples;
}

export interface HostnameEntry {
  readonly name: string;
  /** `ssrf.name.<name>` */
  readonly rule: string;
  readonly reason: string;
  readonly loopback: boolean;
  readonly exact: readonly string[];
  readonly suffixes: readonly string[];
  readonly examples: Examples;
}

export interface SsrfTable {
  readonly ranges: readonly RangeEntry[];
  readonly hostnames: readonly HostnameEntry[];
  /** Ranges of one family, longest prefix first, so the first match is the most specific. */
  readonly ipv4: readonly RangeEntry[];
  readonly ipv6: readonly RangeEntry[];
}

export class SsrfTableError extends Error {
  override readonly name = 'SsrfTableError';
}

const NAME = /^[a-z0-9][a-z0-9_]*$/;
const HOST_NAME = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;
const RANGE_KEYS = new Set(['cidr', 'name', 'reason', 'embedded_ipv4', 'examples']);
const HOSTNAME_KEYS = new Set(['name', 'loopback', 'exact', 'suffixes', 'reason', 'examples']);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(where: string, why: string): never {
  throw new SsrfTableError(`security/ssrf/blocked-ranges.yaml: ${where}: ${why}`);
}

function checkKeys(o: Obj, allowed: Set<string>, where: string): void {
  for (const k of Object.keys(o)) if (!allowed.has(k)) fail(where, `unknown key \`${k}\``);
}

function str(o: Obj, key: string, where: string, minLength = 1): string {
  const v = o[key];
  if (typeof v !== 'string' || v.length < minLength) fail(where, `\`${key}\` must be a string of at least ${minLength} characters`);
  return v;
}

function strList(v: unknown, where: string, nonEmpty: boolean): string[] {
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || s === '')) fail(where, 'must be a list of non-empty strings');
  if (nonEmpty && v.length === 0) fail(where, 'must not be empty');
  return v as string[];
}

function examples(o: Obj, where: string): Examples {
  const e = o['examples'];
  // Examples are left out of the shipped bundles (see esbuild.mjs); the tests check them on the files.
  if (e === undefined) return { match: [], no_match: [] };
  if (!isObj(e)) fail(where, '`examples` must be a mapping with `match` and `no_match`');
  checkKeys(e, new Set(['match', 'no_match']), `${where}.examples`);
  return {
    match: strList(e['match'], `${where}.examples.match`, true),
    no_match: strList(e['no_match'], `${where}.examples.no_match`, true),
  };
}

function parseRange(raw: unknown, i: number): RangeEntry {
  let where = `ranges[${i}]`;
  if (!isObj(raw)) fail(where, 'must be a mapping');
  checkKeys(raw, RANGE_KEYS, where);
  const cidr = str(raw, 'cidr', where);
  where = `ranges[${i}] (${cidr})`;
  const slash = cidr.indexOf('/');
  if (slash < 0) fail(where, 'cidr needs a /prefix');
  const addrText = cidr.slice(0, slash);
  const prefixText = cidr.slice(slash + 1);
  let network: IpAddress;
  try {
    network = addrText.includes(':')
      ? parseIpv6(addrText).ip
      : (parseCanonicalIpv4(addrText) ?? fail(where, 'not a canonical IPv4 address'));
  } catch (e) {
    fail(where, (e as Error).message);
  }
  const maxPrefix = network.kind() === 'ipv4' ? 32 : 128;
  if (!/^[0-9]{1,3}$/.test(prefixText) || Number(prefixText) > maxPrefix) fail(where, `prefix must be 0-${maxPrefix}`);
  const prefix = Number(prefixText);
  // Host bits set means the author meant a different block than the one that would be matched.
  const base = network.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(cidr) : ipaddr.IPv6.networkAddressFromCIDR(cidr);
  if (!sameIp(base, network)) fail(where, `host bits are set (network address is ${base.toString()})`);

  const name = str(raw, 'name', where);
  if (!NAME.test(name)) fail(where, `name \`${name}\` must match ${NAME}`);
  const reason = str(raw, 'reason', where, 10);

  let embedded: RangeEntry['embedded'];
  const emb = raw['embedded_ipv4'];
  if (emb !== undefined) {
    if (network.kind() !== 'ipv6') fail(where, '`embedded_ipv4` only applies to IPv6 ranges');
    if (!isObj(emb)) fail(where, '`embedded_ipv4` must be a mapping');
    checkKeys(emb, new Set(['format', 'block']), `${where}.embedded_ipv4`);
    const format = emb['format'];
    const block = emb['block'];
    if (format !== 'last32' && format !== '6to4' && format !== 'teredo')
      fail(where, '`embedded_ipv4.format` must be last32, 6to4 or teredo');
    if (block !== 'always' && block !== 'if_embedded_blocked') fail(where, '`embedded_ipv4.block` must be always or if_embedded_blocked');
    embedded = { format, block };
  }

  const ex = examples(raw, where);
  for (const a of [...ex.match, ...ex.no_match]) {
    let ip: IpAddress;
    try {
      ip = parseIpAddress(a).ip;
    } catch (e) {
      fail(where, `example \`${a}\`: ${(e as Error).message}`);
    }
    const inside = ip.kind() === network.kind() && ip.match(network, prefix);
    if (ex.match.includes(a) && !inside) fail(where, `match example \`${a}\` is outside ${cidr}`);
  }
  return { cidr, name, rule: `ssrf.range.${name}`, reason, network, prefix, ...(embedded ? { embedded } : {}), examples: ex };
}

function parseHostname(raw: unknown, i: number): HostnameEntry {
  let where = `hostnames[${i}]`;
  if (!isObj(raw)) fail(where, 'must be a mapping');
  checkKeys(raw, HOSTNAME_KEYS, where);
  const name = str(raw, 'name', where);
  where = `hostnames[${i}] (${name})`;
  if (!NAME.test(name)) fail(where, `name must match ${NAME}`);
  const loopback = raw['loopback'] ?? false;
  if (typeof loopback !== 'boolean') fail(where, '`loopback` must be true or false');
  const exact = strList(raw['exact'], `${where}.exact`, false);
  for (const h of exact) if (!HOST_NAME.test(h)) fail(where, `exact name \`${h}\` must be lower-case ASCII without a trailing dot`);
  const suffixes = strList(raw['suffixes'], `${where}.suffixes`, false);
  for (const s of suffixes)
    if (!s.startsWith('.') || !HOST_NAME.test(s.slice(1))) fail(where, `suffix \`${s}\` must be \`.\` followed by a lower-case ASCII name`);
  if (exact.length + suffixes.length === 0) fail(where, 'needs at least one exact name or suffix');
  return {
    name,
    rule: `ssrf.name.${name}`,
    reason: str(raw, 'reason', where, 10),
    loopback,
    exact,
    suffixes,
    examples: examples(raw, where),
  };
}

/** Validates the table's shape and data; throws SsrfTableError on anything malformed. */
export function loadSsrfTable(data: unknown): SsrfTable {
  if (!isObj(data)) fail('root', 'must be a mapping');
  checkKeys(data, new Set(['version', 'description', 'ranges', 'hostnames']), 'root');
  if (data['version'] !== 1) fail('root', '`version` must be 1');
  const rawRanges = data['ranges'];
  const rawHostnames = data['hostnames'];
  if (!Array.isArray(rawRanges) || rawRanges.length === 0) fail('root', '`ranges` must be a non-empty list');
  if (!Array.isArray(rawHostnames)) fail('root', '`hostnames` must be a list');
  const ranges = rawRanges.map(parseRange);
  const seen = new Set<string>();
  for (const r of ranges) {
    const key = `${r.network.toString()}/${r.prefix}`;
    if (seen.has(key)) fail(`ranges (${r.cidr})`, 'listed twice');
    seen.add(key);
  }
  const hostnames = rawHostnames.map(parseHostname);
  const byPrefix = (a: RangeEntry, b: RangeEntry) => b.prefix - a.prefix;
  return {
    ranges,
    hostnames,
    ipv4: ranges.filter((r) => r.network.kind() === 'ipv4').sort(byPrefix),
    ipv6: ranges.filter((r) => r.network.kind() === 'ipv6').sort(byPrefix),
  };
}

/** The table compiled into this build. */
export const SSRF_TABLE: SsrfTable = loadSsrfTable(rawTable);

/** The most specific range containing `ip`, if any. */
export function findRange(ip: IpAddress, table: SsrfTable = SSRF_TABLE): RangeEntry | undefined {
  const list = ip.kind() === 'ipv4' ? table.ipv4 : table.ipv6;
  return list.find((r) => ip.match(r.network, r.prefix));
}
