// Effect-based decisions (issue 14): the command table (security/shell/commands/*.yaml) and the
// workspace boundary (security/shell/boundary.yaml) checked on their own examples, and the judgement
// through the real engine: routine work runs without anyone asked, the rest is reviewed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Engine, type ActionRequest } from '../../src/engine';
import { Boundary } from '../../src/engine/effects';
import { analyzeShell, type ShellParser } from '../../src/engine/shell/analyze';
import { judgeInvocation, validateCommandTable, CommandTableError } from '../../src/engine/shell/command-effects';
import { CompiledPolicy, presetPolicy } from '../../src/engine/shield/policy';
import { MemoryStateStore } from '../../src/engine/shield/types';
import { nodeFileSystem } from '../../src/node/fs-port';
import { loadShellParser } from '../../src/node/shell-grammar';
import { buildShield } from '../../src/node/shield-setup';
import { normalizeHostSettings } from '../../src/node/host-settings';
import { loadYaml, makeTempDir, yamlFilesUnder } from './helpers/repo';

interface Entry {
  name: string;
  examples: { judged: string[]; unjudged: string[] };
}

describe('effect-based decisions', function () {
  this.timeout(60_000);
  let parser: ShellParser;
  let root: string;
  let ws: string;
  let home: string;
  before(async () => {
    parser = await loadShellParser();
    root = makeTempDir('bulwark-effects-');
    ws = path.join(root, 'ws');
    home = path.join(root, 'home');
    for (const f of [
      'src/app.ts',
      'src/old.ts',
      'src/list.txt',
      'package.json',
      'README.md',
      'a.txt',
      'b.txt',
      'build.log',
      'tsconfig.json',
      '.env',
    ]) {
      fs.mkdirSync(path.dirname(path.join(ws, f)), { recursive: true });
      fs.writeFileSync(path.join(ws, f), f === 'package.json' ? '{"name":"x"}' : 'x\n');
    }
    fs.mkdirSync(path.join(ws, '.git/hooks'), { recursive: true });
    fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
    fs.writeFileSync(path.join(home, '.ssh/id_rsa'), 'key');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  const invocationsOf = (command: string) => analyzeShell(parser, command, { cwd: ws, home, platform: 'linux', fs: nodeFileSystem });

  describe('the command table (security/shell/commands/*.yaml)', () => {
    const entries = yamlFilesUnder('security/shell/commands').flatMap((f) => loadYaml<{ commands: Entry[] }>(f).commands);
    it('names each command once across its files', () => {
      const names = entries.map((e) => e.name);
      assert.deepEqual(
        names.filter((n, i) => names.indexOf(n) !== i),
        [],
      );
    });
    for (const entry of entries) {
      it(`${entry.name}: its examples`, () => {
        for (const ex of entry.examples.judged) {
          const a = invocationsOf(ex);
          const mine = a.invocations.filter((i) => i.name === entry.name);
          assert.ok(mine.length > 0, `\`${ex}\` runs ${entry.name}: ${JSON.stringify(a.invocations)}`);
          for (const inv of mine) assert.ok(judgeInvocation(inv).effect, `\`${ex}\` must be judged: ${judgeInvocation(inv).why}`);
        }
        for (const ex of entry.examples.unjudged) {
          const a = invocationsOf(ex);
          const judged = a.invocations.filter((i) => i.name === entry.name).every((i) => judgeInvocation(i).effect);
          assert.ok(a.opaque || !judged, `\`${ex}\` must not be judged`);
        }
      });
    }

    it('refuses a malformed table instead of widening what it allows', () => {
      const ok = { name: 'ls', effect: 'analysed', examples: { judged: ['ls'], unjudged: [] } };
      for (const [bad, msg] of [
        [{ version: 2, commands: [ok] }, /version must be 1/],
        [{ version: 1, commands: [] }, /non-empty/],
        [{ version: 1, commands: [ok, ok] }, /listed twice/],
        [{ version: 1, commands: [{ ...ok, effect: 'harmless' }] }, /effect must be one of/],
        [{ version: 1, commands: [{ ...ok, allow: true }] }, /unknown key `allow`/],
        [{ version: 1, commands: [{ name: 'x', examples: ok.examples }] }, /needs an effect, subcommands or cases/],
        [{ version: 1, commands: [{ name: 'git', subcommands: { push: 'fine' }, examples: ok.examples }] }, /`git push`: effect must be/],
        [
          { version: 1, commands: [{ name: 'x', cases: [{ effect: 'analysed' }], examples: ok.examples }] },
          /exactly one of only_args, with_option/,
        ],
      ] as const) {
        assert.throws(
          () => validateCommandTable(bad),
          (e: unknown) => e instanceof CommandTableError && (msg as RegExp).test(e.message),
          JSON.stringify(bad),
        );
      }
    });

    it('tells network use it can name from use it cannot (npm install beside curl URL)', () => {
      assert.equal(invocationsOf('curl -s https://example.com/a').unnamedNetwork, false);
      assert.equal(invocationsOf('npm install && curl -s https://example.com/a').unnamedNetwork, true);
      assert.equal(invocationsOf('git fetch origin').unnamedNetwork, true);
      assert.equal(invocationsOf('ls').unnamedNetwork, false);
    });

    it("judges a program named by a path below the working directory as the project's code, any other path not at all", () => {
      for (const c of ['./scripts/test.sh', 'scripts/build.sh --fast', 'node_modules/.bin/tsc --noEmit']) {
        const inv = invocationsOf(c).invocations[0]!;
        assert.equal(judgeInvocation(inv).effect, 'runs_project_code', c);
      }
      for (const c of ['../other/run.sh', '~/bin/tool', '/opt/tool/bin/run', 'src/../../x.sh']) {
        const inv = invocationsOf(c).invocations[0]!;
        assert.equal(judgeInvocation(inv).effect, undefined, c);
      }
    });

    it("reads a shell's options only before its script (`bash x.sh -c` passes -c to the script)", () => {
      assert.equal(judgeInvocation(invocationsOf('bash scripts/x.sh -c ls').invocations[0]!).effect, 'runs_project_code');
      assert.equal(judgeInvocation(invocationsOf("bash -c 'ls'").invocations[0]!).effect, 'analysed');
      assert.throws(
        () =>
          validateCommandTable({
            version: 1,
            commands: [{ name: 'x', effect: 'analysed', options_first: 'yes', examples: { judged: ['x'], unjudged: [] } }],
          }),
        /options_first must be true or false/,
      );
    });

    it('judges a wrapper only as one that adds nothing, and a privilege wrapper not at all', () => {
      const sudo = invocationsOf('sudo ls').invocations;
      assert.ok(
        sudo.some((i) => !judgeInvocation(i).effect),
        JSON.stringify(sudo),
      );
      const timeout = invocationsOf('timeout 5 ls').invocations;
      assert.ok(
        timeout.every((i) => judgeInvocation(i).effect),
        JSON.stringify(timeout),
      );
    });
  });

  describe('the workspace boundary (security/shell/boundary.yaml)', () => {
    const table = loadYaml<{ harmless_reads: { path: string; examples: { inside: string[]; outside: string[] } }[] }>(
      'security/shell/boundary.yaml',
    );
    it('every harmless location reads as inside and its neighbours as outside', () => {
      const b = new Boundary({ platform: 'linux', home: '/home/u', workspaceRoots: ['/work/app'] });
      for (const h of table.harmless_reads) {
        for (const p of h.examples.inside) assert.ok(b.canRead(p.replace(/^~/, '/home/u')), `${p} (${h.path}) inside`);
        for (const p of h.examples.outside) assert.ok(!b.canRead(p.replace(/^~/, '/home/u')), `${p} (${h.path}) outside`);
      }
      assert.ok(b.canRead('/work/app/src/a.ts') && b.canWrite('/work/app/src/a.ts'));
      assert.ok(!b.canWrite('/usr/share/doc/x'), 'harmless to read is not writable');
      assert.ok(!b.canRead('/work/application/x'), 'a sibling with a common prefix is outside');
    });
    it('extra read roots widen reads only', () => {
      const b = new Boundary({ platform: 'linux', home: '/home/u', workspaceRoots: ['/work/app'], extraReadRoots: ['/work/lib'] });
      assert.ok(b.canRead('/work/lib/src/x.ts'));
      assert.ok(!b.canWrite('/work/lib/src/x.ts'));
    });
    it('builds on Windows without the POSIX locations', () => {
      const b = new Boundary({ platform: 'win32', home: 'C:/Users/u', workspaceRoots: ['C:/work/app'] });
      assert.ok(b.canRead('C:/work/app/src/a.ts'));
      assert.ok(!b.canRead('C:/Windows/System32/drivers/etc/hosts'));
    });
  });

  describe('through the engine (default policy, no Tier 2: what runs without anyone asked)', () => {
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
    const run = (command: string, extra: Partial<ActionRequest> = {}) =>
      engine.check({ type: 'execute_command', payload: { command }, sessionId: 'e', cwd: ws, ...extra });

    // The list of commands that must run without asking anyone.
    for (const command of [
      'ls -la',
      'cat src/app.ts',
      'grep -rn TODO src',
      'git status',
      'git log --oneline -20',
      'git diff',
      "find . -name '*.ts'",
      'wc -l src/app.ts',
      'head src/app.ts',
      'tail -n 5 build.log',
      'jq . package.json',
      'node --version',
      'tsc --noEmit',
    ]) {
      it(`allows \`${command}\` with no one asked, and says which effects it judged`, async () => {
        const d = await run(command);
        assert.equal(d.decision, 'allow', d.reason);
        assert.ok(d.tier <= 1, `tier ${d.tier}`);
        assert.match(d.reason, /effects are (inspect|workspace write)/);
      });
    }

    it('leaves a protected file below a search to the sandbox to hide: allowed inside it (the decision names the file), refused outside it', async () => {
      const inside = await run('grep -r import .', { sandboxed: true });
      assert.equal(inside.decision, 'allow', inside.reason);
      assert.deepEqual(inside.sandboxHides, [{ path: path.join(ws, '.env'), ruleId: 'deny.any.env_file' }]);
      assert.match(inside.reason, /the OS sandbox hides .*\.env from it/);
      const outside = await run('grep -r import .');
      assert.equal(outside.decision, 'block', outside.reason);
      assert.deepEqual(outside.rules, ['deny.any.env_file']);
      assert.equal(outside.sandboxHides, undefined);
    });

    it("printing the environment is harmless inside the sandbox (its environment has no secrets), refused outside it; another process's environ file stays refused", async () => {
      for (const command of ['printenv', 'ps auxe', 'printenv | sort']) {
        const inside = await run(command, { sandboxed: true });
        assert.equal(inside.decision, 'allow', `${command}: ${inside.reason}`);
        assert.match(inside.reason, /environment, which the OS sandbox gives it without secrets/);
        assert.equal((await run(command)).decision, 'block', command);
      }
      for (const command of ['cat /proc/1/environ', 'printenv; cat /proc/self/environ'])
        assert.equal((await run(command, { sandboxed: true })).decision, 'block', command);
    });

    it('never leaves to the sandbox a protected file the command names, a search of a protected directory, or one outside the workspace', async () => {
      for (const command of ['cat .env', 'grep -r KEY .env', 'grep -r PRIVATE ~', `grep -r PRIVATE ${home}/.ssh`]) {
        const d = await run(command, { sandboxed: true });
        assert.equal(d.decision, 'block', `${command}: ${d.reason}`);
        assert.equal(d.sandboxHides, undefined, command);
      }
    });

    it("runs the project's code without asking only inside the sandbox", async () => {
      for (const command of ['npm test', 'make', 'pytest -x tests']) {
        assert.equal((await run(command)).decision, 'escalate', command);
        const inside = await run(command, { sandboxed: true });
        assert.equal(inside.decision, 'allow', `${command}: ${inside.reason}`);
      }
    });

    for (const [command, why] of [
      ['sudo ls', /sudo/],
      ['curl https://example.com/install.sh', /network/],
      ['npm install left-pad', /network/],
      ['frobnicate --all', /not in the command table/],
      ['cat /srv/other/notes.txt', /outside the workspace/],
      ['git -c core.pager=evil log', /opaque|can do more than the analysis sees/],
      ['rm -rf src', /workspace delete/],
      ['ls > /var/tmp/listing.txt', /outside the workspace/],
      ['git commit -m x', /git commit/],
    ] as const) {
      it(`reviews \`${command}\` (${why.source})`, async () => {
        const d = await run(command);
        assert.notEqual(d.decision, 'allow', d.reason);
        assert.match(d.reason, why);
      });
    }

    it('never takes a program named by its path, or one found through a changed PATH, for the system command of that name', async () => {
      for (const c of [
        './ls',
        'bin/cat src/app.ts',
        `${ws}/ls`,
        'PATH=./bin:$PATH ls',
        'export PATH=./bin:$PATH; ls',
        'PATH=bin ls -la',
        'declare -x PATH=./bin; ls',
      ]) {
        const d = await run(c);
        assert.notEqual(d.decision, 'allow', `${c}: ${d.reason}`);
      }
      const system = await run('/usr/bin/ls -la');
      assert.equal(system.decision, 'allow', system.reason);
    });

    it('never judges a protected or credential read harmless', async () => {
      assert.equal((await run('cat .env')).decision, 'block');
      assert.equal((await run(`cat ${home}/.ssh/id_rsa`)).decision, 'block');
      const hooks = await run('ls .git/hooks');
      assert.equal(hooks.decision, 'allow', 'listing is a read, and reading hooks is allowed');
      assert.notEqual((await run('touch .git/hooks/pre-commit')).decision, 'allow');
    });

    describe('false blocks fixed: reviewed or approved, not refused (issue 14)', () => {
      it('git clean -fdx is a review that says it removes ignored files such as .env', async () => {
        const d = await run('git clean -fdx');
        assert.equal(d.decision, 'escalate', d.reason);
        assert.ok(d.rules.includes('shell.review'), d.rules.join());
        assert.match(d.reason, /ignored ones too \(such as \.env/);
        assert.ok(fs.existsSync(path.join(ws, '.env')), 'nothing ran');
      });
      it('one plain git setting is a review; a setting or alias that runs commands is not', async () => {
        for (const c of [
          'git config --global alias.co checkout',
          'git config user.name "Ann Example"',
          'git config --global pull.rebase true',
        ]) {
          const d = await run(c);
          assert.equal(d.decision, 'escalate', `${c}: ${d.reason}`);
          assert.ok(d.rules.includes('shell.review'), `${c}: ${d.rules.join()}`);
        }
        for (const c of [
          `git config --global alias.x '!sh -c evil'`,
          'git config --global core.pager "sh -c evil"',
          'git config --global --edit',
          'git config --global --add include.path /tmp/x',
        ]) {
          const d = await run(c);
          assert.ok(!d.rules.includes('shell.review') || d.decision === 'block' || d.minTier >= 2, `${c}: ${d.decision} ${d.rules.join()}`);
          assert.notEqual(d.decision, 'allow', c);
          assert.ok(d.decision === 'block' || d.rules.includes('shell.opaque'), `${c} is refused or opaque: ${d.rules.join()}`);
        }
      });
      it('ssh-keygen of a new key pair in ~/.ssh needs a human; over an existing key or authorized_keys it stays blocked', async () => {
        const fresh = await run(`ssh-keygen -t ed25519 -f ${home}/.ssh/id_new -N ''`);
        assert.equal(fresh.decision, 'escalate', fresh.reason);
        assert.equal(fresh.minTier, 3);
        assert.ok(fresh.rules.includes('shell.approval'), fresh.rules.join());
        for (const c of [`ssh-keygen -f ${home}/.ssh/id_rsa`, `ssh-keygen -f ${home}/.ssh/authorized_keys`])
          assert.equal((await run(c)).decision, 'block', c);
      });
      it('a database client on a loopback port the user allowed is reviewed, not refused as loopback', async () => {
        const allowed = new Engine({
          platform: 'linux',
          home,
          workspaceRoots: [ws],
          fs: nodeFileSystem,
          shellParser: parser,
          ssrfPolicy: { allowLoopbackPorts: [3306] },
          shield: buildShield({
            policy: 'default',
            ifc: 'default',
            store: new MemoryStateStore(),
            home,
            platform: 'linux',
            mode: 'report',
          }),
        });
        const check = (command: string) => allowed.check({ type: 'execute_command', payload: { command }, sessionId: 'db', cwd: ws });
        assert.equal((await check('mysql -h localhost -P 3306')).decision, 'escalate');
        assert.equal((await check('mysql -h 127.0.0.1')).decision, 'escalate', 'the default port 3306');
        assert.equal((await check('mysql -h localhost -P 3307')).decision, 'block');
        assert.equal((await check('psql -h localhost')).decision, 'block', 'psql defaults to 5432, not allowed');
      });
    });

    it('a command with no working directory is not judged (git status of which repository?)', async () => {
      const d = await engine.check({ type: 'execute_command', payload: { command: 'git status' }, sessionId: 'e' });
      assert.notEqual(d.decision, 'allow', d.reason);
    });
  });

  it('the bulwark.boundary.extraReadRoots setting keeps absolute directories and reports the rest', () => {
    const { settings, problems } = normalizeHostSettings((k) =>
      k === 'boundary.extraReadRoots' ? ['/srv/lib', 'relative/dir', '/', 42, '/srv/lib/'] : undefined,
    );
    assert.deepEqual(settings.extraReadRoots, ['/srv/lib']);
    assert.equal(problems.filter((p) => p.includes('boundary.extraReadRoots')).length, 3, problems.join('\n'));
    assert.deepEqual(normalizeHostSettings((k) => (k === 'boundary.extraReadRoots' ? '/srv/lib' : undefined)).settings.extraReadRoots, []);
  });

  it('a rule that names effects never matches an action nobody judged (fail closed)', () => {
    const p = new CompiledPolicy(presetPolicy('default'), 'default', { home: '/home/u', platform: 'linux' });
    const r = p.evaluate('execute_command', []);
    assert.equal(r.decision, 'escalate');
    assert.equal(r.rule, 'policy.verify.verify_shell_commands');
  });
});
