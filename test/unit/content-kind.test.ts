// Content beats names (issue 12 §2): a file whose first bytes are private-key material is fully
// blocked whatever it is called, and public material (certificates, public keys) is readable
// although its name (*.pem, ~/.ssh/*.pub) is protected. Real keys made by Node's crypto and the
// system's key tools, on real files, through the real engine and the real file-system port.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { Engine, LEXICAL_FS, type ActionRequest, type FileSystemPort, type ShellParser } from '../../src/engine';
import { nodeFileSystem } from '../../src/node/fs-port';
import { loadShellParser } from '../../src/node/shell-grammar';
import { compileContentTable, hexBytes, isPublicMaterial, privateKeySignature, HEAD_BYTES } from '../../src/engine/protection/content';
import { CONTENT_UNCHECKED_RULE, checkProtection } from '../../src/engine/protection/check';
import { FileFactsCache } from '../../src/engine/protection/file-facts';
import { builtinTables, compileTables } from '../../src/engine/protection/tables';
import { loadYaml, makeTempDir } from './helpers/repo';

type Example = string | string[] | { hex: string };
interface ContentTableFile {
  private_keys: { id: string; examples: { match: Example[]; no_match: Example[] } }[];
  public_material: { examples: { public: Example[]; not_public: Example[] } };
}
const bytesOf = (e: Example): Uint8Array =>
  typeof e === 'string' ? new TextEncoder().encode(e) : Array.isArray(e) ? new TextEncoder().encode(e.join('')) : hexBytes(e.hex);
const show = (e: Example): string => JSON.stringify(e).slice(0, 80);
const has = (tool: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

describe('content signatures (security/protection/content.yaml)', () => {
  const file = loadYaml<ContentTableFile>('security/protection/content.yaml');
  const table = compileContentTable(file);

  it('is valid against security/protection/content-schema.json and compiles', () => {
    const validate = new Ajv({ allErrors: true }).compile(loadYaml<object>('security/protection/content-schema.json'));
    assert.ok(validate(file), JSON.stringify(validate.errors, null, 1));
  });

  for (const s of file.private_keys) {
    it(`${s.id}: its examples match it and its non-examples do not`, () => {
      for (const e of s.examples.match) assert.equal(matches(s.id, bytesOf(e)), true, `${s.id} should match ${show(e)}`);
      for (const e of s.examples.no_match) assert.equal(matches(s.id, bytesOf(e)), false, `${s.id} should not match ${show(e)}`);
    });
  }

  /** Whether the one signature `id` matches (not merely some signature). */
  function matches(id: string, bytes: Uint8Array): boolean {
    const only = { ...table, privateKeys: table.privateKeys.filter((k) => k.id === id) };
    return privateKeySignature(bytes, undefined, only)?.id === id;
  }

  it('public material: its examples are public and its counter-examples are not', () => {
    for (const e of file.public_material.examples.public) assert.equal(isPublicMaterial(bytesOf(e), table), true, `public: ${show(e)}`);
    for (const e of file.public_material.examples.not_public)
      assert.equal(isPublicMaterial(bytesOf(e), table), false, `not public: ${show(e)}`);
  });

  it('a malformed table stops Bulwark instead of weakening it', () => {
    const broken = (patch: (t: Record<string, unknown>) => void) => {
      const t = structuredClone(file) as unknown as Record<string, unknown>;
      patch(t);
      return () => compileContentTable(t);
    };
    assert.throws(
      broken((t) => {
        t.version = 2;
      }),
      /version/,
    );
    assert.throws(
      broken((t) => {
        (t.private_keys as Record<string, unknown>[])[0]!.lines = ['^(unclosed'];
      }),
      /content signature table/,
    );
    assert.throws(
      broken((t) => {
        (t.private_keys as Record<string, unknown>[])[0]!.structure = 'pkcs12';
      }),
      /exactly one/,
    );
    assert.throws(
      broken((t) => {
        (t.public_material as Record<string, unknown>).pem_labels = ['RSA PRIVATE KEY'];
      }),
      /private label/,
    );
  });

  it('a DER structure counts only when it spans the whole file (an unrelated binary that starts alike is not a key)', () => {
    const der = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'der' });
    assert.equal(privateKeySignature(der, der.length)?.id, 'content_kind.der_private_key');
    assert.equal(privateKeySignature(der, der.length + 100), undefined);
  });
});

