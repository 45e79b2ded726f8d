// Handlers for commands that reach the network: HTTP clients, sockets, remote shells and copies,
// DNS tools, package managers, containers and database clients (git: git.ts).
import { has, lastValue, parseOpts, values } from '../options';
import { literalWord, sliceWord, unknownWord, type WordValue } from '../words';
import {
  DOT,
  childOf,
  clip,
  fileUrlPath,
  genericReads,
  isRemoteSpec,
  joinWord,
  proxyAddress,
  register,
  remoteHost,
  type Inv,
  type Registry,
} from '../helpers';
import { LOOPBACK, serveFiles } from './shared';

export const NET_COMMANDS: Registry = new Map();
const reg = (names: string | readonly string[], fn: (inv: Inv) => void) => register(NET_COMMANDS, names, fn);

/** Last path component of a URL (what `curl -O` / `wget` name the file), or '' if none. */
function urlFileName(url: string): string {
  const noScheme = url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, '');
  const slash = noScheme.indexOf('/');
  if (slash < 0) return '';
  const path = noScheme.slice(slash).replace(/[?#].*$/, '');
  return path.slice(path.lastIndexOf('/') + 1);
}

/** A URL operand: file:// is a read, anything else is a network target. */
function urlOperand(inv: Inv, w: WordValue, what: string): void {
  const f = w.dynamic ? null : fileUrlPath(w.text);
  if (f !== null) inv.an.read(literalWord(f), inv.scope);
  else inv.an.netWord(w, what);
}

// ------------------------------------------------------------------------------------------
// HTTP clients.

const CURL_VALUED_SHORT = 'dDeEFHKmoQrTuUwxXyYzbcCPt';
const CURL_VALUED_LONG = [
  'data',
  'data-raw',
  'data-binary',
  'data-ascii',
  'data-urlencode',
  'json',
  'form',
  'form-string',
  'header',
  'proxy-header',
  'output',
  'upload-file',
  'user',
  'request',
  'url',
  'referer',
  'user-agent',
  'cookie',
  'cookie-jar',
  'config',
  'max-time',
  'connect-timeout',
  'write-out',
  'proxy',
  'proxy-user',
  'resolve',
  'connect-to',
  'range',
  'continue-at',
  'cert',
  'key',
  'cacert',
  'capath',
  'dump-header',
  'trace',
  'trace-ascii',
  'stderr',
  'output-dir',
  'retry',
  'retry-delay',
  'retry-max-time',
  'limit-rate',
  'time-cond',
  'interface',
  'local-port',
  'max-filesize',
  'netrc-file',
  'unix-socket',
  'abstract-unix-socket',
  'oauth2-bearer',
  'aws-sigv4',
  'proto',
  'proto-redir',
  'max-redirs',
  'speed-limit',
  'speed-time',
  'expect100-timeout',
  'keepalive-time',
  'key-type',
  'cert-type',
  'pass',
  'engine',
  'ciphers',
  'tls-max',
  'dns-servers',
  'doh-url',
  'preproxy',
  'socks4',
  'socks4a',
  'socks5',
  'socks5-hostname',
  'noproxy',
  'hostpubmd5',
  'hostpubsha256',
  'pinnedpubkey',
  'request-target',
  'variable',
  'url-query',
  'quote',
  'ftp-port',
  'mail-from',
  'mail-rcpt',
  'mail-auth',
  'login-options',
  'sasl-authzid',
  'service-name',
  'telnet-option',
  'tlsuser',
  'tlspassword',
  'proxy-cacert',
  'proxy-cert',
  'proxy-key',
  'etag-save',
  'etag-compare',
  'hsts',
  'alt-svc',
  'ip-tos',
  'vlan-priority',
  'happy-eyeballs-timeout-ms',
  'ech',
  'trace-config',
];

reg('curl', (inv) => {
  const { an, scope } = inv;
  const p = parseOpts(inv.args, { short: CURL_VALUED_SHORT, long: CURL_VALUED_LONG });
  const urls = [...p.pos, ...values(p, '--url')];
  let remote = false;
  for (const u of urls) {
    if (!u.dynamic && fileUrlPath(u.text) !== null) urlOperand(inv, u, 'curl');
    else {
      remote = true;
      an.netWord(u, 'curl');
    }
  }
  for (const x of values(p, '-x', '--proxy', '--preproxy', '--socks4', '--socks4a', '--socks5', '--socks5-hostname'))
    an.netWord(proxyAddress(x), 'curl proxy');
  // `--resolve HOST:PORT:ADDR[,ADDR…]` and `--connect-to HOST:PORT:HOST2:PORT2` choose the address
  // actually connected to: it is checked like the URL's own.
  for (const r of values(p, '--resolve')) for (const t of resolveTargets(r)) an.netWord(t, 'curl --resolve');
  for (const c of values(p, '--connect-to')) for (const t of connectToTargets(c)) an.netWord(t, 'curl --connect-to');
  const cfg = values(p, '-K', '--config');
  if (cfg.length) an.net();
  for (const f of cfg) {
    // A config file holds more options (URLs, proxies, uploads): what the command does is not known here.
    if (f.text !== '-') an.read(f, scope);
    an.opaque(
      f.text === '-' && !f.dynamic
        ? 'curl -K - reads its options from stdin'
        : `curl -K \`${clip(f.raw)}\` takes its options (addresses, uploads) from a file`,
    );
  }
  if (has(p, '-n', '--netrc', '--netrc-optional') && scope.home !== null) an.read(literalWord(scope.home + '/.netrc'), scope);
  for (const f of values(
    p,
    '--netrc-file',
    '-E',
    '--cert',
    '--key',
    '--cacert',
    '--capath',
    '--proxy-cacert',
    '--proxy-cert',
    '--proxy-key',
    '--unix-socket',
    '--etag-compare',
  ))
    an.read(f, scope);
  for (const f of values(p, '-T', '--upload-file')) if (f.text !== '-' && f.text !== '.') an.read(f, scope);
  // @file payloads: -d @f, --data-binary @f, --json @f, --data-urlencode name@f, -F name=@f / name=<f, -H @f.
  for (const d of values(p, '-d', '--data', '--data-binary', '--data-ascii', '--json', '-H', '--header', '--proxy-header')) {
    if (d.text.startsWith('@') && d.text !== '@-') an.read(sliceWord(d, 1), scope);
  }
  for (const d of values(p, '--data-urlencode')) {
    const at = d.text.indexOf('@');
    if (at >= 0 && !d.text.slice(0, at).includes('=') && d.text.slice(at + 1) !== '-') an.read(sliceWord(d, at + 1), scope);
  }
  for (const f of values(p, '-F', '--form')) {
    const m = /^[^=]*=([@<])/.exec(f.text);
    if (!m) continue;
    const start = m[0].length;
    const rest = f.text.slice(start);
    const end = rest.search(/;(type|filename|headers|encoder)=/);
    const w = sliceWord(f, start);
    const path = end >= 0 ? { ...w, text: rest.slice(0, end), prefix: w.prefix.slice(0, end) } : w;
    if (path.text !== '-') an.read(path, scope);
  }
  for (const c of values(p, '-b', '--cookie')) if (!c.text.includes('=') && c.text !== '-') an.read(c, scope);
  const outDir = lastValue(p, '--output-dir');
  const underOutDir = (w: WordValue) =>
    outDir && !/^[\\/~]/.test(w.text) && !/^[A-Za-z]:/.test(w.text) ? joinWord(outDir, w.text, an.platform) : w;
  for (const o of values(p, '-o', '--output')) if (o.text !== '-' || o.dynamic) an.write(underOutDir(o), scope);
  for (const o of values(
    p,
    '-c',
    '--cookie-jar',
    '-D',
    '--dump-header',
    '--trace',
    '--trace-ascii',
    '--stderr',
    '--etag-save',
    '--hsts',
    '--alt-svc',
  )) {
    if (o.text !== '-' && o.text !== '%') an.write(o, scope);
  }
  if (has(p, '-J', '--remote-header-name') && has(p, '-O', '--remote-name', '--remote-name-all')) {
    an.opaque('curl -J lets the server choose the output file name');
  }
  if (has(p, '-O', '--remote-name', '--remote-name-all')) {
    const dir = outDir ?? DOT;
    for (const u of urls) {
      if (u.dynamic) {
        an.opaque(`curl -O output name comes from a non-literal URL \`${clip(u.raw)}\``);
        continue;
      }
      const name = urlFileName(u.text);
      if (name) an.write(joinWord(dir, name, an.platform), scope);
    }
  }
  if (remote) an.net();
});

/** The addresses in `--resolve [+]HOST:PORT:ADDR[,ADDR]…` (IPv6 in brackets), as `ADDR:PORT`. */
function resolveTargets(w: WordValue): WordValue[] {
  if (w.dynamic) return [w];
  const m = /^\+?([^:]*|\[[^\]]*\]):(\d+|\*):(.+)$/.exec(w.text);
  if (!m) return [w];
  return m[3]!
    .split(',')
    .filter(Boolean)
    .map((a) => literalWord(`${/^[\d.]+$|^\[/.test(a) || !a.includes(':') ? a : `[${a}]`}:${m[2] === '*' ? '80' : m[2]}`));
}

/** The target of `--connect-to HOST1:PORT1:HOST2:PORT2`, as `HOST2:PORT2` (empty parts keep the URL's). */
function connectToTargets(w: WordValue): WordValue[] {
  if (w.dynamic) return [w];
  const m = /^(\[[^\]]*\]|[^:]*):(\d*):(\[[^\]]*\]|[^:]*):(\d*)$/.exec(w.text);
  if (!m) return [w];
  return m[3] === '' ? [] : [literalWord(m[4] ? `${m[3]}:${m[4]}` : m[3]!)];
}

