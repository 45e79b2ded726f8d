// Issue 16 (2): the user's known secrets (.env files, secret-named variables, credential files) masked by
// value in every output, whatever their shape: the loader on real files, the CLI redactor, the sandbox's
// output, and a value first seen in one tool output masked in a later one (the run tool's helper process).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { installProcessKnownValues, loadSecretRules, redactSecrets } from '../../src/engine/secrets';
import { KnownSecrets, installKnownSecrets, isSecretName, parseDotenv, valuesOf } from '../../src/node/known-secrets';
import { makeTempDir, repoRoot } from './helpers/repo';

const CLI = path.join(repoRoot(), 'dist', 'cli.js');
// Values of no provider format: only knowing them masks them.
const DB_PASS = 'plum-Orchard_42!Rivet';
const SESSION = 'q8Zr4Lw2Nx6Tp0Vk3Hs9Jd';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG+' + 'bPxRfiCYzz9Kq2Lm';
const NPM_TOKEN = 'npm_' + 'Zx81Kq2Lm9Vt4Rb7Wc3Nd6Hs0Jf5Gy1Pa';
const GIT_PASS = 'Gh-fake-pass-7781-xyz';

function tree(): { root: string; ws: string; home: string } {
  const root = makeTempDir('bulwark-known-');
  const ws = path.join(root, 'ws');
  const home = path.join(root, 'home');
  const put = (p: string, t: string) => {
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, t);
  };
  put(
    path.join(ws, '.env'),
    `# local\nexport DB_PASSWORD="${DB_PASS}"\nNODE_ENV=development\nPORT=3000\nAPI_URL=https://api.example.com\n`,
  );
  put(path.join(ws, 'packages/api/.env.local'), `SESSION_SECRET=${SESSION} # rotated monthly\n`);
  put(path.join(ws, '.env.example'), 'DB_PASSWORD=your-password-here-please\n');
  put(path.join(ws, 'node_modules/x/.env'), 'TOKEN=never-read-from-dependencies-9Kq\n');
  put(
    path.join(home, '.aws/credentials'),
    `[default]\naws_access_key_id = AKIA${'IOSFODNN7EXAMPLE'}\naws_secret_access_key = ${AWS_SECRET}\nregion = eu-west-1\n`,
  );
  put(path.join(home, '.npmrc'), `//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n`);
  put(path.join(home, '.git-credentials'), `https://dev:${encodeURIComponent(GIT_PASS)}@github.com\n`);
  return { root, ws, home };
}

