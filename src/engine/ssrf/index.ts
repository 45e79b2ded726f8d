// SSRF guard, pure part: decides whether a URL, host name or IP address may be contacted. No I/O;
// DNS resolution and the connection itself live in src/node/guarded-fetch.ts, which resolves once,
// checks every address here, and connects only to the address it checked.
import ipaddr from 'ipaddr.js';
import { type IpAddress, RULE_BAD_ADDRESS, RULE_BAD_URL, SsrfSyntaxError, formatIp, parseIpAddress } from './address';
import { type RangeEntry, type SsrfTable, SSRF_TABLE, findRange } from './table';
import { type ParsedTarget, crossCheckWhatwg, parseTarget } from './url';
import { errorMessage } from '../error-message';

export { parseTarget, crossCheckWhatwg, RULE_SCHEME, type ParsedTarget } from './url';
export { SsrfSyntaxError, parseIpAddress, formatIp, RULE_BAD_URL, RULE_BAD_ADDRESS, RULE_NONCANONICAL_IPV4 } from './address';
export { SSRF_TABLE, SsrfTableError, loadSsrfTable, findRange, type RangeEntry, type HostnameEntry, type SsrfTable } from './table';

export interface SsrfPolicy {
  /**
   * Loopback ports (127.0.0.0/8, ::1, loopback names) the user allows, e.g. a local dev server.
   * Empty by default. Nothing but a direct loopback destination on a listed port is ever allowed by it.
   */
  readonly allowLoopbackPorts: readonly number[];
}

export const DEFAULT_SSRF_POLICY: SsrfPolicy = { allowLoopbackPorts: [] };

export interface SsrfVerdict {
  readonly allowed: boolean;
  /** Rule id: `ssrf.range.<name>`, `ssrf.name.<name>`, `ssrf.scheme`, `ssrf.noncanonical_ipv4`, … */
  readonly rule?: string;
  readonly reason: string;
  /** The (canonical) address the verdict is about. */
  readonly address?: string;
}

export interface UrlVerdict extends SsrfVerdict {
  /** Canonical host: IP literal, or the ASCII (punycode) name to resolve. */
  readonly host?: string;
  readonly port?: number;
  readonly hostIsLiteral?: boolean;
  /** The host is a name: `allowed` is provisional until every address it resolves to passes checkAddress. */
  readonly needsResolution?: boolean;
  /** A loopback name allowed by allowLoopbackPorts: it must resolve to loopback addresses only. */
  readonly requireLoopback?: boolean;
}

export const RULE_ALLOW_LOOPBACK_PORT = 'ssrf.allow_loopback_port';
export const RULE_RESOLUTION_FAILED = 'ssrf.resolution_failed';

/** What the range table says about one address. */
export interface AddressClass {
  readonly blocked: boolean;
  /** The range that blocks it; for an embedded IPv4 that is blocked, the IPv4 address's range. */
  readonly range?: RangeEntry;
  /** The IPv6 range whose embedded IPv4 address was examined (IPv4-mapped, NAT64, 6to4, Teredo…). */
  readonly carrier?: RangeEntry;
  readonly embedded?: ipaddr.IPv4;
}

function ipv4FromWords(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([(hi >> 8) & 0xff, hi & 0xff, (lo >> 8) & 0xff, lo & 0xff]);
}

/** The IPv4 address an IPv6 transition address carries. */
export function extractEmbeddedIpv4(ip: ipaddr.IPv6, format: 'last32' | '6to4' | 'teredo'): ipaddr.IPv4 {
  const p = ip.parts;
  switch (format) {
    case 'last32':
      return ipv4FromWords(p[6]!, p[7]!);
    case '6to4':
      return ipv4FromWords(p[1]!, p[2]!); // 2002:AABB:CCDD::/48, bits 16-47
    case 'teredo':
      return ipv4FromWords(~p[6]! & 0xffff, ~p[7]! & 0xffff); // client address, bits inverted
  }
}

