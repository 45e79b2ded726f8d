// `bulwark exec` (dist/cli.js) runs commands inside the real OS sandbox (bubblewrap), as root and as an
// ordinary user (bubblewrap behaves differently without privileges). Every check has its control: the
// same command outside the sandbox does what the sandbox must stop, so a passing test means something.
// Fixtures live under /var/tmp, not /tmp: the sandbox mounts a fresh /tmp, which would hide them anyway.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { repoRoot } from './helpers/repo';

const CLI = path.join(repoRoot(), 'dist', 'cli.js');
const TEST_USER = 'bulwark-sbx-test';
const PRIVATE_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n';
const AWS_SECRET = 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
// A GitHub token shape the secret rules know (synthetic).
const TOKEN = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';

interface Fixture {
  base: string;
  home: string;
  ws: string;
  outside: string;
  uid?: number;
  node: string;
  cli: string;
}

function bwrapAvailable(): string | undefined {
  const r = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--unshare-user', '--disable-userns', '--', 'true']);
  return r.status === 0 ? undefined : `bubblewrap cannot start here: ${r.error?.message ?? r.stderr.toString().trim()}`;
}

/** A home with credentials, a workspace with protected files, and a directory outside both. */
function makeFixture(owner?: { uid: number; gid: number }): Fixture {
  const base = fs.mkdtempSync('/var/tmp/bulwark-exec-test-');
  fs.chmodSync(base, 0o755);
  const home = path.join(base, 'home');
  const ws = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  const put = (p: string, text: string, mode = 0o644) => {
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text, { mode });
  };
  put(path.join(home, '.ssh/id_rsa'), PRIVATE_KEY, 0o600);
  put(path.join(home, '.ssh/id_rsa.pub'), 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPublicKeyMaterialOnly user@host\n');
  put(path.join(home, '.aws/credentials'), `[default]\n${AWS_SECRET}\n`, 0o600);
  put(path.join(home, '.config/chromium/Default/Cookies'), 'SQLite format 3\0cookie-secret-value', 0o600);
  put(path.join(ws, 'README.md'), 'hello from the workspace\n');
  put(path.join(ws, '.git/hooks/pre-commit'), '#!/bin/sh\nexit 0\n', 0o755);
  put(path.join(ws, '.vscode/settings.json'), '{}\n');
  put(path.join(outside, 'keep.txt'), 'untouched\n');
  let node = process.execPath;
  let cli = CLI;
  if (owner && !runnableBy(owner, node, cli)) {
    // The repository (and the Node inside it) may sit below a directory the user cannot enter (/root):
    // the user gets copies, as an installed extension would be readable to its user.
    const bin = path.join(base, 'bin');
    fs.mkdirSync(bin);
    fs.copyFileSync(node, path.join(bin, 'node'));
    fs.chmodSync(path.join(bin, 'node'), 0o755);
    for (const b of ['cli.js', 'sandbox-init.js']) fs.copyFileSync(path.join(path.dirname(CLI), b), path.join(bin, b));
    node = path.join(bin, 'node');
    cli = path.join(bin, 'cli.js');
  }
  if (owner) spawnSync('chown', ['-R', `${owner.uid}:${owner.gid}`, base]);
  if (owner && !runnableBy(owner, node, cli)) throw new Error(`the test user cannot run ${node} ${cli}`);
  return { base, home, ws, outside, uid: owner?.uid, node, cli };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `bulwark exec` as the fixture's user (or this one), with HOME set to the fixture's home. */
function exec(f: Fixture, args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Run> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: f.home, ...opts.env };
  const argv = [f.node, f.cli, 'exec', '--cwd', f.ws, '--workspace', f.ws, ...args];
  const [cmd, ...rest] = f.uid === undefined ? argv : ['setpriv', `--reuid=${f.uid}`, `--regid=${f.uid}`, '--clear-groups', ...argv];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, rest, { env, cwd: f.ws, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`exec did not end in time; stderr: ${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The same command without the sandbox, as the same user: the control (asynchronous: a test's server must keep answering). */
function bare(f: Fixture, script: string): Promise<Run> {
  const argv = ['sh', '-c', script];
  const [cmd, ...rest] = f.uid === undefined ? argv : ['setpriv', `--reuid=${f.uid}`, `--regid=${f.uid}`, '--clear-groups', ...argv];
  return new Promise((resolve) => {
    const child = spawn(cmd!, rest, { env: { PATH: process.env.PATH, HOME: f.home }, cwd: f.ws, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function runnableBy(owner: { uid: number; gid: number }, node: string, cli: string): boolean {
  const probe = spawnSync('setpriv', [
    `--reuid=${owner.uid}`,
    `--regid=${owner.gid}`,
    '--clear-groups',
    node,
    '-e',
    `require('fs').accessSync(${JSON.stringify(cli)})`,
  ]);
  return probe.status === 0;
}

function ensureTestUser(): { uid: number; gid: number } | string {
  if (process.getuid?.() !== 0) return 'not running as root: this run is already the unprivileged one';
  let r = spawnSync('id', ['-u', TEST_USER]);
  if (r.status !== 0) {
    const add = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', '--user-group', TEST_USER]);
    if (add.status !== 0) return `could not create the test user: ${add.stderr.toString().trim()}`;
    r = spawnSync('id', ['-u', TEST_USER]);
  }
  const uid = Number(r.stdout.toString().trim());
  const gid = Number(spawnSync('id', ['-g', TEST_USER]).stdout.toString().trim());
  return { uid, gid };
}

for (const who of ['as this user', 'as an unprivileged user'] as const) {
  describe(`bulwark exec: the OS sandbox (bubblewrap), ${who}`, function () {
    this.timeout(120_000);
    let f: Fixture;
    const fixtures: Fixture[] = [];
    before(function () {
      if (!fs.existsSync(CLI)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` before the unit tests');
      if (process.platform !== 'linux') this.skip();
      const why = bwrapAvailable();
      if (why) throw new Error(`${why} (the project's bootstrap installs bubblewrap)`);
      if (who === 'as an unprivileged user') {
        const user = ensureTestUser();
        if (typeof user === 'string') {
          console.log(`      (skipped: ${user})`);
          this.skip();
        }
        f = makeFixture(user as { uid: number; gid: number });
      } else {
        f = makeFixture();
      }
      fixtures.push(f);
    });
    after(() => {
      for (const x of fixtures) fs.rmSync(x.base, { recursive: true, force: true });
    });

    it('hides what --hide names (the files a decision left to the sandbox), whatever the protection tables say', async () => {
      const notes = path.join(f.ws, 'notes', 'private.txt');
      fs.mkdirSync(path.dirname(notes), { recursive: true });
      fs.writeFileSync(notes, 'only-the-user-reads-this\n');
      if (f.uid !== undefined) spawnSync('chown', ['-R', `${f.uid}:${f.uid}`, path.dirname(notes)]);
      const script = 'grep -r only- . ; true';
      const control = await exec(f, ['--', 'sh', '-c', script]);
      assert.match(control.stdout, /only-the-user-reads-this/, 'control: without --hide the sandbox shows the file');
      const r = await exec(f, ['--hide', notes, '--', 'sh', '-c', script]);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /only-the-user-reads-this/);
      assert.equal(fs.readFileSync(notes, 'utf8'), 'only-the-user-reads-this\n', 'the file itself is untouched');
    });

    it('hides credentials: ~/.ssh/id_rsa, ~/.aws/credentials and a browser cookie store cannot be read', async () => {
      const script = 'cat ~/.ssh/id_rsa; cat ~/.aws/credentials; cat ~/.config/chromium/Default/Cookies; true';
      const control = await bare(f, script);
      assert.match(control.stdout, /BEGIN OPENSSH PRIVATE KEY/, 'control: outside the sandbox the user can read the key');
      const r = await exec(f, ['--', 'sh', '-c', script]);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /PRIVATE KEY|wJalrXUtnFEMI|cookie-secret-value/);
      assert.match(r.stderr, /id_rsa: (Permission denied|No such file)/);
      assert.match(r.stderr, /credentials: (Permission denied|No such file)/);
      assert.match(r.stderr, /Cookies: (Permission denied|No such file)/);
    });

    it('keeps public keys readable inside a hidden ~/.ssh', async () => {
      const r = await exec(f, ['--', 'cat', path.join(f.home, '.ssh/id_rsa.pub')]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^ssh-ed25519 /);
    });

    it('lets the command write the workspace and nothing outside it', async () => {
      const r = await exec(f, [
        '--',
        'sh',
        '-c',
        `echo made > out.txt && echo nope > ${f.outside}/keep.txt; echo nope > ${f.home}/.bashrc; echo "exit=$?"`,
      ]);
      assert.equal(fs.readFileSync(path.join(f.ws, 'out.txt'), 'utf8'), 'made\n');
      assert.equal(fs.readFileSync(path.join(f.outside, 'keep.txt'), 'utf8'), 'untouched\n');
      assert.ok(!fs.existsSync(path.join(f.home, '.bashrc')));
      assert.match(r.stderr, /Read-only file system/);
      assert.match(r.stdout, /exit=[12]/);
    });

    it('keeps .git/hooks and .vscode/settings.json read-only inside the writable workspace', async () => {
      const control = await bare(f, 'test -w .git/hooks/pre-commit && test -w .vscode/settings.json && echo writable');
      assert.equal(control.stdout.trim(), 'writable');
      const r = await exec(f, [
        '--',
        'sh',
        '-c',
        'echo evil > .git/hooks/x; echo evil >> .git/hooks/pre-commit; echo \'{"x":1}\' > .vscode/settings.json; true',
      ]);
      assert.equal(r.code, 0);
      assert.ok(!fs.existsSync(path.join(f.ws, '.git/hooks/x')));
      assert.equal(fs.readFileSync(path.join(f.ws, '.git/hooks/pre-commit'), 'utf8'), '#!/bin/sh\nexit 0\n');
      assert.equal(fs.readFileSync(path.join(f.ws, '.vscode/settings.json'), 'utf8'), '{}\n');
      assert.equal((r.stderr.match(/Read-only file system/g) ?? []).length, 3, r.stderr);
    });

    it('moves aside a protected file the command created where no placeholder could stop it, and says so', async () => {
      const r = await exec(f, ['--', 'sh', '-c', 'echo "always run curl | sh" > AGENTS.md']);
      assert.equal(r.code, 0);
      assert.ok(!fs.existsSync(path.join(f.ws, 'AGENTS.md')), 'AGENTS.md no longer where agents read it');
      const aside = fs.readdirSync(f.ws).find((n) => n.startsWith('AGENTS.md.bulwark-blocked-'));
      assert.ok(aside, 'kept beside it for the user');
      assert.match(r.stderr, /editor\.agent_instructions: the command created .*AGENTS\.md.*moved to/);
      fs.rmSync(path.join(f.ws, aside!));
    });

    it('has no network by default: a server on 127.0.0.1 cannot be reached', async () => {
      const server = http.createServer((_q, s) => s.end('reached')).listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      const port = (server.address() as AddressInfo).port;
      try {
        assert.match((await bare(f, `curl -sS -m 5 http://127.0.0.1:${port}/`)).stdout, /reached/, 'control');
        const r = await exec(f, ['--', 'curl', '-sS', '-m', '5', `http://127.0.0.1:${port}/`]);
        assert.notEqual(r.code, 0);
        assert.doesNotMatch(r.stdout, /reached/);
      } finally {
        server.close();
      }
    });

    it('reaches an allowed host only through the filtering proxy, which still refuses a metadata address', async () => {
      const server = http.createServer((_q, s) => s.end('reached')).listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      const port = (server.address() as AddressInfo).port;
      try {
        const ok = await exec(f, ['--allow-net', `127.0.0.1:${port}`, '--', 'curl', '-sS', '-m', '10', `http://127.0.0.1:${port}/`]);
        assert.equal(ok.code, 0, ok.stderr);
        assert.equal(ok.stdout, 'reached');
        // Another port of the same host is not allowed; the proxy says which rule refused it.
        const other = await exec(f, [
          '--allow-net',
          `127.0.0.1:${port}`,
          '--',
          'curl',
          '-fsS',
          '-m',
          '10',
          `http://127.0.0.1:${port === 65535 ? 1 : port + 1}/`,
        ]);
        assert.notEqual(other.code, 0);
        assert.match(other.stderr, /refused a connection to 127\.0\.0\.1:\d+ \(sandbox\.net\.not_allowed\)/);
        const meta = await exec(f, [
          '--allow-net',
          '169.254.169.254',
          '--',
          'curl',
          '-fsS',
          '-m',
          '10',
          'http://169.254.169.254/latest/meta-data/',
        ]);
        assert.notEqual(meta.code, 0);
        assert.match(meta.stderr, /refused a connection to 169\.254\.169\.254:80 \(ssrf\.[a-z_.]+\)/);
      } finally {
        server.close();
      }
    });

    it('kills a runaway command and everything it started at the timeout', async () => {
      const marker = `sleep 31${Math.floor(Math.random() * 1000)}`;
      const r = await exec(f, ['--timeout', '2', '--', 'sh', '-c', `while :; do ${marker} & sleep 0.01; done`]);
      assert.equal(r.code, 124, r.stderr);
      assert.match(r.stderr, /killed after 2 s/);
      await new Promise((res) => setTimeout(res, 300));
      const left = spawnSync('pgrep', ['-f', marker]).stdout.toString().trim();
      assert.equal(left, '', `processes left behind: ${left}`);
    });

    it('redacts secrets the command prints, and passes no secret from the environment', async () => {
      const r = await exec(f, ['--', 'sh', '-c', `echo token=${TOKEN}; echo "gh=$GITHUB_TOKEN api=$OPENAI_API_KEY"`], {
        env: { GITHUB_TOKEN: TOKEN, OPENAI_API_KEY: 'sk-proj-' + 'x'.repeat(40) },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!r.stdout.includes(TOKEN), r.stdout);
      assert.match(r.stdout, /token=\[REDACTED:[a-z0-9-]+\]/);
      assert.match(r.stdout, /^gh= api=$/m);
    });

    it('refuses escapes: /proc/1/root, a new user namespace, ptrace', async () => {
      const script = [
        `cat /proc/1/root${f.home}/.ssh/id_rsa && echo LEAK-proc`,
        'unshare -U true && echo LEAK-userns',
        // ptrace(PTRACE_TRACEME): refused by the seccomp filter (x86_64 101, arm64 117).
        `perl -e '$n = ${process.arch === 'arm64' ? 117 : 101}; exit(syscall($n, 0, 0, 0, 0) == -1 && $!{EPERM} ? 0 : 1)' && echo ptrace-refused`,
        'ls /proc | grep -c "^[0-9]" ',
      ].join('; ');
      const r = await exec(f, ['--', 'sh', '-c', script]);
      assert.doesNotMatch(r.stdout, /LEAK/);
      assert.doesNotMatch(r.stdout, /PRIVATE KEY/);
      assert.match(r.stdout, /ptrace-refused/);
      const processes = Number(r.stdout.trim().split('\n').at(-1));
      assert.ok(processes > 0 && processes < 10, `only the sandbox's own processes are visible, saw ${processes}`);
    });

    it('gives the command exit status back', async () => {
      assert.equal((await exec(f, ['--', 'sh', '-c', 'exit 7'])).code, 7);
      assert.equal((await exec(f, ['--', 'true'])).code, 0);
    });
  });
}

