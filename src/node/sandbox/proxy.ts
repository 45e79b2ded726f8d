// The sandbox's only way out to the network: an HTTP proxy outside the sandbox, reached from inside
// through a Unix socket bound into it (src/sandbox-init forwards 127.0.0.1:<port> to that socket).
// Every connection (a CONNECT tunnel or one absolute-URI plain HTTP request) must name a host in
// the allowed list, then passes Bulwark's SSRF checks: the name is resolved once here, every address
// is checked, and the connection goes to exactly the checked address (no second lookup to rebind).
// An IP literal the user listed explicitly may be a private or loopback address; link-local and
// cloud metadata addresses are refused even then. Each decision goes to `onDecision` (the audit log)
// before anything is dialled; every error refuses the connection and says why.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import {
  DEFAULT_SSRF_POLICY,
  RULE_NONCANONICAL_IPV4,
  RULE_RESOLUTION_FAILED,
  type SsrfPolicy,
  SsrfSyntaxError,
  checkAddress,
  checkHostName,
  checkResolvedAddresses,
  classifyAddress,
  crossCheckWhatwg,
  formatIp,
  parseIpAddress,
  parseTarget,
} from '../../engine/ssrf';
import { ipv4NoncanonicalReason, looksLikeIpv4 } from '../../engine/ssrf/address';
import { type Resolver, systemResolver } from '../guarded-fetch';
import { errorMessage } from '../../engine/error-message';

export const RULE_ALLOWED = 'sandbox.net.allowed';
/** Allowed although the address is in a blocked range: the allowed hosts list this IP literal itself. */
export const RULE_ALLOWED_LITERAL = 'sandbox.net.allowed_literal';
export const RULE_NOT_ALLOWED = 'sandbox.net.not_allowed';
export const RULE_BAD_REQUEST = 'sandbox.net.bad_request';
export const RULE_TOO_MANY_CONNECTIONS = 'sandbox.net.too_many_connections';
export const RULE_AUDIT_FAILED = 'sandbox.net.audit_failed';
export const RULE_PROXY_ERROR = 'sandbox.net.error';

/** SSRF range names refused even for an explicitly listed IP literal: instance credentials live there. */
const NEVER_ALLOWED_RANGES = new Set(['link_local', 'cloud_metadata']);

export interface ProxyDecision {
  readonly allowed: boolean;
  /** `CONNECT`, `GET`, …; '' when the request could not be read. */
  readonly method: string;
  /** Canonical host (lower-case ASCII name or IP literal); '' when unknown. */
  readonly host: string;
  /** 0 when unknown. */
  readonly port: number;
  /** The address connected to (allowed) or the one refused. */
  readonly address?: string;
  /** The allowed-hosts entry that matched, as written. */
  readonly entry?: string;
  readonly rule: string;
  readonly reason: string;
}

export interface FilteringProxyOptions {
  /** Unix socket to listen on; its directory must already exist, be ours and be private (0700). Created 0600. */
  socketPath?: string;
  /** Also (tests, benchmarks) listen on this TCP port of 127.0.0.1; 0 = any free port. */
  tcpPort?: number;
  /** `example.com`, `*.example.com` (subdomains only), an IP literal (`127.0.0.1`, `[::1]`), each with an optional `:port`. */
  allowHosts: readonly string[];
  /** Default: no loopback exception (DEFAULT_SSRF_POLICY). */
  policy?: SsrfPolicy;
  /** DNS; default `dns.promises.lookup(host, { all: true, verbatim: true })`. */
  resolver?: Resolver;
  /**
   * Every decision, allowed or refused. For an allowed one nothing is dialled until it returns (or
   * its promise resolves); a throw or rejection refuses the connection (an unaudited connection never happens).
   */
  onDecision?: (decision: ProxyDecision) => void | Promise<void>;
  /** Request line plus headers (default 16 KiB). */
  maxHeaderBytes?: number;
  /** Resolving plus connecting to the destination (default 10 s). */
  connectTimeoutMs?: number;
  /** Client connections at once, both listeners together (default 256). */
  maxConnections?: number;
  /** A client must finish sending its request headers within this (default 30 s). */
  headersTimeoutMs?: number;
}