describe('content beats names: what a file really is decides (issue 12 §2)', () => {
  let parser: ShellParser;
  let tmp: string;
  let ws: string;
  let home: string;
  let engine: Engine;
  before(async () => {
    parser = await loadShellParser();
  });
  beforeEach(() => {
    tmp = makeTempDir();
    ws = path.join(tmp, 'ws');
    home = path.join(tmp, 'home');
    for (const d of [path.join(ws, 'config'), path.join(ws, 'certs'), path.join(home, '.ssh')]) fs.mkdirSync(d, { recursive: true });
    engine = new Engine({ platform: 'linux', home, workspaceRoots: [ws], fs: nodeFileSystem, shellParser: parser });
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const check = (type: string, payload: Record<string, unknown>, e = engine) =>
    e.check({ type, payload, sessionId: 'content', cwd: ws } as ActionRequest);
  const put = (rel: string, data: string | Uint8Array): string => {
    const p = path.join(ws, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, data);
    return p;
  };
  async function assertKeyBlocked(p: string, rule: string) {
    const d = await check('read_file', { path: p });
    assert.equal(d.decision, 'block', JSON.stringify(d));
    assert.deepEqual(d.rules, [rule], JSON.stringify(d));
    assert.equal(d.level, 'full_block');
    assert.match(d.reason, /by its content, whatever it is called/);
    assert.match(d.reason, /ssh-agent|credential helper/, 'the reason says what to do instead');
  }

  const rsa = () => crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });

  it('PEM private keys (PKCS#1, SEC 1, PKCS#8, encrypted PKCS#8) are blocked under any name', async () => {
    const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keys: [string, string][] = [
      ['deploy_key', rsa().privateKey.export({ type: 'pkcs1', format: 'pem' }) as string],
      ['config/server_rsa', ec.privateKey.export({ type: 'sec1', format: 'pem' }) as string],
      ['backup.txt', crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string],
      ['notes/old.md', rsa().privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' }) as string],
      ['haproxy.bundle', `${selfSignedCertificate()}${rsa().privateKey.export({ type: 'pkcs8', format: 'pem' }) as string}`],
    ];
    for (const [name, pem] of keys) await assertKeyBlocked(put(name, pem), 'content_kind.pem_private_key');
  });

  it('DER private keys (PKCS#8, PKCS#1) are blocked under any name', async () => {
    await assertKeyBlocked(put('key.bin', rsa().privateKey.export({ type: 'pkcs8', format: 'der' })), 'content_kind.der_private_key');
    await assertKeyBlocked(put('data/blob', rsa().privateKey.export({ type: 'pkcs1', format: 'der' })), 'content_kind.der_private_key');
  });

  it('an OpenSSH private key made by ssh-keygen is blocked; its .pub is readable, also in ~/.ssh', async function () {
    if (!has('ssh-keygen')) this.skip();
    const key = path.join(ws, 'deploy_id');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test', '-f', key]);
    await assertKeyBlocked(key, 'content_kind.openssh_private_key');
    assert.equal((await check('read_file', { path: `${key}.pub` })).decision, 'allow');
    fs.copyFileSync(`${key}.pub`, path.join(home, '.ssh/id_ed25519.pub'));
    const pub = await check('read_file', { path: '~/.ssh/id_ed25519.pub' });
    assert.equal(pub.decision, 'allow', JSON.stringify(pub));
    // A name that promises a public key does not make a private key readable.
    fs.copyFileSync(key, path.join(home, '.ssh/backup.pub'));
    const disguised = await check('read_file', { path: '~/.ssh/backup.pub' });
    assert.deepEqual([disguised.decision, disguised.rules], ['block', ['content_kind.openssh_private_key']], JSON.stringify(disguised));
    // Public by content, read-only by name: writing it stays blocked, and so does the rest of ~/.ssh.
    assert.equal((await check('write_file', { path: '~/.ssh/id_ed25519.pub', content: 'ssh-ed25519 AAAA attacker' })).decision, 'block');
    fs.writeFileSync(
      path.join(home, '.ssh/known_hosts'),
      'github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n',
    );
    assert.equal((await check('read_file', { path: '~/.ssh/known_hosts' })).decision, 'block', 'known_hosts is not a public key file');
  });

  it('PuTTY, PGP (armored and binary) and GnuPG key files are blocked', async function () {
    await assertKeyBlocked(
      put('putty.txt', ['PuTTY-User-Key-', 'File-3: ssh-ed25519\nEncryption: none\nComment: x\n'].join('')),
      'content_kind.putty_private_key',
    );
    if (!has('gpg')) this.skip();
    const gnupg = path.join(tmp, 'gnupg');
    fs.mkdirSync(gnupg, { mode: 0o700 });
    const gpg = (...args: string[]) =>
      execFileSync('gpg', ['--homedir', gnupg, '--batch', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    gpg('--quick-gen-key', 'Test <t@example.org>', 'ed25519', 'sign', 'never');
    put('armored.txt', gpg('--armor', '--export-secret-keys'));
    put('export.bin', gpg('--export-secret-keys'));
    await assertKeyBlocked(path.join(ws, 'armored.txt'), 'content_kind.pgp_private_key');
    await assertKeyBlocked(path.join(ws, 'export.bin'), 'content_kind.openpgp_secret_key');
    const keyFile = fs.readdirSync(path.join(gnupg, 'private-keys-v1.d'))[0]!;
    await assertKeyBlocked(
      put('agent.key.txt', fs.readFileSync(path.join(gnupg, 'private-keys-v1.d', keyFile))),
      'content_kind.gnupg_private_key',
    );
    // The public key is not secret.
    put('KEYS', gpg('--armor', '--export'));
    assert.equal((await check('read_file', { path: path.join(ws, 'KEYS') })).decision, 'allow');
  });

  it('PKCS#12 and Java key stores (JKS, JCEKS) made by openssl and keytool are blocked under any name', async function () {
    if (!has('openssl')) this.skip();
    const keyPem = put('k.tmp', rsa().privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    const certPem = path.join(ws, 'c.tmp');
    execFileSync('openssl', ['req', '-x509', '-new', '-key', keyPem, '-subj', '/CN=t', '-days', '1', '-out', certPem], { stdio: 'ignore' });
    const p12 = path.join(ws, 'bundle.dat');
    execFileSync('openssl', ['pkcs12', '-export', '-inkey', keyPem, '-in', certPem, '-passout', 'pass:pw', '-out', p12], {
      stdio: 'ignore',
    });
    await assertKeyBlocked(p12, 'content_kind.pkcs12');
    if (!has('keytool')) return;
    for (const type of ['JKS', 'JCEKS']) {
      const store = path.join(ws, `store-${type}`);
      execFileSync(
        'keytool',
        [
          '-genkeypair',
          '-alias',
          'a',
          '-keyalg',
          'EC',
          '-dname',
          'CN=t',
          '-storetype',
          type,
          '-keystore',
          store,
          '-storepass',
          'changeit',
          '-keypass',
          'changeit',
        ],
        { stdio: 'ignore' },
      );
      await assertKeyBlocked(store, 'content_kind.java_keystore');
    }
  });

  it('certificate-only PEM files are readable (curl --cacert, openssl x509 -in); a .pem with a key, or any write, stays blocked', async () => {
    const cert = selfSignedCertificate();
    const ca = put('certs/ca.pem', cert);
    put('certs/fullchain.pem', cert + '\n' + cert);
    for (const p of [ca, path.join(ws, 'certs/fullchain.pem')]) {
      const d = await check('read_file', { path: p });
      assert.equal(d.decision, 'allow', JSON.stringify(d));
      assert.deepEqual([d.level, d.rules], ['read_only', ['deny.any.key_material']], JSON.stringify(d));
    }
    for (const command of ['openssl x509 -in certs/ca.pem -noout -subject', 'curl --cacert certs/ca.pem https://example.org/']) {
      const d = await check('execute_command', { command });
      assert.notEqual(d.decision, 'block', `${command}: ${JSON.stringify(d)}`);
    }
    assert.equal((await check('write_file', { path: ca, content: cert })).decision, 'block', 'writing a trust anchor stays blocked');
    assert.equal((await check('delete_file', { path: ca })).decision, 'block');
    put('certs/server.pem', cert + (rsa().privateKey.export({ type: 'pkcs1', format: 'pem' }) as string));
    assert.equal((await check('read_file', { path: path.join(ws, 'certs/server.pem') })).decision, 'block');
    // A .key that is only a public key is readable; one that is a private key is blocked.
    put('certs/tls.key', rsa().publicKey.export({ type: 'spki', format: 'pem' }) as string);
    assert.equal((await check('read_file', { path: path.join(ws, 'certs/tls.key') })).decision, 'allow');
    put('certs/tls.key', rsa().privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    assert.equal((await check('read_file', { path: path.join(ws, 'certs/tls.key') })).decision, 'block');
    // Secret text beside a certificate is not public material.
    put('certs/odd.pem', `${cert}password = ${'hunter'}2\n`);
    assert.equal((await check('read_file', { path: path.join(ws, 'certs/odd.pem') })).decision, 'block');
  });

  it('a certificate bundle larger than the head is read whole to prove it public; one beyond the bound is not', async () => {
    const cert = selfSignedCertificate();
    const big = put(
      'certs/cacert.pem',
      `##\n## Bundle of CA Root Certificates\n##\n\n${Array.from({ length: 40 }, (_, i) => `Root ${i}\n=======\n${cert}\n`).join('')}`,
    );
    assert.ok(fs.statSync(big).size > HEAD_BYTES);
    assert.equal((await check('read_file', { path: big })).decision, 'allow');
    fs.writeFileSync(big, cert.repeat(Math.ceil((1024 * 1024 + 1) / cert.length)));
    assert.equal((await check('read_file', { path: big })).decision, 'block', 'too large to read whole: the name decides');
  });

  it('copying, moving, searching or cat-ing a key under another name is blocked too', async () => {
    const key = put('config/server_rsa', rsa().privateKey.export({ type: 'pkcs1', format: 'pem' }) as string);
    put('src/app.ts', 'export {}\n');
    const cases: [string, Record<string, unknown>][] = [
      ['copy_file', { source: key, destination: `${ws}/public/x.txt` }],
      ['move_file', { source: key, destination: `${ws}/public/x.txt` }],
      ['copy_dir', { source: `${ws}/config`, destination: `${ws}/public` }],
      ['grep_files', { path: ws, pattern: 'x' }],
      ['execute_command', { command: 'cat config/server_rsa' }],
      ['execute_command', { command: 'grep -r BEGIN .' }],
    ];
    for (const [type, payload] of cases) {
      const d = await check(type, payload);
      assert.equal(d.decision, 'block', `${type} ${JSON.stringify(payload)}: ${JSON.stringify(d)}`);
      assert.ok(d.rules.includes('content_kind.pem_private_key'), `${type}: ${JSON.stringify(d.rules)}`);
    }
    // A search that only lists names does not read the key; a narrower search does not reach it.
    assert.equal((await check('list_directory', { path: ws, recursive: true })).decision, 'allow');
    assert.equal((await check('grep_files', { path: `${ws}/src`, pattern: 'x' })).decision, 'allow');
  });

  it('benign neighbours stay allowed: source that mentions keys, a DER certificate, binaries', async () => {
    const files: [string, string | Uint8Array][] = [
      ['src/pem.ts', 'const HEADER = "-----BEGIN RSA PRIVATE KEY-----";\nexport const isKey = (s: string) => s.startsWith(HEADER);\n'],
      ['docs/keys.md', 'Never commit a file that starts with BEGIN PRIVATE KEY.\n'],
      ['cert.der', new crypto.X509Certificate(selfSignedCertificate()).raw],
      ['img.png', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')],
      ['empty', ''],
    ];
    for (const [name, data] of files) {
      const d = await check('read_file', { path: put(name, data) });
      assert.equal(d.decision, 'allow', `${name}: ${JSON.stringify(d)}`);
    }
  });

  it('a UTF-16 key file (saved by a Windows editor) is a key too', async () => {
    const pem = rsa().privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
    await assertKeyBlocked(
      put('win.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(pem, 'utf16le')])),
      'content_kind.pem_private_key',
    );
  });

  it('a file that becomes a key is read again (the cache is keyed by size and times), an unchanged one is not', async () => {
    let reads = 0;
    const counting: FileSystemPort = {
      ...nodeFileSystem,
      readHead: (p, n) => {
        reads++;
        return nodeFileSystem.readHead!(p, n);
      },
    };
    const e = new Engine({ platform: 'linux', home, workspaceRoots: [ws], fs: counting, shellParser: parser });
    const p = put('notes.txt', 'just notes\n');
    assert.equal((await check('read_file', { path: p }, e)).decision, 'allow');
    assert.equal((await check('read_file', { path: p }, e)).decision, 'allow');
    assert.equal(reads, 1, 'the second check reads nothing');
    fs.writeFileSync(p, rsa().privateKey.export({ type: 'pkcs1', format: 'pem' }) as string);
    assert.equal((await check('read_file', { path: p }, e)).decision, 'block');
    assert.equal(reads, 2);
  });

  it('without a port that can read contents (LEXICAL_FS), names decide', async () => {
    const lexical = new Engine({ platform: 'linux', home, workspaceRoots: [ws], fs: LEXICAL_FS });
    const key = put('deploy_key', rsa().privateKey.export({ type: 'pkcs1', format: 'pem' }) as string);
    const ca = put('certs/ca.pem', selfSignedCertificate());
    assert.equal((await check('read_file', { path: key }, lexical)).decision, 'allow');
    assert.equal((await check('read_file', { path: ca }, lexical)).decision, 'block');
  });

  it('a FIFO, a device or a directory is never read, and never makes the check wait', async () => {
    const fifo = path.join(ws, 'certs/pipe.pem');
    execFileSync('mkfifo', [fifo]);
    const plain = path.join(ws, 'pipe');
    execFileSync('mkfifo', [plain]);
    const started = Date.now();
    assert.equal(nodeFileSystem.readHead!(fifo, HEAD_BYTES), undefined);
    assert.equal(nodeFileSystem.readHead!('/dev/zero', HEAD_BYTES), undefined);
    assert.equal(nodeFileSystem.readHead!(ws, HEAD_BYTES), undefined);
    assert.equal((await check('read_file', { path: fifo })).decision, 'block', 'a FIFO named *.pem: the name decides');
    assert.equal((await check('read_file', { path: plain })).decision, 'allow');
    assert.equal((await check('grep_files', { path: `${ws}/certs`, pattern: 'x' })).decision, 'block');
    assert.ok(Date.now() - started < 5000, 'nothing waited for a writer');
  });

  it('the port reads at most maxBytes, and the head is enough to find a key after certificates', () => {
    const p = put('big.txt', 'a'.repeat(100_000));
    assert.equal(nodeFileSystem.readHead!(p, HEAD_BYTES)!.length, HEAD_BYTES);
    assert.equal(nodeFileSystem.readHead!(p, 10)!.length, 10);
    const st = nodeFileSystem.statFile!(p)!;
    assert.deepEqual([st.kind, st.size, st.nlink], ['file', 100_000, 1]);
    assert.equal(nodeFileSystem.statFile!(ws)!.kind, 'directory');
    assert.equal(nodeFileSystem.statFile!(path.join(ws, 'missing')), undefined);
    // A path that is not absolute on this host (a Windows path checked on Linux) is never looked up relative to the working directory.
    assert.equal(nodeFileSystem.statFile!('package.json'), undefined);
    assert.equal(nodeFileSystem.readHead!('package.json', 10), undefined);
  });

  it('an action over more files than its content budget allows is reviewed (Tier 2), not guessed', () => {
    for (let i = 0; i < 5; i++) put(`many/f${i}.txt`, `file ${i}\n`);
    let clock = 0;
    const facts = new FileFactsCache(() => (clock += 1000));
    const rules = compileTables(builtinTables(), { platform: 'linux', home, workspaceRoots: [ws] });
    const r = checkProtection('grep_files', [{ path: `${ws}/many`, access: 'read', source: 'path', below: 'contents' }], {
      platform: 'linux',
      home,
      rules,
      fs: nodeFileSystem,
      facts,
    });
    assert.equal(r.allowed, true);
    assert.equal(r.minTier, 2, JSON.stringify(r));
    assert.deepEqual(r.rules, [CONTENT_UNCHECKED_RULE]);
    assert.match(r.reason, /more files than Bulwark can check by content/);
  });
});

/** A self-signed certificate in PEM (an EC key from Node's crypto, signed by openssl). */
function selfSignedCertificate(): string {
  if (cachedCert) return cachedCert;
  const tmp = makeTempDir();
  try {
    const key = path.join(tmp, 'k.pem');
    fs.writeFileSync(key, crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    execFileSync(
      'openssl',
      ['req', '-x509', '-new', '-key', key, '-subj', '/CN=test.example', '-days', '1', '-out', path.join(tmp, 'c.pem')],
      { stdio: 'ignore' },
    );
    cachedCert = fs.readFileSync(path.join(tmp, 'c.pem'), 'utf8');
    return cachedCert;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
let cachedCert: string | undefined;
