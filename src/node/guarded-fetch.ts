// HTTP(S) requests that cannot be turned against internal services (SSRF). Each hop: check the URL
// text, resolve the name once, check every address, then connect to exactly the checked address
// (a pinned `lookup`, so no second DNS query can rebind the name). Redirects are followed by hand
// and every hop is checked from scratch. Every failure throws; callers fail closed.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { RULE_RESOLUTION_FAILED, type SsrfPolicy, type SsrfVerdict, checkResolvedAddresses, checkUrlSyntax } from '../engine/ssrf';
import { errorMessage } from '../engine/error-message';

export type Resolver = (host: string) => Promise<string[]>;

export interface GuardedFetchOptions {
  policy: SsrfPolicy;
  /** DNS; default `dns.promises.lookup(host, { all: true, verbatim: true })`. */
  resolver?: Resolver;
  /** Redirects to follow (default and hard maximum 5). */
  maxRedirects?: number;
  /** Whole operation, all hops included (default 30 s). */
  timeoutMs?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Response body cap (default 10 MiB). */
  maxBodyBytes?: number;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  finalUrl: string;
  /** Each redirect target, in order. */
  redirects: string[];
}

/** The SSRF guard refused a destination. Nothing was sent to it. */
export class SsrfBlockedError extends Error {
  override readonly name = 'SsrfBlockedError';
  constructor(
    readonly rule: string,
    message: string,
    readonly url: string,
    readonly address?: string,
  ) {
    super(message);
  }
}

export type GuardedFetchErrorCode = 'timeout' | 'too_many_redirects' | 'body_too_large' | 'network' | 'bad_redirect' | 'bad_options';

/** The request failed for a reason other than the SSRF policy. */
export class GuardedFetchError extends Error {
  override readonly name = 'GuardedFetchError';
  constructor(
    readonly code: GuardedFetchErrorCode,
    message: string,
    readonly url: string,
  ) {
    super(message);
  }
}

export const MAX_REDIRECTS = 5;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Headers that carry credentials: never sent to another origin after a redirect. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'x-auth-token']);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export const systemResolver: Resolver = async (host) => {
  const found = await dns.promises.lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
};

/** A deadline shared by every step of one guardedFetch call. */
class Deadline {
  private readonly end: number;
  constructor(readonly ms: number) {
    this.end = Date.now() + ms;
  }
  remaining(): number {
    return Math.max(0, this.end - Date.now());
  }
  error(url: string): GuardedFetchError {
    return new GuardedFetchError('timeout', `request to ${url} timed out after ${this.ms} ms`, url);
  }
  /** `p`, or a timeout error when the deadline passes first. */
  race<T>(p: Promise<T>, url: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(this.error(url)), this.remaining());
      p.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
  }
}

/**
 * Checks `url` completely: URL text, then (for a name) one resolution whose every address must pass.
 * A resolver failure, or no address, blocks. On success `verdict.address` is the address to connect to.
 */
export async function resolveAndCheck(
  url: string,
  policy: SsrfPolicy,
  resolver: Resolver = systemResolver,
): Promise<{ verdict: SsrfVerdict; addresses: string[] }> {
  const syntax = checkUrlSyntax(url, policy);
  if (!syntax.allowed) return { verdict: syntax, addresses: [] };
  if (!syntax.needsResolution) return { verdict: syntax, addresses: syntax.address ? [syntax.address] : [] };
  let addresses: string[];
  try {
    addresses = await resolver(syntax.host!);
  } catch (e) {
    const why = errorMessage(e);
    return {
      verdict: {
        allowed: false,
        rule: RULE_RESOLUTION_FAILED,
        reason: `could not resolve \`${syntax.host}\` (${why}); an unresolvable host is blocked`,
      },
      addresses: [],
    };
  }
  if (!Array.isArray(addresses)) addresses = [];
  return { verdict: checkResolvedAddresses(syntax, addresses, policy), addresses };
}

/** A `lookup` for http.request that answers only the already-checked address: no second DNS query. */
function pinnedLookup(address: string): net.LookupFunction {
  const family = address.includes(':') ? 6 : 4;
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** Where the next hop goes. An absolute or scheme-relative Location is checked as written. */
function redirectTarget(location: string, base: URL): string {
  const loc = location.trim();
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(loc)) return loc;
  if (/^[/\\]{2}/.test(loc)) return `${base.protocol}${loc}`;
  return new URL(loc, base).href;
}

const originOf = (u: URL) => `${u.protocol}//${u.host}`;

interface Hop {
  url: string;
  parsed: URL;
  address: string;
  host: string;
  hostIsLiteral: boolean;
}