reg('wget', (inv) => {
  const { an, scope } = inv;
  const p = parseOpts(inv.args, {
    short: 'OoaiPtTUeDARlQwBIXY',
    long: [
      'output-document',
      'output-file',
      'append-output',
      'input-file',
      'directory-prefix',
      'tries',
      'timeout',
      'user-agent',
      'execute',
      'domains',
      'accept',
      'reject',
      'level',
      'quota',
      'wait',
      'base',
      'include-directories',
      'exclude-directories',
      'header',
      'post-data',
      'post-file',
      'body-data',
      'body-file',
      'method',
      'load-cookies',
      'save-cookies',
      'ca-certificate',
      'certificate',
      'private-key',
      'user',
      'password',
      'http-user',
      'http-password',
      'ftp-user',
      'ftp-password',
      'proxy-user',
      'proxy-password',
      'limit-rate',
      'bind-address',
      'dns-timeout',
      'connect-timeout',
      'read-timeout',
      'referer',
      'restrict-file-names',
      'cut-dirs',
      'default-page',
      'adjust-extension',
      'config',
      'rejected-log',
      'warc-file',
      'accept-regex',
      'reject-regex',
      'regex-type',
      'ca-directory',
      'crl-file',
      'random-file',
      'egd-file',
      'hsts-file',
      'secure-protocol',
      'e',
    ],
    flags: [
      'recursive',
      'mirror',
      'page-requisites',
      'no-directories',
      'force-directories',
      'continue',
      'timestamping',
      'quiet',
      'verbose',
      'no-verbose',
      'no-clobber',
      'no-parent',
      'spider',
      'server-response',
      'no-check-certificate',
      'content-disposition',
      'trust-server-names',
      'background',
    ],
  });
  const urls = p.pos;
  const inputs = values(p, '-i', '--input-file');
  if (urls.length || inputs.length) an.net();
  for (const u of urls) urlOperand(inv, u, 'wget');
  for (const f of [
    ...inputs,
    ...values(
      p,
      '--post-file',
      '--body-file',
      '--load-cookies',
      '--ca-certificate',
      '--certificate',
      '--private-key',
      '--config',
      '--crl-file',
    ),
  ])
    if (f.text !== '-') an.read(f, scope);
  for (const f of values(p, '-o', '--output-file', '-a', '--append-output', '--save-cookies', '--rejected-log', '--hsts-file'))
    an.write(f, scope);
  for (const e of values(p, '-e', '--execute')) {
    const key = e.text.split('=')[0]!.trim().toLowerCase().replace(/[-_]/g, '');
    // `-e https_proxy=http://…`: where the connection goes, checked like a URL.
    if (!e.dynamic && /^(https?|ftp)proxy$/.test(key)) an.netWord(literalWord(e.text.slice(e.text.indexOf('=') + 1).trim()), 'wget proxy');
    if (
      e.dynamic ||
      ![
        'robots',
        'httpproxy',
        'httpsproxy',
        'ftpproxy',
        'noproxy',
        'useproxy',
        'checkcertificate',
        'tries',
        'timeout',
        'wait',
        'useragent',
        'verbose',
        'quiet',
        'retryconnrefused',
        'waitretry',
      ].includes(key)
    ) {
      an.opaque('wget -e sets a startup command that may change what it writes');
    }
  }
  if (has(p, '--spider')) return;
  const dir = lastValue(p, '-P', '--directory-prefix') ?? DOT;
  const docs = values(p, '-O', '--output-document');
  if (docs.length) {
    for (const o of docs) if (o.text !== '-' || o.dynamic) an.write(o, scope);
    return;
  }
  if (has(p, '-r', '--recursive', '-m', '--mirror', '-p', '--page-requisites', '-x', '--force-directories') || inputs.length) {
    an.write(dir, scope);
    return;
  }
  if (has(p, '--content-disposition', '--trust-server-names')) an.opaque('wget lets the server choose the output file name');
  for (const u of urls) {
    if (u.dynamic) {
      an.opaque(`wget output name comes from a non-literal URL \`${clip(u.raw)}\``);
      an.write(dir, scope);
      continue;
    }
    if (fileUrlPath(u.text) !== null) continue;
    an.write(joinWord(dir, urlFileName(u.text) || 'index.html', an.platform), scope);
  }
});

reg(['http', 'https', 'xh', 'xhs', 'httpie'], (inv) => {
  const p = parseOpts(inv.args, {
    short: 'aAo',
    long: [
      'auth',
      'auth-type',
      'output',
      'session',
      'session-read-only',
      'verify',
      'cert',
      'cert-key',
      'proxy',
      'timeout',
      'print',
      'pretty',
      'style',
      'format-options',
      'max-redirects',
      'ssl',
      'ciphers',
      'default-scheme',
      'unix-socket',
    ],
  });
  let pos = p.pos;
  if (pos[0] && /^[A-Z]+$/.test(pos[0].text)) pos = pos.slice(1);
  const [url, ...items] = pos;
  if (url) inv.an.netWord(url, inv.cmd);
  inv.an.net();
  for (const it of items) {
    // name@file (file field) and name=@file / name:=@file (content from file).
    const m = /^[^=@:]*(?::=@|=@|@)/.exec(it.text);
    if (m) inv.an.read(sliceWord(it, m[0].length), inv.scope);
  }
  for (const o of values(p, '-o', '--output')) inv.an.write(o, inv.scope);
  if (has(p, '-d', '--download') && !values(p, '-o', '--output').length) {
    if (url && !url.dynamic && urlFileName(url.text)) inv.an.write(literalWord(urlFileName(url.text)), inv.scope);
    else inv.an.write(DOT, inv.scope);
  }
});

reg('aria2c', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'dioxsjUN',
    long: [
      'dir',
      'input-file',
      'out',
      'max-connection-per-server',
      'split',
      'max-concurrent-downloads',
      'user-agent',
      'header',
      'load-cookies',
      'save-cookies',
      'conf-path',
      'log',
    ],
  });
  inv.an.net();
  for (const u of p.pos) urlOperand(inv, u, 'aria2c');
  for (const f of values(p, '-i', '--input-file', '--load-cookies', '--conf-path')) inv.an.read(f, inv.scope);
  for (const f of values(p, '--save-cookies', '-l', '--log')) inv.an.write(f, inv.scope);
  const dir = lastValue(p, '-d', '--dir') ?? DOT;
  const out = lastValue(p, '-o', '--out');
  if (out) inv.an.write(joinWord(dir, out.text, inv.an.platform), inv.scope);
  else inv.an.write(dir, inv.scope);
});

// ------------------------------------------------------------------------------------------
// Sockets and remote shells.

reg(['nc', 'ncat', 'netcat', 'nc.openbsd', 'nc.traditional'], (inv) => {
  const p = parseOpts(inv.args, {
    short: 'pswiqxXTIOPgGecmo',
    long: [
      'source',
      'source-port',
      'wait',
      'idle-timeout',
      'exec',
      'sh-exec',
      'lua-exec',
      'proxy',
      'proxy-type',
      'proxy-auth',
      'output',
      'hex-dump',
      'append-output',
      'allow',
      'allowfile',
      'deny',
      'denyfile',
      'max-conns',
      'delay',
      'ssl-cert',
      'ssl-key',
      'ssl-trustfile',
      'ssl-ciphers',
      'ssl-servername',
      'ssl-alpn',
    ],
    flags: [
      'listen',
      'keep-open',
      'udp',
      'sctp',
      'verbose',
      'nodns',
      'zero',
      'send-only',
      'recv-only',
      'crlf',
      'ssl',
      'telnet',
      'broker',
      'chat',
      'version',
      'help',
    ],
  });
  inv.an.net();
  if (has(p, '-e', '-c', '--exec', '--sh-exec', '--lua-exec')) inv.an.opaque(`${inv.cmd} -e runs a program for the connection`);
  for (const o of values(p, '-o', '--output', '--hex-dump', '--append-output')) inv.an.write(o, inv.scope);
  for (const f of values(p, '--allowfile', '--denyfile', '--ssl-cert', '--ssl-key', '--ssl-trustfile')) inv.an.read(f, inv.scope);
  for (const x of values(p, '-x', '--proxy')) inv.an.netWord(x, `${inv.cmd} proxy`);
  const [host, port] = p.pos;
  const listen = has(p, '-l', '--listen');
  // A listener hands whatever it is fed (`nc -l 4444 < .env`) to anyone who connects, unless it
  // is bound to a loopback address.
  const bound = values(p, '-s', '--source')[0] ?? (port ? host : undefined);
  if (listen && !(bound && !bound.dynamic && LOOPBACK.test(bound.text))) {
    inv.an.sink(
      `${inv.cmd} -l listens on ${
        [...values(p, '-s', '--source'), host, port, ...values(p, '-p', '--source-port')]
          .filter((w): w is WordValue => !!w)
          .map((w) => w.raw)
          .join(' ') || 'a port'
      }`,
    );
  }
  if (!host) return;
  if (host.dynamic || (port && port.dynamic)) {
    inv.an.opaque(
      `${inv.cmd} target \`${clip(
        [host, port]
          .filter(Boolean)
          .map((w) => w!.raw)
          .join(' '),
      )}\` is not literal`,
    );
    return;
  }
  if (listen && !port && /^\d+$/.test(host.text)) return; // ncat -l 4444
  inv.an.net(port ? `${host.text}:${port.text}` : host.text);
});

reg('socat', (inv) => {
  const { an, scope } = inv;
  const args = inv.args;
  let i = 0;
  for (; i < args.length; i++) {
    const t = args[i]!.text;
    if (!t.startsWith('-') || t === '-') break;
    if (['-t', '-T', '-b', '-lf', '-lp', '-L', '-W'].includes(t)) {
      const v = args[++i];
      if (v && (t === '-lf' || t === '-L' || t === '-W')) an.write(v, scope);
    }
  }
  for (const a of args.slice(i)) {
    if (a.dynamic) {
      an.opaque(`socat address \`${clip(a.raw)}\` is not literal`);
      an.net();
      continue;
    }
    const t = a.text;
    const type = (/^[A-Za-z0-9-]+(?=[:,]|$)/.exec(t)?.[0] ?? '').toUpperCase();
    const params = t.slice(type.length + 1).split(',')[0]!;
    if (/^(EXEC|SYSTEM|SHELL)$/.test(type)) {
      an.opaque('socat runs a program for the connection');
      if (!a.dynamic && type !== 'EXEC') an.runScript(params, scope, 'socat SYSTEM');
    } else if (/^(TCP|TCP4|TCP6|UDP|UDP4|UDP6|SCTP|SCTP4|SCTP6|OPENSSL|SSL|DTLS|UDP-SENDTO|UDP-DATAGRAM)$/.test(type)) {
      an.net(params);
    } else if (/^(PROXY|SOCKS4|SOCKS4A|SOCKS5)$/.test(type)) {
      const parts = params.split(':');
      an.net(parts.slice(0, 1).join(''));
      if (parts.length >= 3) an.net(`${parts[1]}:${parts[2]}`);
    } else if (/LISTEN|RECV|RECVFROM/.test(type)) {
      an.net();
      an.sink(`socat listens on ${type}:${params}`);
    } else if (/^(FILE|OPEN|CREATE|CREAT|GOPEN|PIPE|UNIX-CONNECT|UNIX-CLIENT|UNIX-LISTEN|UNIX-SENDTO|PTY)$/.test(type)) {
      if (params) an.write(literalWord(params), scope);
    } else if (type === '' || /^(STDIO|STDIN|STDOUT|STDERR|-|FD|READLINE)$/.test(type) || t === '-') {
      if (t.includes('/') && type === '') an.write(literalWord(t.split(',')[0]!), scope);
    } else if (t.startsWith('/')) an.write(literalWord(t.split(',')[0]!), scope);
  }
});

