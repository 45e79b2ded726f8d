// The shell command analyser: the data-driven corpus (test/cases/shell/*.yaml) plus edge cases
// (parser failures, huge and malformed input, tree freeing, speed).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import type { Tree } from 'web-tree-sitter';
import { analyzeShell, MAX_COMMAND_LENGTH, type ShellAnalysis, type ShellContext, type ShellParser } from '../../src/engine/shell/analyze';
import type { Platform } from '../../src/engine/types';
import { createShellParser, loadShellParser } from '../../src/node/shell-grammar';
import { nodeFileSystem } from '../../src/node/fs-port';
import { itSeeded } from './helpers/seeds';

interface Case {
  cmd: string;
  cwd?: string;
  platform?: Platform;
  /** The class of command the case stands for (issue 12's classes), shown in the test's name. */
  class?: string;
  /**
   * Files and directories (relative to a fresh temporary directory `{tmp}`) the case needs on disk:
   * the analysis then gets the real file-system port, `{tmp}` in cmd/cwd/expect is that directory
   * and the home directory is `{tmp}/home`.
   */
  setup?: { files?: Record<string, string>; dirs?: string[] };
  expect: {
    reads?: string[];
    writes?: string[];
    deletes?: string[];
    globs?: { access: 'write' | 'delete'; dir: string; pattern: string; depth?: 'one' | 'tree' }[];
    network?: boolean;
    opaque?: boolean;
    /** How many effects need a review (Tier 2) / a human (Tier 3); default none. */
    reviews?: number;
    approvals?: number;
    commands?: string[];
    urls?: string[];
    sinks?: string[];
    searches?: { path: string; mode: 'contents' | 'names'; names?: string[] }[];
    errors?: boolean;
  };
}

/** The compiled test runs from out/test/unit/: walk up to the directory holding package.json. */
function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`package.json not found above ${__dirname}`);
    dir = up;
  }
  return dir;
}

const CASES_DIR = path.join(repoRoot(), 'test', 'cases', 'shell');
const HOME: Record<Platform, string> = { linux: '/home/u', darwin: '/Users/u', win32: 'C:\\Users\\u' };

function loadCases(): Array<{ file: string; cases: Case[] }> {
  return fs
    .readdirSync(CASES_DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => ({ file: f, cases: yaml.load(fs.readFileSync(path.join(CASES_DIR, f), 'utf8')) as Case[] }));
}

const sorted = (xs: readonly string[] | undefined) => [...(xs ?? [])].sort();

function ctxFor(c: Pick<Case, 'cwd' | 'platform'>): ShellContext {
  const platform = c.platform ?? 'linux';
  return { cwd: c.cwd, home: HOME[platform], platform };
}