export interface FilteringProxy {
  readonly socketPath?: string;
  /** The TCP port on 127.0.0.1, when `tcpPort` was given. */
  readonly tcpPort?: number;
  /** Client connections open now. */
  connections(): number;
  /** Stops listening and ends every connection and tunnel. */
  close(): Promise<void>;
}

export interface AllowedHost {
  /** The entry as written. */
  readonly entry: string;
  readonly kind: 'name' | 'wildcard' | 'ip';
  /** Lower-case name, the suffix after `*.`, or the canonical IP text. */
  readonly host: string;
  /** Any port when absent. */
  readonly port?: number;
}

const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** Parses one allowed-hosts entry; throws an Error that names the entry and what is wrong. */
export function parseAllowedHost(entry: string): AllowedHost {
  const bad = (why: string) => new Error(`allowed host \`${entry}\`: ${why}`);
  if (typeof entry !== 'string') throw bad('not a string');
  const text = entry.trim().toLowerCase();
  if (text === '') throw bad('empty');
  let hostText: string;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) throw bad('unclosed `[`');
    hostText = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) throw bad(`unexpected \`${rest}\` after the IPv6 address`);
    if (rest !== '') portText = rest.slice(1);
  } else if ((text.match(/:/g) ?? []).length > 1) {
    hostText = text; // a bare IPv6 address; write `[addr]:port` to give a port
  } else {
    const colon = text.indexOf(':');
    hostText = colon < 0 ? text : text.slice(0, colon);
    if (colon >= 0) portText = text.slice(colon + 1);
  }
  let port: number | undefined;
  if (portText !== undefined) {
    if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535)
      throw bad(`port \`${portText}\` is not a number from 1 to 65535`);
    port = Number(portText);
  }
  const withPort = <T extends object>(o: T) => (port === undefined ? o : { ...o, port });
  if (hostText.includes(':')) {
    let ip;
    try {
      ({ ip } = parseIpAddress(hostText));
    } catch (e) {
      throw bad((e as Error).message);
    }
    if (hostText.includes('%')) throw bad('IPv6 zone ids are not supported');
    return withPort({ entry, kind: 'ip' as const, host: formatIp(ip) });
  }
  if (hostText.startsWith('*.')) {
    const suffix = hostText.slice(2).replace(/\.$/, '');
    if (!HOST_NAME.test(suffix)) throw bad('`*.` must be followed by a host name');
    if (!suffix.includes('.')) throw bad('a wildcard needs at least two labels after `*.` (`*.com` would allow a whole top-level domain)');
    if (looksLikeIpv4(suffix)) throw bad('a wildcard cannot cover IP addresses');
    return withPort({ entry, kind: 'wildcard' as const, host: suffix });
  }
  if (hostText.includes('*'))
    throw bad('`*` is only allowed as a leading `*.` (a wildcard for subdomains); allowing every host is not an allowed-hosts entry');
  const name = hostText.replace(/\.$/, '');
  if (looksLikeIpv4(name)) {
    const reason = ipv4NoncanonicalReason(name);
    if (reason !== null) throw bad(`not a canonical IPv4 address: ${reason}`);
    return withPort({ entry, kind: 'ip' as const, host: name });
  }
  if (!HOST_NAME.test(name)) throw bad('not a host name or IP address');
  return withPort({ entry, kind: 'name' as const, host: name });
}

/** The first entry that allows `host:port` (host canonical; a literal only matches an IP entry). */
export function matchAllowedHost(
  allowed: readonly AllowedHost[],
  host: string,
  port: number,
  hostIsLiteral: boolean,
): AllowedHost | undefined {
  const name = host.toLowerCase().replace(/\.$/, '');
  return allowed.find((a) => {
    if (a.port !== undefined && a.port !== port) return false;
    if (hostIsLiteral) return a.kind === 'ip' && a.host === name;
    if (a.kind === 'name') return a.host === name;
    if (a.kind === 'wildcard') return name.endsWith(`.${a.host}`);
    return false;
  });
}