const SSH_VALUED = 'BbcDEeFIiJLlmOoPpQRSWw';

/** ssh `-o Key=Value` options that run local commands. */
function sshOptions(inv: Inv, opts: readonly WordValue[]): void {
  for (const o of opts) {
    const m = /^\s*([A-Za-z]+)\s*[= ]\s*(.*)$/.exec(o.text);
    const key = (m?.[1] ?? o.text).toLowerCase();
    if (['proxycommand', 'localcommand', 'knownhostscommand', 'permitlocalcommand', 'match'].includes(key) || o.dynamic) {
      if (key === 'permitlocalcommand' && m?.[2]?.toLowerCase() === 'no') continue;
      inv.an.opaque(`ssh option \`${clip(o.text, 40)}\` runs a local command`);
    } else if (key === 'identityfile' || key === 'userknownhostsfile' || key === 'certificatefile') {
      if (m?.[2]) inv.an.read(literalWord(m[2].replace(/^~(?=\/)/, inv.scope.home ?? '~')), inv.scope);
    } else if (key === 'proxyjump' && m?.[2]) inv.an.net(m[2]);
  }
}

reg(['ssh', 'autossh', 'mosh'], (inv) => {
  const p = parseOpts(inv.args, { short: SSH_VALUED, posix: true });
  inv.an.net();
  for (const f of values(p, '-i', '-F')) inv.an.read(f, inv.scope);
  for (const f of values(p, '-E')) inv.an.write(f, inv.scope);
  for (const j of values(p, '-J')) inv.an.loginWord(j, 'ssh jump host');
  sshOptions(inv, values(p, '-o'));
  const dest = p.rest[0];
  if (dest) inv.an.loginWord(dest, 'ssh');
  // The remote command runs on the other host: not analysed here.
});

reg('ssh-copy-id', (inv) => {
  const p = parseOpts(inv.args, { short: 'ipoFt' });
  inv.an.net();
  for (const f of values(p, '-i', '-F')) inv.an.read(f, inv.scope);
  sshOptions(inv, values(p, '-o'));
  if (p.pos[0]) inv.an.loginWord(p.pos[0], 'ssh-copy-id');
});