async function checkHop(url: string, opts: GuardedFetchOptions, deadline: Deadline): Promise<Hop> {
  const { verdict } = await deadline.race(resolveAndCheck(url, opts.policy, opts.resolver ?? systemResolver), url);
  if (!verdict.allowed || !verdict.address) {
    throw new SsrfBlockedError(verdict.rule ?? 'ssrf', `SSRF guard blocked ${url}: ${verdict.reason}`, url, verdict.address);
  }
  // checkUrlSyntax already required the WHATWG parser to agree with our reading of the host.
  const parsed = new URL(url);
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  const hostIsLiteral = parsed.hostname.startsWith('[') || /^[0-9.]+$/.test(host);
  return { url, parsed, address: verdict.address, host, hostIsLiteral };
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

function requestOnce(
  hop: Hop,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  maxBodyBytes: number,
  readBody: (status: number, headers: http.IncomingHttpHeaders) => boolean,
  deadline: Deadline,
): Promise<RawResponse> {
  const { parsed } = hop;
  const isHttps = parsed.protocol === 'https:';
  const options: https.RequestOptions = {
    method,
    // A name stays the host (Host header, TLS SNI and certificate check use it); the pinned lookup
    // makes the socket go to the checked address. A literal is connected to directly.
    host: hop.hostIsLiteral ? hop.address : hop.host,
    port: Number(parsed.port) || (isHttps ? 443 : 80),
    path: `${parsed.pathname}${parsed.search}`,
    headers,
    lookup: pinnedLookup(hop.address),
    agent: false, // no pooled socket from another check, no proxy
    ...(parsed.username || parsed.password
      ? { auth: `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}` }
      : {}),
    ...(isHttps && !hop.hostIsLiteral ? { servername: hop.host.replace(/\.$/, '') } : {}),
  };
  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, value?: RawResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(value!);
    };
    const req = (isHttps ? https : http).request(options, (res) => {
      const status = res.statusCode ?? 0;
      const responseHeaders: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) responseHeaders[k] = v;
      if (!readBody(status, res.headers)) {
        res.destroy();
        finish(undefined, { status, headers: responseHeaders, body: Buffer.alloc(0) });
        return;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBodyBytes) {
        res.destroy();
        finish(
          new GuardedFetchError(
            'body_too_large',
            `response from ${hop.url} is ${declared} bytes, over the ${maxBodyBytes}-byte limit`,
            hop.url,
          ),
        );
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBodyBytes) {
          res.destroy();
          finish(new GuardedFetchError('body_too_large', `response from ${hop.url} exceeds the ${maxBodyBytes}-byte limit`, hop.url));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => finish(undefined, { status, headers: responseHeaders, body: Buffer.concat(chunks) }));
      res.on('error', (e) =>
        finish(new GuardedFetchError('network', `reading the response from ${hop.url} failed: ${e.message}`, hop.url)),
      );
      res.on('close', () => finish(new GuardedFetchError('network', `connection to ${hop.url} closed before the response ended`, hop.url)));
    });
    const timer = setTimeout(() => {
      finish(deadline.error(hop.url));
      req.destroy();
    }, deadline.remaining());
    req.on('error', (e) =>
      finish(new GuardedFetchError('network', `request to ${hop.url} (${hop.address}) failed: ${e.message}`, hop.url)),
    );
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/**
 * An HTTP(S) request under the SSRF policy. Throws SsrfBlockedError when any hop's destination is
 * blocked (before anything is sent to it), GuardedFetchError for timeouts, too many redirects,
 * oversized bodies and network errors.
 */
export async function guardedFetch(url: string, opts: GuardedFetchOptions): Promise<GuardedResponse> {
  if (!opts || typeof opts !== 'object' || !opts.policy)
    throw new GuardedFetchError('bad_options', 'guardedFetch needs options with a `policy`', String(url));
  const maxRedirects = Math.max(0, Math.min(MAX_REDIRECTS, Math.floor(opts.maxRedirects ?? MAX_REDIRECTS)));
  const deadline = new Deadline(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  let method = (opts.method ?? 'GET').toUpperCase();
  let body = opts.body === undefined ? undefined : Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(opts.body);
  let headers: Record<string, string> = { ...(opts.headers ?? {}) };
  const redirects: string[] = [];
  let current = url;

  for (;;) {
    const hop = await checkHop(current, opts, deadline);
    const sendHeaders = { ...headers };
    if (body !== undefined && !Object.keys(sendHeaders).some((k) => k.toLowerCase() === 'content-length')) {
      sendHeaders['Content-Length'] = String(body.length);
    }
    const res = await requestOnce(
      hop,
      method,
      sendHeaders,
      body,
      maxBodyBytes,
      // A redirect's body is never read: the connection is dropped and the next hop checked.
      (status, h) => !(REDIRECT_STATUSES.has(status) && h.location !== undefined),
      deadline,
    );
    const location = res.headers['location'];
    if (!REDIRECT_STATUSES.has(res.status) || location === undefined) {
      return { status: res.status, headers: res.headers, body: res.body, finalUrl: current, redirects };
    }
    if (redirects.length >= maxRedirects) {
      throw new GuardedFetchError(
        'too_many_redirects',
        `too many redirects: ${current} redirects again after ${redirects.length} (limit ${maxRedirects})`,
        current,
      );
    }
    let next: string;
    try {
      next = redirectTarget(Array.isArray(location) ? location[0]! : location, hop.parsed);
    } catch {
      throw new GuardedFetchError('bad_redirect', `${current} redirects to an unusable Location \`${String(location)}\``, current);
    }
    // 303, and 301/302 after POST, become GET without a body (what browsers and fetch do).
    if (res.status === 303 ? method !== 'HEAD' : (res.status === 301 || res.status === 302) && method === 'POST') {
      method = 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !['content-type', 'content-length'].includes(k.toLowerCase())));
    }
    let sameOrigin = false;
    try {
      sameOrigin = originOf(new URL(next)) === originOf(hop.parsed);
    } catch {
      sameOrigin = false; // unparsable: checkHop will refuse it
    }
    if (!sameOrigin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.has(k.toLowerCase())));
    redirects.push(next);
    current = next;
  }
}
