// The action model fails closed (issue 11): one table of action types, every path or URL in a
// payload checked whatever its field, searches below a directory checked file by file, and unknown
// tools counted as IFC sinks. The real engine on a real directory tree, with the real shell grammar.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Engine, type ActionRequest, type CheckResult, type ShellParser } from '../../src/engine';
import { ACTION_TYPES, CLASSIFIER_SKIP_TYPES, KNOWN_ACTION_TYPES, UNKNOWN_ACTION, actionSpec } from '../../src/engine/actions';
import { MAX_PAYLOAD_DEPTH, MAX_PAYLOAD_VALUES, fileUriToPath, payloadTargetsOf } from '../../src/engine/payload';
import { DEFAULT_CLASSIFIER_SKIP_TYPES } from '../../src/engine/shield/pipeline';
import { MemoryStateStore } from '../../src/engine/shield/types';
import { nodeFileSystem } from '../../src/node/fs-port';
import { loadShellParser } from '../../src/node/shell-grammar';
import { buildShield } from '../../src/node/shield-setup';
import { makeTempDir, repoRoot } from './helpers/repo';

const UNKNOWN = 'mcp__files__do_something';

/** A temp tree with `home/` and `ws/` holding the given files (each containing `x`), and an engine on it. */
async function engineWorld(
  homeFiles: readonly string[],
  wsFiles: readonly string[],
): Promise<{ tmp: string; home: string; ws: string; parser: ShellParser; engine: Engine }> {
  const tmp = makeTempDir();
  const home = path.join(tmp, 'home');
  const ws = path.join(tmp, 'ws');
  for (const f of [...homeFiles.map((h) => path.join(home, h)), ...wsFiles.map((w) => path.join(ws, w))]) {
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, 'x');
  }
  const parser = await loadShellParser();
  return {
    tmp,
    home,
    ws,
    parser,
    engine: new Engine({ platform: 'linux', home, workspaceRoots: [ws], fs: nodeFileSystem, shellParser: parser }),
  };
}

