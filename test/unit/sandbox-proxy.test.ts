// The sandbox's filtering network proxy and the forwarder that runs inside the sandbox: real HTTP
// servers on 127.0.0.1 as the "remote", the real proxy on a TCP port and on a Unix socket, the real
// forwarder bundle run with node (and curl), and, where bubblewrap works, inside a real sandbox.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import * as esbuild from 'esbuild';
import {
  type FilteringProxy,
  type FilteringProxyOptions,
  type ProxyDecision,
  RULE_ALLOWED,
  RULE_ALLOWED_LITERAL,
  RULE_BAD_REQUEST,
  RULE_NOT_ALLOWED,
  RULE_TOO_MANY_CONNECTIONS,
  parseAllowedHost,
  startFilteringProxy,
} from '../../src/node/sandbox/proxy';
import { makeTempDir, repoRoot } from './helpers/repo';

interface Remote {
  port: number;
  connections: number;
  requests: http.IncomingMessage[];
  close(): Promise<void>;
}

/** The "internet": an HTTP server on 127.0.0.1 that answers `remote saw METHOD URL` and counts connections. */
async function startRemote(): Promise<Remote> {
  const requests: http.IncomingMessage[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req);
    req.resume();
    req.on('end', () => res.end(`remote saw ${req.method} ${req.url}`));
  });
  const remote = {
    port: 0,
    connections: 0,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  server.on('connection', () => {
    remote.connections++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  remote.port = (server.address() as net.AddressInfo).port;
  return remote;
}

type Endpoint = { port: number } | { path: string };
const connectTo = (e: Endpoint) => ('path' in e ? net.connect(e.path) : net.connect(e.port, '127.0.0.1'));

/** Sends `bytes`, returns everything received until the proxy closes (or 10 s pass). */
function exchange(e: Endpoint, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const s = connectTo(e);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => s.destroy(), 10_000);
    s.on('connect', () => s.write(bytes));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', () => undefined);
    s.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
  });
}