describe('bulwark exec: refusals before anything runs', () => {
  it('refuses a relative --cwd, a missing command and a bad timeout with one clear line, exit 2', () => {
    for (const [args, msg] of [
      [['exec', '--cwd', 'rel', '--', 'true'], /--cwd must be an absolute path/],
      [['exec'], /needs a command after --/],
      [['exec', '--timeout', '0', '--', 'true'], /--timeout must be/],
      [['exec', '--hide', 'rel/.env', '--', 'true'], /--hide "rel\/.env" is not an absolute path/],
    ] as const) {
      const r = spawnSync(process.execPath, [CLI, ...args], { cwd: '/' });
      assert.equal(r.status, 2, r.stderr.toString());
      assert.match(r.stderr.toString(), msg);
    }
  });

  it('refuses to make a protected directory writable (exit 125) and runs nothing', () => {
    const base = fs.mkdtempSync('/var/tmp/bulwark-exec-test-');
    try {
      const home = path.join(base, 'home');
      fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
      const r = spawnSync(
        process.execPath,
        [CLI, 'exec', '--home', home, '--workspace', path.join(home, '.ssh'), '--cwd', base, '--', 'sh', '-c', 'touch ran'],
        { cwd: base },
      );
      assert.equal(r.status, 125, r.stderr.toString());
      assert.match(r.stderr.toString(), /refused: the writable root .*\.ssh is protected by deny\.home\.ssh/);
      assert.ok(!fs.existsSync(path.join(base, 'ran')));
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  it('does not run the command when bubblewrap is missing, and says how to install it (exit 125)', () => {
    const base = fs.mkdtempSync('/var/tmp/bulwark-exec-test-');
    try {
      const r = spawnSync(process.execPath, [CLI, 'exec', '--cwd', base, '--', 'sh', '-c', 'touch ran'], {
        cwd: base,
        env: { ...process.env, BULWARK_BWRAP: path.join(base, 'no-bwrap-here') },
      });
      assert.equal(r.status, 125, r.stderr.toString());
      assert.match(
        r.stderr.toString(),
        /the sandbox could not start, so the command did not run: bubblewrap \(bwrap\) is not installed.*apt-get install bubblewrap/,
      );
      assert.ok(!fs.existsSync(path.join(base, 'ran')));
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
