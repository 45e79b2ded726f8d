// SSRF guard: the range table's own examples, URL tricks, and real requests to 127.0.0.1 servers.
// Network rule: these tests only ever send traffic to 127.0.0.1 and ::1. Every blocked case is
// refused before a socket is opened; host names are answered by a fake resolver (the DNS double).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import Ajv from 'ajv';
import { load as loadYamlText } from 'js-yaml';
import {
  DEFAULT_SSRF_POLICY,
  SSRF_TABLE,
  SsrfTableError,
  checkAddress,
  checkHostName,
  checkResolvedAddresses,
  checkUrlSyntax,
  loadSsrfTable,
  parseTarget,
  type SsrfPolicy,
} from '../../src/engine/ssrf';
import { GuardedFetchError, SsrfBlockedError, guardedFetch, resolveAndCheck, type Resolver } from '../../src/node/guarded-fetch';

function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`repository root not found above ${__dirname}`);
    dir = up;
  }
  return dir;
}
const readRepoFile = (rel: string) => fs.readFileSync(path.join(repoRoot(), rel), 'utf8');

interface YamlRange {
  cidr: string;
  name: string;
  reason: string;
  embedded_ipv4?: { format: string; block: string };
  examples: { match: string[]; no_match: string[] };
}
interface YamlHostname {
  name: string;
  loopback?: boolean;
  exact: string[];
  suffixes: string[];
  reason: string;
  examples: { match: string[]; no_match: string[] };
}
interface YamlTable {
  version: number;
  ranges: YamlRange[];
  hostnames: YamlHostname[];
}

const DEFAULT: SsrfPolicy = DEFAULT_SSRF_POLICY;
const bracket = (a: string) => (a.includes(':') ? `[${a}]` : a);
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe('ssrf: range table (security/ssrf/blocked-ranges.yaml)', () => {
  const table = loadYamlText(readRepoFile('security/ssrf/blocked-ranges.yaml')) as YamlTable;

  it('is valid against security/ssrf/schema.json and loads', () => {
    const validate = new Ajv({ allErrors: true }).compile(JSON.parse(readRepoFile('security/ssrf/schema.json')) as object);
    assert.ok(validate(table), JSON.stringify(validate.errors, null, 1));
    assert.doesNotThrow(() => loadSsrfTable(table));
  });

  it('is the table compiled into the build', () => {
    assert.deepEqual(
      SSRF_TABLE.ranges.map((r) => r.cidr),
      table.ranges.map((r) => r.cidr),
    );
    assert.deepEqual(
      SSRF_TABLE.hostnames.map((h) => h.name),
      table.hostnames.map((h) => h.name),
    );
  });

  for (const range of table.ranges) {
    it(`${range.cidr} (${range.name}): match examples are blocked, no_match examples allowed`, () => {
      for (const a of range.examples.match) {
        const v = checkAddress(a, 80, DEFAULT);
        assert.equal(v.allowed, false, `${a} should be blocked: ${v.reason}`);
        // An embedded IPv4 that is itself blocked is reported under its own range.
        if (range.embedded_ipv4) assert.match(v.rule ?? '', /^ssrf\.range\./, a);
        else assert.equal(v.rule, `ssrf.range.${range.name}`, `${a}: ${v.reason}`);
        const u = checkUrlSyntax(`http://${bracket(a)}/`, DEFAULT);
        assert.equal(u.allowed, false, `URL with ${a} should be blocked`);
        assert.equal(u.rule, v.rule);
      }
      for (const a of range.examples.no_match) {
        const v = checkAddress(a, 80, DEFAULT);
        assert.equal(v.allowed, true, `${a} should be allowed: ${v.reason}`);
        const u = checkUrlSyntax(`https://${bracket(a)}/x`, DEFAULT);
        assert.equal(u.allowed, true, `URL with ${a}: ${u.reason}`);
        assert.equal(u.needsResolution, false);
      }
    });
  }

  // Every IPv4 example again, in each IPv6 form that carries an IPv4 address.
  const v4 = table.ranges.filter((r) => !r.cidr.includes(':'));
  const carriers: Array<[string, (a: string) => string, boolean]> = [
    ['IPv4-mapped', (a) => `::ffff:${a}`, false],
    ['NAT64 64:ff9b::/96', (a) => `64:ff9b::${a}`, false],
    [
      '6to4',
      (a) => {
        const o = a.split('.').map(Number);
        return `2002:${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}::1`;
      },
      false,
    ],
    ['IPv4-compatible (always blocked)', (a) => `::${a}`, true],
    [
      'Teredo (always blocked)',
      (a) => {
        const o = a.split('.').map((n) => 255 - Number(n));
        return `2001:0:4136:e378:8000:63bf:${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
      },
      true,
    ],
  ];
  for (const [label, wrap, always] of carriers) {
    it(`IPv4 examples embedded as ${label} get the embedded address's verdict`, () => {
      for (const r of v4) {
        for (const a of r.examples.match) {
          const v = checkAddress(wrap(a), 443, DEFAULT);
          assert.equal(v.allowed, false, `${wrap(a)}`);
          if (!['::0.0.0.0', '::0.0.0.1'].includes(wrap(a))) assert.equal(v.rule, `ssrf.range.${r.name}`, `${wrap(a)}: ${v.reason}`);
        }
        for (const a of r.examples.no_match) {
          const v = checkAddress(wrap(a), 443, DEFAULT);
          assert.equal(v.allowed, !always, `${wrap(a)}: ${v.reason}`);
        }
      }
    });
  }

  for (const entry of table.hostnames) {
    it(`host names: ${entry.name}`, () => {
      for (const h of entry.examples.match) {
        const v = checkUrlSyntax(`http://${h}/`, DEFAULT);
        assert.equal(v.allowed, false, `${h}: ${v.reason}`);
        assert.equal(v.rule, `ssrf.name.${entry.name}`, h);
      }
      for (const h of entry.examples.no_match) {
        const v = checkUrlSyntax(`http://${h}/`, DEFAULT);
        assert.equal(v.allowed, true, `${h}: ${v.reason}`);
        assert.equal(v.needsResolution, true, h);
      }
    });
  }

  describe('malformed data is refused at load time', () => {
    const cases: Array<[string, (t: YamlTable) => void]> = [
      [
        'a missing cidr',
        (t) => {
          delete (t.ranges[0] as Partial<YamlRange>).cidr;
        },
      ],
      [
        'a non-canonical cidr',
        (t) => {
          t.ranges[0]!.cidr = '010.0.0.0/8';
        },
      ],
      [
        'host bits set',
        (t) => {
          t.ranges[0]!.cidr = '10.0.0.1/8';
        },
      ],
      [
        'a prefix too long',
        (t) => {
          t.ranges[0]!.cidr = '10.0.0.0/33';
        },
      ],
      [
        'an unknown key',
        (t) => {
          (t.ranges[0] as unknown as Record<string, unknown>)['cidrs'] = [];
        },
      ],
      [
        'a bad name',
        (t) => {
          t.ranges[0]!.name = 'Loop Back';
        },
      ],
      [
        'a short reason',
        (t) => {
          t.ranges[0]!.reason = 'x';
        },
      ],
      [
        'a match example outside the range',
        (t) => {
          t.ranges[0]!.examples.match.push('8.8.8.8');
        },
      ],
      [
        'an unparsable example',
        (t) => {
          t.ranges[0]!.examples.no_match.push('not-an-ip');
        },
      ],
      [
        'empty examples',
        (t) => {
          t.ranges[0]!.examples.no_match = [];
        },
      ],
      [
        'embedded_ipv4 on IPv4',
        (t) => {
          t.ranges[0]!.embedded_ipv4 = { format: 'last32', block: 'always' };
        },
      ],
      [
        'an unknown embedded format',
        (t) => {
          t.ranges.find((r) => r.embedded_ipv4)!.embedded_ipv4!.format = 'isatap';
        },
      ],
      [
        'a duplicate range',
        (t) => {
          t.ranges.push(clone(t.ranges[0]!));
        },
      ],
      [
        'an upper-case host name',
        (t) => {
          t.hostnames[0]!.exact.push('LocalHost');
        },
      ],
      [
        'a suffix without a dot',
        (t) => {
          t.hostnames[0]!.suffixes.push('localhost');
        },
      ],
      [
        'a wrong version',
        (t) => {
          t.version = 2;
        },
      ],
      [
        'no ranges',
        (t) => {
          t.ranges = [];
        },
      ],
    ];
    for (const [what, mutate] of cases) {
      it(what, () => {
        const t = clone(table);
        mutate(t);
        assert.throws(() => loadSsrfTable(t), SsrfTableError);
      });
    }
    it('not an object', () => assert.throws(() => loadSsrfTable('ranges: []'), SsrfTableError));
  });
});

