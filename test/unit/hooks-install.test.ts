// `bulwark hooks install|uninstall|status` on temporary homes and workspaces (real files): client
// files edited in place, uninstall restoring them byte for byte, idempotent re-installs, refusals
// that write nothing, tamper detection, and the installed command run for real.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { parse as parseJsonc } from 'jsonc-parser';
import type { AgentId } from '../../src/engine/agents/types';
import { runHooks } from '../../src/cli/hooks';
import {
  applyPlan,
  detectClients,
  hooksStatus,
  manifestPath,
  planInstall,
  planUninstall,
  readManifest,
  repairWrapper,
  type HooksContext,
  type InstallOptions,
} from '../../src/node/hooks/install';
import { makeTempDir, repoRoot } from './helpers/repo';

const ALL: AgentId[] = ['claude', 'codex', 'gemini', 'copilot-cli', 'vscode'];

/** Every file under `dir` with its bytes (directories as null), for before/after comparisons. */
function snapshot(dir: string): Map<string, Buffer | null> {
  const out = new Map<string, Buffer | null>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        out.set(p, null);
        walk(p);
      } else out.set(p, fs.readFileSync(p));
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out;
}

function assertSameTree(before: Map<string, Buffer | null>, after: Map<string, Buffer | null>): void {
  assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort(), 'the same files and directories');
  for (const [p, b] of before) {
    const a = after.get(p);
    if (b === null) assert.equal(a, null, p);
    else assert.ok(a && Buffer.compare(a, b) === 0, `${p} is byte-identical`);
  }
}

/** A client file's content (JSONC: comments and trailing commas allowed, as the clients read it). */
const json = (file: string) => parseJsonc(fs.readFileSync(file, 'utf8'), [], { allowTrailingComma: true });

