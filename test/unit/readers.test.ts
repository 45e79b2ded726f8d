// Commands that read their operands (security/shell/commands/files.yaml): what the analysis reports
// for them, exactly, and the engine's decision where the protection check takes part (rg and ag
// skip hidden entries below what they search, unless an ignore file may re-include some).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Engine } from '../../src/engine';
import { analyzeShell, type ShellAnalysis, type ShellParser } from '../../src/engine/shell/analyze';
import { MemoryStateStore } from '../../src/engine/shield/types';
import { nodeFileSystem } from '../../src/node/fs-port';
import { loadShellParser } from '../../src/node/shell-grammar';
import { buildShield } from '../../src/node/shield-setup';
import { makeTempDir } from './helpers/repo';

describe('readers of their operands', function () {
  this.timeout(60_000);
  let parser: ShellParser;
  let root: string;
  let ws: string;
  let home: string;
  before(async () => {
    parser = await loadShellParser();
    root = makeTempDir('bulwark-readers-');
    ws = path.join(root, 'ws');
    home = path.join(root, 'home');
    for (const f of ['src/app.ts', 'src/list.txt', 'README.md', '.env', '.github/workflows/ci.yml', 'checksums.sha256']) {
      fs.mkdirSync(path.dirname(path.join(ws, f)), { recursive: true });
      fs.writeFileSync(
        path.join(ws, f),
        f === 'checksums.sha256' ? 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  src/app.ts\n' : 'x\n',
      );
    }
    fs.mkdirSync(home, { recursive: true });
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  const analyse = (command: string, cwd = ws) => analyzeShell(parser, command, { cwd, home, platform: 'linux', fs: nodeFileSystem });
  const searches = (a: ShellAnalysis) =>
    a.searches.map(
      (s) =>
        `${s.mode} ${path.relative(ws, s.path) || '.'}${s.names ? ` [${s.names.join(',')}]` : ''}${s.skipsHidden ? ' skips-hidden' : ''}`,
    );
  const rel = (ps: readonly string[]) => ps.map((p) => path.relative(ws, p) || '.');

  describe('rg and ag: hidden entries', () => {
    it('a default search skips hidden entries below what it searches', () => {
      assert.deepEqual(searches(analyse('rg TODO')), ['contents . skips-hidden']);
      assert.deepEqual(searches(analyse('rg -l TODO src')), ['contents src skips-hidden']);
      assert.deepEqual(searches(analyse('rg --files')), ['names . skips-hidden']);
      assert.deepEqual(searches(analyse("rg -g '!*.min.js' TODO")), ['contents . skips-hidden']);
      assert.deepEqual(searches(analyse('rg -u TODO')), ['contents . skips-hidden'], '-u once is --no-ignore only');
      assert.deepEqual(searches(analyse('ag TODO lib')), ['contents lib skips-hidden']);
      assert.deepEqual(searches(analyse('ag -g spec')), ['names . skips-hidden']);
    });
    it('options that read hidden entries, or whitelist names, make it read them', () => {
      for (const c of [
        'rg --hidden TODO',
        'rg -. TODO',
        'rg -uu TODO',
        'rg -u -u TODO',
        'rg -nuu TODO',
        'rg --unrestricted --unrestricted TODO',
        'rg -u --unrestricted TODO',
        "rg -g '*' TODO",
        "rg --glob '*.env' TODO",
        "rg --iglob '*' TODO",
        'rg -t ts TODO',
        'rg --type=ts TODO',
        'rg --ignore-file my.ignore TODO',
        'ag --hidden TODO',
        'ag -u TODO',
        'ag --unrestricted TODO',
        'ag -a TODO',
        'ag -p my.ignore TODO',
        'ack TODO',
        'grep -r TODO .',
      ]) {
        const s = analyse(c).searches;
        assert.ok(s.length > 0 && s.every((x) => !x.skipsHidden), `${c}: ${JSON.stringify(s)}`);
      }
    });
    it('two searches of one directory skip hidden entries only when both do', () => {
      assert.deepEqual(searches(analyse('rg TODO; rg --hidden FIXME')), ['contents .']);
      assert.deepEqual(searches(analyse('rg TODO; rg FIXME')), ['contents . skips-hidden']);
    });
    it('a hidden operand is read, and a glob operand is searched whole', () => {
      const a = analyse('rg TODO .env .github');
      assert.deepEqual(rel(a.reads), ['.env', '.github']);
      assert.deepEqual(searches(a), ['contents .env skips-hidden', 'contents .github skips-hidden']);
    });
    it('a ripgrep config named on the command line is opaque (it may add --pre or --hidden)', () => {
      assert.equal(analyse('RIPGREP_CONFIG_PATH=rg.conf rg TODO').opaque, true);
      assert.equal(analyse('export RIPGREP_CONFIG_PATH=rg.conf; rg TODO').opaque, true);
    });
  });

  describe('rg and ag through the engine', () => {
    let engine: Engine;
    before(() => {
      engine = new Engine({
        platform: 'linux',
        home,
        workspaceRoots: [ws],
        fs: nodeFileSystem,
        shellParser: parser,
        shield: buildShield({ policy: 'default', ifc: 'default', store: new MemoryStateStore(), home, platform: 'linux', mode: 'report' }),
      });
    });
    const run = (command: string) => engine.check({ type: 'execute_command', payload: { command }, sessionId: 'r', cwd: ws });
    it('allows a default search of a workspace with a .env (never read)', async () => {
      for (const c of ['rg TODO', 'rg -l TODO', 'ag TODO', 'rg --files', 'fd test', 'ag -g spec']) {
        const d = await run(c);
        assert.equal(d.decision, 'allow', `${c}: ${d.reason}`);
      }
    });
    it('blocks one that reads hidden entries', async () => {
      for (const c of [
        'rg --hidden TODO',
        'rg -uu TODO',
        "rg -g '*' TODO",
        'ag -u TODO',
        'ack TODO',
        'rg TODO .env',
        'rg TODO; rg --hidden x',
      ]) {
        const d = await run(c);
        assert.equal(d.decision, 'block', `${c}: ${d.reason}`);
        assert.ok(d.rules.includes('deny.any.env_file'), `${c}: ${d.rules.join(',')}`);
      }
    });
    it('blocks a default search when an ignore file may re-include hidden entries (`!` lines)', async () => {
      for (const [file, text] of [
        ['.gitignore', 'node_modules\n!.env\n'],
        ['src/.ignore', '!*\n'],
        ['.git/info/exclude', '!.env\n'],
        ['.fdignore', '  !.env\n'],
      ] as const) {
        const at = path.join(ws, file);
        fs.mkdirSync(path.dirname(at), { recursive: true });
        fs.writeFileSync(at, text);
        try {
          const d = await run('rg TODO');
          assert.equal(d.decision, 'block', `${file}: ${d.reason}`);
        } finally {
          fs.rmSync(at);
        }
      }
      fs.writeFileSync(path.join(ws, '.gitignore'), 'node_modules\n*.log\n');
      try {
        assert.equal((await run('rg TODO')).decision, 'allow', 'an ignore file without `!` lines');
      } finally {
        fs.rmSync(path.join(ws, '.gitignore'));
      }
    });
    it("blocks one when the user's global git excludes may re-include hidden entries", async () => {
      fs.writeFileSync(path.join(home, '.gitconfig'), '[core]\n\texcludesfile = ~/.gitignore_global\n');
      fs.writeFileSync(path.join(home, '.gitignore_global'), '!.env*\n');
      try {
        assert.equal((await run('rg TODO')).decision, 'block');
        fs.writeFileSync(path.join(home, '.gitignore_global'), '.DS_Store\n');
        assert.equal((await run('rg TODO')).decision, 'allow');
        fs.appendFileSync(path.join(home, '.gitconfig'), '[include]\n\tpath = ~/.gitconfig.local\n');
        assert.equal((await run('rg TODO')).decision, 'block', 'an included configuration may name another excludes file');
      } finally {
        fs.rmSync(path.join(home, '.gitconfig'));
        fs.rmSync(path.join(home, '.gitignore_global'));
      }
    });
  });

  describe('awk', () => {
    const opaque = (c: string) => analyse(c).opaque;
    it('reads its file operands; `var=value` operands are assignments', () => {
      const a = analyse("awk -F, '{print $1}' FS=: src/list.txt OFS=';' README.md");
      assert.deepEqual(rel(a.reads), ['README.md', 'src/list.txt']);
      assert.equal(a.opaque, false);
      assert.deepEqual(a.writes, []);
    });
    it('comparisons and logical or are not redirections or pipes', () => {
      for (const c of [
        "awk '$3 > 100 {print $1}' a",
        "awk '($10 >= 10 && $10 <= 100)' a",
        "awk '/a|b/ || NR == 1' a",
        "awk '{print $1 >= 3}' a",
        "awk '{if ($1 > 2) print $1}' a",
      ])
        assert.equal(opaque(c), false, c);
    });
    it('is opaque where the program reaches beyond its operands', () => {
      for (const c of [
        'awk \'{ getline line < "/etc/shadow"; print line }\' a',
        'awk \'{ "date" | getline d }\' a',
        "awk '{getline}' a",
        'awk \'BEGIN { system("id") }\'',
        'awk \'{print | "sh"}\' a',
        'awk \'{print |& "sh"}\' a',
        'awk \'{print > "out.txt"}\' a',
        'awk \'{printf "%s", $1 >> "o"}\' a',
        'awk \'{print "a;b" > "o"}\' a',
        'awk \'/"/ {print $1 > "o"} /"/\' a',
        'awk \'/"/; system("id"); /"/\' a',
        'awk \'{print $1, \n $2 > "o"}\' a',
        'awk \'{print $1 \\\n > "o"}\' a',
        "awk '{print $1; if ($2 > 3) x = 1}' a",
        'gawk \'@include "lib.awk"; {print}\' a',
        'gawk \'@load "filefuncs"\'',
        'gawk \'BEGIN { f = "system"; @f("id") }\'',
        'awk \'BEGIN { ARGV[1] = ".env"; ARGC = 2 } {print}\'',
        'gawk \'BEGIN { print PROCINFO["pid"] }\'',
        'awk \'{close("x")}\' a',
        'gawk -i lib.awk 1 a',
        'gawk -l ./ext.so 1 a',
        'awk "$PROG" a',
      ])
        assert.equal(opaque(c), true, c);
    });
    it('ENVIRON is a read of the environment', () => {
      assert.ok(analyse('awk \'BEGIN { print ENVIRON["TOKEN"] }\'').reads.includes('/proc/self/environ'));
    });
    it("gawk's profile and dump files are written", () => {
      assert.deepEqual(rel(analyse("gawk --profile '{print}' a").writes), ['awkprof.out']);
      assert.deepEqual(rel(analyse("gawk -d '{print}' a").writes), ['awkvars.out']);
      assert.deepEqual(rel(analyse("gawk -pprof.txt '{print}' a").writes), ['prof.txt']);
    });
  });

  describe('checksum lists (-c)', () => {
    it('reads the list and each file it names', () => {
      const a = analyse('sha256sum -c checksums.sha256');
      assert.deepEqual(rel(a.reads), ['checksums.sha256', 'src/app.ts']);
      assert.equal(a.opaque, false);
      assert.deepEqual(rel(analyse("echo 'd41d8cd98f00b204e9800998ecf8427e  .env' | md5sum -c").reads), ['.env']);
      assert.deepEqual(rel(analyse("echo 'SHA1 (README.md) = da39a3ee5e6b4b0d3255bfef95601890afd80709' | sha1sum --check").reads), [
        'README.md',
      ]);
      assert.deepEqual(rel(analyse("md5sum -c - <<< 'd41d8cd98f00b204e9800998ecf8427e *src/list.txt'").reads), ['src/list.txt']);
    });
    it('is opaque when the list cannot be read or has names it does not model', () => {
      for (const c of [
        'md5sum -c missing.md5',
        'cat checksums.sha256 | sha256sum -c',
        'md5sum -c "$L"',
        'sha256sum -c -z checksums.sha256',
        "echo '\\d41d8cd98f00b204e9800998ecf8427e  a\\nb' | md5sum -c",
      ])
        assert.equal(analyse(c).opaque, true, c);
    });
  });

  describe('binary inspectors', () => {
    it('read their operands; nm and size read a.out without any', () => {
      assert.deepEqual(rel(analyse('strings -n 8 -t x src/app.ts').reads), ['src/app.ts']);
      assert.deepEqual(rel(analyse('nm --extern-only').reads), ['a.out']);
      assert.deepEqual(rel(analyse('size -A src/app.ts').reads), ['src/app.ts']);
      assert.deepEqual(rel(analyse('readelf -x .text -w src/app.ts').reads), ['src/app.ts']);
      assert.deepEqual(rel(analyse('objdump -d -j .text -M intel src/app.ts').reads), ['src/app.ts']);
    });
    it('a response file or a plugin is opaque', () => {
      for (const c of ['strings @opts.txt', 'nm @opts.txt src/app.ts', 'nm --plugin ./p.so src/app.ts', 'objdump -d @o'])
        assert.equal(analyse(c).opaque, true, c);
      assert.deepEqual(rel(analyse('strings @opts.txt').reads), ['opts.txt']);
    });
  });

  describe('fd, gofmt, shellcheck', () => {
    it('fd lists names below its paths, skipping hidden entries unless -H/-u', () => {
      assert.deepEqual(searches(analyse('fd test')), ['names . skips-hidden']);
      assert.deepEqual(searches(analyse('fd -e ts test src docs')), ['names docs skips-hidden', 'names src skips-hidden']);
      assert.deepEqual(searches(analyse('fd -t d -E node_modules -d 2 test')), ['names . skips-hidden']);
      assert.deepEqual(searches(analyse('fd -HI test')), ['names .']);
      assert.deepEqual(searches(analyse('fd -u test src')), ['names src']);
      assert.deepEqual(searches(analyse('fdfind --base-directory src test')), ['names src skips-hidden']);
      assert.equal(analyse('fd -e ts -x rm').opaque, true);
      assert.equal(analyse('fd -X cat').opaque, true);
    });
    it('gofmt reads Go files (below directories: *.go only); -w writes them', () => {
      const a = analyse("gofmt -l -r 'a -> b' main.go src");
      assert.deepEqual(rel(a.reads), ['main.go', 'src']);
      assert.deepEqual(searches(a), ['contents src [*.go]']);
      assert.deepEqual(a.writes, []);
      assert.deepEqual(rel(analyse('gofmt -w main.go').writes), ['main.go']);
      assert.equal(analyse('gofmt -w src').opaque, true);
      assert.deepEqual(rel(analyse('gofmt -cpuprofile prof.out main.go').writes), ['prof.out']);
    });
    it('shellcheck reads its scripts and an rc file it is given', () => {
      assert.deepEqual(rel(analyse('shellcheck -s sh -e SC1009 -f gcc --rcfile rc a.sh b.sh').reads), ['a.sh', 'b.sh', 'rc']);
      assert.equal(analyse("SHELLCHECK_OPTS='-a -x' shellcheck a.sh").opaque, true);
    });
  });

  describe('jq and yq: the environment, modules, files', () => {
    it('env and $ENV read the environment; modules, -L and unreadable program files are opaque', () => {
      for (const c of [
        'jq -n env',
        "jq -n '$ENV'",
        "jq -n '$ENV.HOME'",
        'jq -n env.HOME',
        "yq -n 'env(HOME)'",
        "yq -n 'strenv(TOKEN)'",
        "yq '.a = envsubst' x.yaml",
      ]) {
        assert.ok(analyse(c).reads.includes('/proc/self/environ'), c);
      }
      for (const c of [
        'jq -n \'import "tokens" as $t; $t\'',
        'jq -L /tmp -n \'include "x"; 1\'',
        'jq -L/tmp .',
        'jq -f missing.jq package.json',
        'yq -n \'load("/etc/hosts")\'',
        'yq -n \'load_str("x")\'',
        'yq -n \'eval("x")\'',
        'yq -s .name x.yaml',
      ]) {
        assert.equal(analyse(c).opaque, true, c);
      }
      fs.writeFileSync(path.join(ws, 'prog.jq'), '$ENV | keys');
      try {
        assert.ok(analyse('jq -n -f prog.jq').reads.includes('/proc/self/environ'), 'a program file that prints the environment');
      } finally {
        fs.rmSync(path.join(ws, 'prog.jq'));
      }
    });
    it('reads the files jq --rawfile/--slurpfile and yq name', () => {
      assert.deepEqual(rel(analyse("jq -n --rawfile t README.md --slurpfile s a.json '$t'").reads), ['README.md', 'a.json']);
      assert.deepEqual(rel(analyse('yq eval config.yaml').reads), ['config.yaml']);
      assert.deepEqual(rel(analyse("yq '.a' x.yaml y.yaml").reads), ['x.yaml', 'y.yaml']);
      const w = analyse("yq -i '.a = 1' x.yaml");
      assert.deepEqual([rel(w.reads), rel(w.writes)], [['x.yaml'], ['x.yaml']]);
    });
  });

  describe('tar', () => {
    it('a remote archive is opaque; listing reads the archive only', () => {
      assert.equal(analyse('tar -tf host:/x.tar').opaque, true);
      assert.equal(analyse("TAR_OPTIONS='--to-command=sh' tar -xf a.tar -O").opaque, true);
      assert.equal(analyse('tar --force-local -tf a:b.tar').opaque, false);
      const a = analyse('tar tvf dist/app.tar');
      assert.deepEqual([rel(a.reads), a.writes, a.opaque], [['dist/app.tar'], [], false]);
    });
  });

  describe('ack', () => {
    it('reads everything below, dotfiles included; a project .ackrc is opaque', () => {
      const a = analyse('ack useState src');
      assert.deepEqual([searches(a), a.opaque], [['contents src'], false]);
      fs.writeFileSync(path.join(ws, '.ackrc'), '--files-from=list.txt\n');
      try {
        assert.equal(analyse('ack useState src').opaque, true);
        assert.equal(analyse('ack useState src', path.join(ws, 'src')).opaque, true, 'an .ackrc above the working directory');
        assert.equal(analyse('ack --noenv useState src').opaque, false);
      } finally {
        fs.rmSync(path.join(ws, '.ackrc'));
      }
      fs.writeFileSync(path.join(home, '.ackrc'), '--smart-case\n');
      try {
        assert.equal(analyse('ack useState', home).opaque, false, "the user's own ~/.ackrc");
      } finally {
        fs.rmSync(path.join(home, '.ackrc'));
      }
    });
  });

  describe('ruff', () => {
    it('reads the Python files below its paths and writes its cache', () => {
      const a = analyse('ruff check --select ALL src');
      assert.deepEqual(searches(a), ['contents src [*.py,*.pyi,*.ipynb,pyproject.toml]']);
      assert.deepEqual(rel(a.writes), ['.ruff_cache']);
      assert.equal(a.opaque, false);
      assert.deepEqual(analyse('ruff format --check --no-cache').writes, []);
      assert.deepEqual(searches(analyse('ruff format --diff --no-cache')), ['contents . [*.py,*.pyi,*.ipynb,pyproject.toml]']);
      assert.deepEqual(rel(analyse('ruff check -o report.txt --no-cache app.py').reads), ['app.py']);
    });
    it('reads every file below when a configuration widens include; cache-dir and extend are opaque', () => {
      fs.writeFileSync(path.join(ws, 'src/ruff.toml'), 'extend-include = ["*.txt"]\n');
      try {
        assert.deepEqual(searches(analyse('ruff check --no-cache src')), ['contents src']);
        assert.deepEqual(searches(analyse('ruff check --no-cache .')), ['contents .'], 'a nested configuration');
      } finally {
        fs.rmSync(path.join(ws, 'src/ruff.toml'));
      }
      assert.deepEqual(searches(analyse(`ruff check --no-cache --config "include=['*']" src`)), ['contents src']);
      for (const [file, text] of [
        ['pyproject.toml', '[tool.ruff]\ncache-dir = "~/.config/autostart"\n'],
        ['.ruff.toml', 'extend = "/tmp/other.toml"\n'],
      ]) {
        fs.writeFileSync(path.join(ws, file), text);
        try {
          assert.equal(analyse('ruff check src').opaque, true, file);
        } finally {
          fs.rmSync(path.join(ws, file));
        }
      }
    });
    it('fixing or formatting a directory is opaque; a file is written', () => {
      assert.equal(analyse('ruff check --fix src').opaque, true);
      assert.equal(analyse('ruff format').opaque, true);
      assert.deepEqual(rel(analyse('ruff format --no-cache app.py').writes), ['app.py']);
    });
  });
});