describe('ssrf: URL text', () => {
  const blocked = (url: string, rule: string, policy: SsrfPolicy = DEFAULT) => {
    const v = checkUrlSyntax(url, policy);
    assert.equal(v.allowed, false, `${JSON.stringify(url)} should be blocked (${v.reason})`);
    assert.equal(v.rule, rule, `${JSON.stringify(url)}: ${v.reason}`);
    return v;
  };
  const allowedName = (url: string, host: string, port: number) => {
    const v = checkUrlSyntax(url, DEFAULT);
    assert.equal(v.allowed, true, `${JSON.stringify(url)}: ${v.reason}`);
    assert.equal(v.needsResolution, true, url);
    assert.equal(v.host, host, url);
    assert.equal(v.port, port, url);
  };

  it('rejects non-canonical IPv4 literals before any URL normalisation', () => {
    for (const url of [
      'http://0x7f.1/',
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://127.0.1/',
      'http://0x7f000001/',
      'http://0x7F.0.0.1/',
      'HTTP://0X7F.1/',
      'http://017700000001/',
      'http://127.0.0.01/',
      'http://127.0.0.1./',
      'http://127.0.0.1.:8080/',
      'http://256.0.0.1/',
      'http://1.2.3.4.5/',
      'http://127.0.0.0x1/',
      'http://8.8.8.08/',
      'http://0x08.8.8.8/',
      'http://0/',
      'http://0x/',
      'http://%30x7f.1/',
      'http://0x7f%2e1/',
      'http://１２７.１/',
      'http://127。0。1/',
      'http://user:pass@0x7f.1:80/',
      'http:\\\\0x7f.1\\',
      'http:0x7f.1',
      'http://[::ffff:0177.0.0.1]/',
      'http://[::ffff:127.1]/',
    ]) {
      blocked(url, 'ssrf.noncanonical_ipv4');
    }
  });

  it('reads the host the way the WHATWG parser does (fullwidth, percent-encoding, backslashes)', () => {
    blocked('http://%31%32%37.0.0.1/', 'ssrf.range.loopback');
    blocked('http://１２７．０．０．１/', 'ssrf.range.loopback');
    blocked('http:\\\\127.0.0.1\\admin', 'ssrf.range.loopback');
    blocked('http:/\\127.0.0.1/', 'ssrf.range.loopback');
    blocked('http:127.0.0.1', 'ssrf.range.loopback');
    blocked('http:///169.254.169.254/', 'ssrf.range.link_local');
    blocked('  http://127.0.0.1/  ', 'ssrf.range.loopback');
    blocked('http://ｌｏｃａｌｈｏｓｔ/', 'ssrf.name.loopback');
    blocked('http://local\u00adhost/', 'ssrf.name.loopback');
    blocked('http://①②⑦.0.0.1/', 'ssrf.range.loopback');
    blocked('http://exa\u200dmple.com/', 'ssrf.bad_url'); // we would drop the joiner, WHATWG rejects the URL: refuse
    blocked('http://12\t7.0.0.1/', 'ssrf.bad_url'); // WHATWG would silently delete the tab
    blocked('http://127.0.0.1\n/', 'ssrf.bad_url');
  });

  it('rejects every scheme but http and https', () => {
    for (const url of [
      'file:///etc/passwd',
      'FILE://localhost/etc/passwd',
      'ftp://example.com/',
      'gopher://127.0.0.1:6379/_INFO',
      'data:text/plain,hello',
      'javascript:alert(1)',
      'ws://example.com/',
      'dict://127.0.0.1:11211/',
      'ldap://x/',
      'jar:http://x/!/',
      'localhost:8080/admin',
      'view-source:http://example.com/',
    ]) {
      const v = blocked(url, 'ssrf.scheme');
      assert.match(v.reason, /only http: and https:/);
    }
    assert.equal(checkUrlSyntax('HTTPS://Example.COM/', DEFAULT).host, 'example.com');
  });

  it('refuses URLs that are not URLs', () => {
    for (const url of [
      '',
      '127.0.0.1',
      '//127.0.0.1/',
      'http://',
      'http:///',
      'http://:80/',
      'http://exa mple.com/',
      'http://example.com:99999/',
      'http://example.com:0/',
      'http://example.com:8o/',
      'http://[::1/',
      'http://[::1]x/',
      'http://[1::2::3]/',
      'http://[12345::]/',
      'http://exa%zzmple.com/',
      'http://exa%00mple.com/',
      'http://a<b.com/',
      'http://[2606:4700::1111%25eth0]/' /* zone id: the standard parser rejects it */,
    ]) {
      blocked(url, 'ssrf.bad_url');
    }
    assert.throws(() => parseTarget('gopher://x/'), /scheme `gopher:`/);
    assert.throws(() => parseTarget('http://0x7f.1/'), /non-canonical IPv4/);
  });

  it('finds the real host behind userinfo and fragment tricks', () => {
    blocked('http://evil.com@127.0.0.1/', 'ssrf.range.loopback');
    blocked('http://evil.com:80@127.0.0.1:80/', 'ssrf.range.loopback');
    blocked('http://a@b@169.254.169.254/latest/meta-data/', 'ssrf.range.link_local');
    blocked('http://127.0.0.1#@evil.com/', 'ssrf.range.loopback');
    blocked('http://127.0.0.1?@evil.com/', 'ssrf.range.loopback');
    blocked('http://127.0.0.1\\@evil.com/', 'ssrf.range.loopback');
    blocked('http://evil.com%40@127.0.0.1/', 'ssrf.range.loopback');
    // The other way round the host really is evil.com (to every WHATWG client).
    allowedName('http://evil.com#@127.0.0.1/', 'evil.com', 80);
    allowedName('http://evil.com\\@127.0.0.1/', 'evil.com', 80);
    allowedName('http://127.0.0.1:80@evil.com/', 'evil.com', 80);
    allowedName('https://user:p%40ss@example.com:8443/a?b#c', 'example.com', 8443);
  });

  it('handles IPv6 literal forms, including IPv4 addresses hidden inside them', () => {
    const cases: Array<[string, string]> = [
      ['http://[::1]/', 'ssrf.range.loopback'],
      ['http://[0:0:0:0:0:0:0:1]:8080/', 'ssrf.range.loopback'],
      ['http://[::]/', 'ssrf.range.unspecified'],
      ['http://[::ffff:127.0.0.1]/', 'ssrf.range.loopback'],
      ['http://[::ffff:7f00:1]/', 'ssrf.range.loopback'],
      ['http://[::FFFF:7F00:1]/', 'ssrf.range.loopback'],
      ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', 'ssrf.range.link_local'],
      ['http://[::ffff:169.254.169.254]/', 'ssrf.range.link_local'],
      ['http://[64:ff9b::a9fe:a9fe]/', 'ssrf.range.link_local'],
      ['http://[64:ff9b::10.0.0.1]/', 'ssrf.range.private'],
      ['http://[2002:7f00:1::]/', 'ssrf.range.loopback'],
      ['http://[2002:a9fe:a9fe::]/', 'ssrf.range.link_local'],
      ['http://[2002:c058:6301::]/', 'ssrf.range.6to4_relay'],
      ['http://[::127.0.0.1]/', 'ssrf.range.loopback'],
      ['http://[::a9fe:a9fe]/', 'ssrf.range.link_local'],
      ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'ssrf.range.loopback'], // Teredo, client 127.0.0.1
      ['http://[2001:0:4136:e378:8000:63bf:5601:5601]/', 'ssrf.range.link_local'], // Teredo, client 169.254.169.254
      ['http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/', 'ssrf.range.teredo'], // Teredo, client 8.8.8.8: still blocked
      ['http://[fe80::1%25eth0]/', 'ssrf.range.link_local'],
      ['http://[fe80::1%eth0]/', 'ssrf.range.link_local'],
      ['http://[fd00:ec2::254]/latest/meta-data/', 'ssrf.range.cloud_metadata'],
      ['http://[fc00::1]/', 'ssrf.range.private'],
      ['http://[ff02::1]/', 'ssrf.range.multicast'],
      ['http://[2001:db8::1]/', 'ssrf.range.documentation'],
      ['http://[100::1]/', 'ssrf.range.discard'],
      ['http://[5f00::1]/', 'ssrf.range.srv6_sid'],
    ];
    for (const [url, rule] of cases) blocked(url, rule);
    const teredo = checkUrlSyntax('http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', DEFAULT);
    assert.match(teredo.reason, /teredo .*carrying IPv4 127\.0\.0\.1/);
  });

  it('allows public addresses and names (names pending resolution)', () => {
    for (const a of [
      '8.8.8.8',
      '1.1.1.1',
      '2606:4700::1111',
      '2001:4860:4860::8888',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
    ]) {
      const v = checkAddress(a, 443, DEFAULT);
      assert.equal(v.allowed, true, `${a}: ${v.reason}`);
      assert.equal(v.rule, undefined);
    }
    for (const url of ['http://8.8.8.8/', 'https://1.1.1.1:8443/dns-query', 'https://[2606:4700::1111]/']) {
      const v = checkUrlSyntax(url, DEFAULT);
      assert.equal(v.allowed, true, `${url}: ${v.reason}`);
      assert.equal(v.needsResolution, false);
      assert.equal(v.hostIsLiteral, true);
    }
    assert.equal(checkUrlSyntax('https://[2606:4700:0:0:0:0:0:1111]/', DEFAULT).host, '2606:4700::1111');
    allowedName('https://example.com/', 'example.com', 443);
    allowedName('http://EXAMPLE.com.:8080/', 'example.com.', 8080);
    allowedName('http://1.2.3.4x/', '1.2.3.4x', 80);
    allowedName('http://bücher.example/', 'xn--bcher-kva.example', 80);
    allowedName('http://exa\u00admple.com/', 'example.com', 80);
  });

  it('blocks loopback, metadata and private-use names without resolving them', () => {
    for (const [url, rule] of [
      ['http://localhost/', 'ssrf.name.loopback'],
      ['http://LocalHost.:8080/', 'ssrf.name.loopback'],
      ['http://admin.localhost/', 'ssrf.name.loopback'],
      ['http://localhost.localdomain/', 'ssrf.name.loopback'],
      ['http://ip6-localhost/', 'ssrf.name.loopback'],
      ['http://metadata.google.internal/computeMetadata/v1/', 'ssrf.name.cloud_metadata'],
      ['http://metadata/', 'ssrf.name.cloud_metadata'],
      ['http://instance-data/latest/', 'ssrf.name.cloud_metadata'],
      ['http://db.internal/', 'ssrf.name.internal'],
      ['http://printer.local/', 'ssrf.name.internal'],
      ['http://kubernetes.default.svc/', 'ssrf.name.internal'],
    ] as const) {
      const v = blocked(url, rule);
      assert.equal(v.needsResolution, undefined, url);
    }
  });

  describe('allowLoopbackPorts', () => {
    const dev: SsrfPolicy = { allowLoopbackPorts: [3000, 5173] };
    it('allows loopback on a listed port and says which policy allowed it', () => {
      for (const url of ['http://127.0.0.1:3000/', 'http://127.0.0.2:5173/', 'http://[::1]:3000/']) {
        const v = checkUrlSyntax(url, dev);
        assert.equal(v.allowed, true, `${url}: ${v.reason}`);
        assert.equal(v.rule, 'ssrf.allow_loopback_port');
        assert.match(v.reason, /allowLoopbackPorts/);
      }
      const byName = checkUrlSyntax('http://localhost:3000/', dev);
      assert.equal(byName.allowed, true);
      assert.equal(byName.needsResolution, true);
      assert.equal(byName.requireLoopback, true);
      assert.equal(checkHostName('app.localhost', 5173, dev).allowed, true);
    });
    it('allows nothing else', () => {
      blocked('http://127.0.0.1:3001/', 'ssrf.range.loopback', dev);
      blocked('http://127.0.0.1/', 'ssrf.range.loopback', dev);
      blocked('http://localhost:80/', 'ssrf.name.loopback', dev);
      blocked('http://10.0.0.1:3000/', 'ssrf.range.private', dev);
      blocked('http://0.0.0.0:3000/', 'ssrf.range.unspecified', dev);
      blocked('http://[::]:3000/', 'ssrf.range.unspecified', dev);
      blocked('http://169.254.169.254:3000/', 'ssrf.range.link_local', dev);
      blocked('http://[::ffff:127.0.0.1]:3000/', 'ssrf.range.loopback', dev); // disguised loopback is not a dev server
      blocked('http://[2002:7f00:1::]:3000/', 'ssrf.range.loopback', dev);
      blocked('http://0x7f.1:3000/', 'ssrf.noncanonical_ipv4', dev);
      blocked('http://metadata:3000/', 'ssrf.name.cloud_metadata', dev);
      blocked('https://127.0.0.1:3000/', 'ssrf.range.loopback', { allowLoopbackPorts: ['3000' as unknown as number] });
    });
    it('a loopback name must resolve to loopback only', () => {
      const syntax = checkUrlSyntax('http://localhost:3000/', dev);
      assert.equal(checkResolvedAddresses(syntax, ['127.0.0.1', '::1'], dev).allowed, true);
      const mixed = checkResolvedAddresses(syntax, ['127.0.0.1', '10.0.0.1'], dev);
      assert.equal(mixed.rule, 'ssrf.range.private');
      const publicAnswer = checkResolvedAddresses(syntax, ['93.184.215.14'], dev);
      assert.equal(publicAnswer.allowed, false);
      assert.equal(publicAnswer.rule, 'ssrf.name.loopback');
    });
  });

  it('checkAddress refuses what is not a canonical address', () => {
    assert.equal(checkAddress('127.1', 80, DEFAULT).rule, 'ssrf.noncanonical_ipv4');
    assert.equal(checkAddress('0x7f000001', 80, DEFAULT).rule, 'ssrf.noncanonical_ipv4');
    assert.equal(checkAddress('example.com', 80, DEFAULT).rule, 'ssrf.bad_address');
    assert.equal(checkAddress('', 80, DEFAULT).allowed, false);
    assert.equal(checkAddress('1:2:3:4:5:6:7:8:9', 80, DEFAULT).allowed, false);
    assert.equal(checkAddress('[::1]', 80, DEFAULT).rule, 'ssrf.range.loopback');
  });
});