describe('hooks install / uninstall / status', function () {
  this.timeout(20000);
  let tmp: string;
  let n = 0;
  let fakeNode: string;
  let fakeCli: string;

  /** A fresh home + workspace + state dir, with a context pointing the wrapper at existing files. */
  function setup(): {
    home: string;
    ws: string;
    ctx: HooksContext;
    opts: (agents: AgentId[], extra?: Partial<InstallOptions>) => InstallOptions;
  } {
    const root = path.join(tmp, `t${n++}`);
    const home = path.join(root, 'home');
    const ws = path.join(root, 'ws');
    fs.mkdirSync(home, { recursive: true });
    fs.mkdirSync(ws, { recursive: true });
    const ctx: HooksContext = { home, stateDir: path.join(home, '.bulwark'), env: { PATH: '' }, platform: 'linux' };
    return {
      home,
      ws,
      ctx,
      opts: (agents, extra = {}) => ({ ...ctx, agents, scope: 'user', timeoutSeconds: 60, node: fakeNode, cli: fakeCli, ...extra }),
    };
  }
  const install = (o: InstallOptions) => applyPlan(planInstall(o));

  before(() => {
    tmp = makeTempDir('bulwark-hooks-install-');
    fakeNode = process.execPath;
    fakeCli = path.join(tmp, 'cli.js');
    fs.writeFileSync(fakeCli, 'process.exit(0)');
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("writes each client's own format, with the timeout in its unit and the wrapper command", () => {
    const { home, ctx, opts } = setup();
    install(opts(ALL, { timeoutSeconds: 45 }));
    const wrapper = path.join(ctx.stateDir, 'bin', 'bulwark-hook');
    const cmd = (agent: string) => `'${wrapper}' ${agent} 45 || exit 2`;
    const claude = json(path.join(home, '.claude', 'settings.json'));
    assert.deepEqual(claude.hooks.PreToolUse, [{ matcher: '*', hooks: [{ type: 'command', command: cmd('claude'), timeout: 45 }] }]);
    assert.deepEqual(claude.hooks.PostToolUse, claude.hooks.PreToolUse);
    const codex = json(path.join(home, '.codex', 'hooks.json'));
    assert.deepEqual(codex.hooks.PreToolUse, [{ matcher: '.*', hooks: [{ type: 'command', command: cmd('codex'), timeout: 45 }] }]);
    const gemini = json(path.join(home, '.gemini', 'settings.json'));
    assert.deepEqual(
      gemini.hooks.BeforeTool,
      [{ matcher: '.*', hooks: [{ name: 'bulwark', type: 'command', command: cmd('gemini'), timeout: 45000 }] }],
      "Gemini's timeout is in ms",
    );
    assert.ok(gemini.hooks.AfterTool);
    // Both Copilots read ~/.copilot/hooks: one file, each client's own event spelling.
    const copilot = json(path.join(home, '.copilot', 'hooks', 'bulwark.json'));
    assert.equal(copilot.version, 1);
    assert.deepEqual(copilot.hooks.preToolUse, [{ type: 'command', bash: cmd('copilot-cli'), timeoutSec: 45 }]);
    assert.ok(copilot.hooks.postToolUse);
    assert.deepEqual(copilot.hooks.PreToolUse, [{ type: 'command', command: cmd('vscode'), timeout: 45 }]);
    assert.ok(copilot.hooks.PostToolUse);
    assert.equal(fs.existsSync(path.join(home, '.copilot', 'settings.json')), false, "Copilot CLI's settings.json is not touched");
    assert.equal(fs.statSync(wrapper).mode & 0o777, 0o755);
    assert.match(fs.readFileSync(wrapper, 'utf8'), new RegExp(`CLI='${fakeCli.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}'`));
    const m = readManifest(ctx.stateDir);
    assert.equal(fs.statSync(manifestPath(ctx.stateDir)).mode & 0o777, 0o600);
    assert.equal(m.files.length, 4);
    assert.equal(m.files.flatMap((f) => f.additions.filter((a) => a.kind === 'element')).length, 10);
    assert.ok(m.files.every((f) => /^[0-9a-f]{64}$/.test(f.afterSha256)));
  });

  it('keeps every other key, entry and comment, and uninstall gives the original bytes back', () => {
    const { home, ws, opts } = setup();
    const claude = path.join(home, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(claude), { recursive: true });
    const original =
      '{\n\t// my own hooks\n\t"model": "opus",\n\t"env": { "FOO": "bar" },\n\t"hooks": {\n\t\t"PreToolUse": [\n\t\t\t{ "matcher": "Bash", "hooks": [ { "type": "command", "command": "my-linter" } ] }, // keep\n\t\t],\n\t},\n}\n';
    fs.writeFileSync(claude, original, { mode: 0o600 });
    const gemini = path.join(home, '.gemini', 'settings.json');
    fs.mkdirSync(path.dirname(gemini), { recursive: true });
    fs.writeFileSync(gemini, '{"security":{"auth":{"selectedType":"gemini-api-key"}},"hooks":{}}');
    const before = snapshot(home);
    const beforeWs = snapshot(ws);
    install(opts(ALL));
    const after = fs.readFileSync(claude, 'utf8');
    assert.ok(after.includes('// my own hooks') && after.includes('// keep'), 'comments stay');
    const parsed = json(claude);
    assert.equal(parsed.model, 'opus');
    assert.deepEqual(parsed.env, { FOO: 'bar' });
    assert.equal(parsed.hooks.PreToolUse.length, 2);
    assert.equal(parsed.hooks.PreToolUse[0].hooks[0].command, 'my-linter', "the user's own entry stays first");
    assert.equal(fs.statSync(claude).mode & 0o777, 0o600, 'the file keeps its mode');
    assert.deepEqual(json(gemini).security, { auth: { selectedType: 'gemini-api-key' } });
    applyPlan(planUninstall(opts([])));
    assertSameTree(before, snapshot(home));
    assertSameTree(beforeWs, snapshot(ws));
  });

  it("--no-sandbox and --allow-net go into every client's hook command; switching them is one re-install, and uninstall is still exact", () => {
    const { home, ws, opts } = setup();
    const before = snapshot(home);
    install(opts(ALL, { policy: 'permissive', sandbox: false, allowNet: ['registry.npmjs.org:443'] }));
    const claude = () => json(path.join(home, '.claude', 'settings.json')).hooks.PreToolUse;
    assert.match(claude()[0].hooks[0].command, / claude 60 permissive no-sandbox 'allow-net=registry\.npmjs\.org:443' \|\| exit 2$/);
    assert.match(
      json(path.join(home, '.copilot', 'hooks', 'bulwark.json')).hooks.preToolUse[0].bash,
      / copilot-cli 60 permissive no-sandbox /,
    );
    // Back to the default (wrapping on): the entry is replaced, not added beside the old one.
    install(opts(ALL, { policy: 'permissive' }));
    assert.equal(claude().length, 1);
    assert.match(claude()[0].hooks[0].command, / claude 60 permissive \|\| exit 2$/);
    assert.throws(() => planInstall(opts(['claude'], { allowNet: ['x;y'] })), /--allow-net takes HOST/);
    applyPlan(planUninstall(opts([])));
    assertSameTree(before, snapshot(home));
    assert.deepEqual([...snapshot(ws).keys()], []);
  });

  it('files with a byte order mark, only whitespace, or `{}` on one line come back byte for byte', () => {
    const { home, opts } = setup();
    const files = {
      claude: [
        path.join(home, '.claude', 'settings.json'),
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"model":"opus"}\r\n')]),
      ],
      gemini: [path.join(home, '.gemini', 'settings.json'), Buffer.from('  \n')],
      codex: [path.join(home, '.codex', 'hooks.json'), Buffer.from('{}')],
    } as const;
    for (const [file, bytes] of Object.values(files)) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, bytes);
    }
    const before = snapshot(home);
    install(opts(['claude', 'gemini', 'codex']));
    assert.equal(json(files.claude[0]).model, 'opus');
    assert.deepEqual(fs.readFileSync(files.claude[0]).subarray(0, 3), Buffer.from([0xef, 0xbb, 0xbf]), 'the BOM stays');
    assert.equal(json(files.gemini[0]).hooks.BeforeTool.length, 1);
    assert.equal(json(files.codex[0]).hooks.PostToolUse.length, 1);
    applyPlan(planUninstall(opts([])));
    assertSameTree(before, snapshot(home));
  });

  it('a workspace install then uninstall leaves the workspace exactly as it was (created files and folders go)', () => {
    const { home, ws, opts } = setup();
    fs.mkdirSync(path.join(ws, '.github', 'workflows'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.github', 'workflows', 'ci.yml'), 'on: push\n');
    const before = snapshot(ws);
    install(opts(ALL, { scope: 'workspace', workspace: ws }));
    const shared = json(path.join(ws, '.github', 'hooks', 'bulwark.json'));
    assert.equal(shared.version, 1);
    assert.equal(shared.hooks.preToolUse.length, 1, 'Copilot CLI entry');
    assert.equal(shared.hooks.PreToolUse.length, 1, 'VS Code entry, in the same file');
    assert.ok(fs.existsSync(path.join(ws, '.claude', 'settings.json')));
    assert.ok(fs.existsSync(path.join(ws, '.codex', 'hooks.json')));
    assert.ok(fs.existsSync(path.join(ws, '.gemini', 'settings.json')));
    assert.equal(hooksStatus({ ...opts([]), workspace: ws }).clients.filter((c) => c.state === 'guarded').length, 5);
    applyPlan(planUninstall(opts([])));
    assertSameTree(before, snapshot(ws));
    assert.equal(fs.existsSync(path.join(home, '.bulwark')), false, 'the wrapper, the manifest and the state folder are gone');
  });

  it("uninstalling one of two clients that share a file keeps the other's entries", () => {
    const { ws, opts } = setup();
    install(opts(['copilot-cli', 'vscode'], { scope: 'workspace', workspace: ws }));
    const file = path.join(ws, '.github', 'hooks', 'bulwark.json');
    applyPlan(planUninstall(opts(['copilot-cli'])));
    const left = json(file);
    assert.equal(left.hooks.preToolUse, undefined);
    assert.equal(left.hooks.PreToolUse.length, 1);
    const s = hooksStatus(opts([]));
    assert.equal(s.clients.find((c) => c.client === 'copilot-cli')!.state, 'not installed');
    assert.equal(s.clients.find((c) => c.client === 'vscode')!.state, 'guarded');
    applyPlan(planUninstall(opts(['vscode'])));
    assert.equal(fs.existsSync(path.join(ws, '.github')), false);
  });

  it('re-installing is idempotent: no second entry, no byte changed; a new timeout replaces the entries', () => {
    const { home, opts } = setup();
    const claude = path.join(home, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(claude), { recursive: true });
    const original = '{ "theme": "dark" }\n';
    fs.writeFileSync(claude, original);
    install(opts(['claude', 'gemini']));
    const first = snapshot(home);
    const again = planInstall(opts(['claude', 'gemini']));
    assert.deepEqual(
      again.files.map((f) => f.action),
      ['unchanged', 'unchanged'],
    );
    assert.equal(again.wrapper!.action, 'unchanged');
    applyPlan(again);
    assertSameTree(first, snapshot(home));
    install(opts(['claude'], { timeoutSeconds: 120 }));
    const hooks = json(claude).hooks;
    assert.equal(hooks.PreToolUse.length, 1);
    assert.equal(hooks.PreToolUse[0].hooks[0].timeout, 120);
    assert.match(hooks.PreToolUse[0].hooks[0].command, / claude 120 \|\| exit 2$/);
    assert.equal(
      json(path.join(home, '.gemini', 'settings.json')).hooks.BeforeTool[0].hooks[0].timeout,
      60000,
      'the other client is untouched',
    );
    applyPlan(planUninstall(opts([])));
    assert.equal(fs.readFileSync(claude, 'utf8'), original);
  });

  it('a lost manifest does not duplicate entries: identical ones are adopted, older ones replaced', () => {
    const { home, ctx, opts } = setup();
    install(opts(['claude']));
    fs.rmSync(manifestPath(ctx.stateDir));
    install(opts(['claude']));
    assert.equal(json(path.join(home, '.claude', 'settings.json')).hooks.PreToolUse.length, 1);
    fs.rmSync(manifestPath(ctx.stateDir));
    install(opts(['claude'], { timeoutSeconds: 30 }));
    const pre = json(path.join(home, '.claude', 'settings.json')).hooks.PreToolUse;
    assert.equal(pre.length, 1, 'the 60 s entry of the forgotten install was replaced, not kept beside the new one');
    assert.equal(pre[0].hooks[0].timeout, 30);
  });

  it("a file changed after the install: uninstall removes Bulwark's entries and keeps the user's change", () => {
    const { home, opts } = setup();
    install(opts(['claude']));
    const claude = path.join(home, '.claude', 'settings.json');
    const edited = JSON.parse(fs.readFileSync(claude, 'utf8'));
    edited.hooks.PreToolUse.push({ matcher: 'Write', hooks: [{ type: 'command', command: 'fmt' }] });
    edited.permissions = { allow: ['Bash(ls)'] };
    fs.writeFileSync(claude, JSON.stringify(edited, null, 4));
    applyPlan(planUninstall(opts([])));
    const left = json(claude);
    assert.deepEqual(left.permissions, { allow: ['Bash(ls)'] });
    assert.deepEqual(left.hooks.PreToolUse, [{ matcher: 'Write', hooks: [{ type: 'command', command: 'fmt' }] }]);
    assert.equal(left.hooks.PostToolUse, undefined, 'the list Bulwark created and left empty is gone');
    assert.doesNotMatch(fs.readFileSync(claude, 'utf8'), /bulwark-hook/);
  });

  const refusals: { name: string; text: string | Buffer; why: RegExp }[] = [
    { name: 'invalid JSON', text: '{ "hooks": { "PreToolUse": [ }', why: /settings\.json:1:\d+: .*nothing was written/ },
    { name: 'a top-level list', text: '[]', why: /top level is not a JSON object/ },
    { name: '`hooks` that is not an object', text: '{ "hooks": "none" }', why: /`hooks` is not an object/ },
    { name: 'a PreToolUse that is not a list', text: '{ "hooks": { "PreToolUse": {} } }', why: /`hooks.PreToolUse` is not a list/ },
    { name: 'a duplicated key', text: '{ "hooks": {}, "hooks": {} }', why: /`hooks` appears 2 times/ },
    { name: 'invalid UTF-8', text: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), why: /not valid UTF-8/ },
    { name: 'a huge file', text: `{"x":"${'a'.repeat(5 * 1024 * 1024)}"}`, why: /more than a configuration file should be/ },
  ];
  for (const r of refusals) {
    it(`refuses ${r.name} and writes nothing at all`, () => {
      const { home, opts } = setup();
      const claude = path.join(home, '.claude', 'settings.json');
      fs.mkdirSync(path.dirname(claude), { recursive: true });
      fs.writeFileSync(claude, r.text);
      const before = snapshot(home);
      assert.throws(() => install(opts(['gemini', 'claude'])), r.why);
      assertSameTree(before, snapshot(home));
    });
  }

  it('refuses a relative path, a bad timeout and an empty agent list', () => {
    const { opts } = setup();
    assert.throws(() => planInstall(opts(['claude'], { cli: 'dist/cli.js' })), /absolute/);
    assert.throws(() => planInstall(opts(['claude'], { timeoutSeconds: 5 })), /from 10 to 3600/);
    assert.throws(() => planInstall(opts([])), /no agent client/);
    assert.throws(() => planInstall(opts(['claude'], { scope: 'workspace' })), /needs --workspace/);
  });

  it('a file that changed between plan and write is not overwritten', () => {
    const { home, opts } = setup();
    const plan = planInstall(opts(['claude']));
    const claude = path.join(home, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(claude), { recursive: true });
    fs.writeFileSync(claude, '{"late": true}');
    assert.throws(() => applyPlan(plan), /changed while Bulwark was about to write it/);
    assert.equal(fs.readFileSync(claude, 'utf8'), '{"late": true}');
  });

  it('edits a symlinked settings file at its target and keeps the link', () => {
    const { home, opts } = setup();
    const real = path.join(home, 'dotfiles', 'claude.json');
    fs.mkdirSync(path.dirname(real), { recursive: true });
    fs.writeFileSync(real, '{}\n');
    fs.mkdirSync(path.join(home, '.claude'));
    const link = path.join(home, '.claude', 'settings.json');
    fs.symlinkSync(real, link);
    install(opts(['claude']));
    assert.ok(fs.lstatSync(link).isSymbolicLink());
    assert.equal(json(real).hooks.PreToolUse.length, 1);
    applyPlan(planUninstall(opts([])));
    assert.equal(fs.readFileSync(real, 'utf8'), '{}\n');
    assert.ok(fs.lstatSync(link).isSymbolicLink());
  });

  it('honours CODEX_HOME and COPILOT_HOME', () => {
    const { home, opts } = setup();
    const codexHome = path.join(home, 'cx');
    const copilotHome = path.join(home, 'cp');
    install({ ...opts(['codex', 'copilot-cli']), env: { PATH: '', CODEX_HOME: codexHome, COPILOT_HOME: copilotHome } });
    assert.ok(fs.existsSync(path.join(codexHome, 'hooks.json')));
    assert.ok(fs.existsSync(path.join(copilotHome, 'hooks', 'bulwark.json')));
    assert.equal(fs.existsSync(path.join(home, '.codex')), false);
  });

  it('status: guarded, then tampered when an entry or the wrapper changes, broken when Node is gone', () => {
    const { home, ctx, opts } = setup();
    const state = (c: AgentId, o: HooksContext = ctx) => hooksStatus(o).clients.find((x) => x.client === c)!;
    assert.equal(state('claude').state, 'not installed');
    install(opts(['claude', 'gemini']));
    assert.equal(state('claude').state, 'guarded');
    assert.equal(state('codex').state, 'not installed');
    const claude = path.join(home, '.claude', 'settings.json');
    const good = fs.readFileSync(claude, 'utf8');
    fs.writeFileSync(claude, good.replace(/claude 60 \|\| exit 2/g, 'claude 60 || true'));
    assert.equal(state('claude').state, 'tampered');
    assert.match(state('claude').problems.join('\n'), /hooks\.PreToolUse entry .* was changed or removed/);
    assert.equal(state('gemini').state, 'guarded');
    fs.writeFileSync(claude, good);
    const wrapper = path.join(ctx.stateDir, 'bin', 'bulwark-hook');
    fs.appendFileSync(wrapper, '\nexit 0\n');
    assert.equal(state('gemini').state, 'tampered');
    assert.match(state('gemini').problems.join('\n'), /wrapper .* was modified/);
    fs.rmSync(wrapper);
    assert.match(state('claude').problems.join('\n'), /wrapper .* is missing/);
    install(opts(['claude', 'gemini'], { node: path.join(tmp, 'gone', 'node') }));
    assert.equal(state('claude').state, 'broken');
    assert.match(state('claude').problems.join('\n'), /Node is gone/);
  });

  it("repairs a wrapper whose dist/cli.js is gone (an extension update) without touching the clients' files", () => {
    const { home, ctx, opts } = setup();
    const oldCli = path.join(tmp, `old-cli-${n}.js`);
    fs.writeFileSync(oldCli, '');
    install(opts(['claude', 'vscode'], { cli: oldCli }));
    const clientFiles = snapshot(path.join(home, '.claude'));
    assert.equal(
      repairWrapper({ stateDir: ctx.stateDir, platform: 'linux', node: fakeNode, cli: fakeCli }),
      undefined,
      'nothing to repair while the old one exists',
    );
    fs.rmSync(oldCli);
    assert.equal(hooksStatus(ctx).clients.find((c) => c.client === 'claude')!.state, 'broken');
    assert.match(repairWrapper({ stateDir: ctx.stateDir, platform: 'linux', node: fakeNode, cli: fakeCli })!, /now runs .*cli\.js/);
    assert.match(
      fs.readFileSync(path.join(ctx.stateDir, 'bin', 'bulwark-hook'), 'utf8'),
      new RegExp(`CLI='${fakeCli.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}'`),
    );
    assert.equal(hooksStatus(ctx).clients.find((c) => c.client === 'claude')!.state, 'guarded');
    assertSameTree(clientFiles, snapshot(path.join(home, '.claude')));
  });

  it('detects clients by their folders (and PATH)', () => {
    const { home, ctx } = setup();
    assert.deepEqual(detectClients(ctx), []);
    fs.mkdirSync(path.join(home, '.claude'));
    fs.mkdirSync(path.join(home, '.gemini'));
    fs.mkdirSync(path.join(home, '.config', 'Code'), { recursive: true });
    const bin = path.join(home, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'codex'), '', { mode: 0o755 });
    assert.deepEqual(detectClients({ ...ctx, env: { PATH: bin } }), ['claude', 'codex', 'gemini', 'vscode']);
  });

  describe('the CLI', () => {
    function io(extra: { tty?: boolean; answer?: string } = {}) {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const stdin = Object.assign(new PassThrough(), { isTTY: extra.tty ?? false });
      if (extra.answer !== undefined) stdin.end(extra.answer);
      let out = '';
      let err = '';
      stdout.on('data', (d) => {
        out += d;
      });
      stderr.on('data', (d) => {
        err += d;
      });
      return { io: { stdout, stderr, stdin, env: { PATH: '' }, node: fakeNode, cli: fakeCli }, out: () => out, err: () => err };
    }

    it('--dry-run and a missing --yes print the plan and write nothing', async () => {
      const { home } = setup();
      const before = snapshot(home);
      const a = io();
      assert.equal(await runHooks(['install', '--agent', 'claude', '--home', home, '--dry-run'], a.io), 0);
      assert.match(a.out(), /create .*\.claude\/settings\.json/);
      assert.match(a.out(), /\+ hooks\.PreToolUse\[\]/);
      assert.match(a.out(), /dry run: nothing was written/);
      const b = io();
      assert.equal(await runHooks(['install', '--agent', 'claude', '--home', home], b.io), 1);
      assert.match(b.err(), /nothing was written: run again with --yes/);
      const c = io({ tty: true, answer: 'n\n' });
      assert.equal(await runHooks(['install', '--agent', 'claude', '--home', home], c.io), 1);
      assertSameTree(before, snapshot(home));
      const d = io({ tty: true, answer: 'y\n' });
      assert.equal(await runHooks(['install', '--agent', 'claude', '--home', home], d.io), 0);
      assert.ok(fs.existsSync(path.join(home, '.claude', 'settings.json')));
    });

    it('install --yes, status, uninstall --yes; bad flags are usage errors', async () => {
      const { home, ws } = setup();
      const a = io();
      assert.equal(
        await runHooks(
          [
            'install',
            '--agent',
            'codex',
            '--agent',
            'vscode',
            '--scope',
            'workspace',
            '--workspace',
            ws,
            '--home',
            home,
            '--timeout',
            '30',
            '--yes',
          ],
          a.io,
        ),
        0,
      );
      assert.match(a.out(), /note: Codex runs a new or changed hook only after you trust it/);
      const s = io();
      assert.equal(await runHooks(['status', '--home', home], s.io), 0);
      assert.match(s.out(), /OpenAI Codex CLI: guarded \(workspace .*\.codex\/hooks\.json\)/);
      assert.match(s.out(), /Claude Code: not installed/);
      const u = io();
      assert.equal(await runHooks(['uninstall', '--home', home, '--yes'], u.io), 0);
      assert.equal(fs.existsSync(path.join(ws, '.codex')), false);
      await assert.rejects(runHooks(['install', '--agent', 'cursor', '--home', home], io().io), /--agent must be one of/);
      await assert.rejects(runHooks(['install', '--agent', 'claude', '--home', 'rel'], io().io), /--home must be an absolute path/);
      await assert.rejects(
        runHooks(['install', '--agent', 'claude', '--home', home, '--timeout', '2'], io().io),
        /--timeout must be a whole number/,
      );
      await assert.rejects(runHooks(['install', '--home', home], io().io), /no agent client found/);
      await assert.rejects(runHooks(['frobnicate'], io().io), /usage: bulwark hooks/);
      await assert.rejects(
        runHooks(['install', '--agent', 'claude', '--home', home, '--policy', 'none'], io().io),
        /--policy must be one of default, permissive, strict/,
      );
      assert.equal(await runHooks(['install', '--agent', 'claude', '--home', home, '--policy', 'permissive', '--yes'], io().io), 0);
      assert.match(
        json(path.join(home, '.claude', 'settings.json')).hooks.PreToolUse[0].hooks[0].command,
        / claude 60 permissive \|\| exit 2$/,
      );
      assert.equal(
        await runHooks(['install', '--agent', 'claude', '--home', home, '--no-sandbox', '--allow-net', 'a.example.org', '--yes'], io().io),
        0,
      );
      assert.match(
        json(path.join(home, '.claude', 'settings.json')).hooks.PreToolUse[0].hooks[0].command,
        / claude 60 no-sandbox 'allow-net=a\.example\.org' \|\| exit 2$/,
      );
      await assert.rejects(
        runHooks(['install', '--agent', 'claude', '--home', home, '--allow-net', 'http://a.org/'], io().io),
        /--allow-net takes HOST/,
      );
    });
  });

  describe('the installed command, run as the client runs it', () => {
    const cli = path.join(repoRoot(), 'dist', 'cli.js');
    const run = (command: string, input: unknown, env: NodeJS.ProcessEnv) =>
      spawnSync('/bin/sh', ['-c', command], { input: JSON.stringify(input), env, encoding: 'utf8', timeout: 30000 });

    it("denies reading ~/.ssh through Claude Code's installed hook (real dist/cli.js)", function () {
      if (!fs.existsSync(cli)) this.skip();
      const { home, ws, opts } = setup();
      fs.mkdirSync(path.join(home, '.ssh'));
      fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'fake key');
      install(opts(['claude'], { cli }));
      const command = json(path.join(home, '.claude', 'settings.json')).hooks.PreToolUse[0].hooks[0].command as string;
      const r = run(
        command,
        {
          session_id: 's',
          cwd: ws,
          hook_event_name: 'PreToolUse',
          tool_name: 'Read',
          tool_input: { file_path: path.join(home, '.ssh', 'id_rsa') },
          tool_use_id: 't',
        },
        { PATH: process.env.PATH, HOME: home },
      );
      assert.equal(r.status, 0, r.stderr);
      const answer = JSON.parse(r.stdout);
      assert.equal(answer.hookSpecificOutput.permissionDecision, 'deny');
      assert.match(answer.hookSpecificOutput.permissionDecisionReason, /deny\.home\.ssh/);
    });

    it("a broken install (Node gone) still denies, in each client's form", function () {
      const { home, ws, opts } = setup();
      install(opts(ALL, { node: path.join(tmp, 'no', 'node'), scope: 'workspace', workspace: ws }));
      const claudeCmd = json(path.join(ws, '.claude', 'settings.json')).hooks.PreToolUse[0].hooks[0].command as string;
      const r = run(
        claudeCmd,
        { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } },
        { PATH: process.env.PATH, HOME: home },
      );
      assert.equal(r.status, 2);
      assert.match(r.stderr, /Node was not found/);
      const copilotCmd = json(path.join(ws, '.github', 'hooks', 'bulwark.json')).hooks.preToolUse[0].bash as string;
      const c = run(copilotCmd, { toolName: 'bash', toolArgs: '{"command":"ls"}' }, { PATH: process.env.PATH, HOME: home });
      assert.equal(c.status, 0);
      assert.equal(JSON.parse(c.stdout).permissionDecision, 'deny');
    });
  });
});