describe('action model: one table of action types', () => {
  it('defines every known type once, and unknown types get the fail-closed row', () => {
    assert.deepEqual([...KNOWN_ACTION_TYPES].sort(), Object.keys(ACTION_TYPES).sort());
    for (const t of [
      'read_file',
      'write_file',
      'edit_file',
      'notebook_edit',
      'grep_files',
      'execute_command',
      'http_request',
      'web_search',
      'task',
      'agent_bookkeeping',
    ]) {
      assert.ok(KNOWN_ACTION_TYPES.includes(t as never), t);
    }
    for (const t of ['Read', 'Write', 'WebFetch', 'mcp__slack__post_message', 'READ_FILE', 'constructor', '__proto__']) {
      assert.equal(actionSpec(t), UNKNOWN_ACTION, t);
    }
    assert.deepEqual(
      [UNKNOWN_ACTION.floor, UNKNOWN_ACTION.access, UNKNOWN_ACTION.sink, UNKNOWN_ACTION.readOnly],
      [2, 'write', 'unknown', false],
    );
  });

  it("every action type the hook bridge maps agents' tools to (security/agents/) is in the table", () => {
    const dir = path.join(repoRoot(), 'security/agents');
    const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.yaml')) : [];
    assert.ok(files.length > 0, 'security/agents holds the tool maps');
    const mapped = new Set(
      files.flatMap((f) => [...fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/^\s*action: ([A-Za-z_]+)\s*$/gm)].map((m) => m[1]!)),
    );
    for (const t of mapped)
      assert.ok(
        KNOWN_ACTION_TYPES.includes(t as never),
        `security/agents maps a tool to \`${t}\`, which the action table does not know (it would get the unknown row: Tier 2)`,
      );
  });

  it('every row explains itself, and the classifier skip list comes from it', () => {
    for (const [t, spec] of Object.entries(ACTION_TYPES)) assert.ok(spec.why.length >= 20, `${t} needs a one-line why`);
    assert.equal(DEFAULT_CLASSIFIER_SKIP_TYPES, CLASSIFIER_SKIP_TYPES);
    // The skip list before the table existed is kept whole.
    for (const t of ['write_file', 'delete_file', 'move_file', 'copy_file', 'send_email', 'send_message', 'http_request'])
      assert.ok(CLASSIFIER_SKIP_TYPES.has(t), t);
    assert.ok(!CLASSIFIER_SKIP_TYPES.has('read_file') && !CLASSIFIER_SKIP_TYPES.has(UNKNOWN));
  });

  describe('the engine enforces each row', () => {
    let tmp: string;
    let home: string;
    let ws: string;
    let engine: Engine;
    before(async () => {
      ({ tmp, home, ws, engine } = await engineWorld(['.bashrc'], ['src/a.ts']));
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    const payloadFor = (t: string, p: Record<string, unknown>): Record<string, unknown> =>
      t === 'execute_command' ? { command: 'true', ...p } : t === 'http_request' ? { url: 'https://93.184.215.14/', ...p } : p;

    for (const type of [...KNOWN_ACTION_TYPES, UNKNOWN]) {
      const spec = actionSpec(type);
      it(`${type}: floor ${spec.floor}, paths ${spec.access}${spec.sourceAccess ? ` (sources ${spec.sourceAccess})` : ''}`, async () => {
        const plain = await engine.check({ type, payload: payloadFor(type, {}), sessionId: 't', cwd: ws });
        assert.equal(plain.minTier, spec.floor, JSON.stringify(plain));
        assert.equal(plain.decision, spec.floor === 0 ? 'allow' : 'escalate', JSON.stringify(plain));
        // ~/.bashrc is read-only: a read passes, a write or delete is refused by its rule.
        const d = await engine.check({
          type,
          payload: payloadFor(type, { destination: `${ws}/src/b.ts`, path: `${home}/.bashrc` }),
          sessionId: 't',
          cwd: ws,
        });
        const access = spec.sourceAccess ?? spec.access;
        assert.ok(d.rules.includes('deny.home.shell_rc'), JSON.stringify(d));
        assert.equal(d.decision === 'block', access !== 'read', JSON.stringify(d));
      });
    }

    it('an unknown type is never below Tier 2, and the decision says why', async () => {
      const d = await engine.check({ type: 'WebFetch', payload: { prompt: 'summarise' }, sessionId: 't' });
      assert.deepEqual([d.decision, d.minTier], ['escalate', 2]);
      assert.ok(d.rules.includes('action_type.unknown'), d.rules.join());
      assert.match(d.reason, /`WebFetch` is not an action type Bulwark knows/);
    });
  });
});

describe('action model: a policy can name more types to escalate, never fewer', () => {
  let tmp: string;
  let policyFile: string;
  before(() => {
    tmp = makeTempDir();
    policyFile = path.join(tmp, 'allow-all.yaml');
    fs.writeFileSync(policyFile, 'version: 1\nname: allow-all\nallow:\n  - name: everything\n    action_types: ["*"]\n');
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const engineWith = (policy: string) =>
    new Engine({
      platform: 'linux',
      home: path.join(tmp, 'home'),
      workspaceRoots: [path.join(tmp, 'ws')],
      fs: nodeFileSystem,
      shield: buildShield({
        policy,
        ifc: 'default',
        store: new MemoryStateStore(),
        home: path.join(tmp, 'home'),
        platform: 'linux',
        mode: 'report',
      }),
    });

  it('a policy that allows everything still sends an unknown tool to Tier 2', async () => {
    const d = await engineWith(policyFile).check({ type: 'mcp__weather__forecast', payload: { city: 'Oslo' }, sessionId: 'p' });
    assert.deepEqual([d.decision, d.tier, d.minTier], ['escalate', 2, 2], JSON.stringify(d));
    assert.ok(d.rules.includes('action_type.unknown') && d.rules.includes('policy.allow.everything'), d.rules.join());
  });

  it('the same policy allows a known read at Tier 0, and a policy can still deny an unknown tool', async () => {
    assert.deepEqual(pick(await engineWith(policyFile).check({ type: 'git_status', payload: {}, sessionId: 'p' })), ['allow', 0]);
    const deny = path.join(tmp, 'deny.yaml');
    fs.writeFileSync(deny, 'version: 1\nname: deny-mcp\ndeny:\n  - name: no_weather\n    action_types: [mcp__weather__forecast]\n');
    const d = await engineWith(deny).check({ type: 'mcp__weather__forecast', payload: { city: 'Oslo' }, sessionId: 'p' });
    assert.deepEqual(pick(d), ['block', 0]);
  });

  it("with an invalid policy only the table's read-only types go on to Tier 1", async () => {
    const e = new Engine({
      platform: 'linux',
      home: path.join(tmp, 'home'),
      workspaceRoots: [path.join(tmp, 'ws')],
      fs: nodeFileSystem,
      shellParser: await loadShellParser(),
      shield: {
        ...buildShield({
          policy: 'default',
          ifc: 'none',
          store: new MemoryStateStore(),
          home: path.join(tmp, 'home'),
          platform: 'linux',
          mode: 'report',
        }),
        policy: { ok: false, error: 'broken.yaml: allow must be a list' },
      },
    });
    for (const type of KNOWN_ACTION_TYPES) {
      const d = await e.check({
        type,
        payload: type === 'execute_command' ? { command: 'true' } : type === 'http_request' ? { url: 'https://93.184.215.14/' } : {},
        sessionId: 'p',
      });
      assert.equal(d.decision === 'block', !ACTION_TYPES[type].readOnly, `${type}: ${JSON.stringify(d)}`);
      if (d.decision === 'block') assert.ok(d.rules.includes('policy.invalid'), d.rules.join());
    }
    assert.equal((await e.check({ type: UNKNOWN, payload: {}, sessionId: 'p' })).decision, 'block');
  });
});

function pick(d: CheckResult): [string, number] {
  return [d.decision, d.tier];
}

describe('action model: every path or URL in a payload is checked, whatever its field', () => {
  let tmp: string;
  let home: string;
  let ws: string;
  let engine: Engine;
  before(async () => {
    ({ tmp, home, ws, engine } = await engineWorld(['.ssh/id_rsa'], ['.env', '.git/hooks/pre-commit', 'src/app.ts']));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  // Where a protected path can hide. `p` is absolute; `rel` is the same path relative to the workspace.
  const SHAPES: [string, (p: string, rel: string) => Record<string, unknown>][] = [
    ['file_path', (p) => ({ file_path: p })],
    ['filePath', (p) => ({ filePath: p })],
    ['uri: file://', (p) => ({ uri: `file://${p.split('/').map(encodeURIComponent).join('/')}` })],
    ['files: [{path}]', (p) => ({ files: [{ path: p, mode: 'r' }] })],
    ['edits[2].file', (p) => ({ edits: [{ old_string: 'a', new_string: 'b' }, {}, { file: p }] })],
    ['{a:{b:[{c}]}}', (p) => ({ a: { b: [{ c: p }] } })],
    ['a second path beside path', (p) => ({ path: `${ws}/src/app.ts`, other: p })],
    ['a relative path under a path-like key', (_p, rel) => ({ targetFile: rel })],
    ['an option value', (p) => ({ args: ['--quiet', `--key-file=${p}`] })],
    ['a map keyed by path', (p) => ({ changes: { [p]: 'new text' } })],
    ['a path key inside content', (p) => ({ content: { note: 'hello', file: p } })],
  ];
  // Reading: blocked for full_block, allowed (with its rule named) for approval_required; writing: blocked, or Tier 3.
  const TARGETS: { name: string; abs: () => string; rule: string; read: string; write: string }[] = [
    { name: '~/.ssh/id_rsa', abs: () => `${home}/.ssh/id_rsa`, rule: 'deny.home.ssh', read: 'block', write: 'block' },
    { name: '.env', abs: () => `${ws}/.env`, rule: 'deny.any.env_file', read: 'block', write: 'block' },
    {
      name: '.git/hooks/pre-commit',
      abs: () => `${ws}/.git/hooks/pre-commit`,
      rule: 'editor.git_exec_config',
      read: 'allow',
      write: 'escalate',
    },
  ];

  for (const type of ['read_file', UNKNOWN]) {
    const access = actionSpec(type).access;
    for (const t of TARGETS) {
      for (const [shape, make] of SHAPES) {
        it(`${type}: ${t.name} in ${shape} → ${access === 'read' ? t.read : t.write} (${t.rule})`, async () => {
          const abs = t.abs();
          const payload = make(abs, path.relative(ws, abs));
          if (type === 'read_file' && !('path' in payload)) Object.assign(payload, { path: `${ws}/src/app.ts` });
          const d = await engine.check({ type, payload, sessionId: 'hide', cwd: ws });
          assert.ok(d.rules.includes(t.rule), JSON.stringify(d));
          assert.equal(d.decision, access === 'read' ? t.read : t.write, JSON.stringify(d));
          if (d.decision === 'escalate') assert.equal(d.minTier, 3, 'a write of a git hook needs a human');
        });
      }
    }
  }

  it('the home directory spelled `~` in any field is the home directory', async () => {
    const d = await engine.check({ type: UNKNOWN, payload: { options: { keyPath: '~/.ssh/id_rsa' } }, sessionId: 'hide' });
    assert.deepEqual([d.decision, d.rules[0]], ['block', 'deny.home.ssh']);
  });

  it('a working directory in the payload is where the tool runs: read, not written', async () => {
    for (const type of ['execute_command', UNKNOWN]) {
      const d = await engine.check({ type, payload: { command: 'true', working_directory: `${home}/.config/fish` }, sessionId: 'cwd' });
      assert.ok(d.decision !== 'block' && d.rules.includes('deny.home.shell_rc'), JSON.stringify(d));
      const w = await engine.check({ type, payload: { command: 'true', output_dir: `${home}/.config/fish` }, sessionId: 'cwd' });
      assert.deepEqual([w.decision, w.rules[0]], ['block', 'deny.home.shell_rc'], JSON.stringify(w));
      const s = await engine.check({ type, payload: { command: 'true', cwd: `${home}/.ssh` }, sessionId: 'cwd' });
      assert.deepEqual([s.decision, s.rules[0]], ['block', 'deny.home.ssh'], JSON.stringify(s));
    }
  });

  it('strings under content keys are text, not paths', async () => {
    const d = await engine.check({
      type: 'write_file',
      payload: { path: `${ws}/src/notes.md`, content: `${home}/.ssh/id_rsa`, description: '~/.ssh/id_rsa' },
      sessionId: 'c',
    });
    assert.equal(d.decision, 'allow', JSON.stringify(d));
    const e = await engine.check({ type: 'web_search', payload: { query: '/etc/shadow file format' }, sessionId: 'c' });
    assert.deepEqual([e.decision, e.minTier, e.rules.includes('payload.unclear')], ['escalate', 1, false], JSON.stringify(e));
  });

  it('decodes file URIs, and refuses to guess at one that does not decode', () => {
    assert.equal(fileUriToPath('file:///home/u/a%20b/.env'), '/home/u/a b/.env');
    assert.equal(fileUriToPath('file://localhost/etc/shadow'), '/etc/shadow');
    assert.equal(fileUriToPath('file:///C:/Users/u/.ssh/id_rsa'), 'C:/Users/u/.ssh/id_rsa');
    assert.equal(fileUriToPath('file:///home/u/%E0%A4%A'), undefined);
    const t = payloadTargetsOf({ type: UNKNOWN, payload: { uri: 'file:///home/u/%E0%A4%A' }, sessionId: 's' });
    assert.deepEqual(
      t.unclear.map((u) => u.field),
      ['uri'],
    );
  });

  describe('a payload the engine cannot interpret is escalated to Tier 2, naming the field', () => {
    const deep = (n: number): Record<string, unknown> => (n === 0 ? { file: '/tmp/x' } : { level: deep(n - 1) });
    const cases: [string, Record<string, unknown>, string | undefined, RegExp][] = [
      ['a number where a path is expected', { file_path: 42 }, ws, /`file_path` is a number where a path is expected/],
      ['a boolean in a list of paths', { paths: ['/tmp/a', true] }, ws, /`paths\[1\]` is a boolean where a path is expected/],
      [
        'a relative path with no working directory',
        { target_dir: 'build/out' },
        undefined,
        /`target_dir` looks like a path that cannot be checked \(relative path `build\/out` and no known working directory/,
      ],
      ['nesting deeper than the bound', deep(MAX_PAYLOAD_DEPTH + 2), ws, new RegExp(`nested deeper than ${MAX_PAYLOAD_DEPTH} levels`)],
      [
        'too many values',
        { rows: Array.from({ length: MAX_PAYLOAD_VALUES + 5 }, (_, i) => `r${i}`) },
        ws,
        new RegExp(`more than ${MAX_PAYLOAD_VALUES} values`),
      ],
      ['a path key holding many lines', { path: 'a\nb' }, ws, /`path` spans several lines to be a path/],
    ];
    for (const [name, payload, cwd, reason] of cases) {
      it(`${name}: unknown tool → escalate (Tier 2)`, async () => {
        const d = await engine.check({ type: UNKNOWN, payload, sessionId: 'u', cwd });
        assert.deepEqual([d.decision, d.minTier], ['escalate', 2], JSON.stringify(d));
        assert.ok(d.rules.includes('payload.unclear'), d.rules.join());
        assert.match(d.reason, reason);
      });
    }

    it('a known type with an extra field it cannot interpret is escalated too, not blocked', async () => {
      const d = await engine.check({ type: 'read_file', payload: { path: `${ws}/src/app.ts`, backup_path: 'app.bak' }, sessionId: 'u' });
      assert.deepEqual([d.decision, d.minTier], ['escalate', 2], JSON.stringify(d));
      assert.match(d.reason, /`backup_path` looks like a path that cannot be checked/);
    });

    it('a known type keeps the clear block for a malformed declared path field (a caller bug, not an unusual tool)', async () => {
      const d = await engine.check({ type: 'read_file', payload: { path: 42 }, sessionId: 'u' });
      assert.deepEqual([d.decision, d.rules[0]], ['block', 'engine.error']);
      assert.match(d.reason, /payload field `path` must be a string path/);
    });

    it('a deep or large payload still finds the protected path it reaches before the bound', async () => {
      const d = await engine.check({
        type: UNKNOWN,
        payload: { a: { b: { c: { d: [`${home}/.ssh/id_rsa`] } } }, rows: Array.from({ length: 50 }, (_, i) => i) },
        sessionId: 'u',
        cwd: ws,
      });
      assert.deepEqual([d.decision, d.rules[0]], ['block', 'deny.home.ssh']);
    });
  });

  describe('every URL in a payload is checked like an http_request', () => {
    it('the cloud metadata service in any field is blocked (SSRF)', async () => {
      const d = await engine.check({
        type: UNKNOWN,
        payload: { config: { endpoint: 'http://169.254.169.254/latest/meta-data/' } },
        sessionId: 'n',
      });
      assert.deepEqual([d.decision, d.rules[0]], ['block', 'ssrf.range.link_local'], JSON.stringify(d));
      assert.match(d.reason, /the payload field `config\.endpoint` names http:\/\/169\.254\.169\.254/);
    });
    it("a loopback URL beside a known type's own fields is blocked, with the hint to allow a port", async () => {
      const d = await engine.check({
        type: 'send_message',
        payload: { to: 'team', message: 'hi', attachment_url: 'http://127.0.0.1:8080/admin' },
        sessionId: 'n',
      });
      assert.equal(d.decision, 'block');
      assert.match(d.reason, /allowLoopbackPorts/);
    });
    it('a public address passes; a URL inside content is text', async () => {
      const ok = await engine.check({ type: UNKNOWN, payload: { link: 'https://93.184.215.14/page' }, sessionId: 'n' });
      assert.deepEqual([ok.decision, ok.minTier], ['escalate', 2]);
      const text = await engine.check({
        type: 'write_file',
        payload: { path: `${ws}/src/doc.md`, content: 'see http://169.254.169.254/' },
        sessionId: 'n',
      });
      assert.equal(text.decision, 'allow');
    });
  });
});

describe('action model: searches and listings below a directory', () => {
  let tmp: string;
  let home: string;
  let ws: string;
  let engine: Engine;
  let parser: ShellParser;
  before(async () => {
    ({ tmp, home, ws, parser, engine } = await engineWorld(
      ['.ssh/id_rsa', 'notes/todo.md'],
      ['.env', 'src/app.ts', 'src/util/log.ts', 'docs/guide.md'],
    ));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const check = (a: Omit<ActionRequest, 'sessionId'>) => engine.check({ ...a, sessionId: 'search', cwd: a.cwd ?? ws });

  it('grep_files over the workspace is refused: it would read .env; the reason names it and a narrower path', async () => {
    const d = await check({ type: 'grep_files', payload: { path: ws, pattern: 'TOKEN' } });
    assert.deepEqual([d.decision, d.rules[0]], ['block', 'deny.any.env_file'], JSON.stringify(d));
    assert.match(d.reason, new RegExp(`searching the files below it reads \`${ws}/\\.env\``));
    assert.match(d.reason, /Bulwark checks every file a search would read/);
    assert.match(d.reason, new RegExp(`such as \`${ws}/docs\` or \`${ws}/src\``));
  });

  it('grep_files over the home directory is refused: it would read ~/.ssh/id_rsa', async () => {
    const d = await check({ type: 'grep_files', payload: { dir: '~', pattern: 'BEGIN' } });
    assert.deepEqual([d.decision, d.rules[0]], ['block', 'deny.home.ssh'], JSON.stringify(d));
    assert.match(d.reason, /\.ssh\/id_rsa/);
  });

  it('a narrower search, or one whose include filter leaves the protected file out, is allowed', async () => {
    assert.equal((await check({ type: 'grep_files', payload: { path: `${ws}/src`, pattern: 'TOKEN' } })).decision, 'allow');
    assert.equal((await check({ type: 'grep_files', payload: { path: ws, pattern: 'TOKEN', include: '*.ts' } })).decision, 'allow');
    assert.equal(
      (await check({ type: 'grep_files', payload: { path: ws, pattern: 'TOKEN', include: ['**/*.ts', '*.md'] } })).decision,
      'allow',
    );
    // A filter that admits .env, or one that cannot be read as a name filter, reads everything.
    assert.equal((await check({ type: 'grep_files', payload: { path: ws, pattern: 'TOKEN', include: '.e*' } })).decision, 'block');
    assert.equal((await check({ type: 'grep_files', payload: { path: ws, pattern: 'TOKEN', include: 'src/**' } })).decision, 'block');
  });

  it('a symlink below the searched directory counts as the file it points to', async () => {
    const link = path.join(ws, 'src/key');
    fs.symlinkSync(path.join(home, '.ssh/id_rsa'), link);
    try {
      const d = await check({ type: 'grep_files', payload: { path: `${ws}/src`, pattern: 'x' } });
      assert.deepEqual([d.decision, d.rules[0]], ['block', 'deny.home.ssh'], JSON.stringify(d));
      assert.deepEqual(nodeFileSystem.listTree(`${ws}/src`, 100)?.links, [link], 'the Node port says which entries are links');
      // A port that does not say which entries are links: every entry is resolved.
      const silent = new Engine({
        platform: 'linux',
        home,
        workspaceRoots: [ws],
        shellParser: parser,
        fs: {
          ...nodeFileSystem,
          listTree: (dir, limit) => {
            const t = nodeFileSystem.listTree(dir, limit);
            return t && { entries: t.entries, truncated: t.truncated };
          },
        },
      });
      const s = await silent.check({ type: 'grep_files', payload: { path: `${ws}/src`, pattern: 'x' }, sessionId: 'search' });
      assert.deepEqual([s.decision, s.rules[0]], ['block', 'deny.home.ssh'], JSON.stringify(s));
    } finally {
      fs.unlinkSync(link);
    }
  });

  it('listing: a recursive listing reads every directory below (so ~/.ssh), a plain one only the directory', async () => {
    assert.equal((await check({ type: 'list_directory', payload: { path: home } })).decision, 'allow');
    const r = await check({ type: 'list_directory', payload: { path: home, recursive: true } });
    assert.deepEqual([r.decision, r.rules[0]], ['block', 'deny.home.ssh'], JSON.stringify(r));
    assert.match(r.reason, /listing everything below it reads/);
    assert.equal((await check({ type: 'list_directory', payload: { path: home, depth: 1 } })).decision, 'allow');
    assert.equal((await check({ type: 'list_directory', payload: { path: home, max_depth: 3 } })).decision, 'block');
    // A name is not a file's contents: listing the workspace recursively shows `.env` but reads no protected directory.
    assert.equal((await check({ type: 'list_directory', payload: { path: ws, recursive: true } })).decision, 'allow');
    assert.equal((await check({ type: 'search_files', payload: { path: home } })).decision, 'block');
  });

  it('shell analysis reports what a command reads below a directory, and the filter that narrows it', () => {
    const searches = (cmd: string) => engine.analyzeCommand(cmd, ws).searches;
    assert.deepEqual(searches("grep -rn --include='*.ts' --include=*.md TODO src"), [
      { path: `${ws}/src`, mode: 'contents', names: ['*.ts', '*.md'] },
    ]);
    assert.deepEqual(searches('grep -n TODO src/app.ts'), []);
    // rg skips hidden entries below what it searches unless told otherwise (the protection check reads the ignore files).
    assert.deepEqual(searches('rg TODO'), [{ path: ws, mode: 'contents', skipsHidden: true }]);
    assert.deepEqual(searches('rg --hidden TODO'), [{ path: ws, mode: 'contents' }]);
    assert.deepEqual(
      searches("rg -g '!*.lock' TODO"),
      [{ path: ws, mode: 'contents', skipsHidden: true }],
      'an exclusion is no include filter',
    );
    assert.deepEqual(searches('rg --files src'), [{ path: `${ws}/src`, mode: 'names', skipsHidden: true }]);
    assert.deepEqual(searches('find . -name "*.ts"'), [{ path: ws, mode: 'names', names: ['*.ts'] }]);
    assert.deepEqual(searches('find . -name "*.pyc" -delete'), [], 'prints nothing');
    assert.deepEqual(searches('find src -type f -exec grep -l TODO {} +'), [{ path: `${ws}/src`, mode: 'contents' }]);
    assert.deepEqual(searches('find . -name "*.log" -print -exec rm {} +'), [{ path: ws, mode: 'names', names: ['*.log'] }]);
    assert.deepEqual(searches('ls -laR docs; tree src'), [
      { path: `${ws}/docs`, mode: 'names' },
      { path: `${ws}/src`, mode: 'names' },
    ]);
    assert.deepEqual(searches('ls -la docs; tree -L 1 src'), []);
    assert.deepEqual(searches('du -sh . ; du -ah src'), [{ path: `${ws}/src`, mode: 'names' }], 'du lists every file only with -a');
  });

  const SHELL: [string, string, string | undefined][] = [
    ['grep -rn TOKEN .', 'block', 'deny.any.env_file'],
    ["grep -rn --include='*.ts' TOKEN .", 'escalate', undefined],
    ['rg --hidden TOKEN', 'block', 'deny.any.env_file'],
    ['rg -uu TOKEN', 'block', 'deny.any.env_file'],
    ['rg TOKEN', 'escalate', undefined],
    ['rg -g "*.ts" TOKEN', 'escalate', undefined],
    ['rg TOKEN src', 'escalate', undefined],
    [`rg --hidden --files ${'~'}`, 'block', 'deny.home.ssh'],
    [`rg --files ${'~'}`, 'escalate', undefined],
    ['find . -type f -exec cat {} +', 'block', 'deny.any.env_file'],
    ['find ~', 'block', 'deny.home.ssh'],
    ["find ~ -name '*.md'", 'escalate', undefined],
    ['ls -R ~', 'block', 'deny.home.ssh'],
    ['ls -la ~', 'escalate', undefined],
    ['tree ~', 'block', 'deny.home.ssh'],
    ["find . -name '*.pyc' -delete", 'escalate', undefined],
  ];
  for (const [command, decision, rule] of SHELL) {
    it(`shell: ${command} → ${decision}${rule ? ` (${rule})` : ''}`, async () => {
      const d = await check({ type: 'execute_command', payload: { command } });
      assert.equal(d.decision, decision, JSON.stringify(d));
      if (rule) assert.equal(d.rules[0], rule, JSON.stringify(d));
    });
  }

  it('a directory too large to list counts as touched whole: Tier 2, and the protected locations the tables name below it count as read', async () => {
    const big = path.join(tmp, 'big');
    fs.mkdirSync(big);
    for (let i = 0; i < 5005; i++) fs.writeFileSync(path.join(big, `f${i}.txt`), '');
    const d = await check({ type: 'grep_files', payload: { path: big, pattern: 'x' } });
    assert.deepEqual([d.decision, d.minTier], ['escalate', 2], JSON.stringify(d));
    assert.ok(d.rules.includes('protection.tree_too_large'), d.rules.join());
    // The same size in the home directory: ~/.ssh, named by the tables, is read by the search.
    for (let i = 0; i < 5005; i++) fs.writeFileSync(path.join(home, `f${i}.txt`), '');
    try {
      fs.rmSync(path.join(home, '.ssh'), { recursive: true });
      const h = await check({ type: 'grep_files', payload: { path: home, pattern: 'x' } });
      assert.equal(h.decision, 'block', JSON.stringify(h));
      assert.ok(h.rules.includes('deny.home.ssh') && h.rules.includes('deny.home.aws'), h.rules.join());
      assert.ok(h.reason.includes(`\`${home}/.ssh\``), h.reason);
    } finally {
      for (let i = 0; i < 5005; i++) fs.rmSync(path.join(home, `f${i}.txt`));
      fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
      fs.writeFileSync(path.join(home, '.ssh/id_rsa'), 'x');
    }
  });
});

describe('IFC sinks for unknown tools', () => {
  let tmp: string;
  let ws: string;
  let home: string;
  before(() => {
    tmp = makeTempDir();
    ws = path.join(tmp, 'ws');
    home = path.join(tmp, 'home');
    for (const f of ['src/app.ts', 'docs/salary-2026.xlsx']) {
      fs.mkdirSync(path.dirname(path.join(ws, f)), { recursive: true });
      fs.writeFileSync(path.join(ws, f), 'x');
    }
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  function engine(): Engine {
    return new Engine({
      platform: 'linux',
      home,
      workspaceRoots: [ws],
      fs: nodeFileSystem,
      shield: buildShield({ policy: 'default', ifc: 'default', store: new MemoryStateStore(), home, platform: 'linux', mode: 'report' }),
    });
  }
  async function tainted(e: Engine, session: string): Promise<void> {
    const read = await e.check({ type: 'read_file', payload: { path: `${ws}/docs/salary-2026.xlsx` }, sessionId: session });
    assert.equal(read.decision, 'allow', JSON.stringify(read));
    e.recordExecuted(read);
  }

  it('an unknown MCP tool is a possible external sink: not "always allowed" once the session is tainted', async () => {
    const e = engine();
    const clean = await e.check({ type: 'mcp__slack__post_message', payload: { channel: '#general', text: 'done' }, sessionId: 'a' });
    assert.deepEqual([clean.decision, clean.ifc?.decision, clean.ifc?.rule], ['escalate', 'allow', 'ifc.public.external']);
    await tainted(e, 'a');
    const d = await e.check({ type: 'mcp__slack__post_message', payload: { channel: '#general', text: 'done' }, sessionId: 'a' });
    assert.deepEqual([d.decision, d.tier], ['block', 0], JSON.stringify(d));
    assert.ok(d.rules.includes('ifc.restricted.external'), d.rules.join());
    assert.match(d.reason, /salary-2026\.xlsx/);
  });

  it('a URL in any payload field is a flow to the network, even for a type that is no sink', async () => {
    const e = engine();
    await tainted(e, 'b');
    const d = await e.check({
      type: 'memory_search',
      payload: { query: 'pay', callback: 'https://93.184.215.14/collect?q=salary' },
      sessionId: 'b',
    });
    assert.deepEqual([d.decision, d.ifc?.rule], ['block', 'ifc.restricted.external'], JSON.stringify(d));
    assert.match(d.reason, /reaches the network \(https:\/\/93\.184\.215\.14\/collect\?q=salary\)/);
  });

  it('a known type the IFC policy does not name is judged by its sink kind (web_search like http_request, edit_file like write_file)', async () => {
    const e = engine();
    await tainted(e, 'c');
    const s = await e.check({ type: 'web_search', payload: { query: 'average salary' }, sessionId: 'c' });
    assert.deepEqual([s.decision, s.ifc?.rule], ['block', 'ifc.restricted.external'], JSON.stringify(s));
    const w = await e.check({ type: 'edit_file', payload: { path: `${ws}/src/app.ts`, old_text: 'a', new_text: 'b' }, sessionId: 'c' });
    assert.deepEqual([w.decision, w.ifc?.rule], ['escalate', 'ifc.restricted.workspace_write'], JSON.stringify(w));
  });

  it('a known read the IFC policy does not name is judged like read_file: still allowed after a restricted taint', async () => {
    const e = engine();
    await tainted(e, 'd');
    const d = await e.check({ type: 'git_status', payload: {}, sessionId: 'd' });
    assert.deepEqual([d.decision, d.ifc?.decision, d.ifc?.rule], ['allow', 'allow', 'ifc.restricted.workspace_read'], JSON.stringify(d));
  });

  it('a declared path field holding a URL is a network target, not a path', async () => {
    const e = engine();
    await tainted(e, 'e');
    const d = await e.check({
      type: 'copy_file',
      payload: { source: 'https://93.184.215.14/a.txt', destination: `${ws}/src/a.txt` },
      sessionId: 'e',
    });
    assert.equal(d.ifc?.decision, 'block', JSON.stringify(d));
    assert.match(d.reason, /reaches the network/);
  });
});