describe('known secrets: the loader', () => {
  after(() => installProcessKnownValues(undefined));

  it('reads dotenv lines (export, quotes, comments) and secret names in any case style', () => {
    assert.deepEqual(parseDotenv('export A="x y"\nB=plain # note\n# C=no\nD=\'q\'\n'), [
      ['A', 'x y'],
      ['B', 'plain'],
      ['D', 'q'],
    ]);
    for (const n of ['API_KEY', 'dbPassword', 'GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'DATABASE_URL', 'SESSION_SECRET'])
      assert.equal(isSecretName(n), true, n);
    for (const n of ['NODE_ENV', 'PORT', 'API_URL', 'HOME', 'PATH', 'EDITOR', 'PWD', 'OLDPWD']) assert.equal(isSecretName(n), false, n);
    assert.equal(isSecretName('DB_PWD'), true);
    assert.deepEqual(valuesOf('npmrc', `//r/:_authToken=${NPM_TOKEN}\n//s/:_authToken=\${NPM_TOKEN}\n`), [NPM_TOKEN]);
    assert.deepEqual(valuesOf('git-credentials', `https://dev:${encodeURIComponent(GIT_PASS)}@github.com\n`), [GIT_PASS]);
    assert.deepEqual(
      valuesOf('docker', JSON.stringify({ auths: { 'ghcr.io': { auth: Buffer.from(`dev:${SESSION}`).toString('base64') } } })).at(-1),
      SESSION,
    );
  });

  it('takes a path for configuration but a base64 secret that starts with / for a secret', () => {
    const b64 = ['/sFzoq1P8GHmHF', 'tPdk2NDbhqZG4NTcZn'].join('');
    const plus = ['/G2WCGm6PpM', '+QdY+EXmBH5vq'].join('');
    const text = `A=/var/run/app.sock\nB=./certs/dev.pem\nC=~/keys/id_ed25519\nD=${b64}\nE=${plus}\nF=/srv/Data2024/backup\n`;
    assert.deepEqual(valuesOf('dotenv', text), [b64, plus]);
  });

  it('loads the workspace .env files (not templates, not dependencies), credential files and secret-named variables, then masks them in any output', () => {
    const { root, ws, home } = tree();
    try {
      const { known, report } = installKnownSecrets({
        workspaceRoots: [ws],
        home,
        env: {
          MY_API_TOKEN: 'env-Token-88Zq-Lm2',
          PATH: '/usr/bin:/bin',
          SSH_AUTH_SOCK: root,
          GPG_KEY_FILE: `${root}/keys/k.gpg`,
          AUTH_URL: 'https://auth.example.com/login',
        },
      });
      const files = report.files.map((f) => path.relative(root, f.file)).sort();
      assert.deepEqual(files, ['home/.aws/credentials', 'home/.git-credentials', 'home/.npmrc', 'ws/.env', 'ws/packages/api/.env.local']);
      assert.equal(report.environment, 1);
      const out = redactSecrets(
        loadSecretRules(),
        `db ${DB_PASS}; s=${SESSION}; aws=${AWS_SECRET}; npm=${NPM_TOKEN}; git=${GIT_PASS}; env=env-Token-88Zq-Lm2; port 3000 development https://api.example.com never-read-from-dependencies-9Kq`,
      ).text;
      for (const v of [DB_PASS, SESSION, AWS_SECRET, NPM_TOKEN, GIT_PASS, 'env-Token-88Zq-Lm2'])
        assert.ok(!out.includes(v), `${v} in ${out}`);
      assert.match(
        out,
        /port 3000 development https:\/\/api\.example\.com never-read-from-dependencies-9Kq$/,
        'ordinary settings and dependency files are left alone',
      );
      // A secret-named variable holding a path or a plain URL is not a secret: paths in output stay readable.
      assert.equal(
        redactSecrets(loadSecretRules(), `cd ${root}/ws && open https://auth.example.com/login`).text,
        `cd ${root}/ws && open https://auth.example.com/login`,
      );
      assert.match(out, /db \[REDACTED:known-value\.env-file\]/);
      // A rotated value is masked from the next refresh on.
      fs.writeFileSync(path.join(ws, '.env'), 'DB_PASSWORD=rotated-Value-0001-Zq\n');
      const again = known.refresh();
      assert.deepEqual(
        again.files.map((f) => path.basename(f.file)),
        ['.env'],
      );
      assert.ok(!redactSecrets(loadSecretRules(), 'now rotated-Value-0001-Zq').text.includes('rotated-Value'));
    } finally {
      installProcessKnownValues(undefined);
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('a folder added later is read into the same registry; files already read are not read again', () => {
    const { root, ws, home } = tree();
    try {
      const other = path.join(root, 'other');
      fs.mkdirSync(other);
      fs.writeFileSync(path.join(other, '.env'), 'OTHER_TOKEN=other-Secret-7Zq-Lm2\n');
      const k = new KnownSecrets({ workspaceRoots: [ws], home, env: {} });
      assert.ok(k.refresh().files.length > 0);
      assert.equal(k.addWorkspaceRoots([ws, 'relative/dir']), false, 'a known folder or a relative path adds nothing');
      assert.equal(k.addWorkspaceRoots([other]), true);
      assert.deepEqual(
        k.refresh().files.map((f) => path.relative(root, f.file)),
        ['other/.env'],
      );
      assert.equal(redactSecrets(loadSecretRules(), 'x other-Secret-7Zq-Lm2', k.values).text, 'x [REDACTED:known-value.env-file]');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('a file too large or unreadable is reported, never fatal', () => {
    const { root, ws, home } = tree();
    try {
      fs.writeFileSync(path.join(ws, '.env.big'), 'A=' + 'x'.repeat(1 << 21));
      const r = new KnownSecrets({ workspaceRoots: [ws, path.join(root, 'missing')], home, env: {} }).refresh();
      assert.ok(
        r.errors.some((e) => /\.env\.big: larger than/.test(e)),
        r.errors.join('\n'),
      );
      assert.ok(
        r.errors.some((e) => /missing/.test(e)),
        r.errors.join('\n'),
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('known secrets: bulwark redact and bulwark exec mask them by value (dist/cli.js)', function () {
  this.timeout(60_000);
  let t: ReturnType<typeof tree>;
  before(() => {
    if (!fs.existsSync(CLI)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` first');
    t = tree();
  });
  after(() => fs.rmSync(t.root, { recursive: true, force: true }));

  it("bulwark redact, run in the workspace, masks its .env values and the home credential files' values", () => {
    const input = `log: connecting with ${DB_PASS}\nsession ${SESSION}\naws ${AWS_SECRET}\nnpm ${NPM_TOKEN}\nport 3000\n`;
    const r = spawnSync(process.execPath, [CLI, 'redact'], { input, cwd: t.ws, env: { PATH: process.env.PATH, HOME: t.home } });
    assert.equal(r.status, 0, r.stderr.toString());
    const out = r.stdout.toString();
    for (const v of [DB_PASS, SESSION, AWS_SECRET, NPM_TOKEN]) assert.ok(!out.includes(v), `${v} survived: ${out}`);
    assert.match(out, /port 3000\n$/);
    // Control: elsewhere (no .env, an empty home) the same bare values are no secret to a detector.
    const elsewhere = makeTempDir('bulwark-known-none-');
    try {
      const c = spawnSync(process.execPath, [CLI, 'redact'], {
        input: `log: connecting with ${DB_PASS}\n`,
        cwd: elsewhere,
        env: { PATH: process.env.PATH, HOME: elsewhere },
      });
      assert.equal(c.stdout.toString(), `log: connecting with ${DB_PASS}\n`);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
