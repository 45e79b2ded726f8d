// The git index parser (src/engine/shell/git-index.ts) over indexes the real git writes (versions 2,
// 3 and 4), and the exact reads of git grep / git ls-files | xargs it makes possible: tracked files
// only, never the untracked, ignored .env; a missing or malformed index falls back to everything below.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseGitIndex } from '../../src/engine/shell/git-index';
import { analyzeShell, type ShellParser } from '../../src/engine/shell/analyze';
import { nodeFileSystem } from '../../src/node/fs-port';
import { loadShellParser } from '../../src/node/shell-grammar';
import { makeTempDir } from './helpers/repo';

const hasGit = (() => {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** git in `ws`, with a fixed identity, no hooks and no system or user configuration (HOME is `root`). */
function runGit(ws: string, root: string, args: readonly string[]): Buffer {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'core.hooksPath=/dev/null', ...args], {
    cwd: ws,
    stdio: 'pipe',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: root },
  });
}

describe('git index: tracked paths for git grep / git ls-files', function () {
  this.timeout(60_000);
  let parser: ShellParser;
  let root: string;
  let ws: string;
  const git = (...args: string[]) => runGit(ws, root, args);
  const tracked = ['README.md', 'src/app.ts', 'src/deep/dir/name with space.ts', 'docs/ünïcode.md', 'link-to-readme'];
  before(async function () {
    if (!hasGit) this.skip();
    parser = await loadShellParser();
    root = makeTempDir('bulwark-git-index-');
    ws = path.join(root, 'ws');
    for (const f of [...tracked.filter((f) => f !== 'link-to-readme'), '.env', 'node_modules/x/index.js', 'src/.env.local']) {
      fs.mkdirSync(path.dirname(path.join(ws, f)), { recursive: true });
      fs.writeFileSync(path.join(ws, f), 'TODO x\n');
    }
    fs.symlinkSync('README.md', path.join(ws, 'link-to-readme'));
    fs.writeFileSync(path.join(ws, '.gitignore'), '.env\n.env.*\nnode_modules/\n');
    tracked.push('.gitignore');
    git('init', '-q');
    git('add', '.');
  });
  after(() => root && fs.rmSync(root, { recursive: true, force: true }));

  const indexOf = () => parseGitIndex(new Uint8Array(fs.readFileSync(path.join(ws, '.git/index'))));

  for (const version of ['2', '3', '4']) {
    it(`reads the tracked paths of a version ${version} index (git update-index --index-version ${version})`, () => {
      git('update-index', '--index-version', version);
      const idx = indexOf();
      assert.ok(idx, 'parsed');
      // git writes version 2 when asked for 3 and no entry needs extended flags (the next test has one).
      assert.equal(idx.version, version === '3' ? 2 : Number(version));
      assert.deepEqual([...idx.files].sort(), [...tracked].sort());
      assert.deepEqual([...idx.files].sort(), git('ls-files', '-z').toString().split('\0').filter(Boolean).sort());
    });
  }

  it('a version 3 index with extended flags (intent-to-add) and a submodule entry', () => {
    git('update-index', '--index-version', '3');
    fs.writeFileSync(path.join(ws, 'later.txt'), 'x');
    git('add', '-N', 'later.txt');
    const sha = git('hash-object', '-w', 'README.md').toString().trim();
    git('update-index', '--add', '--cacheinfo', `160000,${sha},vendor/sub`);
    const idx = indexOf();
    assert.ok(idx);
    assert.equal(idx.version, 3);
    assert.ok(idx.files.includes('later.txt'));
    assert.deepEqual(idx.gitlinks, ['vendor/sub']);
    git('rm', '-q', '--cached', 'later.txt', 'vendor/sub');
    fs.rmSync(path.join(ws, 'later.txt'));
  });

  it('refuses what is not a well-formed index (then the analysis searches everything below)', () => {
    git('update-index', '--index-version', '4');
    const good = new Uint8Array(fs.readFileSync(path.join(ws, '.git/index')));
    assert.equal(parseGitIndex(good.slice(0, good.length - 30)), undefined);
    assert.equal(parseGitIndex(new TextEncoder().encode('not an index at all, not at all.')), undefined);
    const badVersion = good.slice();
    badVersion[7] = 5;
    assert.equal(parseGitIndex(badVersion), undefined);
    const tooMany = good.slice();
    tooMany[11] = tooMany[11]! + 1;
    assert.equal(parseGitIndex(tooMany), undefined);
  });

  const analyse = (command: string, cwd = ws) =>
    analyzeShell(parser, command, { cwd, home: path.join(root, 'home'), platform: 'linux', fs: nodeFileSystem });
  const rel = (p: string) => path.relative(ws, p);

  for (const version of ['2', '4']) {
    it(`git grep reads the tracked files only, never the ignored .env (index v${version})`, () => {
      git('update-index', '--index-version', version);
      const a = analyse('git grep TODO');
      assert.deepEqual(a.searches ?? [], []);
      const reads = a.reads.map(rel);
      assert.ok(reads.includes('src/app.ts') && reads.includes('README.md'), JSON.stringify(reads));
      assert.ok(!reads.some((r) => r.includes('.env') || r.includes('node_modules')), JSON.stringify(reads));
    });
  }

  it('git grep: pathspecs narrow, -C and a subdirectory are respected, a revision reads history', () => {
    assert.deepEqual(
      analyse('git grep TODO -- src')
        .reads.map(rel)
        .filter((r) => r.startsWith('src/'))
        .sort(),
      ['src', 'src/app.ts', 'src/deep/dir/name with space.ts'].filter((r) => r !== 'src').sort(),
    );
    assert.ok(!analyse('git grep TODO', path.join(ws, 'src')).reads.map(rel).includes('README.md'));
    assert.ok(analyse(`git -C ${ws}/src grep TODO`, root).reads.map(rel).includes('src/app.ts'));
    const rev = analyse('git grep TODO HEAD~2');
    assert.deepEqual([rev.reads, rev.searches ?? []], [[], []]);
  });

  it('git grep --untracked / --no-index, another index, or an earlier index change: everything below, as before', () => {
    for (const c of [
      'git grep --untracked TODO',
      'git grep --no-index TODO',
      'git --git-dir=.git grep TODO',
      'git update-index --add --cacheinfo 100644,0000000000000000000000000000000000000000,.env; git grep TODO',
      'git grep TODO | git update-index --stdin',
    ]) {
      const a = analyse(c);
      assert.ok(
        (a.searches ?? []).some((s) => s.path === ws && s.mode === 'contents'),
        `${c}: ${JSON.stringify(a.searches)}`,
      );
    }
    assert.ok((analyse('git grep TODO', path.join(root, 'home')).searches ?? []).length > 0, 'no repository');
  });

  it('git ls-files | xargs wc -l reads the tracked files it lists, not .env', () => {
    git('update-index', '--index-version', '2');
    fs.rmSync(path.join(ws, 'docs'), { recursive: true }); // a quoted name makes the listing not plain
    git('rm', '-q', '--cached', 'docs/ünïcode.md');
    const a = analyse('git ls-files | xargs -P 4 -n 1 wc -l');
    const reads = a.reads.map(rel);
    assert.ok(reads.includes('src/app.ts'), JSON.stringify(reads));
    assert.ok(!reads.some((r) => r.includes('.env')), JSON.stringify(reads));
    assert.deepEqual(
      (a.searches ?? []).filter((s) => s.mode === 'contents'),
      [],
    );
    const other = analyse('git ls-files -o | xargs wc -l');
    assert.ok(
      (other.searches ?? []).some((s) => s.path === ws && s.mode === 'contents'),
      JSON.stringify(other.searches),
    );
  });
});

