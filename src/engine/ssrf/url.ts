// Reads the scheme, host and port from the URL text exactly as written. The WHATWG URL parser
// (`new URL`, fetch, undici) silently turns `0x7f.1`, `2130706433`, `0177.0.0.1` and `127.1` into
// 127.0.0.1, and other clients (curl, Python, Go) read some of those differently, so the host is
// judged from the raw text before any normalisation, then cross-checked against WHATWG.
import {
  type IpAddress,
  RULE_BAD_URL,
  RULE_NONCANONICAL_IPV4,
  SsrfSyntaxError,
  formatIp,
  ipv4NoncanonicalReason,
  looksLikeIpv4,
  parseCanonicalIpv4,
  parseIpAddress,
  parseIpv6,
  sameIp,
} from './address';

export const RULE_SCHEME = 'ssrf.scheme';

export interface ParsedTarget {
  /** Lower-case, without the colon: `http` or `https`. */
  readonly scheme: string;
  /**
   * Canonical host: dotted-decimal IPv4, RFC 5952 IPv6 (no brackets, no zone), or a lower-case
   * name (possibly non-ASCII; see `crossCheckWhatwg` for its ASCII form).
   */
  readonly host: string;
  readonly port: number;
  readonly hostIsLiteral: boolean;
  /** The literal address, when `hostIsLiteral`. */
  readonly address?: IpAddress;
  /** IPv6 zone id (`[fe80::1%25eth0]`), when given. */
  readonly zone?: string;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443 };
const MAX_URL_LENGTH = 16 * 1024;
/** WHATWG forbidden domain code points (plus space), checked after percent-decoding. */
const FORBIDDEN_HOST_CHARS = /[\u0000-\u0020#%/:<>?@[\\\]^|\u007f]/;

function badUrl(url: string, why: string): SsrfSyntaxError {
  const shown = url.length > 200 ? `${url.slice(0, 200)}…` : url;
  return new SsrfSyntaxError(RULE_BAD_URL, `bad URL \`${shown}\`: ${why}`);
}

/**
 * Scheme, host and port of `url`. Throws SsrfSyntaxError with rule `ssrf.scheme` (not http/https),
 * `ssrf.noncanonical_ipv4` (IPv4 host in octal/hex/integer/short form) or `ssrf.bad_url`.
 */
export function parseTarget(url: string): ParsedTarget {
  if (typeof url !== 'string') throw badUrl(String(url), 'not a string');
  if (url.length > MAX_URL_LENGTH) throw badUrl(url, `longer than ${MAX_URL_LENGTH} characters`);
  // WHATWG strips leading/trailing C0 controls and spaces, and silently deletes tabs and newlines
  // anywhere (`http://12\t7.0.0.1`). Strip the ends like it does; refuse controls inside.
  const s = url.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
  if (/[\u0000-\u001f\u007f]/.test(s)) throw badUrl(url, 'it contains control characters (tab, newline, NUL…)');

  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(s);
  if (!schemeMatch) throw badUrl(url, 'no scheme; give an absolute http:// or https:// URL');
  const scheme = schemeMatch[1]!.toLowerCase();
  const defaultPort = DEFAULT_PORTS[scheme];
  if (defaultPort === undefined) {
    throw new SsrfSyntaxError(RULE_SCHEME, `scheme \`${scheme}:\` is not allowed; only http: and https: requests may leave the machine`);
  }

  // For http(s) WHATWG skips any run of `/` and `\` after the colon (`http:\\host`, `http:host`),
  // and the authority ends at the first `/`, `\`, `?` or `#`.
  const afterScheme = s.slice(schemeMatch[0].length).replace(/^[/\\]*/, '');
  const end = afterScheme.search(/[/\\?#]/);
  const authority = end < 0 ? afterScheme : afterScheme.slice(0, end);
  // The host follows the LAST `@` (WHATWG), so `http://evil.com@127.0.0.1/` targets 127.0.0.1.
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  if (/\s/.test(hostPort)) throw badUrl(url, 'whitespace in the host');

  let hostText: string;
  let portText: string;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0) throw badUrl(url, 'unclosed `[` in the host');
    hostText = hostPort.slice(0, close + 1);
    const rest = hostPort.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) throw badUrl(url, `unexpected \`${rest}\` after the IPv6 address`);
    portText = rest.slice(1);
  } else {
    const colon = hostPort.indexOf(':');
    hostText = colon < 0 ? hostPort : hostPort.slice(0, colon);
    portText = colon < 0 ? '' : hostPort.slice(colon + 1);
  }

  let port = defaultPort;
  if (portText !== '') {
    if (!/^[0-9]+$/.test(portText)) throw badUrl(url, `port \`${portText}\` is not a number`);
    port = Number(portText);
    if (port < 1 || port > 65535) throw badUrl(url, `port ${portText} is out of range 1-65535`);
  }

  if (hostText === '') throw badUrl(url, 'no host');

  if (hostText.startsWith('[')) {
    let inner = hostText.slice(1, -1);
    // RFC 6874 zone ids are written `%25zone` in URLs; accept a bare `%` too.
    inner = inner.replace(/%25/, '%');
    const { ip, zone } = parseIpv6(inner, RULE_BAD_URL);
    return { scheme, host: formatIp(ip), port, hostIsLiteral: true, address: ip, ...(zone !== undefined ? { zone } : {}) };
  }

  const name = normaliseHostName(hostText, url);
  if (looksLikeIpv4(name)) {
    const v4 = parseCanonicalIpv4(name);
    if (!v4) {
      throw new SsrfSyntaxError(
        RULE_NONCANONICAL_IPV4,
        `host \`${hostText}\` is a non-canonical IPv4 address (${ipv4NoncanonicalReason(name)}); URL parsers disagree about such forms (\`0x7f.1\`, \`2130706433\` and \`0177.0.0.1\` all mean 127.0.0.1 to some), so write four plain decimal numbers`,
      );
    }
    return { scheme, host: formatIp(v4), port, hostIsLiteral: true, address: v4 };
  }
  return { scheme, host: name, port, hostIsLiteral: false };
}