/** Longest-prefix lookup, then the embedded IPv4 rule of the IPv6 transition ranges. */
export function classifyAddress(ip: IpAddress, table: SsrfTable = SSRF_TABLE): AddressClass {
  const range = findRange(ip, table);
  if (!range) return { blocked: false };
  if (ip.kind() !== 'ipv6' || !range.embedded) return { blocked: true, range };
  const embedded = extractEmbeddedIpv4(ip as ipaddr.IPv6, range.embedded.format);
  const inner = findRange(embedded, table);
  if (inner) return { blocked: true, range: inner, carrier: range, embedded };
  if (range.embedded.block === 'always') return { blocked: true, range, carrier: range, embedded };
  return { blocked: false, carrier: range, embedded };
}

function loopbackPortAllowed(policy: SsrfPolicy | undefined, port: number): boolean {
  const ports = policy?.allowLoopbackPorts;
  return Array.isArray(ports) && Number.isInteger(port) && port > 0 && ports.includes(port);
}

function verdictForIp(ip: IpAddress, port: number, policy: SsrfPolicy, table: SsrfTable): SsrfVerdict {
  const text = formatIp(ip);
  const c = classifyAddress(ip, table);
  if (!c.blocked) {
    const via = c.embedded && c.carrier ? ` (${c.carrier.name} form of public IPv4 ${c.embedded.toString()})` : '';
    return { allowed: true, reason: `${text}${via} is not in any blocked range`, address: text };
  }
  const range = c.range!;
  // Only a direct loopback address: a loopback IPv4 embedded in IPv6 is a disguise, not a dev server.
  if (range.name === 'loopback' && !c.carrier && loopbackPortAllowed(policy, port)) {
    return {
      allowed: true,
      rule: RULE_ALLOW_LOOPBACK_PORT,
      reason: `${text} is loopback; port ${port} is allowed by the policy's allowLoopbackPorts`,
      address: text,
    };
  }
  const where =
    c.carrier && c.embedded && range !== c.carrier
      ? `${text} is a ${c.carrier.name} address (${c.carrier.cidr}) carrying IPv4 ${c.embedded.toString()}, which is in ${range.cidr}`
      : c.carrier && c.embedded
        ? `${text} (carrying IPv4 ${c.embedded.toString()}) is in ${range.cidr}`
        : `${text} is in ${range.cidr}`;
  return { allowed: false, rule: range.rule, reason: `${where}: ${range.reason}`, address: text };
}

function errorVerdict(e: unknown, address?: string): SsrfVerdict {
  // Anything unexpected fails closed too.
  const rule = e instanceof SsrfSyntaxError ? e.rule : RULE_BAD_URL;
  const reason = errorMessage(e);
  return address === undefined ? { allowed: false, rule, reason } : { allowed: false, rule, reason, address };
}

/** Verdict for connecting to `address` (an IP literal, e.g. a resolver's answer) on `port`. */
export function checkAddress(address: string, port: number, policy: SsrfPolicy, table: SsrfTable = SSRF_TABLE): SsrfVerdict {
  let ip: IpAddress;
  try {
    ip = parseIpAddress(String(address), RULE_BAD_ADDRESS).ip;
  } catch (e) {
    return errorVerdict(e, String(address));
  }
  return verdictForIp(ip, port, policy, table);
}

/**
 * Name-based verdict (loopback names, cloud metadata names, private-use suffixes). Allowed names
 * come back with `needsResolution`: the caller must still resolve and check every address.
 */