interface Target {
  host: string;
  port: number;
  hostIsLiteral: boolean;
}

/** A refusal before or instead of dialling: HTTP status, rule and why. */
class Refusal {
  constructor(
    readonly status: number,
    readonly rule: string,
    readonly reason: string,
    readonly address?: string,
    readonly entry?: string,
  ) {}
}

/** `host:port` for messages, IPv6 in brackets. */
const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/** Printable ASCII only (a status line must not carry CR/LF or other controls), bounded. */
function printable(s: string, max = 400): string {
  const clean = s.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}

/** The one text a refused client sees (status line and body); only the reason is shortened, never the rule. */
function refusalText(target: Target | undefined, r: Refusal, maxReason = 4000): string {
  const what = target ? hostPort(target.host, target.port) : 'request';
  return printable(`bulwark sandbox: ${what} refused: ${printable(r.reason, maxReason)} (rule ${r.rule})`, maxReason + 600);
}

/** A status line stays readable for clients that show it (Python's "Tunnel connection failed: 403 ..."). */
const STATUS_REASON_MAX = 300;

function rawResponse(target: Target | undefined, r: Refusal): string {
  const body = `${refusalText(target, r)}\n`;
  return `HTTP/1.1 ${r.status} ${refusalText(target, r, STATUS_REASON_MAX)}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Bulwark-Rule: ${r.rule}\r\nConnection: close\r\n\r\n${body}`;
}