reg('scp', (inv) => {
  const { an, scope } = inv;
  const p = parseOpts(inv.args, { short: 'cFiJloPSDX' });
  if (has(p, '-S')) an.opaque('scp -S runs another program for the connection');
  for (const f of values(p, '-i', '-F')) an.read(f, scope);
  sshOptions(inv, values(p, '-o'));
  for (const j of values(p, '-J')) an.loginWord(j, 'scp jump host');
  if (p.pos.length < 2) return;
  const dst = p.pos[p.pos.length - 1]!;
  const srcs = p.pos.slice(0, -1);
  const remote = (w: WordValue) => !w.dynamic && (isRemoteSpec(w.text, an.platform) || /^scp:\/\//i.test(w.text));
  const hostOf = (w: WordValue) => (/^scp:\/\//i.test(w.text) ? w.text : remoteHost(w.text));
  const recursive = has(p, '-r');
  for (const s of srcs) {
    if (remote(s)) an.login(hostOf(s));
    else {
      // `scp -r DIR host:` sends everything below DIR.
      if (recursive) an.readBelow(s, scope, 'contents');
      else an.read(s, scope);
      // A non-literal operand may name a remote host.
      if (s.dynamic) an.netWord(s, 'scp');
    }
  }
  if (remote(dst)) an.login(hostOf(dst));
  else {
    if (dst.dynamic) an.netWord(dst, 'scp');
    an.write(dst, scope);
    for (const s of srcs) {
      const name = remote(s) ? literalWord(s.text.slice(s.text.indexOf(':') + 1)) : s;
      const child = childOf(dst, name, an.platform);
      if (child && name.text !== '') an.write(child, scope);
    }
  }
});

reg('sftp', (inv) => {
  const p = parseOpts(inv.args, { short: 'BbcDFiJloPRSsX' });
  inv.an.net();
  if (has(p, '-S', '-D')) inv.an.opaque('sftp -S/-D runs another program for the connection');
  for (const f of values(p, '-b', '-i', '-F')) if (f.text !== '-') inv.an.read(f, inv.scope);
  sshOptions(inv, values(p, '-o'));
  const dest = p.pos[0];
  if (!dest) return;
  if (dest.dynamic) inv.an.netWord(dest, 'sftp');
  else inv.an.login(isRemoteSpec(dest.text, inv.an.platform) ? remoteHost(dest.text) : dest.text);
  if (!values(p, '-b').length) inv.an.opaque('sftp runs transfer commands from stdin');
});

const LOGIN_VALUED: Record<string, string> = { lftp: 'pueEfc', telnet: 'lenbX', ftp: 'P', tftp: 'P', ncftp: 'uPp', rlogin: 'l', rsh: 'l' };

reg(['ftp', 'tftp', 'lftp', 'telnet', 'ncftp', 'rlogin', 'rsh'], (inv) => {
  const p = parseOpts(inv.args, { short: LOGIN_VALUED[inv.cmd.toLowerCase()] ?? '' });
  inv.an.net();
  if (has(p, '-c', '-e', '-E') && inv.cmd === 'lftp') inv.an.opaque('lftp runs transfer commands from its arguments');
  const [host, port] = p.pos;
  if (!host) return;
  if (host.dynamic) inv.an.netWord(host, inv.cmd);
  else inv.an.net(port && /^\d+$/.test(port.text) ? `${host.text}:${port.text}` : host.text);
});

reg('rsync', (inv) => {
  const { an, scope } = inv;
  const p = parseOpts(inv.args, {
    short: 'eTBfM',
    long: [
      'rsh',
      'exclude',
      'include',
      'exclude-from',
      'include-from',
      'files-from',
      'filter',
      'log-file',
      'log-file-format',
      'password-file',
      'temp-dir',
      'partial-dir',
      'backup-dir',
      'compare-dest',
      'link-dest',
      'copy-dest',
      'chmod',
      'chown',
      'block-size',
      'bwlimit',
      'timeout',
      'port',
      'max-size',
      'min-size',
      'max-delete',
      'remote-option',
      'suffix',
      'out-format',
      'info',
      'debug',
      'iconv',
      'usermap',
      'groupmap',
      'outbuf',
      'contimeout',
      'sockopts',
      'protocol',
      'checksum-choice',
      'compress-choice',
      'skip-compress',
      'rsync-path',
      'address',
      'write-batch',
      'only-write-batch',
      'read-batch',
      'stop-after',
      'stop-at',
      'modify-window',
      'compress-level',
      'checksum-seed',
      'config',
      'dparam',
    ],
    flags: [
      'delete',
      'delete-before',
      'delete-during',
      'delete-delay',
      'delete-after',
      'delete-excluded',
      'remove-source-files',
      'archive',
      'recursive',
      'verbose',
      'quiet',
      'dry-run',
      'list-only',
      'mkpath',
    ],
  });
  for (const f of values(p, '--exclude-from', '--include-from', '--files-from', '--password-file', '--read-batch', '--config'))
    if (f.text !== '-') an.read(f, scope);
  for (const f of values(p, '--log-file', '--write-batch', '--only-write-batch')) an.write(f, scope);
  for (const e of values(p, '-e', '--rsh')) {
    // The remote shell runs locally with the host as its first argument.
    if (e.dynamic) an.opaque('rsync remote shell is not literal');
    else if (!/^\s*(ssh|rsh|autossh)(\s|$)/.test(e.text)) an.runScript(e.text, scope, 'rsync -e');
  }
  if (has(p, '--rsync-path')) an.opaque('rsync --rsync-path runs a command on the remote side');
  const dry = has(p, '-n', '--dry-run', '--list-only');
  const remote = (w: WordValue) => !w.dynamic && (isRemoteSpec(w.text, an.platform) || /^rsync:\/\//i.test(w.text));
  const hostOf = (w: WordValue) => (/^rsync:\/\//i.test(w.text) ? w.text : remoteHost(w.text).replace(/:$/, ''));
  // user@host:path goes through ssh (a login); rsync://host is the rsync daemon protocol.
  const connect = (w: WordValue) => (/^rsync:\/\//i.test(w.text) || /::/.test(w.text) ? an.net(hostOf(w)) : an.login(hostOf(w)));
  if (p.pos.length === 1) {
    const only = p.pos[0]!;
    if (remote(only)) connect(only);
    else an.read(only, scope);
    return;
  }
  const dst = p.pos[p.pos.length - 1];
  if (!dst) return;
  const srcs = p.pos.slice(0, -1);
  const deleting = p.opts.some((o) => o.name.startsWith('--delete') || o.name === '--remove-source-files');
  // `rsync -a ~/ dst/` copies everything below a source directory.
  const recursive = has(p, '-r', '-a', '--recursive', '--archive');
  for (const s of srcs) {
    if (remote(s)) connect(s);
    else {
      if (recursive) an.readBelow(s, scope, 'contents');
      else an.read(s, scope);
      if (!dry && has(p, '--remove-source-files')) an.del(s, scope);
    }
  }
  if (remote(dst)) {
    connect(dst);
    return;
  }
  if (dry) return;
  an.write(dst, scope);
  if (deleting && p.opts.some((o) => o.name.startsWith('--delete'))) an.del(dst, scope);
  for (const s of srcs) {
    if (s.text.endsWith('/')) continue; // `src/` copies the contents into dst
    const name = remote(s) ? literalWord(s.text.slice(s.text.indexOf(':') + 1)) : s;
    const child = childOf(dst, name, an.platform);
    if (child) an.write(child, scope);
  }
});

// ------------------------------------------------------------------------------------------
// dig: its operands mix names, record types, classes, `+options` and `@server`. (nslookup, host, whois, ping,
// traceroute and the scanners are data: security/shell/operands/network.yaml.)

reg('dig', (inv) => {
  const p = parseOpts(inv.args, { short: 'bcfkpqtxy' });
  inv.an.net();
  for (const f of values(p, '-f')) inv.an.read(f, inv.scope);
  for (const h of p.pos) {
    if (h.dynamic) {
      inv.an.netWord(h, inv.cmd);
      continue;
    }
    if (h.text.startsWith('+')) continue;
    if (/^(A|AAAA|MX|TXT|NS|CNAME|SOA|ANY|PTR|SRV|CAA|DS|DNSKEY|HINFO|NAPTR|TLSA|SPF|AXFR|IXFR|IN|CH|HS)$/i.test(h.text)) continue;
    const t = h.text.replace(/^@/, '');
    if (/^\d+$/.test(t) || t === '') continue;
    inv.an.net(t);
  }
});

// ------------------------------------------------------------------------------------------
// Package managers and cloud CLIs.

const ALL = 'all';
/** `npm install` and every spelling npm accepts for it (its abbreviations and typo aliases). */
const NPM_INSTALL = ['install', 'i', 'in', 'ins', 'inst', 'insta', 'instal', 'isnt', 'isnta', 'isntal'];
const PACKAGE_NET: Record<string, readonly string[] | typeof ALL> = {
  npm: [
    ...NPM_INSTALL,
    'add',
    'ci',
    'clean-install',
    'install-test',
    'it',
    'install-ci-test',
    'update',
    'up',
    'upgrade',
    'udpate',
    'publish',
    'unpublish',
    'outdated',
    'audit',
    'view',
    'v',
    'info',
    'show',
    'search',
    's',
    'se',
    'find',
    'dist-tag',
    'deprecate',
    'login',
    'adduser',
    'whoami',
    'ping',
    'doctor',
    'exec',
    'x',
    'init',
    'create',
    'dlx',
    'owner',
    'access',
    'token',
    'team',
    'star',
    'stars',
    'fund',
    'repo',
    'docs',
    'bugs',
    'pack',
  ],
  pnpm: [
    'install',
    'i',
    'add',
    'update',
    'up',
    'upgrade',
    'publish',
    'dlx',
    'fetch',
    'outdated',
    'audit',
    'create',
    'import',
    'env',
    'exec',
    'info',
    'view',
    'install-test',
    'it',
  ],
  yarn: [
    '',
    'install',
    'add',
    'upgrade',
    'up',
    'upgrade-interactive',
    'publish',
    'dlx',
    'create',
    'info',
    'outdated',
    'audit',
    'npm',
    'set',
    'global',
    'import',
    'plugin',
    'why',
  ],
  bun: ['install', 'i', 'add', 'a', 'update', 'publish', 'x', 'create', 'c', 'upgrade', 'outdated', 'pm', 'link'],
  npx: ALL,
  pnpx: ALL,
  bunx: ALL,
  uvx: ALL,
  pipx: ['install', 'run', 'upgrade', 'upgrade-all', 'inject', 'reinstall', 'reinstall-all'],
  pip: ['install', 'download', 'wheel', 'search', 'index', 'lock'],
  uv: ['add', 'sync', 'lock', 'pip', 'tool', 'python', 'run', 'venv', 'export', 'publish', 'init'],
  poetry: ['install', 'add', 'update', 'lock', 'publish', 'self', 'search', 'new', 'init'],
  conda: ['install', 'create', 'update', 'upgrade', 'search', 'env'],
  mamba: ['install', 'create', 'update', 'upgrade', 'search', 'env'],
  micromamba: ['install', 'create', 'update', 'search', 'env'],
  gem: ['install', 'update', 'push', 'fetch', 'search', 'sources', 'owner', 'yank'],
  bundle: ['install', 'update', 'add', 'outdated', 'package', 'lock', 'cache'],
  bundler: ['install', 'update', 'add', 'outdated'],
  cargo: ['install', 'fetch', 'update', 'publish', 'search', 'add', 'login', 'yank', 'owner', 'generate-lockfile'],
  go: ['get', 'install', 'mod'],
  composer: ['install', 'require', 'update', 'create-project', 'global', 'self-update', 'outdated'],
  brew: ['install', 'upgrade', 'update', 'fetch', 'tap', 'reinstall', 'search', 'info', 'outdated', 'bundle'],
  apt: [
    'install',
    'update',
    'upgrade',
    'dist-upgrade',
    'full-upgrade',
    'download',
    'source',
    'build-dep',
    'reinstall',
    'search',
    'changelog',
  ],
  'apt-get': ['install', 'update', 'upgrade', 'dist-upgrade', 'full-upgrade', 'download', 'source', 'build-dep', 'reinstall', 'changelog'],
  aptitude: ['install', 'update', 'upgrade', 'safe-upgrade', 'full-upgrade', 'download', 'reinstall'],
  dnf: ['install', 'update', 'upgrade', 'downgrade', 'reinstall', 'makecache', 'download', 'search', 'check-update', 'distro-sync'],
  yum: ['install', 'update', 'upgrade', 'downgrade', 'reinstall', 'makecache', 'search', 'check-update'],
  microdnf: ['install', 'update', 'upgrade', 'reinstall', 'makecache'],
  zypper: ['in', 'install', 'up', 'update', 'dup', 'dist-upgrade', 'refresh', 'ref', 'source-install', 'si'],
  apk: ['add', 'update', 'upgrade', 'fetch', 'search'],
  snap: ['install', 'refresh', 'download', 'find'],
  flatpak: ['install', 'update', 'remote-add', 'search'],
  choco: ['install', 'upgrade', 'search', 'download'],
  winget: ['install', 'upgrade', 'download', 'source', 'search', 'show'],
  scoop: ['install', 'update', 'bucket', 'search'],
  docker: ['pull', 'push', 'login', 'search'],
  podman: ['pull', 'push', 'login', 'search'],
  nerdctl: ['pull', 'push', 'login'],
  helm: ['install', 'upgrade', 'pull', 'repo', 'dependency', 'dep', 'push', 'search'],
  gh: ALL,
  glab: ALL,
  aws: ALL,
  gcloud: ALL,
  gsutil: ALL,
  az: ALL,
  kubectl: ALL,
  doctl: ALL,
  heroku: ALL,
  vercel: ALL,
  netlify: ALL,
  fly: ALL,
  flyctl: ALL,
  wrangler: ALL,
  firebase: ALL,
  terraform: ['init', 'plan', 'apply', 'destroy', 'import', 'refresh', 'login', 'get'],
  tofu: ['init', 'plan', 'apply', 'destroy', 'import', 'refresh', 'get'],
};
/** Options of package managers whose value is not the subcommand. */
const PACKAGE_VALUE_OPTS = new Set([
  '--prefix',
  '-C',
  '--cwd',
  '--dir',
  '--filter',
  '-F',
  '-w',
  '--workspace',
  '--registry',
  '--cache',
  '--userconfig',
  '--manifest-path',
  '--project',
  '-p',
  '--directory',
  '--config',
  '--profile',
  '--region',
  '-g',
]);

reg(Object.keys(PACKAGE_NET), (inv) => {
  const key = inv.cmd.toLowerCase().replace(/\d+(\.\d+)*$/, '');
  const subs = PACKAGE_NET[key] ?? PACKAGE_NET[inv.cmd] ?? [];
  let sub: string | undefined;
  for (let i = 0; i < inv.args.length; i++) {
    const t = inv.args[i]!.text;
    if (PACKAGE_VALUE_OPTS.has(t) && key !== 'pacman') {
      i++;
      continue;
    }
    if (t.startsWith('-')) continue;
    sub = t;
    break;
  }
  if ((subs === ALL || subs.includes(sub ?? '')) && !packageListsOnly(key, inv.args)) inv.an.net();
  // pip list --outdated / --uptodate compares with the package index.
  if (key === 'pip' && sub === 'list' && inv.args.some((w) => /^--(outdated|uptodate)$|^-[a-zA-Z]*[ou]/.test(w.text))) inv.an.net();
  const sink = DATA_SINKS[key];
  if (sink) sink(inv);
  // A tool writing its own configuration: its operands are keys and values, not files.
  if (TOOL_CONFIG[key]?.(inv)) return;
  if ((key === 'npx' || key === 'pnpx' || key === 'bunx') && nodeServer(inv, inv.args)) return;
  if (key === 'pip' || key === 'uv') {
    const p = parseOpts(inv.args, {
      short: 'rceit',
      long: [
        'requirement',
        'constraint',
        'editable',
        'index-url',
        'extra-index-url',
        'target',
        'find-links',
        'prefix',
        'root',
        'src',
        'python',
      ],
    });
    for (const r of values(p, '-r', '--requirement', '-c', '--constraint')) inv.an.read(r, inv.scope);
    for (const e of values(p, '-e', '--editable')) if (!/^[a-z+]+:\/\//i.test(e.text)) inv.an.read(e, inv.scope);
    for (const u of values(p, '-i', '--index-url', '--extra-index-url')) inv.an.netWord(u, 'pip index');
    for (const t of values(p, '-t', '--target', '--prefix', '--root')) inv.an.write(t, inv.scope);
  }
  const names = packageNameOperands(inv, key);
  genericReads(
    inv,
    inv.args.filter((w) => !names.has(w)),
  );
});

/** A word that names a file to any package manager: a path from `.`, `/`, `~/`, `\\` or a drive. */
const EXPLICIT_PATH = /^(\.|\/|~\/|~$|\\|[A-Za-z]:[\\/])/;

/**
 * The operands of a package manager's subcommand that name packages, modules, repositories or images
 * (`composer require a/b`, `go install host/x@v1`, `npm i @scope/pkg`, `gh repo clone a/b`, `brew install
 * user/tap/formula`): to the command they are names, not files, whatever they look like. Files stay files:
 * `npm i ./dir`, `npm i pkg.tgz`, `go run main.go`, `apt install ./x.deb` (each family's `isFile`).
 */
interface NameOperands {
  /** The subcommands whose operands are names ('' for the command itself: npx PACKAGE). */
  readonly subs: readonly string[];
  /** Options that take no value: an operand after one of them is still an operand (after any other, it may be its value). */
  readonly flags: readonly string[];
  /** Is this operand a file to the command? */
  readonly isFile: (text: string) => boolean;
  /** How many operands are names (npm exec, go run: the ones after are the program's arguments); all when absent. */
  readonly count?: (sub: string) => number;
}

const NODE_FLAGS = [
  '--save',
  '-S',
  '--save-dev',
  '-D',
  '--save-optional',
  '-O',
  '--save-exact',
  '-E',
  '--save-peer',
  '--save-prod',
  '-P',
  '--global',
  '-g',
  '--no-save',
  '--force',
  '-f',
  '--legacy-peer-deps',
  '--ignore-scripts',
  '--prefer-offline',
  '--dev',
  '--peer',
  '--optional',
  '--exact',
  '--tilde',
  '-T',
  '--yes',
  '-y',
  '--frozen-lockfile',
  '--no-lockfile',
  '--silent',
  '-s',
  '--verbose',
  '--dry-run',
  '--latest',
  '-L',
  '--recursive',
  '-r',
  '--interactive',
  '-i',
];
/** npm-package-arg: a path, `file:`/`link:`/`portal:` or a tarball is a file; `user/repo` is GitHub, `@scope/name` a package. */
const nodeIsFile = (t: string) => EXPLICIT_PATH.test(t) || /^(file|link|portal):/.test(t) || /\.(tgz|tar\.gz|tar)$/.test(t);
const NODE_SUBS = [
  ...NPM_INSTALL,
  'add',
  'a',
  'update',
  'up',
  'upgrade',
  'udpate',
  'uninstall',
  'un',
  'unlink',
  'remove',
  'rm',
  'r',
  'view',
  'v',
  'info',
  'show',
  'outdated',
  'dlx',
  'x',
  'exec',
  'create',
  'c',
  'why',
  'explain',
  'ls',
  'list',
  'dedupe',
  'global',
];
/** npm exec / dlx / x / create run the package they name: the words after it are its arguments. */
const nodeCount = (sub: string) => (['', 'dlx', 'x', 'exec', 'create', 'c'].includes(sub) ? 1 : Infinity);
const NODE_NAMES: NameOperands = { subs: NODE_SUBS, flags: NODE_FLAGS, isFile: nodeIsFile, count: nodeCount };
const NPX_NAMES: NameOperands = { subs: [''], flags: NODE_FLAGS, isFile: nodeIsFile, count: nodeCount };

const NAME_OPERANDS: Record<string, NameOperands> = {
  npm: NODE_NAMES,
  pnpm: NODE_NAMES,
  yarn: NODE_NAMES,
  bun: NODE_NAMES,
  npx: NPX_NAMES,
  pnpx: NPX_NAMES,
  bunx: NPX_NAMES,
  // vendor/name[:constraint]; create-project's second operand is the directory it writes (handled below).
  composer: {
    subs: [
      'require',
      'r',
      'remove',
      'rm',
      'update',
      'u',
      'upgrade',
      'show',
      'info',
      'why',
      'depends',
      'why-not',
      'prohibits',
      'outdated',
      'reinstall',
      'create-project',
      'suggests',
      'browse',
      'home',
      'global',
    ],
    flags: [
      '--dev',
      '--no-dev',
      '--prefer-dist',
      '--prefer-source',
      '--prefer-stable',
      '--prefer-lowest',
      '--no-update',
      '--no-install',
      '--no-scripts',
      '--no-progress',
      '--no-interaction',
      '-n',
      '--update-with-dependencies',
      '-w',
      '--update-with-all-dependencies',
      '-W',
      '--with-all-dependencies',
      '--with-dependencies',
      '--ignore-platform-reqs',
      '--dry-run',
      '-q',
      '--quiet',
      '-v',
      '-vv',
      '-vvv',
      '--verbose',
      '--sort-packages',
      '--all',
      '-a',
      '--latest',
      '-l',
      '--direct',
      '--tree',
      '-t',
      '--keep-vcs',
      '--remove-vcs',
      '--ask',
    ],
    isFile: (t) => EXPLICIT_PATH.test(t),
    count: (sub) => (sub === 'create-project' ? 1 : Infinity),
  },
  // Import paths (host/x/y@v); a package from a directory starts with `.` or `/`, a file list ends in .go.
  go: {
    subs: ['get', 'install', 'run', 'build', 'test', 'vet', 'list', 'doc', 'clean', 'generate', 'fix', 'fmt', 'mod'],
    flags: [
      '-u',
      '-t',
      '-d',
      '-v',
      '-x',
      '-a',
      '-n',
      '-i',
      '-race',
      '-msan',
      '-asan',
      '-cover',
      '-trimpath',
      '-modcacherw',
      '-insecure',
      '-json',
      '-m',
      '-short',
      '-failfast',
    ],
    isFile: (t) => EXPLICIT_PATH.test(t) || /\.go$/.test(t),
    count: (sub) => (sub === 'run' ? 1 : Infinity),
  },
  brew: {
    subs: [
      'install',
      'reinstall',
      'upgrade',
      'uninstall',
      'remove',
      'rm',
      'tap',
      'untap',
      'info',
      'fetch',
      'outdated',
      'deps',
      'uses',
      'home',
      'search',
      'link',
      'unlink',
      'pin',
      'unpin',
    ],
    flags: [
      '--cask',
      '--formula',
      '-f',
      '--force',
      '-v',
      '--verbose',
      '-q',
      '--quiet',
      '-d',
      '--debug',
      '--HEAD',
      '--fetch-HEAD',
      '--build-from-source',
      '-s',
      '--force-bottle',
      '--ignore-dependencies',
      '--only-dependencies',
      '--dry-run',
      '-n',
      '--overwrite',
      '--greedy',
      '--installed',
      '--all',
      '--eval-all',
      '--no-quarantine',
      '--adopt',
      '--zap',
      '--formulae',
      '--casks',
    ],
    isFile: (t) => EXPLICIT_PATH.test(t) || /\.rb$/.test(t),
  },
  scoop: {
    subs: ['install', 'update', 'uninstall', 'info', 'home', 'cat', 'depends'],
    flags: [
      '-g',
      '--global',
      '-k',
      '--no-cache',
      '-i',
      '--independent',
      '-s',
      '--skip-hash-check',
      '-u',
      '--no-update-scoop',
      '-f',
      '--force',
      '-q',
      '--quiet',
      '--all',
    ],
    isFile: (t) => EXPLICIT_PATH.test(t) || /\.json$/.test(t) || /^[a-z][a-z0-9+.-]*:\/\//i.test(t),
  },
};
// apt's `pkg/suite` selects a release; a package file is a path or ends in .deb.
const APT_NAMES: NameOperands = {
  subs: [
    'install',
    'reinstall',
    'remove',
    'purge',
    'source',
    'build-dep',
    'download',
    'show',
    'policy',
    'depends',
    'rdepends',
    'changelog',
  ],
  flags: [
    '-y',
    '--yes',
    '--assume-yes',
    '-q',
    '-qq',
    '--quiet',
    '--no-install-recommends',
    '--install-recommends',
    '--install-suggests',
    '-f',
    '--fix-broken',
    '--reinstall',
    '--only-upgrade',
    '--allow-downgrades',
    '-s',
    '--simulate',
    '--dry-run',
    '-d',
    '--download-only',
    '--purge',
    '--auto-remove',
    '--autoremove',
    '--no-upgrade',
    '-m',
    '--fix-missing',
    '--full',
    '--installed',
  ],
  isFile: (t) => EXPLICIT_PATH.test(t) || /\.deb$/.test(t),
};
for (const k of ['apt', 'apt-get', 'aptitude']) NAME_OPERANDS[k] = APT_NAMES;
const GH_REPO_VERBS = ['clone', 'create', 'view', 'fork', 'delete', 'archive', 'unarchive', 'edit', 'sync', 'set-default'];

/**
 * The words of `inv.args` that are names to the command (left out of the generic path reads), after writing what
 * some of them imply: `composer create-project a/b DIR` and `gh repo clone a/b [DIR]` write DIR (or the name's
 * last part), `npm i file:../x` reads ../x.
 */
function packageNameOperands(inv: Inv, key: string): Set<WordValue> {
  const { an, scope } = inv;
  const names = new Set<WordValue>();
  const args = inv.args;
  if (key === 'gh' || key === 'glab') {
    // -R/--repo OWNER/REPO names a repository everywhere.
    for (let i = 0; i < args.length; i++) {
      const t = args[i]!.text;
      if ((t === '-R' || t === '--repo') && args[i + 1]) names.add(args[++i]!);
      else if (/^(--repo=|-R.)/.test(t)) names.add(args[i]!);
    }
    const ops = operandWords(args, 0, [], GH_VALUED);
    const [sub, verb, repo, dir] = ops;
    if (sub?.text !== 'repo' || !verb || !GH_REPO_VERBS.includes(verb.text) || !repo || repo.dynamic || EXPLICIT_PATH.test(repo.text))
      return names;
    names.add(repo);
    if (verb.text === 'clone') {
      if (dir) {
        an.write(dir, scope);
        names.add(dir);
      } else
        an.write(
          literalWord(
            repo.text
              .replace(/\.git$/, '')
              .replace(/\/+$/, '')
              .split('/')
              .pop()!,
          ),
          scope,
        );
    }
    return names;
  }
  const rule = NAME_OPERANDS[key];
  if (!rule) return names;
  let at = 0;
  let sub = '';
  if (!rule.subs.includes('')) {
    // The subcommand: the first word that is neither an option nor the value of one (`npm --prefix x install`).
    for (; at < args.length; at++) {
      const t = args[at]!.text;
      if (PACKAGE_VALUE_OPTS.has(t)) at++;
      else if (!t.startsWith('-')) break;
    }
    const w = args[at];
    if (!w || w.dynamic || !rule.subs.includes(w.text)) return names;
    sub = w.text;
    at++;
    if (sub === 'global') {
      // `composer global require a/b`, `yarn global add a/b`: the subcommand follows.
      const next = args[at];
      if (!next || next.dynamic || !rule.subs.includes(next.text)) return names;
      sub = next.text;
      at++;
    }
  }
  // npx -p PKG, npm exec --package=PKG: the packages it installs before running the command.
  if (rule === NPX_NAMES || ['exec', 'dlx', 'x'].includes(sub)) {
    for (let i = 0; i < args.length; i++) {
      const t = args[i]!.text;
      if ((t === '-p' || t === '--package') && args[i + 1] && !nodeIsFile(args[i + 1]!.text)) names.add(args[++i]!);
      else if (/^--package=/.test(t) && !nodeIsFile(t.slice('--package='.length))) names.add(args[i]!);
    }
  }
  const ops = operandWords(args, at, rule.flags, rule === NPX_NAMES || ['exec', 'dlx', 'x'].includes(sub) ? ['-p', '--package'] : []);
  const count = rule.count?.(sub) ?? Infinity;
  for (const [i, w] of ops.entries()) {
    if (w.dynamic || w.glob) break;
    // `go test ./... -args x`, `npm exec pkg -- x`: what follows is the program's.
    if (i >= count) break;
    if (rule.isFile(w.text)) {
      // A package file need not look like a path (`npm i pkg.tgz`, `go run main.go`): read as the command reads it.
      const linked = /^(file|link|portal):(.+)$/.exec(w.text);
      if (linked && rule.isFile === nodeIsFile) {
        names.add(w);
        an.read(literalWord(linked[2]!), scope);
      } else an.read(w, scope);
      continue;
    }
    names.add(w);
  }
  if (key === 'composer' && sub === 'create-project' && ops[0] && !ops[0].dynamic) {
    // create-project vendor/name [DIR [VERSION]]: DIR defaults to the name's last part.
    const dir = ops[1];
    if (dir) {
      an.write(dir, scope);
      names.add(dir);
      if (ops[2]) names.add(ops[2]);
    } else an.write(literalWord(ops[0].text.split('/').pop()!), scope);
  }
  return names;
}

/**
 * The operands from `args[from]` on, stopping at `--` or `-args`, each only where it cannot be an option's value:
 * right after the start, another operand, a known flag or an option with its value attached (`--x=y`), or after
 * an option known to take one and its value.
 */
function operandWords(args: readonly WordValue[], from: number, flags: readonly string[], valued: readonly string[]): WordValue[] {
  const out: WordValue[] = [];
  let free = true;
  for (let i = from; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (!w.dynamic && (t === '--' || t === '-args')) break;
    if (!w.dynamic && t.startsWith('-') && t !== '-') {
      if (valued.includes(t)) {
        i++;
        free = true;
      } else free = t.includes('=') || flags.includes(t);
      continue;
    }
    if (free) out.push(w);
    free = true;
  }
  return out;
}

/**
 * The forms of a network subcommand that stay on the machine: npx's own help and version (no package
 * named, none fetched) and `cargo install --list` (what is installed). `npx tsc --version` is not
 * one: without a local tsc, npx downloads the package of that name.
 */
function packageListsOnly(key: string, args: readonly WordValue[]): boolean {
  const words = args.map((w) => (w.dynamic || w.glob ? undefined : w.text));
  if (words.includes(undefined) || words.length === 0) return false;
  if (key === 'npx') return words.length === 1 && ['--help', '-h', '--version', '-v'].includes(words[0]!);
  if (key === 'cargo') return words.length === 2 && words[0] === 'install' && words[1] === '--list';
  return false;
}

// ------------------------------------------------------------------------------------------
// Commands that send local files or data to a remote service (for SSRF and IFC). Targets that are
// not http(s) URLs (`s3://b/k`, `gs://b`, `rclone://remote/path`) are reported as URLs of their own
// scheme: the SSRF check passes over schemes it does not fetch, and IFC counts them as network.

/** Non-option operands of a CLI after its subcommands, options with values skipped. */
function operands(args: readonly WordValue[], valued: readonly string[]): WordValue[] {
  const out: WordValue[] = [];
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (args[i]!.dynamic) {
      out.push(args[i]!);
      continue;
    }
    if (t.startsWith('--') && t.includes('=')) continue;
    if (t.startsWith('-') && t !== '-') {
      if (valued.includes(t)) i++;
      continue;
    }
    out.push(args[i]!);
  }
  return out;
}

/** A bucket copy (`aws s3 cp`, `gsutil cp`, `gcloud storage cp`, `rclone copy`): remote operands are targets, local ones are read or written. */
function bucketCopy(
  inv: Inv,
  ops: readonly WordValue[],
  isRemote: (w: WordValue) => boolean,
  toUrl: (w: WordValue) => string,
  recursive: boolean,
  what: string,
): void {
  const { an, scope } = inv;
  an.net();
  const dst = ops[ops.length - 1];
  if (!dst || ops.length < 2) {
    for (const o of ops) if (isRemote(o)) an.net(toUrl(o));
    return;
  }
  for (const o of ops) {
    if (o.dynamic) an.netWord(o, what);
    else if (isRemote(o)) an.net(toUrl(o));
  }
  for (const src of ops.slice(0, -1)) {
    if (src.dynamic || isRemote(src) || src.text === '-') continue;
    if (recursive) an.readBelow(src, scope, 'contents');
    else an.read(src, scope);
  }
  if (!dst.dynamic && !isRemote(dst) && dst.text !== '-') an.write(dst, scope);
}

const GH_HOST = 'https://api.github.com';
/** gh options that take a value (so their values are not taken for operands). */
const GH_VALUED = [
  '-R',
  '--repo',
  '--hostname',
  '-f',
  '-F',
  '--field',
  '--raw-field',
  '--input',
  '-X',
  '--method',
  '-H',
  '--header',
  '-q',
  '--jq',
  '-t',
  '--template',
  '-d',
  '--desc',
  '--filename',
  '-b',
  '--body',
  '--body-file',
  '-T',
  '--title',
  '-n',
  '--notes',
  '--notes-file',
  '-e',
  '--env',
  '--env-file',
  '-o',
  '--org',
  '-r',
  '--repos',
  '-v',
  '--visibility',
  '-a',
  '--add',
  '--app',
  '--cache',
  '-p',
  '--preview',
  '--target',
  '-B',
  '--base',
  '-l',
  '--label',
  '--milestone',
  '--assignee',
  '--reviewer',
];

/** Per CLI: how it sends data out. Each handler reports the target(s) and the local files it reads. */
const DATA_SINKS: Record<string, (inv: Inv) => void> = {
  gh(inv) {
    const { an, scope } = inv;
    const ops = operands(inv.args, GH_VALUED);
    const [sub, verb] = ops;
    if (!sub || sub.dynamic || !verb || verb.dynamic) return;
    const p = parseOpts(inv.args, { short: 'RfFXHqtdbTnepv', long: GH_VALUED.filter((o) => o.startsWith('--')).map((o) => o.slice(2)) });
    const host = lastValue(p, '--hostname');
    const out = (path: string) =>
      host
        ? host.dynamic
          ? an.netWord(host, 'gh --hostname')
          : an.net(`https://${host.text}/api/v3${path}`)
        : an.net(`${GH_HOST}${path}`);
    const rest = ops.slice(2);
    if (sub.text === 'api') {
      // `-F key=@file` sends the file's content; `--input FILE` sends the file as the body.
      for (const f of values(p, '-F', '--field')) {
        const at = f.text.indexOf('=@');
        if (at > 0) an.read(sliceWord(f, at + 2), scope);
      }
      for (const f of values(p, '--input')) if (f.text !== '-') an.read(f, scope);
      const sends =
        has(p, '-f', '-F', '--field', '--raw-field', '--input') ||
        values(p, '-X', '--method').some((m) => m.dynamic || !/^(GET|HEAD)$/i.test(m.text));
      if (/^https?:\/\//.test(verb.text)) an.net(verb.text);
      else if (sends) out(`/${verb.text.replace(/^\//, '')}`);
    } else if (sub.text === 'gist' && ['create', 'new', 'edit'].includes(verb.text)) {
      for (const f of rest) if (f.text !== '-') an.read(f, scope);
      for (const f of values(p, '-a', '--add')) an.read(f, scope);
      out('/gists');
    } else if (sub.text === 'release' && ['upload', 'create'].includes(verb.text)) {
      for (const f of rest.slice(1)) an.read(f.dynamic ? f : literalWord(f.text.replace(/#.*$/, '')), scope);
      for (const f of values(p, '-F', '--notes-file')) if (f.text !== '-') an.read(f, scope);
      out('/releases');
    } else if (['secret', 'variable'].includes(sub.text) && verb.text === 'set') {
      for (const f of values(p, '-f', '--env-file')) an.read(f, scope);
      out(`/${sub.text}s`);
    } else if (['issue', 'pr'].includes(sub.text) && ['create', 'comment', 'edit', 'review'].includes(verb.text)) {
      for (const f of values(p, '-F', '--body-file')) if (f.text !== '-') an.read(f, scope);
      out(`/${sub.text === 'pr' ? 'pulls' : 'issues'}`);
    }
  },
  aws(inv) {
    const { an, scope } = inv;
    const p = parseOpts(inv.args, {
      long: [
        'endpoint-url',
        'profile',
        'region',
        'output',
        'query',
        'body',
        'bucket',
        'key',
        'cli-input-json',
        'cli-input-yaml',
        'ca-bundle',
      ],
    });
    for (const e of values(p, '--endpoint-url')) an.netWord(e, 'aws --endpoint-url');
    // `file://x` and `fileb://x` parameter values are read from local files.
    for (const w of inv.args) {
      const m = !w.dynamic ? /^(?:--[\w-]+=)?fileb?:\/\/(.+)$/.exec(w.text) : null;
      if (m) an.read(literalWord(m[1]!), scope);
    }
    for (const b of values(p, '--body')) an.read(b, scope);
    const bucket = lastValue(p, '--bucket');
    if (bucket) an.netWord(bucket.dynamic ? bucket : literalWord(`s3://${bucket.text}`), 'aws s3api');
    const [svc, verb, ...rest] = operands(inv.args, [
      '--profile',
      '--region',
      '--output',
      '--query',
      '--endpoint-url',
      '--exclude',
      '--include',
      '--acl',
      '--storage-class',
      '--sse',
      '--body',
      '--bucket',
      '--key',
      '--content-type',
      '--expires',
      '--cache-control',
      '--metadata',
      '--grants',
      '--ca-bundle',
    ]);
    if (svc?.text !== 's3' || !verb || !['cp', 'mv', 'sync'].includes(verb.text)) return;
    bucketCopy(
      inv,
      rest,
      (w) => /^s3:\/\//i.test(w.text),
      (w) => w.text,
      verb.text === 'sync' || has(p, '--recursive'),
      'aws s3',
    );
  },
  gsutil(inv) {
    const args = inv.args.filter((w) => !/^-[mq]$/.test(w.text));
    const [verb, ...rest] = args;
    if (!verb || !['cp', 'mv', 'rsync'].includes(verb.text)) return;
    const p = parseOpts(rest, { short: 'hpsxzaAL', long: [] });
    bucketCopy(
      inv,
      p.pos,
      (w) => /^gs:\/\//i.test(w.text),
      (w) => w.text,
      has(p, '-r', '-R') || verb.text === 'rsync',
      'gsutil',
    );
  },
  gcloud(inv) {
    const [svc, verb, ...rest] = operands(inv.args, ['--project', '--account', '--configuration', '--format']);
    if (svc?.text !== 'storage' || !verb || !['cp', 'mv', 'rsync'].includes(verb.text)) return;
    bucketCopy(
      inv,
      rest,
      (w) => /^gs:\/\//i.test(w.text),
      (w) => w.text,
      has(parseOpts(inv.args, {}), '-r', '-R', '--recursive') || verb.text === 'rsync',
      'gcloud storage',
    );
  },
  az(inv) {
    const { an, scope } = inv;
    const [svc, kind, verb] = operands(inv.args, []);
    if (svc?.text !== 'storage' || !verb || !/^upload(-batch)?$/.test(verb.text)) return;
    const p = parseOpts(inv.args, {
      short: 'cfns',
      long: [
        'file',
        'source',
        'container-name',
        'account-name',
        'name',
        'destination',
        'share-name',
        'path',
        'connection-string',
        'sas-token',
        'account-key',
        'blob-endpoint',
      ],
    });
    const account = lastValue(p, '--account-name');
    const endpoint = lastValue(p, '--blob-endpoint');
    if (endpoint) an.netWord(endpoint, 'az storage');
    else if (account)
      an.netWord(
        account.dynamic ? account : literalWord(`https://${account.text}.${kind?.text === 'file' ? 'file' : 'blob'}.core.windows.net`),
        'az storage',
      );
    else an.net(`azure-storage://${kind?.text ?? 'blob'}`);
    for (const f of values(p, '-f', '--file')) an.read(f, scope);
    for (const d of values(p, '-s', '--source')) {
      if (verb.text === 'upload-batch') an.readBelow(d, scope, 'contents');
      else an.read(d, scope);
    }
  },
};

reg('rclone', (inv) => {
  const [verb, ...rest] = operands(inv.args, [
    '--config',
    '--include',
    '--exclude',
    '--filter',
    '--transfers',
    '--checkers',
    '--log-file',
    '--bwlimit',
    '--max-age',
    '--min-age',
    '--backup-dir',
    '--suffix',
  ]);
  inv.an.net();
  const p = parseOpts(inv.args, { long: ['config', 'log-file'] });
  for (const c of values(p, '--config')) inv.an.read(c, inv.scope);
  for (const l of values(p, '--log-file')) inv.an.write(l, inv.scope);
  if (!verb || verb.dynamic) return;
  const remote = (w: WordValue) => !w.dynamic && /^:?[\w .-]*:/.test(w.text) && !/^[A-Za-z]:[\\/]/.test(w.text);
  const toUrl = (w: WordValue) => `rclone://${w.text.replace(/^:/, '').replace(':', '/')}`;
  if (['copy', 'sync', 'move', 'copyto', 'moveto', 'bisync', 'copyurl'].includes(verb.text)) {
    bucketCopy(inv, rest, remote, toUrl, !/to$/.test(verb.text), 'rclone');
  } else {
    for (const o of rest) if (remote(o)) inv.an.net(toUrl(o));
  }
});

/**
 * Tools that write their own configuration (`npm config set`, `pip config set`): judged by the file
 * they change, which the protection tables cover (~/.npmrc, a project .npmrc, pip.conf…).
 */
const TOOL_CONFIG: Record<string, (inv: Inv) => boolean> = {
  npm: (inv) => npmLikeConfig(inv, 'npm'),
  pnpm: (inv) => npmLikeConfig(inv, 'pnpm'),
  yarn(inv) {
    const ops = operands(inv.args, ['--cwd']);
    if (ops[0]?.text !== 'config' || !ops[1] || !['set', 'unset', 'delete'].includes(ops[1].text)) return false;
    const home = inv.scope.home ?? '~';
    // Yarn 1 writes ~/.yarnrc; Yarn 2+ the project's .yarnrc.yml (-H: the home one).
    const targets = has(parseOpts(inv.args, {}), '-H', '--home') ? [`${home}/.yarnrc.yml`] : [`${home}/.yarnrc`, '.yarnrc.yml'];
    for (const t of targets) inv.an.write(literalWord(t), inv.scope);
    execKey(
      inv,
      'yarn',
      ops[2],
      /^(yarnPath|yarn-path|plugins|npmRegistryServer|registry|npmScopes|injectEnvironmentFiles|enableScripts|script-shell|shell)$/i,
    );
    return true;
  },
  pip(inv) {
    const ops = operands(inv.args, ['--python']);
    if (ops[0]?.text !== 'config' || !ops[1] || !['set', 'unset', 'edit'].includes(ops[1].text)) return false;
    const p = parseOpts(inv.args, { long: ['editor', 'python'] });
    if (has(p, '--editor')) inv.an.opaque('pip config edit --editor runs an editor');
    const home = inv.scope.home ?? '~';
    const platform = inv.an.platform;
    let targets: string[];
    if (has(p, '--global'))
      targets =
        platform === 'win32'
          ? ['C:/ProgramData/pip/pip.ini']
          : platform === 'darwin'
            ? ['/Library/Application Support/pip/pip.conf']
            : ['/etc/pip.conf', '/etc/xdg/pip/pip.conf'];
    else if (has(p, '--site')) {
      inv.an.opaque('pip config --site writes the configuration of the active environment, which is not known here');
      return true;
    } else
      targets =
        platform === 'win32'
          ? [`${home}/AppData/Roaming/pip/pip.ini`]
          : platform === 'darwin'
            ? [`${home}/Library/Application Support/pip/pip.conf`, `${home}/.config/pip/pip.conf`]
            : [`${home}/.config/pip/pip.conf`];
    for (const t of targets) inv.an.write(literalWord(t), inv.scope);
    execKey(
      inv,
      'pip',
      ops[2],
      /(^|\.)(index-url|extra-index-url|find-links|trusted-host|target|prefix|root|src|editable|require-virtualenv|no-binary)$/i,
    );
    return true;
  },
  conda(inv) {
    const p = parseOpts(inv.args, { long: ['set', 'add', 'append', 'prepend', 'remove', 'remove-key', 'file', 'env', 'name'] });
    if (inv.args[0]?.text !== 'config' || !has(p, '--set', '--add', '--append', '--prepend', '--remove', '--remove-key')) return false;
    const file = lastValue(p, '--file');
    inv.an.write(file ?? literalWord(`${inv.scope.home ?? '~'}/.condarc`), inv.scope);
    execKey(
      inv,
      'conda',
      values(p, '--set', '--add', '--append', '--prepend')[0],
      /^(channels|default_channels|custom_channels|channel_alias|pip_interop_enabled|ssl_verify|proxy_servers)$/i,
    );
    return true;
  },
};
TOOL_CONFIG['pip3'] = TOOL_CONFIG['pip']!;

/** A setting that runs code or changes where packages come from is execution configuration: a review. */
function execKey(inv: Inv, tool: string, key: WordValue | undefined, keys: RegExp): void {
  if (key && (key.dynamic || keys.test(key.text.split('=')[0]!)))
    inv.an.opaque(`${tool} setting \`${clip(key.raw, 40)}\` can run code or change where packages come from`);
}

/** npm settings that run code or change where packages come from: writing one is execution configuration. */
const NPM_EXEC_KEYS =
  /^(script-shell|shell|editor|browser|viewer|git|node-options|onload-script|init-module|ignore-scripts|prefix|globalconfig|userconfig|registry|@[^:]+:registry|.*:_authToken|strict-ssl|cafile|proxy|https-proxy|node-gyp)$/i;

/** `npm config set K V`, `npm set K V`, `npm config delete K`, `npm config edit`, `npm pkg set …`; false for other npm commands. */
function npmLikeConfig(inv: Inv, tool: 'npm' | 'pnpm'): boolean {
  const { an, scope } = inv;
  const ops = operands(inv.args, ['--location', '-L', '--prefix', '--userconfig', '--globalconfig', '-C', '--dir', '--registry']);
  const [sub, action, key, value] = ops;
  if (!sub || sub.dynamic) return false;
  if (sub.text === 'pkg' && action && ['set', 'delete', 'fix'].includes(action.text)) {
    // `npm pkg set scripts.postinstall=…` writes package.json (its scripts run on install).
    if (ops.slice(2).some((w) => w.dynamic || /^scripts\./.test(w.text)))
      an.opaque(`${tool} pkg ${action.text} changes the scripts in package.json`);
    an.write(literalWord('package.json'), scope);
    return true;
  }
  const setting =
    sub.text === 'set'
      ? { action: 'set', key: action, value: key }
      : ['config', 'c'].includes(sub.text) && action && ['set', 'delete', 'rm', 'edit', 'fix'].includes(action.text)
        ? { action: action.text, key, value }
        : undefined;
  if (!setting) return false;
  const p = parseOpts(inv.args, { short: 'L', long: ['location', 'userconfig', 'globalconfig'] });
  const location = lastValue(p, '-L', '--location');
  const home = scope.home ?? '~';
  execKey(inv, tool, setting.key, NPM_EXEC_KEYS);
  if (setting.action === 'edit') an.opaque(`${tool} config edit runs an editor`);
  const user = lastValue(p, '--userconfig');
  if (location?.dynamic) an.opaque(`${tool} config location is not literal`);
  else if (location?.text === 'project') an.write(literalWord('.npmrc'), scope);
  else if (location?.text === 'global' || has(p, '-g', '--global')) {
    const g = lastValue(p, '--globalconfig');
    if (g) an.write(g, scope);
    else an.opaque(`${tool} config --location=global writes the global npmrc, whose place is not known here`);
  } else if (user) an.write(user, scope);
  else if (tool === 'pnpm') {
    const platform = an.platform;
    an.write(
      literalWord(
        platform === 'win32'
          ? `${home}/AppData/Local/pnpm/config/rc`
          : platform === 'darwin'
            ? `${home}/Library/Preferences/pnpm/rc`
            : `${home}/.config/pnpm/rc`,
      ),
      scope,
    );
    an.write(literalWord(`${home}/.npmrc`), scope);
  } else an.write(literalWord(`${home}/.npmrc`), scope);
  return true;
}

/** Static file servers run with npx: `npx http-server [DIR] [-a ADDR] [-p PORT]`, `npx serve [DIR] [-l URI]`, `npx live-server`. */
function nodeServer(inv: Inv, args: readonly WordValue[]): boolean {
  const p = parseOpts(args, { short: 'p', long: ['package', 'yes'], posix: true });
  const [pkg, ...rest] = p.rest;
  const name = pkg && !pkg.dynamic ? pkg.text.replace(/@[^@/]*$/, '') : '';
  const server = NODE_SERVERS[name];
  if (!server) return false;
  server({ ...inv, cmd: name, args: rest });
  return true;
}

const NODE_SERVERS: Record<string, (inv: Inv) => void> = {
  'http-server'(inv) {
    const p = parseOpts(inv.args, { short: 'apdice', long: ['address', 'port', 'proxy', 'cors', 'ext'] });
    // Its default root is ./public when it exists, else the working directory: both lie below `.`.
    serveFiles(inv, 'http-server', p.pos[0] ?? DOT, lastValue(p, '-a', '--address'), lastValue(p, '-p', '--port')?.text ?? '8080');
  },
  serve(inv) {
    const p = parseOpts(inv.args, { short: 'lpc', long: ['listen', 'config'] });
    const listen = lastValue(p, '-l', '--listen');
    const m = listen && !listen.dynamic ? /^(?:tcp:\/\/)?(?:(.*):)?(\d+)$/.exec(listen.text) : null;
    serveFiles(inv, 'serve', p.pos[0] ?? DOT, listen?.dynamic ? listen : m?.[1] ? literalWord(m[1]) : undefined, m?.[2] ?? '3000');
  },
  'live-server'(inv) {
    const host = inv.args.find((w) => w.text.startsWith('--host='));
    const port = inv.args.find((w) => w.text.startsWith('--port='));
    const dir = inv.args.find((w) => !w.text.startsWith('-'));
    serveFiles(inv, 'live-server', dir ?? DOT, host ? sliceWord(host, 7) : undefined, port ? port.text.slice(7) : '8080');
  },
};
reg(Object.keys(NODE_SERVERS), (inv) => NODE_SERVERS[inv.cmd]!(inv));

reg('pacman', (inv) => {
  if (inv.args.some((w) => /^-[A-Za-z]*[SU]/.test(w.text) || w.text === '--sync')) inv.an.net();
});

reg('pip3', (inv) => NET_COMMANDS.get('pip')!.fn({ ...inv, cmd: 'pip' }));

// ------------------------------------------------------------------------------------------
// Containers: bind mounts give the container the host path (read-write unless `:ro`).

reg(['docker', 'podman', 'nerdctl'], (inv) => {
  const { an, scope } = inv;
  const args = inv.args;
  const subIdx = args.findIndex((w) => !w.text.startsWith('-'));
  const sub = args[subIdx]?.text ?? '';
  if (['pull', 'push', 'login', 'search'].includes(sub)) an.net();
  if (sub === 'cp') {
    const ops = args.slice(subIdx + 1).filter((w) => !w.text.startsWith('-'));
    const [src, dst] = ops;
    const inContainer = (w: WordValue) => !w.dynamic && /^[\w.-]+:/.test(w.text) && !/^[A-Za-z]:[\\/]/.test(w.text);
    if (src && !inContainer(src)) an.read(src, scope);
    if (dst && !inContainer(dst)) an.write(dst, scope);
    return;
  }
  if (sub === 'run' || sub === 'create') {
    const rest = args.slice(subIdx + 1);
    for (let i = 0; i < rest.length; i++) {
      const t = rest[i]!.text;
      let spec: WordValue | undefined;
      if (t === '-v' || t === '--volume' || t === '--mount') spec = rest[++i];
      else if (t.startsWith('--volume=') || t.startsWith('--mount=')) spec = sliceWord(rest[i]!, t.indexOf('=') + 1);
      else if (t.startsWith('-v') && t.length > 2 && !t.startsWith('--')) spec = sliceWord(rest[i]!, 2);
      if (!spec) continue;
      let host: string | undefined;
      let ro = false;
      if (spec.text.includes('source=') || spec.text.includes('src=') || spec.text.includes('type=')) {
        const kv = Object.fromEntries(spec.text.split(',').map((p) => [p.split('=')[0]!, p.split('=').slice(1).join('=')]));
        if (kv['type'] === 'bind' || kv['type'] === undefined) host = kv['source'] ?? kv['src'];
        ro = 'readonly' in kv || 'ro' in kv || kv['readonly'] === 'true';
      } else {
        const parts = spec.text.split(':');
        // C:\x:/data on Windows: rejoin the drive letter.
        if (parts.length > 2 && /^[A-Za-z]$/.test(parts[0]!)) parts.splice(0, 2, parts[0] + ':' + parts[1]);
        if (parts.length >= 2 && /^[/.~]|^[A-Za-z]:/.test(parts[0]!)) host = parts[0];
        ro = parts.slice(2).some((o) => o.split(',').includes('ro'));
      }
      if (spec.dynamic && !spec.prefix.includes(':')) {
        // `-v "$(pwd)":/app`: the host side is not literal.
        an.opaque(`${inv.cmd} mounts a host path that is not literal (\`${clip(spec.raw, 40)}\`)`);
        continue;
      }
      if (host === undefined) continue;
      const w = literalWord(host.replace(/^~(?=\/|$)/, scope.home ?? '~'));
      if (ro) an.read(w, scope);
      else an.write(w, scope);
    }
    // The rest (image, container command and its paths) runs inside the container.
    return;
  }
  // Image references (`docker pull library/alpine`, `build -t acme/app .`) are names, not files.
  const images = new Set<WordValue>();
  if (['pull', 'push', 'rmi', 'tag', 'history'].includes(sub))
    for (const w of operandWords(
      args,
      subIdx + 1,
      ['-a', '--all-tags', '-q', '--quiet', '--disable-content-trust', '-f', '--force', '--no-prune', '-H', '--human', '--no-trunc'],
      [],
    ))
      images.add(w);
  for (let i = subIdx + 1; i < args.length; i++) if (['-t', '--tag'].includes(args[i]!.text) && args[i + 1]) images.add(args[++i]!);
  genericReads(
    inv,
    args.filter((w) => !images.has(w) && (!/^[^-].*:/.test(w.text) || /^[A-Za-z]:[\\/]/.test(w.text))),
  );
});

// ------------------------------------------------------------------------------------------
// Database clients: a host option means a network connection.

/** Each client's port option and default port: the target is host:port, so a loopback port the user allowed (a local database) is not refused as "loopback". */
const DB_PORTS: Record<string, { readonly options: readonly string[]; readonly port: number }> = {
  psql: { options: ['-p', '--port'], port: 5432 },
  pg_dump: { options: ['-p', '--port'], port: 5432 },
  mysql: { options: ['-P', '--port'], port: 3306 },
  mariadb: { options: ['-P', '--port'], port: 3306 },
  mysqldump: { options: ['-P', '--port'], port: 3306 },
  'redis-cli': { options: ['-p'], port: 6379 },
  mongosh: { options: ['--port'], port: 27017 },
  mongo: { options: ['--port'], port: 27017 },
  'clickhouse-client': { options: ['--port'], port: 9000 },
};

reg(['psql', 'mysql', 'mariadb', 'redis-cli', 'mongosh', 'mongo', 'pg_dump', 'mysqldump', 'clickhouse-client'], (inv) => {
  const args = inv.args;
  const ports = DB_PORTS[inv.cmd]!;
  let host: WordValue | undefined;
  let port: WordValue | undefined;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (t === '-h' || t === '--host') {
      const h = args[++i];
      if (h) host = h;
    } else if (t.startsWith('--host=')) host = sliceWord(w, 7);
    else if (ports.options.includes(t)) port = args[++i];
    else if (ports.options.some((o) => o.startsWith('--') && t.startsWith(`${o}=`))) port = sliceWord(w, t.indexOf('=') + 1);
    else if (
      /^(postgres(ql)?|mysql|mongodb(\+srv)?|rediss?):\/\//.test(t) ||
      (w.dynamic && /^(postgres|mysql|mongodb|redis)/.test(w.prefix))
    )
      inv.an.netWord(w, inv.cmd);
    else if (t === '-f' || t === '--file') {
      const f = args[++i];
      if (f) inv.an.read(f, inv.scope);
    } else if (t === '-o' || t === '--output' || t === '--result-file') {
      const f = args[++i];
      if (f) inv.an.write(f, inv.scope);
    }
  }
  if (!host) return;
  if (host.dynamic || port?.dynamic || (port && !/^\d{1,5}$/.test(port.text)))
    return void inv.an.netWord(host.dynamic ? host : unknownWord(`${host.raw}:${port?.raw ?? ''}`), inv.cmd);
  // An IPv6 literal gets brackets, so its port cannot be read as part of the address.
  const h = host.text.includes(':') && !host.text.startsWith('[') ? `[${host.text}]` : host.text;
  inv.an.netWord(literalWord(`${h}:${port?.text ?? ports.port}`), inv.cmd);
});

const SQLITE_VALUED = new Set([
  'cmd',
  'init',
  'separator',
  'newline',
  'nullvalue',
  'vfs',
  'maxsize',
  'mmap',
  'pagecache',
  'lookaside',
  'heap',
  'escape',
]);

reg(['sqlite3', 'sqlite'], (inv) => {
  // sqlite3 options are single-dash words (`-cmd X`, `-init FILE`, `-csv`).
  const ops: WordValue[] = [];
  const cmds: WordValue[] = [];
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const name = w.dynamic ? '' : w.text.replace(/^--?/, '');
    if (w.text.startsWith('-') && !w.dynamic) {
      if (!SQLITE_VALUED.has(name)) continue;
      const v = args[++i];
      if (v && name === 'init') inv.an.read(v, inv.scope);
      if (v && name === 'cmd') cmds.push(v);
      continue;
    }
    ops.push(w);
  }
  const [db, ...sql] = ops;
  if (db && db.text !== ':memory:') inv.an.write(db, inv.scope);
  // Dot-commands can run shell commands (.shell/.system) and read or write any file.
  if ([...sql, ...cmds].some((w) => w.dynamic || /(^|\n|;)\s*\.[a-z]/.test(w.text)))
    inv.an.opaque(`${inv.cmd} dot-commands can run commands and touch other files`);
});