// ------------------------------------------------------------------ Node side: resolution and fetch

interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  local: string;
}
interface TestServer {
  port: number;
  host: string;
  seen: SeenRequest[];
  server: http.Server;
}
type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

const servers: http.Server[] = [];

function listen(host: string, handler: Handler, port = 0): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, local: req.socket.localAddress ?? '' });
      handler(req, res, body);
    });
  });
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve({ port: (server.address() as net.AddressInfo).port, host, seen, server }));
  });
}

/** The DNS double: answers from a table and counts every question. */
function fakeResolver(answer: (host: string, call: number) => string[] | Error): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const r = (async (host: string) => {
    calls.push(host);
    const a = answer(host, calls.length);
    if (a instanceof Error) throw a;
    return a;
  }) as Resolver & { calls: string[] };
  r.calls = calls;
  return r;
}
const notFound = () => Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });

const isBlocked = (rule: string) => (e: unknown) => {
  assert.ok(e instanceof SsrfBlockedError, `expected SsrfBlockedError, got ${String(e)}`);
  assert.equal(e.rule, rule, e.message);
  return true;
};
const isFetchError = (code: string) => (e: unknown) => {
  assert.ok(e instanceof GuardedFetchError, `expected GuardedFetchError, got ${String(e)}`);
  assert.equal(e.code, code, e.message);
  return true;
};

