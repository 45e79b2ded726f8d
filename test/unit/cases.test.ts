// Runs the data-driven decision corpus (test/cases/protection/*.yaml) through the real engine on a
// real directory tree, with the real shell grammar and the real file-system port.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Engine, type ActionRequest, type Platform } from '../../src/engine';
import { nodeFileSystem } from '../../src/node/fs-port';
import { loadShellParser } from '../../src/node/shell-grammar';
import type { ShellParser } from '../../src/engine';
import { loadYaml, makeTempDir, yamlFilesUnder } from './helpers/repo';

interface Case {
  name: string;
  action: { type: string; payload: Record<string, unknown> };
  cwd?: string;
  platform?: Platform;
  workspace?: string;
  setup?: { files?: string[]; dirs?: string[]; symlinks?: Record<string, string>; hardlinks?: Record<string, string> };
  /** The rule that must decide the case; `null` (with `why`) only where no rule can decide, e.g. a plain allow. */
  expect: { decision: string; rule?: string | null; why?: string; level?: string; min_tier?: number; reason?: string };
}

const WORKSPACE_FILES = [
  'SOUL.md',
  'IDENTITY.md',
  'AGENTS.md',
  'HEARTBEAT.md',
  'USER.md',
  'MEMORY.md',
  'memory/notes.md',
  'skills/deploy/SKILL.md',
  'src/app.ts',
  '.env',
  '.env.example',
  '.vscode/settings.json',
  '.bulwark/audit.jsonl',
  '.bulwark/canary.token',
  '.git/hooks/pre-commit.sample',
  'docs/guide.md',
];
const HOME_FILES = ['.ssh/id_rsa', '.ssh/config', '.aws/credentials', '.bashrc', '.gitconfig', 'notes/todo.md'];

function fill(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{(tmp|workspace|home|state)\}/g, (_, k: string) => vars[k]!);
  if (Array.isArray(value)) return value.map((v) => fill(v, vars));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [fill(k, vars) as string, fill(v, vars)]));
  return value;
}

function touch(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, 'fixture\n');
}

describe('decision corpus (test/cases/protection)', () => {
  let parser: ShellParser;
  before(async () => {
    parser = await loadShellParser();
  });

  const files = yamlFilesUnder('test/cases/protection');
  it('has at least 150 cases with unique names', () => {
    const names = files.flatMap((f) => loadYaml<Case[]>(f).map((c) => c.name));
    assert.ok(names.length >= 150, `only ${names.length} cases`);
    assert.equal(new Set(names).size, names.length, 'duplicate case names');
  });

  it('every case names the rule that must decide it (or says `rule: null` with a `why`)', () => {
    const missing: string[] = [];
    for (const f of files) {
      for (const c of loadYaml<Case[]>(f)) {
        if (c.expect.rule === null)
          assert.ok(typeof c.expect.why === 'string' && c.expect.why.length > 0, `${c.name}: \`rule: null\` needs a \`why\``);
        else if (typeof c.expect.rule !== 'string' || c.expect.rule.length === 0) missing.push(`${path.basename(f)}: ${c.name}`);
      }
    }
    assert.deepEqual(
      missing,
      [],
      'cases without `expect.rule` (name the deciding rule, or `rule: null` with `why` when no rule can decide)',
    );
  });

  for (const file of files) {
    describe(path.basename(file), () => {
      for (const c of loadYaml<Case[]>(file)) {
        it(c.name, async () => {
          if (!('rule' in c.expect))
            assert.fail(`case ${c.name} names no rule: add \`expect.rule\` (or \`rule: null\` with \`why\` where no rule can decide)`);
          const tmp = makeTempDir();
          try {
            const platform = c.platform ?? 'linux';
            const vars = {
              tmp,
              workspace: platform === 'win32' ? (c.workspace ?? 'C:\\ws') : path.join(tmp, 'ws'),
              home: platform === 'win32' ? 'C:\\Users\\u' : path.join(tmp, 'home'),
              state: platform === 'win32' ? 'C:\\bulwark-state' : path.join(tmp, 'state'),
            };
            if (platform !== 'win32') {
              for (const f of WORKSPACE_FILES) touch(path.join(vars.workspace, f));
              for (const f of HOME_FILES) touch(path.join(vars.home, f));
              fs.mkdirSync(vars.state, { recursive: true });
            }
            const setup = fill(c.setup ?? {}, vars) as NonNullable<Case['setup']>;
            for (const f of setup.files ?? []) touch(f);
            for (const d of setup.dirs ?? []) fs.mkdirSync(d, { recursive: true });
            for (const [link, target] of Object.entries(setup.symlinks ?? {})) {
              fs.mkdirSync(path.dirname(link), { recursive: true });
              fs.symlinkSync(target, link);
            }
            for (const [link, target] of Object.entries(setup.hardlinks ?? {})) {
              fs.mkdirSync(path.dirname(link), { recursive: true });
              fs.linkSync(target, link);
            }
            const engine = new Engine({
              platform,
              home: vars.home,
              workspaceRoots: [vars.workspace],
              selfPaths: [vars.state],
              fs: nodeFileSystem,
              shellParser: parser,
            });
            const action = {
              ...(fill(c.action, vars) as object),
              sessionId: 'corpus',
              cwd: c.cwd ? (fill(c.cwd, vars) as string) : undefined,
            } as ActionRequest;
            const d = await engine.check(action);
            const got = JSON.stringify(d);
            assert.equal(d.decision, c.expect.decision, got);
            if (c.expect.rule) assert.ok(d.rules.includes(c.expect.rule), `expected rule ${c.expect.rule}: ${got}`);
            if (c.expect.rule === null)
              assert.deepEqual(d.rules, [], `\`rule: null\` (${c.expect.why}) but the decision names rules: ${got}`);
            if (c.expect.level) assert.equal(d.level, c.expect.level, got);
            if (c.expect.min_tier !== undefined) assert.equal(d.minTier, c.expect.min_tier, got);
            if (c.expect.reason) assert.ok(d.reason.includes(c.expect.reason), `reason should contain "${c.expect.reason}": ${got}`);
            assert.ok(
              d.reason.length > 0 && (d.decision === 'allow' || d.rules.length > 0),
              `every non-allow decision names a rule: ${got}`,
            );
          } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
          }
        });
      }
    });
  }
});