describe('shell analyser', () => {
  let parser: ShellParser;
  before(async () => {
    parser = await loadShellParser();
  });

  describe('corpus (test/cases/shell)', () => {
    const all = loadCases();

    it('has at least 220 cases, each command unique within its platform', () => {
      const keys = all.flatMap(({ cases }) => cases.map((c) => `${c.platform ?? 'linux'}|${c.cwd ?? ''}|${c.cmd}`));
      assert.ok(keys.length >= 220, `only ${keys.length} cases`);
      const dup = keys.filter((k, i) => keys.indexOf(k) !== i);
      assert.deepEqual(dup, [], 'duplicate cases');
    });

    for (const { file, cases } of all) {
      describe(file, () => {
        for (const raw of cases) {
          it(`${raw.platform && raw.platform !== 'linux' ? `[${raw.platform}] ` : ''}${raw.class ? `[${raw.class}] ` : ''}${raw.cmd}`, () => {
            const tmp = raw.setup ? fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-shell-'))) : undefined;
            try {
              const c = tmp ? (JSON.parse(JSON.stringify(raw).split('{tmp}').join(tmp)) as Case) : raw;
              if (tmp) {
                for (const d of c.setup?.dirs ?? []) fs.mkdirSync(path.join(tmp, d), { recursive: true });
                for (const [f, text] of Object.entries(c.setup?.files ?? {})) {
                  fs.mkdirSync(path.dirname(path.join(tmp, f)), { recursive: true });
                  fs.writeFileSync(path.join(tmp, f), text);
                }
              }
              const ctx = tmp ? { ...ctxFor(c), home: path.join(tmp, 'home'), fs: nodeFileSystem } : ctxFor(c);
              check(c, analyzeShell(parser, c.cmd, ctx));
            } finally {
              if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
            }
          });
        }
      });
    }
  });

  function check(c: Case, got: ShellAnalysis): void {
    const e = c.expect;
    const show = JSON.stringify(got);
    assert.deepEqual(got.reads, sorted(e.reads), `reads: ${show}`);
    assert.deepEqual(got.writes, sorted(e.writes), `writes: ${show}`);
    assert.deepEqual(got.deletes, sorted(e.deletes), `deletes: ${show}`);
    const globKey = (g: { access: string; dir: string; pattern: string; depth?: string }) =>
      `${g.access} ${g.dir} ${g.pattern} ${g.depth ?? 'one'}`;
    assert.deepEqual(got.globs.map(globKey).sort(), (e.globs ?? []).map(globKey).sort(), `globs: ${show}`);
    assert.equal(got.network, e.network ?? false, `network: ${show}`);
    assert.equal(got.opaque, e.opaque ?? false, `opaque: ${show}`);
    assert.equal(got.opaque, got.opaqueReasons.length > 0, `opaque needs a reason: ${show}`);
    assert.equal(got.reviews.length, e.reviews ?? 0, `reviews: ${show}`);
    assert.equal(got.approvals.length, e.approvals ?? 0, `approvals: ${show}`);
    if (e.commands) assert.deepEqual(got.commands, e.commands, `commands: ${show}`);
    if (e.urls) assert.deepEqual(sorted(got.urls), sorted(e.urls), `urls: ${show}`);
    if (e.sinks) assert.deepEqual(sorted(got.sinks), sorted(e.sinks), `sinks: ${show}`);
    if (e.searches) {
      const key = (x: { path: string; mode: string; names?: string[] }) => `${x.mode} ${x.path} ${(x.names ?? []).join(',')}`;
      assert.deepEqual(got.searches.map(key).sort(), e.searches.map(key).sort(), `searches: ${show}`);
    }
    if (e.errors !== undefined) assert.equal(got.errors.length > 0, e.errors, `errors: ${show}`);
  }

  describe('parser loading', () => {
    it('loads once and returns the same parser', async () => {
      const a = loadShellParser();
      const b = loadShellParser();
      assert.equal(await a, await b);
    });

    it('rejects with a clear error when the grammar file is missing', async () => {
      await assert.rejects(
        createShellParser({ grammarWasm: '/nonexistent/tree-sitter-bash.wasm' }),
        /cannot find tree-sitter-bash\.wasm at \/nonexistent/,
      );
    });

    it('rejects with a clear error when the grammar file is not a grammar', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-shell-'));
      const bogus = path.join(dir, 'tree-sitter-bash.wasm');
      fs.writeFileSync(bogus, 'not webassembly');
      try {
        await assert.rejects(createShellParser({ grammarWasm: bogus }), (e: Error) =>
          e.message.startsWith(`cannot load the bash grammar from ${bogus}`),
        );
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('still parses after a failed load', async () => {
      const again = await createShellParser();
      const r = analyzeShell(again, 'rm /tmp/x', { home: '/home/u', platform: 'linux' });
      assert.deepEqual(r.deletes, ['/tmp/x']);
    });

    it('fails closed when the parser throws', () => {
      const broken: ShellParser = {
        parse() {
          throw new Error('wasm trap');
        },
      };
      const r = analyzeShell(broken, 'rm -rf /', { home: '/home/u', platform: 'linux' });
      assert.equal(r.opaque, true);
      assert.match(r.errors.join(' '), /parser failed: wasm trap/);
    });

    it('fails closed when the parser returns no tree', () => {
      const r = analyzeShell({ parse: () => null }, 'ls', { home: '/home/u', platform: 'linux' });
      assert.equal(r.opaque, true);
      assert.ok(r.errors.length > 0);
    });

    it('frees every tree it parses, including nested -c strings', () => {
      let parsed = 0;
      let freed = 0;
      const counting: ShellParser = {
        parse(text: string) {
          const t = parser.parse(text);
          if (!t) return t;
          parsed++;
          const del = t.delete.bind(t);
          (t as Tree).delete = () => {
            freed++;
            del();
          };
          return t;
        },
      };
      analyzeShell(counting, `bash -c "sh -c 'rm x'" && eval 'ls' && watch 'echo hi'`, { cwd: '/w', home: '/home/u', platform: 'linux' });
      assert.ok(parsed >= 4, `parsed ${parsed}`);
      assert.equal(freed, parsed);
    });
  });

  describe('hostile input', () => {
    const ctx: ShellContext = { cwd: '/w', home: '/home/u', platform: 'linux' };

    // How long these take is measured in `npm run bench` (bench/limits.ts), not asserted here (issue 15).
    it('rejects a 1 MB command as opaque with an error', () => {
      const big = 'echo ' + 'a'.repeat(1024 * 1024);
      const r = analyzeShell(parser, big, ctx);
      assert.equal(r.opaque, true);
      assert.match(r.errors.join(' '), /too long/);
    });

    it('analyses a command of many statements (just under the size limit)', () => {
      const cmd = 'touch /tmp/f; '.repeat(Math.floor((MAX_COMMAND_LENGTH - 100) / 14));
      const r = analyzeShell(parser, cmd, ctx);
      assert.deepEqual(r.writes, ['/tmp/f']);
    });

    it('stops walking a tree with too many nodes and reports it as opaque', () => {
      const cmd = 'a;'.repeat(Math.floor((MAX_COMMAND_LENGTH - 100) / 2));
      const r = analyzeShell(parser, cmd, ctx);
      assert.equal(r.opaque, true);
      assert.match(r.errors.join(' '), /analysis stopped/);
    });

    it('analyses a large literal heredoc (a file written by an agent)', () => {
      const body = 'line of text with $ and ` and \\ chars\n'.repeat(5000);
      const r = analyzeShell(parser, `cat > notes.md <<'EOF'\n${body}EOF\n`, ctx);
      assert.deepEqual(r.writes, ['/w/notes.md']);
      assert.equal(r.opaque, false);
    });

    it('survives deep nesting without overflowing the stack', () => {
      const depth = 3000;
      const cmd = 'echo ' + '$('.repeat(depth) + 'rm x' + ')'.repeat(depth);
      const r = analyzeShell(parser, cmd, ctx);
      assert.equal(r.opaque, true);
    });

    it('treats a NUL byte as opaque and analyses only what bash would run', () => {
      const r = analyzeShell(parser, 'cat /etc/hostname\0; rm -rf /', ctx);
      assert.equal(r.opaque, true);
      assert.match(r.errors.join(' '), /NUL/);
      assert.deepEqual(r.deletes, []);
      assert.deepEqual(r.reads, ['/etc/hostname']);
    });

    it('handles lone surrogates and replacement characters', () => {
      const r = analyzeShell(parser, 'rm "\uD800x" \uFFFD\uDFFF.txt', ctx);
      assert.equal(r.deletes.length, 2);
      assert.equal(r.opaque, false);
    });

    it('handles control characters and ANSI-C strings with NUL escapes', () => {
      const r = analyzeShell(parser, "rm $'a\\x00b' \u0001\u0002", ctx);
      assert.ok(r.opaque || r.errors.length > 0 || r.deletes.length > 0);
    });

    itSeeded('never throws on random input', 42, (fresh) => {
      const alphabet = [
        'a',
        ' ',
        '"',
        "'",
        '$',
        '(',
        ')',
        '{',
        '}',
        '`',
        '\\',
        '|',
        '&',
        ';',
        '<',
        '>',
        '*',
        '~',
        '/',
        '\n',
        '#',
        '=',
        '-',
        'rm',
        'cd',
        'EOF',
        '<<',
      ];
      let seed = fresh & 0x7fffffff;
      const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
      for (let n = 0; n < 400; n++) {
        let s = '';
        const len = 1 + Math.floor(rand() * 40);
        for (let i = 0; i < len; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
        const r: ShellAnalysis = analyzeShell(parser, s, ctx);
        assert.equal(r.opaque, r.opaqueReasons.length > 0, s);
      }
    });
  });

  // Speed (typical commands, p99 < 5 ms) is measured in `npm run bench` (bench/limits.ts), not asserted here (issue 15).
});