describe('git diff: the work tree files it prints, from the index (issue 15)', function () {
  this.timeout(60_000);
  let parser: ShellParser;
  let root: string;
  let ws: string;
  const git = (...args: string[]) => runGit(ws, root, args);
  const put = (f: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(ws, f)), { recursive: true });
    fs.writeFileSync(path.join(ws, f), text);
  };
  const LONG_AGO = new Date('2020-01-01T00:00:00Z');
  before(async function () {
    if (!hasGit) this.skip();
    parser = await loadShellParser();
    root = makeTempDir('bulwark-git-diff-');
    ws = path.join(root, 'ws');
    for (const f of ['README.md', 'src/app.ts', 'config/credentials.json', 'notes.md', '.env']) put(f, `${f} 1\n`);
    put('.gitignore', '.env\n');
    // Older than the index git writes next, so no entry is racily clean (git would re-check those by content).
    for (const f of ['README.md', 'src/app.ts', 'config/credentials.json', 'notes.md', '.gitignore'])
      fs.utimesSync(path.join(ws, f), LONG_AGO, LONG_AGO);
    git('init', '-q');
    git('add', '.');
  });
  after(() => root && fs.rmSync(root, { recursive: true, force: true }));

  const analyse = (command: string) =>
    analyzeShell(parser, command, { cwd: path.join(ws, 'src'), home: path.join(root, 'home'), platform: 'linux', fs: nodeFileSystem });
  const reads = (command: string) => {
    const a = analyse(command);
    assert.deepEqual(a.searches ?? [], [], `${command}: ${JSON.stringify(a.searches)}`);
    return a.reads.map((p) => path.relative(ws, p)).sort();
  };

  it('reads the tracked files changed since git indexed them, in the whole work tree, never an unchanged or ignored one', () => {
    assert.deepEqual(reads('git diff'), []);
    put('src/app.ts', 'changed\n');
    fs.rmSync(path.join(ws, 'notes.md')); // a deleted file: git diff prints the content it had
    // Same size, modification time set back: the change time still tells git (and the analysis) it was written.
    put('config/credentials.json', 'config/credentials.json 2\n');
    fs.utimesSync(path.join(ws, 'config/credentials.json'), LONG_AGO, LONG_AGO);
    assert.deepEqual(reads('git diff'), ['config/credentials.json', 'notes.md', 'src/app.ts']);
    assert.deepEqual(reads('git status -vv'), ['config/credentials.json', 'notes.md', 'src/app.ts']);
    assert.deepEqual(reads('git diff HEAD~0 -- ../config'), ['config', 'config/credentials.json']);
  });

  it('staging, committing, removing or stashing on the same line keep the answer exact (git diff then prints fewer files)', () => {
    const changed = reads('git diff');
    assert.ok(changed.includes('src/app.ts'), JSON.stringify(changed));
    for (const c of [
      'git add app.ts && git diff',
      'git diff && git add -A && git commit -m x',
      'git diff; git commit -am x',
      'git diff; git stash',
    ])
      assert.deepEqual(reads(c), changed, c);
  });

  it('names only (--stat, --name-only), two revisions or --cached: no work tree content', () => {
    for (const c of [
      'git diff --stat',
      'git diff --name-only',
      'git diff main feature',
      'git diff a..b',
      'git diff --cached',
      'git status',
      'git status -v',
    ])
      assert.deepEqual(reads(c), [], c);
  });

  it('a repository with no index yet tracks nothing; an earlier change on the line or another index: everything below', () => {
    const fresh = path.join(root, 'fresh');
    fs.mkdirSync(path.join(fresh, '.git'), { recursive: true });
    fs.writeFileSync(path.join(fresh, '.env'), 'K=1\n');
    const a = analyzeShell(parser, 'git diff', { cwd: fresh, home: path.join(root, 'home'), platform: 'linux', fs: nodeFileSystem });
    assert.deepEqual([a.reads, a.searches], [[], []]);
    for (const c of [
      'touch x; git diff',
      'git --git-dir=../.git diff',
      'export GIT_INDEX_FILE=/tmp/i; git diff',
      // Index changes that may make it differ from the work tree, before or beside it (a pipeline, `&`).
      'git update-index --add --cacheinfo 100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,.env; git diff',
      'git diff | git add -N ../.env',
      'git diff & git reset',
    ]) {
      const b = analyse(c);
      assert.ok(
        b.searches.some((s) => s.mode === 'contents'),
        `${c}: ${JSON.stringify(b.searches)}`,
      );
    }
  });
});