describe('glob targets: protected locations that do not exist yet, and directories too large to expand', () => {
  let parser: ShellParser;
  before(async () => {
    parser = await loadShellParser();
  });

  async function decide(setup: (ws: string) => void, command: string) {
    const tmp = makeTempDir();
    try {
      const ws = path.join(tmp, 'ws');
      fs.mkdirSync(ws);
      setup(ws);
      const engine = new Engine({
        platform: 'linux',
        home: path.join(tmp, 'home'),
        workspaceRoots: [ws],
        selfPaths: [path.join(tmp, 'state')],
        fs: nodeFileSystem,
        shellParser: parser,
      });
      return await engine.check({ type: 'execute_command', payload: { command }, sessionId: 'globs', cwd: ws });
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  it("the file-system port lists breadth-first, so a truncated listing still holds all of a directory's own entries", () => {
    const tmp = makeTempDir();
    try {
      for (const d of ['a', 'b', 'c']) for (let i = 0; i < 5; i++) touch(path.join(tmp, d, `f${i}`));
      touch(path.join(tmp, 'top.txt'));
      const t = nodeFileSystem.listTree(tmp, 6)!;
      assert.equal(t.truncated, true);
      const depth = (e: string) => path.relative(tmp, e).split(path.sep).length;
      assert.deepEqual(t.entries.slice(0, 4).map(depth), [1, 1, 1, 1], JSON.stringify(t.entries));
      for (let i = 1; i < t.entries.length; i++) assert.ok(depth(t.entries[i]!) >= depth(t.entries[i - 1]!), JSON.stringify(t.entries));
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('a pattern that could name a protected location is checked although nothing is on disk', async () => {
    for (const [command, rule] of [
      ['rm -rf .bul*', 'self.workspace_state'],
      ['rm -f SOUL.m?', 'ws.soul'],
      ['touch [A-Z]*.md', 'ws.soul'],
    ] as const) {
      const d = await decide(() => {}, command);
      assert.equal(d.decision, 'block', `${command}: ${JSON.stringify(d)}`);
      assert.ok(d.rules.includes(rule), `${command}: ${JSON.stringify(d.rules)}`);
    }
  });

  it('the reason names the glob and the protected path it reaches', async () => {
    const d = await decide((ws) => fs.writeFileSync(path.join(ws, 'AGENTS.md'), 'x'), 'rm -f *.md');
    assert.equal(d.decision, 'block');
    assert.match(d.reason, /\*\.md/);
    assert.match(d.reason, /agents\.md|AGENTS\.md|soul\.md/i);
  });

  it('a directory with more entries than can be listed counts as touched whole (fails closed)', async () => {
    const d = await decide((ws) => {
      const logs = path.join(ws, 'logs');
      fs.mkdirSync(logs);
      for (let i = 0; i < 2100; i++) fs.writeFileSync(path.join(logs, `f${i}.log`), '');
      fs.mkdirSync(path.join(logs, '.bulwark')); // not protected there: only {workspace}/.bulwark is
    }, 'rm -f *.log');
    // The workspace root holds only `logs`: listed completely, so only the opaque floor applies.
    assert.equal(d.decision, 'escalate', JSON.stringify(d));
    const big = await decide((ws) => {
      for (let i = 0; i < 2100; i++) fs.writeFileSync(path.join(ws, `f${i}.log`), '');
    }, 'rm -f *.log');
    assert.equal(big.decision, 'block', `too many entries to expand: the whole workspace counts as deleted: ${JSON.stringify(big)}`);
    assert.ok(big.rules.includes('self.workspace_state') || big.rules.includes('protection.tree_too_large'), JSON.stringify(big.rules));
  });
});

describe('loopback servers: blocked by default with the way out named, reachable on an allowed port', () => {
  let parser: ShellParser;
  before(async () => {
    parser = await loadShellParser();
  });

  it('curl to a local dev server', async () => {
    const tmp = makeTempDir();
    try {
      const base = {
        platform: 'linux' as const,
        home: path.join(tmp, 'home'),
        workspaceRoots: [tmp],
        fs: nodeFileSystem,
        shellParser: parser,
      };
      const act = (command: string): ActionRequest => ({ type: 'execute_command', payload: { command }, sessionId: 'loopback', cwd: tmp });
      const closed = await new Engine(base).check(act('curl -s http://localhost:3000/health'));
      assert.equal(closed.decision, 'block');
      assert.ok(closed.rules.includes('ssrf.name.loopback'), JSON.stringify(closed.rules));
      assert.match(closed.reason, /allowLoopbackPorts/);
      const open = new Engine({ ...base, ssrfPolicy: { allowLoopbackPorts: [3000] } });
      const d = await open.check(act('curl -s http://localhost:3000/health'));
      assert.notEqual(d.decision, 'block', JSON.stringify(d));
      // Only the listed port: the database next to it stays closed.
      const other = await open.check(act('curl -s http://127.0.0.1:5432/'));
      assert.equal(other.decision, 'block');
      assert.ok(other.rules.includes('ssrf.range.loopback'), JSON.stringify(other.rules));
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