/** Reads a target in authority form (`host:port`, CONNECT) or absolute form (`http://host:port/...`). */
function readTarget(text: string, form: 'authority' | 'absolute'): Target {
  if (/[\s\\]/.test(text) || /[^\x21-\x7e]/.test(text))
    throw new Refusal(400, RULE_BAD_REQUEST, 'the request target contains whitespace, a backslash or a non-ASCII character');
  let url: string;
  if (form === 'authority') {
    if (!/^(\[[0-9a-fA-F:.]+\]|[^/?#@[\]:]+):[0-9]{1,5}$/.test(text))
      throw new Refusal(400, RULE_BAD_REQUEST, `CONNECT target \`${printable(text, 200)}\` is not host:port`);
    url = `http://${text}/`;
  } else {
    if (!/^http:\/\//i.test(text)) {
      const why = /^https:\/\//i.test(text)
        ? 'an https:// URL must go through a CONNECT tunnel'
        : 'only CONNECT and absolute http:// request targets are proxied';
      throw new Refusal(400, RULE_BAD_REQUEST, why);
    }
    url = text;
  }
  try {
    const parsed = parseTarget(url);
    if (parsed.zone !== undefined) throw new Refusal(400, RULE_BAD_REQUEST, 'IPv6 zone ids are not supported');
    const host = crossCheckWhatwg(url, parsed);
    return { host: parsed.hostIsLiteral ? parsed.host : host, port: parsed.port, hostIsLiteral: parsed.hostIsLiteral };
  } catch (e) {
    if (e instanceof Refusal) throw e;
    if (e instanceof SsrfSyntaxError && e.rule === RULE_NONCANONICAL_IPV4) throw new Refusal(403, e.rule, e.message);
    throw new Refusal(400, RULE_BAD_REQUEST, errorMessage(e));
  }
}

/** The path and query of an absolute-form target, exactly as the client wrote them (no fragment). */
function originForm(absolute: string): string {
  const afterScheme = absolute.slice(absolute.indexOf('//') + 2);
  const start = afterScheme.search(/[/?#]/);
  const rest = start < 0 ? '' : afterScheme.slice(start).replace(/#.*$/s, '');
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** Headers that belong to one hop (RFC 9110 7.6.1), plus Proxy-Authorization: never passed on. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEndHeaders(raw: readonly string[], drop: readonly string[] = []): Record<string, string[]> {
  const connectionListed = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') for (const t of raw[i + 1]!.split(',')) connectionListed.add(t.trim().toLowerCase());
  }
  const out: Record<string, string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || connectionListed.has(lower) || drop.includes(lower)) continue;
    (out[name] ??= []).push(raw[i + 1]!);
  }
  return out;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
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

function checkPrivateDir(socketPath: string): void {
  const dir = path.dirname(socketPath);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (e) {
    throw new Error(`proxy socket directory ${dir} is not usable: ${(e as Error).message}`);
  }
  if (!st.isDirectory()) throw new Error(`proxy socket directory ${dir} is not a directory (or is a symbolic link)`);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid())
    throw new Error(`proxy socket directory ${dir} belongs to uid ${st.uid}, not to this process`);
  if ((st.mode & 0o077) !== 0)
    throw new Error(`proxy socket directory ${dir} has mode ${(st.mode & 0o777).toString(8)}; it must be private (0700)`);
}

export async function startFilteringProxy(opts: FilteringProxyOptions): Promise<FilteringProxy> {
  if (!opts || typeof opts !== 'object') throw new Error('startFilteringProxy needs options');
  if (opts.socketPath === undefined && opts.tcpPort === undefined) throw new Error('startFilteringProxy needs a socketPath or a tcpPort');
  if (!Array.isArray(opts.allowHosts)) throw new Error('startFilteringProxy needs allowHosts (a list, possibly empty)');
  const allowed = opts.allowHosts.map(parseAllowedHost);
  if (opts.socketPath !== undefined) checkPrivateDir(opts.socketPath);
  return new ProxyServer(opts, allowed).listen();
}

const refusedDecision = (method: string, target: Target | undefined, r: Refusal): ProxyDecision => ({
  allowed: false,
  method,
  host: target?.host ?? '',
  port: target?.port ?? 0,
  rule: r.rule,
  reason: r.reason,
  ...(r.address !== undefined ? { address: r.address } : {}),
  ...(r.entry !== undefined ? { entry: r.entry } : {}),
});

const asRefusal = (e: unknown) => (e instanceof Refusal ? e : new Refusal(500, RULE_PROXY_ERROR, `internal error: ${errorMessage(e)}`));

/** Both directions, half-closes passed on; either side failing ends both. */
function splice(a: net.Socket, b: net.Socket): void {
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', end);
  b.on('error', end);
  a.once('close', end);
  b.once('close', end);
  a.pipe(b);
  b.pipe(a);
}

function refuseHttp(res: http.ServerResponse, target: Target | undefined, r: Refusal): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${refusalText(target, r)}\n`;
  res.writeHead(r.status, refusalText(target, r, STATUS_REASON_MAX), {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Bulwark-Rule': r.rule,
    Connection: 'close',
  });
  res.end(body);
}

/**
 * One running proxy: its servers (a Unix socket, a TCP port or both), the connections it tracks, and for each
 * request the steps target → decide (allowed list, SSRF) → report → dial → splice or forward.
 */
class ProxyServer {
  private readonly policy: SsrfPolicy;
  private readonly resolver: Resolver;
  private readonly connectTimeoutMs: number;
  private readonly maxConnections: number;
  private readonly sockets = new Set<net.Socket>();
  private readonly overLimit = new WeakSet<net.Socket>();
  private readonly servers: http.Server[] = [];
  private clients = 0;
  private closing = false;

  constructor(
    private readonly opts: FilteringProxyOptions,
    private readonly allowed: ReturnType<typeof parseAllowedHost>[],
  ) {
    this.policy = opts.policy ?? DEFAULT_SSRF_POLICY;
    this.resolver = opts.resolver ?? systemResolver;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
    this.maxConnections = opts.maxConnections ?? 256;
  }

  async listen(): Promise<FilteringProxy> {
    const { opts } = this;
    let tcpPort: number | undefined;
    try {
      if (opts.socketPath !== undefined) {
        await this.listenOn(this.makeServer(), { path: opts.socketPath, exclusive: true });
        fs.chmodSync(opts.socketPath, 0o600);
      }
      if (opts.tcpPort !== undefined) {
        const s = this.makeServer();
        await this.listenOn(s, { host: '127.0.0.1', port: opts.tcpPort, exclusive: true });
        tcpPort = (s.address() as net.AddressInfo).port;
      }
    } catch (e) {
      await this.close();
      throw new Error(`the sandbox network proxy could not listen: ${errorMessage(e)}`);
    }
    return {
      ...(opts.socketPath !== undefined ? { socketPath: opts.socketPath } : {}),
      ...(tcpPort !== undefined ? { tcpPort } : {}),
      connections: () => this.clients,
      close: () => this.close(),
    };
  }

  private listenOn(server: http.Server, how: net.ListenOptions): Promise<void> {
    this.servers.push(server);
    return new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(how, () => {
        server.removeListener('error', reject);
        server.on('error', () => undefined);
        resolve();
      });
    });
  }

  private async close(): Promise<void> {
    this.closing = true;
    const done = this.servers.map((s) => new Promise<void>((r) => s.close(() => r())));
    for (const s of this.sockets) s.destroy();
    await Promise.all(done);
    if (this.opts.socketPath !== undefined) {
      try {
        if (fs.lstatSync(this.opts.socketPath).isSocket()) fs.unlinkSync(this.opts.socketPath);
      } catch {
        // already gone
      }
    }
  }

  private track(s: net.Socket): void {
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
    if (this.closing) s.destroy();
  }

  /** Reports a decision; for an allowed one, resolves only once the caller has taken it. */
  private async report(d: ProxyDecision): Promise<void> {
    const { onDecision } = this.opts;
    if (!onDecision) return;
    if (!d.allowed) {
      try {
        await onDecision(d);
      } catch {
        // The refusal stands whatever the recording did.
      }
      return;
    }
    await onDecision(d);
  }

  /** The whole verdict for one target: the allowed list, then SSRF; returns the address to dial. */
  private async decide(method: string, target: Target): Promise<ProxyDecision> {
    const { policy } = this;
    const where = hostPort(target.host, target.port);
    const match = matchAllowedHost(this.allowed, target.host, target.port, target.hostIsLiteral);
    if (!match) throw new Refusal(403, RULE_NOT_ALLOWED, 'not in the allowed hosts');
    const base = { method, host: target.host, port: target.port, entry: match.entry };
    if (target.hostIsLiteral) {
      const v = checkAddress(target.host, target.port, policy);
      if (v.allowed)
        return {
          ...base,
          allowed: true,
          address: v.address!,
          rule: RULE_ALLOWED,
          reason: `${where} is allowed by \`${match.entry}\`; ${v.reason}`,
        };
      const range = classifyAddress(parseIpAddress(target.host).ip).range;
      if (match.kind === 'ip' && range && !NEVER_ALLOWED_RANGES.has(range.name)) {
        return {
          ...base,
          allowed: true,
          address: target.host,
          rule: RULE_ALLOWED_LITERAL,
          reason: `${v.reason}; allowed because the allowed hosts list this address itself (\`${match.entry}\`)`,
        };
      }
      throw new Refusal(
        403,
        v.rule ?? RULE_PROXY_ERROR,
        `${v.reason}; link-local and cloud metadata addresses are refused even when listed`,
        v.address,
        match.entry,
      );
    }
    const byName = checkHostName(target.host, target.port, policy);
    if (!byName.allowed) throw new Refusal(403, byName.rule ?? RULE_PROXY_ERROR, byName.reason, undefined, match.entry);
    let addresses: string[];
    try {
      addresses = await withTimeout(this.resolver(target.host), this.connectTimeoutMs, `resolving ${target.host}`);
    } catch (e) {
      throw new Refusal(502, RULE_RESOLUTION_FAILED, `could not resolve \`${target.host}\` (${errorMessage(e)})`, undefined, match.entry);
    }
    const v = checkResolvedAddresses({ ...byName, host: target.host, port: target.port }, addresses, policy);
    if (!v.allowed || !v.address) throw new Refusal(403, v.rule ?? RULE_PROXY_ERROR, v.reason, v.address, match.entry);
    return {
      ...base,
      allowed: true,
      address: v.address,
      rule: RULE_ALLOWED,
      reason: `${where} is allowed by \`${match.entry}\`; ${v.reason}`,
    };
  }

  /** decide() and report(): the allowed decision, or a Refusal (already reported). */
  private async decideAndReport(method: string, target: Target): Promise<ProxyDecision> {
    let d: ProxyDecision;
    try {
      d = await this.decide(method, target);
    } catch (e) {
      const r = e instanceof Refusal ? e : new Refusal(500, RULE_PROXY_ERROR, `internal error while deciding: ${errorMessage(e)}`);
      await this.report(refusedDecision(method, target, r));
      throw r;
    }
    try {
      await this.report(d);
    } catch (e) {
      throw new Refusal(
        500,
        RULE_AUDIT_FAILED,
        `recording the decision failed (${errorMessage(e)}); an unrecorded connection is not made`,
        d.address,
        d.entry,
      );
    }
    return d;
  }

  /** Opens a TCP connection to the checked address, bounded by the connect timeout. */
  private dial(address: string, port: number): Promise<net.Socket> {
    const ms = this.connectTimeoutMs;
    return new Promise((resolve, reject) => {
      const up = net.connect({ host: address, port, allowHalfOpen: true });
      this.track(up);
      up.on('error', () => up.destroy()); // after the connect too: an unheard error event would end the process
      const timer = setTimeout(() => {
        up.destroy();
        reject(new Refusal(504, RULE_PROXY_ERROR, `connecting to ${hostPort(address, port)} timed out after ${ms} ms`, address));
      }, ms);
      up.once('connect', () => {
        clearTimeout(timer);
        resolve(up);
      });
      up.once('error', (e) => {
        clearTimeout(timer);
        reject(new Refusal(502, RULE_PROXY_ERROR, `connecting to ${hostPort(address, port)} failed: ${e.message}`, address));
      });
    });
  }

  /** The target of a request, or a refusal that is reported here (it never reaches decide()). */
  private async targetOf(method: string, text: string, form: 'authority' | 'absolute'): Promise<Target> {
    try {
      return readTarget(text, form);
    } catch (e) {
      const r = e instanceof Refusal ? e : new Refusal(400, RULE_BAD_REQUEST, errorMessage(e));
      await this.report(refusedDecision(method, undefined, r));
      throw r;
    }
  }

  private async handleConnect(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    if (this.overLimit.has(client)) return;
    let target: Target | undefined;
    let up: net.Socket | undefined;
    try {
      target = await this.targetOf('CONNECT', req.url ?? '', 'authority');
      const d = await this.decideAndReport('CONNECT', target);
      if (client.destroyed) return;
      up = await this.dial(d.address!, target.port);
      if (client.destroyed) {
        up.destroy();
        return;
      }
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      if (head.length > 0) up.write(head);
      splice(client, up);
    } catch (e) {
      up?.destroy();
      if (!client.destroyed) client.end(rawResponse(target, asRefusal(e)));
    }
  }

  private async handleRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (this.overLimit.has(req.socket)) return;
    const method = req.method ?? '';
    let target: Target | undefined;
    let up: net.Socket | undefined;
    try {
      target = await this.targetOf(method, req.url ?? '', 'absolute');
      const d = await this.decideAndReport(method, target);
      if (res.destroyed) return;
      up = await this.dial(d.address!, target.port);
      if (res.destroyed) {
        up.destroy();
        return;
      }
      forward(req, res, up, target, d);
    } catch (e) {
      up?.destroy();
      req.resume(); // drain a body nobody will read
      refuseHttp(res, target, asRefusal(e));
    }
  }

  private onClientError(err: NodeJS.ErrnoException, socket: net.Socket): void {
    if (this.overLimit.has(socket) || err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'HPE_HEADER_TIMEOUT';
    const why =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? `the request line and headers exceed ${this.opts.maxHeaderBytes ?? 16 * 1024} bytes`
        : timeout
          ? 'the request headers did not arrive in time'
          : `malformed request (${err.code ?? 'parse error'}: ${err.message})`;
    const r = new Refusal(timeout ? 408 : 400, RULE_BAD_REQUEST, why);
    void this.report(refusedDecision('', undefined, r));
    socket.end(rawResponse(undefined, r));
    socket.destroySoon();
  }

  private onConnection(socket: net.Socket): void {
    this.track(socket);
    this.clients++;
    socket.once('close', () => this.clients--);
    socket.on('error', () => socket.destroy());
    if (this.clients > this.maxConnections) {
      this.overLimit.add(socket);
      const r = new Refusal(503, RULE_TOO_MANY_CONNECTIONS, `more than ${this.maxConnections} connections at once`);
      void this.report(refusedDecision('', undefined, r));
      socket.end(rawResponse(undefined, r));
      socket.destroySoon();
    }
  }

  private makeServer(): http.Server {
    const { opts } = this;
    const server = http.createServer({
      maxHeaderSize: opts.maxHeaderBytes ?? 16 * 1024,
      headersTimeout: opts.headersTimeoutMs ?? 30_000,
      requestTimeout: 0, // uploads may be long; the header deadline above bounds a silent client
      connectionsCheckingInterval: Math.min(1000, opts.headersTimeoutMs ?? 1000),
      requireHostHeader: false, // the target comes from the request line, never from Host
    });
    server.on('connection', (socket: net.Socket) => this.onConnection(socket));
    server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      this.handleConnect(req, socket, head).catch(() => socket.destroy());
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      this.handleRequest(req, res).catch(() => res.destroy());
    });
    server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
      const r = new Refusal(400, RULE_BAD_REQUEST, 'protocol upgrades are not proxied over plain HTTP; use a CONNECT tunnel');
      void this.report(refusedDecision(req.method ?? '', undefined, r));
      socket.on('error', () => socket.destroy());
      socket.end(rawResponse(undefined, r));
    });
    server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => this.onClientError(err, socket));
    return server;
  }
}