describe('ssrf: resolveAndCheck', () => {
  it('checks every resolved address; one blocked address blocks the request', async () => {
    const r = fakeResolver(() => ['8.8.8.8', '10.0.0.1']);
    const { verdict, addresses } = await resolveAndCheck('https://mixed.test/', DEFAULT, r);
    assert.equal(verdict.allowed, false);
    assert.equal(verdict.rule, 'ssrf.range.private');
    assert.match(verdict.reason, /mixed\.test.*resolves to 10\.0\.0\.1/);
    assert.deepEqual(addresses, ['8.8.8.8', '10.0.0.1']);
    assert.deepEqual(r.calls, ['mixed.test']);
    for (const answer of [['::ffff:169.254.169.254'], ['2606:4700::1111', 'fd00::1'], ['1.1.1.1', '0.0.0.0']]) {
      assert.equal(
        (
          await resolveAndCheck(
            'http://x.test/',
            DEFAULT,
            fakeResolver(() => answer),
          )
        ).verdict.allowed,
        false,
        answer.join(),
      );
    }
  });

  it('allows a name whose every address is public, pinned to the first', async () => {
    const { verdict } = await resolveAndCheck(
      'https://example.test/',
      DEFAULT,
      fakeResolver(() => ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']),
    );
    assert.equal(verdict.allowed, true, verdict.reason);
    assert.equal(verdict.address, '93.184.215.14');
  });

  it('blocks when resolution fails or returns nothing or garbage', async () => {
    assert.equal((await resolveAndCheck('http://nx.test/', DEFAULT, fakeResolver(notFound))).verdict.rule, 'ssrf.resolution_failed');
    assert.equal(
      (
        await resolveAndCheck(
          'http://empty.test/',
          DEFAULT,
          fakeResolver(() => []),
        )
      ).verdict.rule,
      'ssrf.resolution_failed',
    );
    assert.equal(
      (
        await resolveAndCheck(
          'http://odd.test/',
          DEFAULT,
          fakeResolver(() => ['127.1']),
        )
      ).verdict.rule,
      'ssrf.noncanonical_ipv4',
    );
    assert.equal(
      (
        await resolveAndCheck(
          'http://odd.test/',
          DEFAULT,
          fakeResolver(() => ['not an ip']),
        )
      ).verdict.rule,
      'ssrf.bad_address',
    );
  });

  it('does not resolve literals or names already blocked by the URL text', async () => {
    const r = fakeResolver(() => ['8.8.8.8']);
    assert.equal((await resolveAndCheck('http://8.8.4.4/', DEFAULT, r)).verdict.allowed, true);
    assert.equal((await resolveAndCheck('http://localhost/', DEFAULT, r)).verdict.allowed, false);
    assert.equal((await resolveAndCheck('file:///etc/passwd', DEFAULT, r)).verdict.rule, 'ssrf.scheme');
    assert.deepEqual(r.calls, []);
  });
});

describe('ssrf: guardedFetch against local servers', function () {
  let a: TestServer; // the allowed dev server
  let b: TestServer; // a second loopback service that must never be reached unless allowed
  let rebindV6: TestServer | undefined; // "attacker" on ::1 with a's port

  before(async () => {
    a = await listen('127.0.0.1', (req, res, body) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const p = url.pathname;
      const redirect = (status: number, location: string) => {
        res.writeHead(status, { Location: location });
        res.end('moved');
      };
      if (p === '/hello') {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Test': 'yes' });
        res.end('hello');
        return;
      }
      if (p === '/echo') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, body, headers: req.headers }));
        return;
      }
      if (p === '/to-metadata') return redirect(302, 'http://169.254.169.254/latest/meta-data/iam/');
      if (p === '/to-b') return redirect(302, `http://127.0.0.1:${b.port}/secret`);
      if (p === '/to-b-scheme-relative') return redirect(301, `//127.0.0.1:${b.port}/secret`);
      if (p === '/to-noncanonical') return redirect(302, `http://0x7f.1:${a.port}/hello`);
      if (p === '/to-file') return redirect(302, 'file:///etc/passwd');
      if (p === '/to-localhost-name') return redirect(302, `http://localhost:${b.port}/secret`);
      if (p === '/relative') return redirect(302, '/hello');
      if (p === '/to-name') return redirect(302, `http://second.test:${a.port}/hello`);
      if (p === '/see-other') return redirect(303, '/echo');
      if (p === '/temporary') return redirect(307, '/echo');
      if (p === '/same-origin') return redirect(302, '/echo');
      if (p === '/cross-origin') return redirect(302, `http://127.0.0.1:${b.port}/echo`);
      if (p.startsWith('/chain/')) {
        const [left, total] = p.slice('/chain/'.length).split('/').map(Number) as [number, number];
        if (left === 0) {
          res.writeHead(200);
          res.end(`done after ${total}`);
          return;
        }
        return redirect(302, `/chain/${left - 1}/${total}`);
      }
      if (p === '/big') {
        res.writeHead(200, { 'Content-Length': '5000' });
        res.end('x'.repeat(5000));
        return;
      }
      if (p === '/big-chunked') {
        res.writeHead(200);
        res.write('x'.repeat(3000));
        res.end('y'.repeat(3000));
        return;
      }
      if (p === '/hang') return; // never answers
      res.writeHead(404);
      res.end('not found');
    });
    b = await listen('127.0.0.1', (req, res, body) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ server: 'b', url: req.url, headers: req.headers, body }));
    });
    try {
      rebindV6 = await listen(
        '::1',
        (_req, res) => {
          res.writeHead(200);
          res.end('REBOUND to ::1');
        },
        a.port,
      );
    } catch {
      rebindV6 = undefined; // no IPv6 loopback here: the ENOTFOUND-name check below still proves pinning
    }
  });

  after(async () => {
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.closeAllConnections();
            s.close(() => resolve());
          }),
      ),
    );
  });

  beforeEach(() => {
    for (const s of [a, b, rebindV6]) if (s) s.seen.length = 0;
  });

  const allowA = (): SsrfPolicy => ({ allowLoopbackPorts: [a.port] });

  it('(a) default policy blocks 127.0.0.1 before connecting', async () => {
    await assert.rejects(guardedFetch(`http://127.0.0.1:${a.port}/hello`, { policy: DEFAULT }), isBlocked('ssrf.range.loopback'));
    await assert.rejects(guardedFetch(`http://localhost:${a.port}/hello`, { policy: DEFAULT }), isBlocked('ssrf.name.loopback'));
    const r = fakeResolver(() => ['127.0.0.1']);
    await assert.rejects(
      guardedFetch(`http://innocent.test:${a.port}/hello`, { policy: DEFAULT, resolver: r }),
      isBlocked('ssrf.range.loopback'),
    );
    assert.equal(a.seen.length, 0, 'the server must see no request');
  });

  it('(b) allowLoopbackPorts lets the request through to that port only', async () => {
    const res = await guardedFetch(`http://127.0.0.1:${a.port}/hello`, { policy: allowA() });
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), 'hello');
    assert.equal(res.headers['x-test'], 'yes');
    assert.equal(res.finalUrl, `http://127.0.0.1:${a.port}/hello`);
    assert.deepEqual(res.redirects, []);
    assert.equal(a.seen.length, 1);
    await assert.rejects(guardedFetch(`http://127.0.0.1:${b.port}/secret`, { policy: allowA() }), isBlocked('ssrf.range.loopback'));
    assert.equal(b.seen.length, 0);
  });

  it('(b) a loopback name on an allowed port connects to the loopback address it resolved to', async () => {
    const r = fakeResolver(() => ['127.0.0.1']);
    const res = await guardedFetch(`http://localhost:${a.port}/hello`, { policy: allowA(), resolver: r });
    assert.equal(res.body.toString(), 'hello');
    assert.equal(a.seen[0]!.headers.host, `localhost:${a.port}`);
    assert.deepEqual(r.calls, ['localhost']);
  });

  it('(c) a redirect to cloud metadata is blocked without connecting', async () => {
    await assert.rejects(guardedFetch(`http://127.0.0.1:${a.port}/to-metadata`, { policy: allowA() }), (e: unknown) => {
      isBlocked('ssrf.range.link_local')(e);
      assert.equal((e as SsrfBlockedError).url, 'http://169.254.169.254/latest/meta-data/iam/');
      assert.equal((e as SsrfBlockedError).address, '169.254.169.254');
      return true;
    });
  });

  it('(c) a redirect to another loopback port is blocked and that service receives nothing', async () => {
    for (const path of ['/to-b', '/to-b-scheme-relative', '/to-localhost-name']) {
      await assert.rejects(
        guardedFetch(`http://127.0.0.1:${a.port}${path}`, { policy: allowA() }),
        (e: unknown) => e instanceof SsrfBlockedError,
        path,
      );
    }
    await assert.rejects(
      guardedFetch(`http://127.0.0.1:${a.port}/to-noncanonical`, { policy: allowA() }),
      isBlocked('ssrf.noncanonical_ipv4'),
    );
    await assert.rejects(guardedFetch(`http://127.0.0.1:${a.port}/to-file`, { policy: allowA() }), isBlocked('ssrf.scheme'));
    assert.equal(b.seen.length, 0, 'the second target must receive nothing');
    assert.equal(a.seen.length, 5);
  });

  it('(d) follows at most 5 redirects', async () => {
    const five = await guardedFetch(`http://127.0.0.1:${a.port}/chain/5/5`, { policy: allowA() });
    assert.equal(five.body.toString(), 'done after 5');
    assert.equal(five.redirects.length, 5);
    assert.equal(five.finalUrl, `http://127.0.0.1:${a.port}/chain/0/5`);
    a.seen.length = 0;
    await assert.rejects(guardedFetch(`http://127.0.0.1:${a.port}/chain/6/6`, { policy: allowA() }), (e: unknown) => {
      isFetchError('too_many_redirects')(e);
      assert.match((e as Error).message, /too many redirects.*limit 5/);
      return true;
    });
    assert.equal(a.seen.length, 6, 'the sixth redirect is not followed');
    await assert.rejects(
      guardedFetch(`http://127.0.0.1:${a.port}/chain/6/6`, { policy: allowA(), maxRedirects: 50 }),
      isFetchError('too_many_redirects'),
    );
    await assert.rejects(
      guardedFetch(`http://127.0.0.1:${a.port}/chain/1/1`, { policy: allowA(), maxRedirects: 0 }),
      isFetchError('too_many_redirects'),
    );
    const rel = await guardedFetch(`http://127.0.0.1:${a.port}/relative`, { policy: allowA() });
    assert.deepEqual(rel.redirects, [`http://127.0.0.1:${a.port}/hello`]);
  });

  it('(e) DNS rebinding: one lookup per hop, and the connection goes to the checked address', async () => {
    // First answer: 127.0.0.1 (checked, allowed). Any later answer would be ::1, where a different
    // server listens on the same port; `.test` names never resolve in real DNS, so a lookup by
    // Node's own http stack would fail with ENOTFOUND instead.
    const r = fakeResolver((_h, call) => (call === 1 ? ['127.0.0.1'] : ['::1']));
    const res = await guardedFetch(`http://rebind.test:${a.port}/hello`, { policy: allowA(), resolver: r });
    assert.equal(res.body.toString(), 'hello');
    assert.deepEqual(r.calls, ['rebind.test'], 'exactly one lookup');
    assert.equal(a.seen.length, 1);
    assert.equal(a.seen[0]!.headers.host, `rebind.test:${a.port}`, 'Host header keeps the name');
    assert.equal(a.seen[0]!.local, '127.0.0.1');
    if (rebindV6) assert.equal(rebindV6.seen.length, 0, 'the rebound address received nothing');

    // Each redirect hop is resolved afresh, once.
    a.seen.length = 0;
    const perHop = fakeResolver(() => ['127.0.0.1']);
    const hops = await guardedFetch(`http://first.test:${a.port}/to-name`, { policy: allowA(), resolver: perHop });
    assert.equal(hops.body.toString(), 'hello');
    assert.deepEqual(perHop.calls, ['first.test', 'second.test']);
    assert.equal(a.seen[1]!.headers.host, `second.test:${a.port}`);

    // A rebinding answer on the second hop is checked like any other.
    const rebindToB = fakeResolver((_h, call) => (call === 1 ? ['127.0.0.1'] : ['169.254.169.254']));
    await assert.rejects(
      guardedFetch(`http://first.test:${a.port}/to-name`, { policy: allowA(), resolver: rebindToB }),
      isBlocked('ssrf.range.link_local'),
    );
    assert.equal(rebindToB.calls.length, 2);
  });

  it('(f) a name resolving to [allowed, private] is blocked and nothing is contacted', async () => {
    for (const answer of [
      ['127.0.0.1', '10.0.0.1'],
      ['127.0.0.1', '169.254.169.254'],
      ['127.0.0.1', '::ffff:10.0.0.1'],
    ]) {
      const r = fakeResolver(() => answer);
      await assert.rejects(
        guardedFetch(`http://mixed.test:${a.port}/hello`, { policy: allowA(), resolver: r }),
        (e: unknown) => e instanceof SsrfBlockedError,
        answer.join(),
      );
    }
    assert.equal(a.seen.length, 0);
  });

  it('(g) resolver failure blocks', async () => {
    await assert.rejects(
      guardedFetch(`http://nx.test:${a.port}/hello`, { policy: allowA(), resolver: fakeResolver(notFound) }),
      (e: unknown) => {
        isBlocked('ssrf.resolution_failed')(e);
        assert.match((e as Error).message, /could not resolve `nx\.test`.*ENOTFOUND/);
        return true;
      },
    );
    await assert.rejects(
      guardedFetch(`http://empty.test:${a.port}/hello`, { policy: allowA(), resolver: fakeResolver(() => []) }),
      isBlocked('ssrf.resolution_failed'),
    );
    const slow: Resolver = () => new Promise(() => undefined);
    await assert.rejects(
      guardedFetch(`http://slow.test:${a.port}/hello`, { policy: allowA(), resolver: slow, timeoutMs: 200 }),
      isFetchError('timeout'),
    );
    assert.equal(a.seen.length, 0);
  });

  it('strips credential headers on cross-origin redirects only', async () => {
    const policy: SsrfPolicy = { allowLoopbackPorts: [a.port, b.port] };
    const headers = { Authorization: 'Bearer secret', Cookie: 'sid=1', 'X-Api-Key': 'k', 'X-Trace': 't' };
    const same = JSON.parse((await guardedFetch(`http://127.0.0.1:${a.port}/same-origin`, { policy, headers })).body.toString()) as {
      headers: Record<string, string>;
    };
    assert.equal(same.headers['authorization'], 'Bearer secret');
    assert.equal(same.headers['cookie'], 'sid=1');
    const cross = JSON.parse((await guardedFetch(`http://127.0.0.1:${a.port}/cross-origin`, { policy, headers })).body.toString()) as {
      server: string;
      headers: Record<string, string>;
    };
    assert.equal(cross.server, 'b');
    assert.equal(cross.headers['authorization'], undefined);
    assert.equal(cross.headers['cookie'], undefined);
    assert.equal(cross.headers['x-api-key'], undefined);
    assert.equal(cross.headers['x-trace'], 't');
  });

  it('sends method and body; 303 turns into GET, 307 keeps the body', async () => {
    const policy = allowA();
    const post = JSON.parse(
      (
        await guardedFetch(`http://127.0.0.1:${a.port}/echo`, {
          policy,
          method: 'POST',
          body: 'payload',
          headers: { 'Content-Type': 'text/plain' },
        })
      ).body.toString(),
    ) as { method: string; body: string };
    assert.deepEqual([post.method, post.body], ['POST', 'payload']);
    const seeOther = JSON.parse(
      (await guardedFetch(`http://127.0.0.1:${a.port}/see-other`, { policy, method: 'POST', body: 'payload' })).body.toString(),
    ) as { method: string; body: string };
    assert.deepEqual([seeOther.method, seeOther.body], ['GET', '']);
    const temporary = JSON.parse(
      (await guardedFetch(`http://127.0.0.1:${a.port}/temporary`, { policy, method: 'PUT', body: Buffer.from('keep') })).body.toString(),
    ) as { method: string; body: string };
    assert.deepEqual([temporary.method, temporary.body], ['PUT', 'keep']);
  });

  it('caps the response body and times out', async () => {
    const policy = allowA();
    await assert.rejects(guardedFetch(`http://127.0.0.1:${a.port}/big`, { policy, maxBodyBytes: 1000 }), isFetchError('body_too_large'));
    await assert.rejects(
      guardedFetch(`http://127.0.0.1:${a.port}/big-chunked`, { policy, maxBodyBytes: 4000 }),
      isFetchError('body_too_large'),
    );
    assert.equal((await guardedFetch(`http://127.0.0.1:${a.port}/big`, { policy, maxBodyBytes: 5000 })).body.length, 5000);
    const started = Date.now();
    await assert.rejects(guardedFetch(`http://127.0.0.1:${a.port}/hang`, { policy, timeoutMs: 300 }), isFetchError('timeout'));
    assert.ok(Date.now() - started < 5000);
  });

  it('refuses bad URLs and missing options with clear errors', async () => {
    await assert.rejects(guardedFetch('not a url', { policy: allowA() }), isBlocked('ssrf.bad_url'));
    await assert.rejects(guardedFetch('gopher://127.0.0.1:6379/_FLUSHALL', { policy: allowA() }), isBlocked('ssrf.scheme'));
    await assert.rejects(
      guardedFetch(`http://127.0.0.1:${a.port}/`, undefined as unknown as { policy: SsrfPolicy }),
      isFetchError('bad_options'),
    );
  });
});
