// Handlers for commands that reach the network: HTTP clients, sockets, remote shells and copies,
// DNS tools, containers and database clients (package managers and cloud CLIs: packages.ts; git: git.ts).
import { has, lastValue, parseOpts, values } from '../options';
import { literalWord, sliceWord, unknownWord, type WordValue } from '../words';
import {
  DOT,
  childOf,
  clip,
  fileUrlPath,
  urlOperand,
  genericReads,
  isRemoteSpec,
  joinWord,
  proxyAddress,
  register,
  remoteHost,
  type Inv,
  type Registry,
} from '../helpers';
import { LOOPBACK, operandWords } from './shared';

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
