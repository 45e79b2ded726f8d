// The macOS Seatbelt profile. Off macOS it is read back with a small SBPL reader (s-expressions,
// strings, #"regex" literals) and its rules applied in SBPL's order (the last matching rule wins),
// which checks both the quoting and what each rule takes away; on macOS `sandbox-exec` runs it for real.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { macosSandboxProfile, type MacosSandboxOptions } from '../../src/node/sandbox/macos-profile';
import { makeTempDir } from './helpers/repo';

type Sexp = { symbol: string } | { string: string } | { regex: string } | Sexp[];

function parseSbpl(text: string): Sexp[] {
  let i = 0;
  const readQuoted = (): string => {
    let out = '';
    for (i++; text[i] !== '"'; i++) {
      if (i >= text.length) throw new Error('unterminated string');
      if (text[i] === '\\') i++;
      out += text[i];
    }
    i++;
    return out;
  };
  const read = (): Sexp => {
    while (/\s/.test(text[i] ?? '')) i++;
    const c = text[i];
    if (c === '(') {
      i++;
      const list: Sexp[] = [];
      for (;;) {
        while (/\s/.test(text[i] ?? '') || text[i] === ';') {
          if (text[i] === ';') while (i < text.length && text[i] !== '\n') i++;
          else i++;
        }
        if (i >= text.length) throw new Error('unbalanced (');
        if (text[i] === ')') {
          i++;
          return list;
        }
        list.push(read());
      }
    }
    if (c === '"') return { string: readQuoted() };
    if (c === '#' && text[i + 1] === '"') {
      i++;
      return { regex: readQuoted() };
    }
    const m = /^[^\s()";]+/.exec(text.slice(i));
    if (!m) throw new Error(`unexpected ${JSON.stringify(c)} at ${i}`);
    i += m[0].length;
    return { symbol: m[0] };
  };
  const forms: Sexp[] = [];
  for (;;) {
    while (i < text.length && (/\s/.test(text[i]!) || text[i] === ';')) {
      if (text[i] === ';') while (i < text.length && text[i] !== '\n') i++;
      else i++;
    }
    if (i >= text.length) return forms;
    if (text[i] !== '(') throw new Error(`top level must be lists, found ${JSON.stringify(text[i])} at ${i}`);
    forms.push(read());
  }
}

const sym = (s: Sexp) => (!Array.isArray(s) && 'symbol' in s ? s.symbol : undefined);
const str = (s: Sexp | undefined) => (s && !Array.isArray(s) && 'string' in s ? s.string : undefined);

interface Access {
  path?: string;
  remote?: string;
  target?: 'same-sandbox' | 'others';
}

function filterMatches(filter: Sexp[], access: Access): boolean {
  const [head, a, b] = filter;
  switch (sym(head!)) {
    case 'subpath': {
      const p = str(a)!;
      return access.path !== undefined && (access.path === p || access.path.startsWith(p === '/' ? '/' : `${p}/`));
    }
    case 'literal':
      return access.path === str(a);
    case 'regex':
      return access.path !== undefined && !Array.isArray(a) && 'regex' in a! && new RegExp(a.regex).test(access.path);
    case 'remote':
      assert.equal(sym(a!), 'ip');
      return access.remote === str(b);
    case 'target':
      return access.target === sym(a!);
    default:
      throw new Error(`filter this reader does not know: ${JSON.stringify(filter)}`);
  }
}

/** SBPL's decision for one operation: the last rule naming it (or a wildcard of it, or default) whose filters match. */
function decide(profile: string, operation: string, access: Access = {}): string | undefined {
  let decision: string | undefined;
  for (const form of parseSbpl(profile)) {
    assert.ok(Array.isArray(form));
    const action = sym(form[0]!);
    if (action === 'version') continue;
    assert.ok(action === 'allow' || action === 'deny', `unexpected form ${JSON.stringify(form)}`);
    const operations = form
      .slice(1)
      .map(sym)
      .filter((s): s is string => s !== undefined);
    const filters = form.slice(1).filter((s): s is Sexp[] => Array.isArray(s));
    const named = operations.some(
      (op) => op === 'default' || op === operation || (op.endsWith('*') && operation.startsWith(op.slice(0, -1))),
    );
    if (named && (filters.length === 0 || filters.some((f) => filterMatches(f, access)))) decision = action;
  }
  return decision;
}

const HOME = '/Users/dev';
const base: MacosSandboxOptions = {
  hidden: [`${HOME}/.ssh`, `${HOME}/project/.env`],
  readOnlyInWritable: [`${HOME}/project/.git/hooks`],
  writable: [`${HOME}/project`],
  tmpDir: '/private/var/folders/xy/T/bulwark-1',
};

describe('macOS sandbox profile', () => {
  const profile = macosSandboxProfile(base);
  const read = (p: string) => decide(profile, 'file-read-data', { path: p });
  const write = (p: string) => decide(profile, 'file-write-data', { path: p });

  it('starts from (version 1) (allow default) and reads back as well-formed SBPL', () => {
    const forms = parseSbpl(profile);
    assert.deepEqual(forms[0], [{ symbol: 'version' }, { symbol: '1' }]);
    assert.deepEqual(forms[1], [{ symbol: 'allow' }, { symbol: 'default' }]);
    assert.equal(read('/usr/bin/git'), 'allow');
  });

  it('hides every hidden path and what is under it from reads and writes, even inside a writable root', () => {
    for (const p of [`${HOME}/.ssh`, `${HOME}/.ssh/id_ed25519`, `${HOME}/project/.env`]) {
      assert.equal(read(p), 'deny', p);
      assert.equal(write(p), 'deny', p);
      assert.equal(decide(profile, 'file-read-metadata', { path: p }), 'deny', p);
    }
    assert.equal(read(`${HOME}/.sshx`), 'allow'); // a sibling that merely shares the prefix
    assert.equal(read(`${HOME}/project/.env.example`), 'allow');
  });

  it('allows writes only under the writable roots, the temp dir and the usual devices', () => {
    for (const p of [
      `${HOME}/project`,
      `${HOME}/project/src/a.ts`,
      `${base.tmpDir}/x`,
      '/var/folders/xy/T/bulwark-1/x',
      '/dev/null',
      '/dev/tty',
      '/dev/dtracehelper',
      '/dev/ttys003',
      '/dev/fd/1',
    ]) {
      assert.equal(write(p), 'allow', p);
    }
    for (const p of [
      `${HOME}/.zshrc`,
      `${HOME}/projectile/x`,
      '/etc/hosts',
      '/private/tmp/x',
      '/usr/local/bin/x',
      '/dev/disk0',
      '/dev/ttys003x',
    ]) {
      assert.equal(write(p), 'deny', p);
    }
    assert.equal(decide(profile, 'file-write-unlink', { path: `${HOME}/.zshrc` }), 'deny');
  });

  it('keeps the read-only paths inside a writable root read-only', () => {
    assert.equal(write(`${HOME}/project/.git/hooks/pre-commit`), 'deny');
    assert.equal(read(`${HOME}/project/.git/hooks/pre-commit`), 'allow');
    assert.equal(write(`${HOME}/project/.git/config`), 'allow');
  });

  it('denies both spellings of a path under /tmp, /var or /etc (Seatbelt sees the /private one)', () => {
    const p = macosSandboxProfile({
      ...base,
      hidden: ['/tmp/secret', '/private/var/db/x'],
      writable: ['/etc'],
      readOnlyInWritable: ['/etc/ro'],
    });
    for (const hidden of ['/tmp/secret', '/private/tmp/secret/a', '/var/db/x', '/private/var/db/x'])
      assert.equal(decide(p, 'file-read-data', { path: hidden }), 'deny', hidden);
    assert.equal(decide(p, 'file-write-data', { path: '/private/etc/x' }), 'allow');
    assert.equal(decide(p, 'file-write-data', { path: '/private/etc/ro/x' }), 'deny');
  });

  it('lets nothing out but localhost on the proxy port, and nothing at all without one', () => {
    const withProxy = macosSandboxProfile({ ...base, proxyPort: 8123 });
    assert.equal(decide(withProxy, 'network-outbound', { remote: 'localhost:8123' }), 'allow');
    assert.equal(decide(withProxy, 'network-outbound', { remote: 'localhost:22' }), 'deny');
    assert.equal(decide(withProxy, 'network-outbound', { remote: '*:443' }), 'deny');
    assert.equal(decide(withProxy, 'network-outbound', { path: '/private/var/run/mDNSResponder' }), 'deny');
    assert.equal(decide(profile, 'network-outbound', { remote: 'localhost:8123' }), 'deny');
    assert.doesNotMatch(profile, /remote ip/);
    for (const bad of [0, 65536, 1.5, Number.NaN]) assert.throws(() => macosSandboxProfile({ ...base, proxyPort: bad }), /proxy port/);
  });

  it('keeps inspecting, debugging and signalling to processes of its own sandbox', () => {
    for (const op of ['process-info-pidinfo', 'process-info-listpids', 'mach-priv-task-port', 'signal']) {
      assert.equal(decide(profile, op, { target: 'others' }), 'deny', op);
      assert.equal(decide(profile, op, { target: 'same-sandbox' }), 'allow', op);
    }
  });

  it('quotes hostile paths so each stays one string and cannot add rules', () => {
    const hostile = [
      `${HOME}/a"b`,
      `${HOME}/back\\slash\\`,
      `${HOME}/x") (allow file-read* (subpath "/`,
      `${HOME}/\\") (allow default) ;`,
      `${HOME}/sp ace/ünï`,
    ];
    const p = macosSandboxProfile({ ...base, hidden: hostile, readOnlyInWritable: [], writable: [`${HOME}/w"\\`] });
    const strings: string[] = [];
    const walk = (s: Sexp) => {
      if (Array.isArray(s)) s.forEach(walk);
      else if ('string' in s) strings.push(s.string);
    };
    parseSbpl(p).forEach(walk);
    for (const h of hostile.map((h) => h.replace(/\/+$/, ''))) {
      assert.ok(strings.includes(h), `${h} not read back as one string`);
      assert.equal(decide(p, 'file-read-data', { path: h }), 'deny', h);
      assert.equal(decide(p, 'file-read-data', { path: `${h}/inner` }), 'deny', h);
    }
    assert.equal(decide(p, 'file-write-data', { path: `${HOME}/w"\\/f` }), 'allow');
    // the same forms as with harmless names: nothing injected became a rule of its own
    const plain = macosSandboxProfile({
      ...base,
      hidden: hostile.map((_, i) => `${HOME}/plain${i}`),
      readOnlyInWritable: [],
      writable: [`${HOME}/w`],
    });
    assert.equal(parseSbpl(p).length, parseSbpl(plain).length);
  });

  it('throws on a NUL or line break in any path, and on a relative path', () => {
    for (const bad of [`${HOME}/a\0b`, `${HOME}/a\nb`, `${HOME}/a\rb`]) {
      assert.throws(() => macosSandboxProfile({ ...base, hidden: [bad] }), /NUL or line break/);
      assert.throws(() => macosSandboxProfile({ ...base, readOnlyInWritable: [bad] }), /NUL or line break/);
      assert.throws(() => macosSandboxProfile({ ...base, writable: [bad] }), /NUL or line break/);
      assert.throws(() => macosSandboxProfile({ ...base, tmpDir: bad }), /NUL or line break/);
    }
    for (const rel of ['project', './x', '~/.ssh', ''])
      assert.throws(() => macosSandboxProfile({ ...base, hidden: [rel] }), /not absolute/);
  });

  it('normalises trailing slashes and doubled separators, so the rule matches what the kernel reports', () => {
    const p = macosSandboxProfile({ ...base, hidden: [`${HOME}//.aws/`] });
    assert.equal(decide(p, 'file-read-data', { path: `${HOME}/.aws/credentials` }), 'deny');
  });

  describe('under sandbox-exec (macOS only)', () => {
    const sandboxExec = '/usr/bin/sandbox-exec';
    let dir = '';
    before(function () {
      if (!fs.existsSync(sandboxExec)) {
        console.log('      skipped: no sandbox-exec here (not macOS)');
        this.skip();
      }
      dir = makeTempDir('bulwark-seatbelt-');
      fs.mkdirSync(path.join(dir, 'work/.git'), { recursive: true });
      fs.mkdirSync(path.join(dir, 'tmp'));
      fs.writeFileSync(path.join(dir, 'work/secret.txt'), 'secret');
      fs.writeFileSync(path.join(dir, 'outside.txt'), 'outside');
    });
    after(() => {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('enforces the hidden, writable and read-only paths', () => {
      const p = macosSandboxProfile({
        hidden: [path.join(dir, 'work/secret.txt')],
        readOnlyInWritable: [path.join(dir, 'work/.git')],
        writable: [path.join(dir, 'work')],
        tmpDir: path.join(dir, 'tmp'),
      });
      const run = (script: string) =>
        spawnSync(sandboxExec, ['-p', p, '/bin/sh', '-c', script], { cwd: dir, encoding: 'utf8', timeout: 30000 });
      const ok = run('echo hi > work/a && cat work/a && echo t > tmp/t && cat outside.txt > /dev/null');
      assert.equal(ok.status, 0, ok.stderr);
      assert.match(ok.stdout, /^hi$/m);
      for (const denied of ['cat work/secret.txt', 'echo x > work/secret.txt', 'echo x > outside.txt', 'echo x > work/.git/config']) {
        assert.notEqual(run(denied).status, 0, denied);
      }
      assert.equal(fs.readFileSync(path.join(dir, 'outside.txt'), 'utf8'), 'outside');
    });
  });
});