/** A plain HTTP request sent on over the connection to the checked address, and its response passed back. */
function forward(req: http.IncomingMessage, res: http.ServerResponse, connection: net.Socket, target: Target, d: ProxyDecision): void {
  const method = req.method ?? '';
  const to = hostPort(d.address!, target.port);
  // Host names the checked target, whatever the client's Host header said.
  const headers = { ...endToEndHeaders(req.rawHeaders, ['host']), Host: hostPort(target.host, target.port).replace(/:80$/, '') };
  // No agent: the request goes over exactly this connection (an agent would dial its own).
  const upReq = http.request({ createConnection: () => connection, method, path: originForm(req.url!), headers, setHost: false });
  upReq.on('response', (upRes) => {
    upRes.on('error', () => res.destroy());
    try {
      res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, endToEndHeaders(upRes.rawHeaders));
    } catch (e) {
      refuseHttp(
        res,
        target,
        new Refusal(502, RULE_PROXY_ERROR, `the response from ${to} cannot be passed on: ${(e as Error).message}`, d.address),
      );
      upReq.destroy();
      return;
    }
    upRes.pipe(res);
  });
  upReq.on('error', (e) =>
    refuseHttp(res, target, new Refusal(502, RULE_PROXY_ERROR, `the request to ${to} failed: ${e.message}`, d.address)),
  );
  res.once('close', () => upReq.destroy());
  req.pipe(upReq);
}