/** CONNECT, then (if the tunnel opens) one GET inside it. */
function throughTunnel(e: Endpoint, authority: string, innerPath = '/inner'): Promise<{ head: string; inner: string }> {
  return new Promise((resolve) => {
    const s = connectTo(e);
    let buf = Buffer.alloc(0);
    let head: string | undefined;
    const timer = setTimeout(() => s.destroy(), 10_000);
    s.on('connect', () => s.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    s.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (head !== undefined) return;
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      head = buf.subarray(0, end).toString('latin1');
      buf = buf.subarray(end + 4);
      if (head.startsWith('HTTP/1.1 200')) s.write(`GET ${innerPath} HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      clearTimeout(timer);
      if (head === undefined) {
        head = buf.toString('latin1');
        buf = Buffer.alloc(0);
      }
      resolve({ head, inner: buf.toString('latin1') });
    });
  });
}

const statusOf = (response: string) => Number(/^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1] ?? 0);
const bodyOf = (response: string) => response.slice(response.indexOf('\r\n\r\n') + 4);

/** A resolver that answers from a table and counts the questions. */
function tableResolver(table: Record<string, string[] | ((n: number) => string[])>) {
  const calls: string[] = [];
  const resolver = async (host: string) => {
    calls.push(host);
    const answer = table[host];
    if (answer === undefined) throw new Error(`ENOTFOUND ${host}`);
    return typeof answer === 'function' ? answer(calls.filter((h) => h === host).length) : answer;
  };
  return { resolver, calls };
}

/** The directory the tests were compiled into (out/ or BULWARK_OUT_DIR). */
const outDir = () => path.resolve(__dirname, '..', '..');

describe('sandbox network proxy', () => {
  let remote: Remote;
  let dir: string;
  let decisions: ProxyDecision[];
  const proxies: FilteringProxy[] = [];

  async function startProxy(o: Partial<FilteringProxyOptions> = {}): Promise<{ proxy: FilteringProxy; tcp: Endpoint; unix: Endpoint }> {
    const proxy = await startFilteringProxy({
      socketPath: path.join(dir, 'proxy.sock'),
      tcpPort: 0,
      allowHosts: [`127.0.0.1:${remote.port}`],
      onDecision: (d) => {
        decisions.push(d);
      },
      ...o,
    });
    proxies.push(proxy);
    return { proxy, tcp: { port: proxy.tcpPort! }, unix: { path: proxy.socketPath! } };
  }

  beforeEach(async () => {
    remote = await startRemote();
    dir = makeTempDir('bulwark-proxy-');
    fs.chmodSync(dir, 0o700);
    decisions = [];
  });
  afterEach(async () => {
    for (const p of proxies.splice(0)) await p.close();
    await remote.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('allowed-hosts entries', () => {
    it('reads names, wildcards, IP literals and ports', () => {
      assert.deepEqual(parseAllowedHost('Example.COM'), { entry: 'Example.COM', kind: 'name', host: 'example.com' });
      assert.deepEqual(parseAllowedHost('*.example.com:443'), {
        entry: '*.example.com:443',
        kind: 'wildcard',
        host: 'example.com',
        port: 443,
      });
      assert.deepEqual(parseAllowedHost('127.0.0.1:8080'), { entry: '127.0.0.1:8080', kind: 'ip', host: '127.0.0.1', port: 8080 });
      assert.deepEqual(parseAllowedHost('[0:0::1]:8080'), { entry: '[0:0::1]:8080', kind: 'ip', host: '::1', port: 8080 });
      assert.deepEqual(parseAllowedHost('2001:db8::1'), { entry: '2001:db8::1', kind: 'ip', host: '2001:db8::1' });
    });

    for (const [entry, why] of [
      ['*', /allowing every host/],
      ['*.com', /whole top-level domain/],
      ['a.*.example.com', /only allowed as a leading/],
      ['0x7f.0.0.1', /not a canonical IPv4 address/],
      ['127.1', /not a canonical IPv4 address/],
      ['example.com:0', /port/],
      ['example.com:70000', /port/],
      ['exa mple.com', /not a host name/],
      ['', /empty/],
      ['[::1', /unclosed/],
    ] as const) {
      it(`refuses the entry \`${entry}\``, () => assert.throws(() => parseAllowedHost(entry), why));
    }

    it('one bad entry stops the proxy from starting', async () => {
      await assert.rejects(startProxy({ allowHosts: ['example.com', '0177.0.0.1'] }), /0177\.0\.0\.1/);
    });
  });

  describe('listening', () => {
    it('creates its Unix socket 0600 in the private directory, and removes it on close', async () => {
      const { proxy } = await startProxy();
      assert.ok(fs.statSync(proxy.socketPath!).isSocket());
      assert.equal(fs.statSync(proxy.socketPath!).mode & 0o777, 0o600);
      await proxy.close();
      assert.equal(fs.existsSync(proxy.socketPath!), false);
    });

    it('refuses a socket directory that others can enter', async () => {
      fs.chmodSync(dir, 0o755);
      await assert.rejects(startProxy(), /mode 755; it must be private/);
    });

    it('refuses a socket directory that is a symbolic link', async () => {
      const real = path.join(dir, 'real');
      fs.mkdirSync(real, { mode: 0o700 });
      fs.symlinkSync(real, path.join(dir, 'link'));
      await assert.rejects(startProxy({ socketPath: path.join(dir, 'link', 'proxy.sock') }), /symbolic link/);
    });

    it('listens on 127.0.0.1 only', async () => {
      const { proxy } = await startProxy({ socketPath: undefined });
      const other = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
        const s = net.connect(proxy.tcpPort!, '127.0.0.2');
        s.on('connect', () => {
          s.destroy();
          resolve(undefined);
        });
        s.on('error', (e) => resolve(e));
      });
      assert.equal(other?.code, 'ECONNREFUSED');
    });
  });

  for (const via of ['tcp', 'unix'] as const) {
    describe(`through the ${via === 'tcp' ? 'TCP port' : 'Unix socket'}`, () => {
      it('an allowed IP literal works for a CONNECT tunnel', async () => {
        const p = await startProxy();
        const { head, inner } = await throughTunnel(p[via], `127.0.0.1:${remote.port}`);
        assert.equal(head, 'HTTP/1.1 200 Connection established');
        assert.equal(bodyOf(inner), 'remote saw GET /inner');
        assert.equal(decisions.length, 1);
        assert.deepEqual(decisions[0], {
          allowed: true,
          method: 'CONNECT',
          host: '127.0.0.1',
          port: remote.port,
          address: '127.0.0.1',
          entry: `127.0.0.1:${remote.port}`,
          rule: RULE_ALLOWED_LITERAL,
          reason: decisions[0]!.reason,
        });
        assert.match(decisions[0]!.reason, /127\.0\.0\.0\/8.*allowed because the allowed hosts list this address itself/);
      });

      it('an allowed IP literal works for a plain HTTP request; hop-by-hop headers and Proxy-Authorization are not passed on', async () => {
        const p = await startProxy();
        const response = await exchange(
          p[via],
          [
            `POST http://127.0.0.1:${remote.port}/x?q=1 HTTP/1.1`,
            'Host: elsewhere.example',
            'Proxy-Authorization: Basic c2VjcmV0',
            'Proxy-Connection: keep-alive',
            'Connection: close, X-Hop',
            'X-Hop: 1',
            'X-End: 2',
            'Content-Length: 5',
            '',
            'hello',
          ].join('\r\n'),
        );
        assert.equal(statusOf(response), 200);
        assert.equal(bodyOf(response), `remote saw POST /x?q=1`);
        const seen = remote.requests[0]!.headers;
        assert.equal(seen['proxy-authorization'], undefined);
        assert.equal(seen['proxy-connection'], undefined);
        assert.equal(seen['x-hop'], undefined, 'a header named in Connection is hop-by-hop');
        assert.equal(seen['x-end'], '2');
        assert.equal(seen.host, `127.0.0.1:${remote.port}`, 'Host names the checked target');
        assert.equal(decisions.length, 1);
        assert.equal(decisions[0]!.method, 'POST');
        assert.equal(decisions[0]!.allowed, true);
      });

      it('a host not in the list is refused with the rule id, and nothing is dialled', async () => {
        const p = await startProxy();
        const other = await startRemote();
        try {
          const { head, inner } = await throughTunnel(p[via], `127.0.0.1:${other.port}`);
          const expected = `bulwark sandbox: 127.0.0.1:${other.port} refused: not in the allowed hosts (rule sandbox.net.not_allowed)`;
          assert.equal(head.split('\r\n')[0], `HTTP/1.1 403 ${expected}`);
          assert.equal(inner, `${expected}\n`);
          const plain = await exchange(p[via], `GET http://example.org/ HTTP/1.1\r\nHost: example.org\r\n\r\n`);
          assert.equal(statusOf(plain), 403);
          assert.match(plain, /X-Bulwark-Rule: sandbox\.net\.not_allowed/);
          assert.equal(bodyOf(plain), 'bulwark sandbox: example.org:80 refused: not in the allowed hosts (rule sandbox.net.not_allowed)\n');
          assert.equal(other.connections, 0);
          assert.deepEqual(
            decisions.map((d) => [d.allowed, d.host, d.port, d.rule]),
            [
              [false, '127.0.0.1', other.port, RULE_NOT_ALLOWED],
              [false, 'example.org', 80, RULE_NOT_ALLOWED],
            ],
          );
        } finally {
          await other.close();
        }
      });
    });
  }

  describe('SSRF checks on what a name resolves to', () => {
    const cases: [string, string[], string][] = [
      ['the cloud metadata address', ['169.254.169.254'], 'ssrf.range.link_local'],
      ['a private address', ['10.1.2.3'], 'ssrf.range.private'],
      ['a public and a private address', ['93.184.215.14', '10.0.0.1'], 'ssrf.range.private'],
      ['loopback (no loopback port allowed by the policy)', ['127.0.0.1'], 'ssrf.range.loopback'],
      ['IPv4-mapped metadata', ['::ffff:169.254.169.254'], 'ssrf.range.link_local'],
      ['no address at all', [], 'ssrf.resolution_failed'],
    ];
    for (const [what, answer, rule] of cases) {
      it(`a listed name resolving to ${what} is refused (${rule})`, async () => {
        const { resolver, calls } = tableResolver({ 'api.example.com': answer });
        const p = await startProxy({ allowHosts: ['*.example.com'], resolver });
        const { head } = await throughTunnel(p.tcp, 'api.example.com:443');
        assert.equal(statusOf(head), 403);
        assert.match(
          head,
          new RegExp(`^HTTP/1.1 403 bulwark sandbox: api\\.example\\.com:443 refused: .*\\(rule ${rule.replace(/\./g, '\\.')}\\)`),
        );
        assert.deepEqual(calls, ['api.example.com']);
        assert.equal(decisions.length, 1);
        assert.equal(decisions[0]!.rule, rule);
        assert.equal(decisions[0]!.allowed, false);
        assert.equal(decisions[0]!.entry, '*.example.com');
      });
    }

    it('a name the resolver cannot resolve is refused (502, ssrf.resolution_failed)', async () => {
      const { resolver } = tableResolver({});
      const p = await startProxy({ allowHosts: ['nowhere.example'], resolver });
      const response = await exchange(p.tcp, 'GET http://nowhere.example/ HTTP/1.1\r\nHost: nowhere.example\r\n\r\n');
      assert.equal(statusOf(response), 502);
      assert.match(response, /could not resolve `nowhere\.example` \(ENOTFOUND nowhere\.example\) \(rule ssrf\.resolution_failed\)/);
    });

    it('a metadata name is refused by name before any resolution', async () => {
      const { resolver, calls } = tableResolver({ 'metadata.google.internal': ['93.184.215.14'] });
      const p = await startProxy({ allowHosts: ['metadata.google.internal'], resolver });
      const { head } = await throughTunnel(p.tcp, 'metadata.google.internal:80');
      assert.match(head, /^HTTP\/1.1 403 .*\(rule ssrf\.name\.cloud_metadata\)/);
      assert.deepEqual(calls, []);
    });

    it('the apex of a wildcard is not covered by it', async () => {
      const { resolver, calls } = tableResolver({ 'example.com': ['93.184.215.14'] });
      await startProxy({ allowHosts: ['*.example.com'], resolver });
      const p = proxies[0]!;
      const { head } = await throughTunnel({ port: p.tcpPort! }, 'example.com:443');
      assert.match(head, /\(rule sandbox\.net\.not_allowed\)/);
      assert.deepEqual(calls, []);
    });

    it('a rebinding name is resolved once per connection and connected to exactly the checked address', async () => {
      // First answer loopback (allowed for this port by the policy), every later one a private address.
      const { resolver, calls } = tableResolver({ 'rebind.example': (n) => (n === 1 ? ['127.0.0.1'] : ['10.0.0.7']) });
      const p = await startProxy({ allowHosts: ['rebind.example'], resolver, policy: { allowLoopbackPorts: [remote.port] } });
      const first = await throughTunnel(p.tcp, `rebind.example:${remote.port}`);
      assert.equal(first.head, 'HTTP/1.1 200 Connection established');
      // Only the injected resolver knows this name: reaching the remote proves the checked address was dialled.
      assert.equal(bodyOf(first.inner), 'remote saw GET /inner');
      assert.deepEqual(calls, ['rebind.example']);
      assert.equal(decisions[0]!.address, '127.0.0.1');
      assert.equal(decisions[0]!.rule, RULE_ALLOWED);
      const second = await exchange(p.tcp, `GET http://rebind.example:${remote.port}/again HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.equal(statusOf(second), 403);
      assert.match(second, /rebind\.example` resolves to 10\.0\.0\.7.*\(rule ssrf\.range\.private\)/);
      assert.deepEqual(calls, ['rebind.example', 'rebind.example']);
      assert.equal(remote.requests.length, 1);
    });
  });

  describe('explicitly listed IP literals', () => {
    for (const [literal, rule] of [
      ['169.254.169.254', 'ssrf.range.link_local'],
      ['100.100.100.200', 'ssrf.range.cloud_metadata'],
      ['[fd00:ec2::254]', 'ssrf.range.cloud_metadata'],
      ['[::ffff:169.254.169.254]', 'ssrf.range.link_local'],
      ['[fe80::1]', 'ssrf.range.link_local'],
    ] as const) {
      it(`${literal} is refused even when listed (${rule})`, async () => {
        const p = await startProxy({ allowHosts: [literal] });
        const { head, inner } = await throughTunnel(p.tcp, `${literal}:80`);
        assert.equal(statusOf(head), 403);
        assert.match(head.split('\r\n')[0]!, new RegExp(`\\(rule ${rule.replace(/\./g, '\\.')}\\)$`));
        assert.match(inner, new RegExp(`refused even when listed \\(rule ${rule.replace(/\./g, '\\.')}\\)`));
        const plain = await exchange(p.unix, `GET http://${literal}/latest/meta-data/ HTTP/1.1\r\nHost: x\r\n\r\n`);
        assert.equal(statusOf(plain), 403);
        assert.deepEqual(
          decisions.map((d) => [d.allowed, d.rule, d.entry]),
          [
            [false, rule, literal],
            [false, rule, literal],
          ],
        );
      });
    }

    it('a private literal is allowed only by an entry for that exact address', async () => {
      const p = await startProxy({ allowHosts: [`127.0.0.2:${remote.port}`, '*.example.com'] });
      const { head } = await throughTunnel(p.tcp, `127.0.0.1:${remote.port}`);
      assert.match(head, /\(rule sandbox\.net\.not_allowed\)/);
      assert.equal(remote.connections, 0);
    });

    for (const [form, target] of [
      ['hexadecimal', '0x7f.0.0.1'],
      ['integer', '2130706433'],
      ['octal', '0177.0.0.1'],
      ['short', '127.1'],
    ] as const) {
      it(`a non-canonical IPv4 host (${form}) is refused and nothing is dialled`, async () => {
        const p = await startProxy({ allowHosts: [`127.0.0.1:${remote.port}`] });
        const { head } = await throughTunnel(p.tcp, `${target}:${remote.port}`);
        assert.match(head, /^HTTP\/1.1 403 .*\(rule ssrf\.noncanonical_ipv4\)/);
        const plain = await exchange(p.tcp, `GET http://${target}:${remote.port}/ HTTP/1.1\r\nHost: x\r\n\r\n`);
        assert.equal(statusOf(plain), 403);
        assert.equal(remote.connections, 0);
        assert.deepEqual(
          decisions.map((d) => d.rule),
          ['ssrf.noncanonical_ipv4', 'ssrf.noncanonical_ipv4'],
        );
      });
    }
  });

  describe('bad requests, limits and failures', () => {
    const bad: [string, () => string][] = [
      ['a malformed request line', () => 'THIS IS NOT HTTP\r\n\r\n'],
      ['an oversized header', () => `CONNECT 127.0.0.1:${remote.port} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`],
      ['a CONNECT target without a port', () => 'CONNECT 127.0.0.1 HTTP/1.1\r\nHost: x\r\n\r\n'],
      ['a CONNECT target with user info', () => `CONNECT evil@127.0.0.1:${remote.port} HTTP/1.1\r\nHost: x\r\n\r\n`],
      ['an origin-form request (not a proxy request)', () => 'GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
      ['an https:// absolute URI (must be a tunnel)', () => `GET https://127.0.0.1:${remote.port}/ HTTP/1.1\r\nHost: x\r\n\r\n`],
      [
        'a WebSocket upgrade over plain HTTP',
        () => `GET http://127.0.0.1:${remote.port}/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
      ],
    ];
    for (const [what, request] of bad) {
      it(`${what} gets 400 and nothing is dialled`, async () => {
        const p = await startProxy();
        const response = await exchange(p.tcp, request());
        assert.equal(statusOf(response), 400, response.slice(0, 200));
        assert.match(response.split('\r\n')[0]!, /bulwark sandbox: .*refused: .*\(rule sandbox\.net\.bad_request\)/);
        assert.equal(remote.connections, 0);
        assert.equal(decisions.length, 1);
        assert.equal(decisions[0]!.allowed, false);
        assert.equal(decisions[0]!.rule, RULE_BAD_REQUEST);
      });
    }

    it('the header cap is configurable', async () => {
      const p = await startProxy({ maxHeaderBytes: 1024 });
      const response = await exchange(
        p.tcp,
        `GET http://127.0.0.1:${remote.port}/ HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(2000)}\r\n\r\n`,
      );
      assert.equal(statusOf(response), 400);
      assert.match(response, /exceed 1024 bytes/);
      assert.equal(remote.connections, 0);
    });

    it('a client that never finishes its headers is disconnected', async () => {
      const p = await startProxy({ headersTimeoutMs: 300 });
      const response = await exchange(p.tcp, 'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: x\r\n');
      assert.equal(statusOf(response), 408);
      assert.equal(decisions[0]!.rule, RULE_BAD_REQUEST);
    });

    it('connections beyond the limit are refused with 503', async () => {
      const p = await startProxy({ maxConnections: 2 });
      const open = [connectTo(p.tcp), connectTo(p.unix)];
      await Promise.all(open.map((s) => new Promise((r) => s.on('connect', r))));
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(p.proxy.connections(), 2);
      const third = await exchange(p.tcp, `GET http://127.0.0.1:${remote.port}/ HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.equal(statusOf(third), 503);
      assert.match(third, /more than 2 connections at once \(rule sandbox\.net\.too_many_connections\)/);
      assert.equal(decisions.at(-1)!.rule, RULE_TOO_MANY_CONNECTIONS);
      assert.equal(remote.connections, 0);
      for (const s of open) s.destroy();
    });

    it('a failing audit record refuses an allowed connection before anything is dialled', async () => {
      const p = await startProxy({
        onDecision: async (d) => {
          decisions.push(d);
          if (d.allowed) throw new Error('disk full');
        },
      });
      const { head } = await throughTunnel(p.tcp, `127.0.0.1:${remote.port}`);
      assert.match(head, /^HTTP\/1.1 500 .*recording the decision failed \(disk full\).*\(rule sandbox\.net\.audit_failed\)/);
      assert.equal(remote.connections, 0);
      assert.deepEqual(
        decisions.map((d) => d.allowed),
        [true],
        'the allowed decision was offered to the recorder first',
      );
    });

    it('a destination that refuses the connection gets 502, and the proxy keeps serving', async () => {
      const closed = await startRemote();
      const port = closed.port;
      await closed.close();
      const p = await startProxy({ allowHosts: [`127.0.0.1:${port}`, `127.0.0.1:${remote.port}`] });
      const { head } = await throughTunnel(p.tcp, `127.0.0.1:${port}`);
      assert.match(head, /^HTTP\/1.1 502 .*connecting to 127\.0\.0\.1:\d+ failed: connect ECONNREFUSED/);
      const again = await throughTunnel(p.tcp, `127.0.0.1:${remote.port}`);
      assert.equal(bodyOf(again.inner), 'remote saw GET /inner');
    });

    it('close() ends open tunnels', async () => {
      const p = await startProxy();
      const s = connectTo(p.tcp);
      const closed = new Promise<void>((r) => s.on('close', () => r()));
      s.on('error', () => undefined);
      const opened = new Promise<void>((r) => s.once('data', () => r()));
      s.on('connect', () => s.write(`CONNECT 127.0.0.1:${remote.port} HTTP/1.1\r\nHost: x\r\n\r\n`));
      await opened;
      assert.equal(remote.connections, 1);
      await p.proxy.close();
      await closed;
      assert.equal(p.proxy.connections(), 0);
    });
  });
});

describe('sandbox-init forwarder', () => {
  let bundle: string;
  let remote: Remote;
  let dir: string;
  let decisions: ProxyDecision[];
  let proxy: FilteringProxy;

  before(async () => {
    bundle = path.join(outDir(), 'sandbox-init', 'sandbox-init.js');
    // The same options as esbuild.mjs's `common` (the forwarder needs no plugins).
    const result = await esbuild.build({
      entryPoints: [path.join(repoRoot(), 'src/sandbox-init/main.ts')],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      sourcemap: 'linked',
      logLevel: 'warning',
      metafile: true,
    });
    // It must start fast: nothing of the engine (or anything else outside src/sandbox-init) is bundled.
    assert.deepEqual(
      Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('src/sandbox-init/')),
      [],
    );
  });

  beforeEach(async () => {
    remote = await startRemote();
    dir = makeTempDir('bulwark-forwarder-');
    fs.chmodSync(dir, 0o700);
    decisions = [];
    proxy = await startFilteringProxy({
      socketPath: path.join(dir, 'proxy.sock'),
      allowHosts: [`127.0.0.1:${remote.port}`],
      onDecision: (d) => {
        decisions.push(d);
      },
    });
  });
  afterEach(async () => {
    await proxy.close();
    await remote.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function run(
    argv: string[],
    o: { env?: NodeJS.ProcessEnv; onStdout?: (text: string, child: ChildProcess) => void } = {},
  ): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), { env: { PATH: process.env.PATH, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.stdout!.on('data', (d: Buffer) => {
        stdout += d;
        o.onStdout?.(stdout, child);
      });
      child.stderr!.on('data', (d: Buffer) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      });
    });
  }
  const forwarder = (...command: string[]) => [
    process.execPath,
    bundle,
    '--proxy-socket',
    proxy.socketPath!,
    '--port',
    '0',
    '--',
    ...command,
  ];

  it('curl reaches the remote through the forwarder and the proxy (plain HTTP and a CONNECT tunnel)', async () => {
    const r = await run(forwarder('curl', '-sS', `http://127.0.0.1:${remote.port}/x`));
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.equal(r.stdout, 'remote saw GET /x');
    const tunnel = await run(forwarder('curl', '-sS', '--proxytunnel', `http://127.0.0.1:${remote.port}/t`));
    assert.equal(tunnel.stdout, 'remote saw GET /t');
    assert.deepEqual(
      decisions.map((d) => [d.allowed, d.method, d.host, d.port]),
      [
        [true, 'GET', '127.0.0.1', remote.port],
        [true, 'CONNECT', '127.0.0.1', remote.port],
      ],
    );
  });

  it('a refusal from the proxy reaches the command', async () => {
    const r = await run(forwarder('curl', '-sS', 'http://198.51.100.7/'));
    assert.equal(r.stdout, 'bulwark sandbox: 198.51.100.7:80 refused: not in the allowed hosts (rule sandbox.net.not_allowed)\n');
    assert.equal(decisions[0]!.rule, RULE_NOT_ALLOWED);
  });

  it('sets every proxy variable to its port and empties NO_PROXY', async () => {
    const r = await run(
      forwarder('sh', '-c', 'echo "$HTTP_PROXY $HTTPS_PROXY $ALL_PROXY $http_proxy $https_proxy $all_proxy [$NO_PROXY] [$no_proxy]"'),
      { env: { NO_PROXY: '*', no_proxy: '127.0.0.1', http_proxy: 'http://elsewhere:1' } },
    );
    assert.equal(r.code, 0);
    const [url, ...rest] = r.stdout.trim().split(' ');
    assert.match(url!, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(rest, [url, url, url, url, url, '[]', '[]']);
  });

  it("exits with the command's exit code", async () => {
    assert.equal((await run(forwarder('sh', '-c', 'exit 7'))).code, 7);
    assert.equal((await run(forwarder('true'))).code, 0);
  });

  it('forwards SIGTERM to the command and exits 128 + 15', async () => {
    const r = await run(forwarder('sh', '-c', 'echo ready; exec sleep 30'), {
      onStdout: (out, child) => {
        if (out.includes('ready')) child.kill('SIGTERM');
      },
    });
    assert.equal(r.signal, null);
    assert.equal(r.code, 143);
  });

  it('a missing proxy socket exits 125 with one line on stderr, without running the command', async () => {
    const marker = path.join(dir, 'ran');
    const r = await run([process.execPath, bundle, '--proxy-socket', path.join(dir, 'missing.sock'), '--port', '0', '--', 'touch', marker]);
    assert.equal(r.code, 125);
    assert.match(r.stderr, /^bulwark sandbox-init: the proxy socket .*missing\.sock is missing \(ENOENT\); the command was not run\n$/);
    assert.equal(fs.existsSync(marker), false);
  });

  it('a port it cannot listen on exits 125 without running the command', async () => {
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const marker = path.join(dir, 'ran');
    try {
      const port = String((busy.address() as net.AddressInfo).port);
      const r = await run([process.execPath, bundle, '--proxy-socket', proxy.socketPath!, '--port', port, '--', 'touch', marker]);
      assert.equal(r.code, 125);
      assert.match(r.stderr, /cannot listen on 127\.0\.0\.1:\d+ \(.*EADDRINUSE.*\); the command was not run/);
      assert.equal(fs.existsSync(marker), false);
    } finally {
      busy.close();
    }
  });

  it('bad arguments exit 125; a command that does not exist exits 127', async () => {
    const r = await run([process.execPath, bundle, '--port', '0', '--', 'true']);
    assert.equal(r.code, 125);
    assert.match(r.stderr, /missing --proxy-socket PATH/);
    const missing = await run(forwarder('/nonexistent/bin/tool'));
    assert.equal(missing.code, 127);
    assert.match(missing.stderr, /cannot run `\/nonexistent\/bin\/tool` \(ENOENT\)/);
  });

  describe('inside bubblewrap', () => {
    const bwrap = (...command: string[]) => [
      'bwrap',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--unshare-all',
      '--unshare-user',
      '--die-with-parent',
      '--bind',
      dir,
      dir,
      '--',
      ...command,
    ];

    before(function () {
      const probe = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-all', '--unshare-user', '--', 'true']);
      if (probe.error || probe.status !== 0) this.skip(); // no bubblewrap or no user namespaces here
    });

    it('the remote is unreachable directly, and reachable through the forwarder and the proxy', async () => {
      const direct = await run(bwrap('curl', '-sS', '--noproxy', '*', '--max-time', '5', `http://127.0.0.1:${remote.port}/direct`));
      assert.notEqual(direct.code, 0);
      assert.match(direct.stderr, /Failed to connect|Couldn't connect/);
      const proxied = await run(bwrap(...forwarder('curl', '-sS', '--max-time', '10', `http://127.0.0.1:${remote.port}/via-proxy`)));
      assert.equal(proxied.stderr, '');
      assert.equal(proxied.stdout, 'remote saw GET /via-proxy');
      assert.deepEqual(
        remote.requests.map((q) => q.url),
        ['/via-proxy'],
      );
      assert.equal(decisions.length, 1);
      assert.equal(decisions[0]!.allowed, true);
    });
  });
});