/**
 * Percent-decodes and folds a host name the way WHATWG's domain-to-ASCII does for everything that
 * matters here: NFKC (fullwidth `１２７．０．０．１` becomes ASCII), ideographic full stops become dots,
 * default-ignorable code points (soft hyphen, zero-width space) vanish, lower case.
 */
function normaliseHostName(hostText: string, url: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(hostText);
  } catch {
    throw badUrl(url, 'malformed percent-encoding in the host');
  }
  const name = decoded
    .normalize('NFKC')
    .replace(/[\u3002\uff0e\uff61]/g, '.')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .toLowerCase();
  if (name === '') throw badUrl(url, 'empty host');
  if (FORBIDDEN_HOST_CHARS.test(name)) throw badUrl(url, `host \`${hostText}\` contains a character not allowed in host names`);
  return name;
}

/** True for names that are plain ASCII (no IDN processing needed to compare them). */
const isAscii = (s: string) => /^[\u0000-\u007f]*$/.test(s);

/**
 * Parses `url` with the WHATWG parser (the one Node's http stack and fetch use) and requires it
 * to agree with `parsed` on scheme, port and host. Returns the host as WHATWG sees it (ASCII,
 * punycode for IDNs). Any disagreement is a parser differential an attacker could exploit, so it
 * throws `ssrf.bad_url`.
 */
export function crossCheckWhatwg(url: string, parsed: ParsedTarget): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw badUrl(url, 'the standard URL parser rejects it');
  }
  const disagree = (what: string) => badUrl(url, `URL parsers disagree about the ${what}; refusing an ambiguous URL`);
  if (u.protocol !== `${parsed.scheme}:`) throw disagree('scheme');
  const whatwgPort = u.port === '' ? DEFAULT_PORTS[parsed.scheme] : Number(u.port);
  if (whatwgPort !== parsed.port) throw disagree('port');
  const whatwgHost = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  let whatwgIp: IpAddress | undefined;
  try {
    whatwgIp = parseIpAddress(whatwgHost).ip;
  } catch {
    whatwgIp = undefined;
  }
  if (parsed.hostIsLiteral) {
    if (!whatwgIp || !parsed.address || !sameIp(whatwgIp, parsed.address)) throw disagree('host address');
    return formatIp(whatwgIp);
  }
  if (whatwgIp) throw disagree('host (a name to us, an IP address to WHATWG)');
  if (isAscii(parsed.host) && whatwgHost !== parsed.host) throw disagree('host name');
  return whatwgHost;
}