export function checkHostName(name: string, port: number, policy: SsrfPolicy, table: SsrfTable = SSRF_TABLE): UrlVerdict {
  const n = name.toLowerCase().replace(/\.+$/, '');
  for (const entry of table.hostnames) {
    const hit = entry.exact.includes(n) || entry.suffixes.some((s) => n === s.slice(1) || n.endsWith(s));
    if (!hit) continue;
    if (entry.loopback && loopbackPortAllowed(policy, port)) {
      return {
        allowed: true,
        rule: RULE_ALLOW_LOOPBACK_PORT,
        needsResolution: true,
        requireLoopback: true,
        reason: `\`${name}\` is a loopback name; port ${port} is allowed by the policy's allowLoopbackPorts (it must resolve to loopback addresses only)`,
      };
    }
    return { allowed: false, rule: entry.rule, reason: `\`${name}\` is ${entry.reason}` };
  }
  return {
    allowed: true,
    needsResolution: true,
    reason: `\`${name}\` is a name: every address it resolves to must pass the address check`,
  };
}

/**
 * Final verdict for a name once resolved: every address must pass (one blocked address blocks the
 * whole request, since the client may connect to any of them); no address blocks too. An allowed
 * verdict's `address` is the first one, the address to connect to (and nothing else).
 */
export function checkResolvedAddresses(
  syntax: UrlVerdict,
  addresses: readonly string[],
  policy: SsrfPolicy,
  table: SsrfTable = SSRF_TABLE,
): SsrfVerdict {
  if (!syntax.allowed) return syntax;
  const host = syntax.host ?? '(unknown host)';
  if (!Array.isArray(addresses) || addresses.length === 0) {
    return { allowed: false, rule: RULE_RESOLUTION_FAILED, reason: `\`${host}\` resolves to no address` };
  }
  const canonical: string[] = [];
  for (const address of addresses) {
    const v = checkAddress(address, syntax.port ?? 0, policy, table);
    if (!v.allowed) return { ...v, reason: `\`${host}\` resolves to ${String(address)}: ${v.reason}` };
    if (syntax.requireLoopback && v.rule !== RULE_ALLOW_LOOPBACK_PORT) {
      return {
        allowed: false,
        rule: 'ssrf.name.loopback',
        reason: `loopback name \`${host}\` resolves to ${v.address}, which is not a loopback address`,
        address: v.address!,
      };
    }
    canonical.push(v.address!);
  }
  const allowedBy = syntax.requireLoopback
    ? `loopback on port ${syntax.port}, allowed by the policy's allowLoopbackPorts`
    : 'none is in a blocked range';
  return {
    allowed: true,
    ...(syntax.requireLoopback ? { rule: RULE_ALLOW_LOOPBACK_PORT } : {}),
    reason: `\`${host}\` resolves to ${canonical.join(', ')}; ${allowedBy}`,
    address: canonical[0]!,
  };
}

/**
 * Everything that can be decided from the URL text alone: scheme, non-canonical IPv4, IP literal
 * ranges, host names. For a name, an allowed verdict has `needsResolution`; for a literal it is final.
 */
export function checkUrlSyntax(url: string, policy: SsrfPolicy, table: SsrfTable = SSRF_TABLE): UrlVerdict {
  let target: ParsedTarget;
  try {
    target = parseTarget(url);
  } catch (e) {
    return errorVerdict(e);
  }
  const { host, port } = target;
  if (target.hostIsLiteral) {
    const v = verdictForIp(target.address!, port, policy, table);
    if (!v.allowed) return { ...v, host, port, hostIsLiteral: true };
    try {
      crossCheckWhatwg(url, target);
    } catch (e) {
      return { ...errorVerdict(e), host, port, hostIsLiteral: true };
    }
    return { ...v, host, port, hostIsLiteral: true, needsResolution: false };
  }
  const byName = checkHostName(host, port, policy, table);
  if (!byName.allowed) return { ...byName, host, port, hostIsLiteral: false };
  let ascii: string;
  try {
    ascii = crossCheckWhatwg(url, target);
  } catch (e) {
    return { ...errorVerdict(e), host, port, hostIsLiteral: false };
  }
  // An IDN is checked again in the ASCII form that will actually be resolved.
  const v = ascii === host ? byName : checkHostName(ascii, port, policy, table);
  return { ...v, host: ascii, port, hostIsLiteral: false };
}
