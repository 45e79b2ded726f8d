// Strict IP address text parsing. ipaddr.js does the range math, but its parsers accept the
// non-canonical forms we must reject (`0x7f.1`, `0177.0.0.1`, `127.1`, `::0x7f.0.0.1`) and read
// `::1.2.3.4` as IPv4-mapped, so addresses are parsed here and handed to ipaddr.js as octets/parts.
import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** A URL or address the SSRF guard refuses to interpret. `rule` is the verdict's rule id. */
export class SsrfSyntaxError extends Error {
  override readonly name = 'SsrfSyntaxError';
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
  }
}

export const RULE_BAD_URL = 'ssrf.bad_url';
export const RULE_BAD_ADDRESS = 'ssrf.bad_address';
export const RULE_NONCANONICAL_IPV4 = 'ssrf.noncanonical_ipv4';

const DEC_OCTET = /^(?:0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9a-f]{1,4}$/i;
/** RFC 6874 zone id characters (unreserved). */
const ZONE_ID = /^[A-Za-z0-9._~-]+$/;

/** Exactly four dotted-decimal octets without leading zeros; null for anything else. */
export function parseCanonicalIpv4(text: string): ipaddr.IPv4 | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const octets: number[] = [];
  for (const part of parts) {
    if (!DEC_OCTET.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    octets.push(n);
  }
  return new ipaddr.IPv4(octets);
}

/**
 * True when URL parsers (WHATWG "ends in a number") and inet_aton would read `host` as an IPv4
 * address rather than a DNS name: its last label (ignoring one trailing dot) is decimal or 0x-hex.
 */
export function looksLikeIpv4(host: string): boolean {
  const labels = host.split('.');
  if (labels.length > 1 && labels[labels.length - 1] === '') labels.pop();
  const last = labels[labels.length - 1] ?? '';
  return /^[0-9]+$/.test(last) || /^0x[0-9a-f]*$/i.test(last);
}

/** Why an IPv4-looking host is not canonical dotted decimal, or null if it is canonical. */
export function ipv4NoncanonicalReason(host: string): string | null {
  if (parseCanonicalIpv4(host)) return null;
  if (host.endsWith('.')) return 'it has a trailing dot';
  const parts = host.split('.');
  if (parts.some((p) => /^0x/i.test(p))) return 'it uses a hexadecimal part';
  if (parts.some((p) => /^0[0-9]/.test(p))) return 'it has a part with a leading zero (octal to some parsers, decimal to others)';
  if (parts.some((p) => p === '')) return 'it has an empty part';
  if (parts.some((p) => !/^[0-9]+$/.test(p))) return 'it mixes numbers and names';
  if (parts.length === 1) return 'it is a single integer';
  if (parts.length < 4) return `it has ${parts.length} parts instead of 4 (short form)`;
  if (parts.length > 4) return `it has ${parts.length} parts instead of 4`;
  return 'a part is greater than 255';
}

/**
 * Strict RFC 4291 text form (with an optional canonical dotted IPv4 tail and `%zone`).
 * Throws SsrfSyntaxError (`ssrf.noncanonical_ipv4` for a non-canonical IPv4 tail).
 */
export function parseIpv6(text: string, rule = RULE_BAD_ADDRESS): { ip: ipaddr.IPv6; zone?: string } {
  const bad = (why: string) => new SsrfSyntaxError(rule, `\`${text}\` is not a valid IPv6 address: ${why}`);
  let body = text;
  let zone: string | undefined;
  const pct = text.indexOf('%');
  if (pct >= 0) {
    zone = text.slice(pct + 1);
    body = text.slice(0, pct);
    if (!ZONE_ID.test(zone)) throw bad('malformed zone id');
  }
  const halves = body.split('::');
  if (halves.length > 2) throw bad('more than one `::`');
  const groups = (s: string, allowIpv4Tail: boolean): number[] => {
    if (s === '') return [];
    const items = s.split(':');
    const out: number[] = [];
    items.forEach((g, i) => {
      if (allowIpv4Tail && i === items.length - 1 && g.includes('.')) {
        const v4 = parseCanonicalIpv4(g);
        if (!v4) {
          if (looksLikeIpv4(g))
            throw new SsrfSyntaxError(
              RULE_NONCANONICAL_IPV4,
              `the IPv4 part \`${g}\` of \`${text}\` is not canonical dotted decimal: ${ipv4NoncanonicalReason(g)}`,
            );
          throw bad(`bad IPv4 part \`${g}\``);
        }
        const [a, b, c, d] = v4.octets as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else if (HEX_GROUP.test(g)) {
        out.push(parseInt(g, 16));
      } else {
        throw bad(`bad group \`${g}\``);
      }
    });
    return out;
  };
  let parts: number[];
  if (halves.length === 2) {
    const head = groups(halves[0]!, false);
    const tail = groups(halves[1]!, true);
    if (head.length + tail.length > 7) throw bad('too many groups');
    parts = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    parts = groups(body, true);
    if (parts.length !== 8) throw bad('wrong number of groups');
  }
  return zone === undefined ? { ip: new ipaddr.IPv6(parts) } : { ip: new ipaddr.IPv6(parts), zone };
}

/**
 * An IP address as returned by a resolver or written in a URL (IPv6 optionally in brackets).
 * Non-canonical IPv4 throws `ssrf.noncanonical_ipv4`; anything else unparsable throws `rule`.
 */
export function parseIpAddress(text: string, rule = RULE_BAD_ADDRESS): { ip: IpAddress; zone?: string } {
  let t = text;
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1);
  if (t.includes(':')) return parseIpv6(t, rule);
  const v4 = parseCanonicalIpv4(t);
  if (v4) return { ip: v4 };
  if (looksLikeIpv4(t))
    throw new SsrfSyntaxError(RULE_NONCANONICAL_IPV4, `\`${text}\` is not canonical dotted-decimal IPv4: ${ipv4NoncanonicalReason(t)}`);
  throw new SsrfSyntaxError(rule, `\`${text}\` is not an IP address`);
}

/** Display form: dotted decimal, or RFC 5952 for IPv6. */
export function formatIp(ip: IpAddress): string {
  return ip.kind() === 'ipv4' ? ip.toString() : (ip as ipaddr.IPv6).toRFC5952String();
}

export function sameIp(a: IpAddress, b: IpAddress): boolean {
  if (a.kind() !== b.kind()) return false;
  const x = a.toByteArray();
  const y = b.toByteArray();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
