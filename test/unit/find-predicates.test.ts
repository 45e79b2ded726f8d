// Issue 14 (hard blocks for real harm only): `find` deletes only what its expression selects.
// The expression is evaluated on a real temporary tree through the real file-system port, with a
// clock port fixed by the test; protection then checks exactly the selected entries.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Engine, type CheckResult, type ShellParser } from '../../src/engine';
import type { ClockPort } from '../../src/engine/ports';
import { analyzeShell, type ShellAnalysis } from '../../src/engine/shell/analyze';
import { FIND_CLOCK_MARGIN_MS, MAX_FIND_SELECTED } from '../../src/engine/shell/find-expr';
import { nodeFileSystem } from '../../src/node/fs-port';
import { loadShellParser } from '../../src/node/shell-grammar';
import { makeTempDir } from './helpers/repo';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** The tests' "now": every file time is set relative to it, and the clock port answers it. */
const NOW = Math.floor(Date.now() / 1000) * 1000 - 7 * DAY;
const clockAt = (ms: number): ClockPort => ({ now: () => ms });

describe('find: the expression decides what is deleted (issue 14)', () => {
  let parser: ShellParser;
  let tmp: string;
  let ws: string;
  let home: string;

  /** A file `rel` below the workspace, `ageMs` old (modification and access time), with `bytes` bytes. */
  const put = (rel: string, ageMs = 0, bytes = 1) => {
    const p = path.join(ws, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, 'x'.repeat(bytes));
    age(rel, ageMs);
  };
  const age = (rel: string, ageMs: number) => {
    const t = (NOW - ageMs) / 1000;
    fs.utimesSync(path.join(ws, rel), t, t);
  };
  /** The fixture's files and their ages; directories last (creating entries in them changes their times). */
  const FIXTURE: Array<[string, number, number?]> = [
    // Protected and recent: Bulwark's state, an agent instruction file, a private key by name.
    ['.bulwark/audit.jsonl', 2 * MINUTE, 40],
    ['SOUL.md', 2 * MINUTE, 30],
    ['keys/id_ed25519', 2 * MINUTE, 60],
    // Ordinary files of every age and size.
    ['logs/old.log', 40 * DAY, 100],
    ['logs/new.log', 1 * DAY, 100],
    ['logs/deep/older.log', 90 * DAY, 100],
    ['build/big.bin', 3 * DAY, 20 * 1024],
    ['build/empty.o', 3 * DAY, 0],
    ['a.tmp', 5 * DAY, 5],
    ['node_modules/pkg/stale.log', 50 * DAY, 10],
  ];
  const DIRS = [
    'logs/deep',
    'logs',
    'build',
    'cache/nested/leaf',
    'cache/nested',
    'cache',
    'node_modules/pkg',
    'node_modules',
    'keys',
    '.bulwark',
    '.',
  ];
  /** Reading a file (protection reads heads) moves its access time: every test starts from the fixture's times. */
  const resetTimes = () => {
    for (const [rel, ageMs] of FIXTURE) age(rel, ageMs);
    for (const d of DIRS) age(d, 2 * MINUTE);
  };

  before(async () => {
    parser = await loadShellParser();
    tmp = fs.realpathSync(makeTempDir());
    ws = path.join(tmp, 'ws');
    home = path.join(tmp, 'home');
    fs.mkdirSync(home);
    for (const [rel, ageMs, bytes] of FIXTURE) put(rel, ageMs, bytes);
    fs.mkdirSync(path.join(ws, 'cache/nested/leaf'), { recursive: true });
  });
  beforeEach(resetTimes);
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  /** Shell analysis at the tests' "now" (`null`: with no clock at all). */
  const analyse = (command: string, clock: ClockPort | null = clockAt(NOW)): ShellAnalysis =>
    analyzeShell(parser, command, { cwd: ws, home, platform: 'linux', fs: nodeFileSystem, ...(clock ? { clock } : {}) });
  /** The deleted paths, relative to the workspace (`.` for the workspace itself). */
  const deleted = (command: string, clock?: ClockPort | null): string[] => {
    const a = analyse(command, clock);
    assert.deepEqual(a.globs, [], `${command}: ${JSON.stringify(a.globs)}`);
    return a.deletes.map((p) => path.relative(ws, p) || '.').sort();
  };
  const decide = (command: string, clock: ClockPort = clockAt(NOW)): Promise<CheckResult> =>
    new Engine({
      platform: 'linux',
      home,
      workspaceRoots: [ws],
      selfPaths: [path.join(tmp, 'state')],
      fs: nodeFileSystem,
      shellParser: parser,
      clock,
    }).check({ type: 'execute_command', payload: { command }, sessionId: 'find', cwd: ws });
  const show = (d: CheckResult) => JSON.stringify({ decision: d.decision, rules: d.rules, reason: d.reason });

  describe('each test the analysis can answer selects exactly the entries it is true for', () => {
    const cases: Array<[string, string[]]> = [
      ['find . -mtime +30 -delete', ['logs/deep/older.log', 'logs/old.log', 'node_modules/pkg/stale.log']],
      ['find logs -mtime +60 -delete', ['logs/deep/older.log']],
      ['find . -mmin -10 -type f -delete', ['.bulwark/audit.jsonl', 'SOUL.md', 'keys/id_ed25519']],
      ['find . -atime +45 -delete', ['logs/deep/older.log', 'node_modules/pkg/stale.log']],
      ['find . -size +10k -delete', ['build/big.bin']],
      ['find . -type f -size -1c -delete', ['build/empty.o']],
      // GNU rounds up to whole units (-size -1M: only what is empty), BSD and BusyBox compare bytes (under 1 MiB): either counts.
      ['find build -type f -size -1M -delete', ['build/big.bin', 'build/empty.o']],
      ['find . -size 5c -delete', ['a.tmp']],
      ['find . -empty -delete', ['build/empty.o', 'cache', 'cache/nested', 'cache/nested/leaf']],
      ['find . -type d -empty -delete', ['cache', 'cache/nested', 'cache/nested/leaf']],
      ['find . -name "*.log" -mtime -7 -delete', ['logs/new.log']],
      ['find . -iname "*.LOG" -mtime +2 -delete', ['logs/deep/older.log', 'logs/old.log', 'node_modules/pkg/stale.log']],
      ['find . -path "./logs/*" -mtime +30 -delete', ['logs/deep/older.log', 'logs/old.log']],
      ['find . -newer logs/new.log -type f -delete', ['.bulwark/audit.jsonl', 'SOUL.md', 'keys/id_ed25519']],
      [
        'find . -type f ! -newer build/big.bin -delete',
        ['a.tmp', 'build/big.bin', 'build/empty.o', 'logs/deep/older.log', 'logs/old.log', 'node_modules/pkg/stale.log'],
      ],
      ['find . -maxdepth 2 -mtime +30 -delete', ['logs/old.log']],
      ['find . -mindepth 3 -name "*.log" -size +0 -delete', ['logs/deep/older.log', 'node_modules/pkg/stale.log']],
    ];
    for (const [command, want] of cases) {
      it(command, () => assert.deepEqual(deleted(command), want.sort()));
    }
  });

  describe('operators: -o, !, parentheses, and only what reaches the action', () => {
    const cases: Array<[string, string[]]> = [
      // -a binds tighter than -o: only *.tmp entries reach -delete.
      ["find . -name '*.log' -o -name '*.tmp' -delete", ['a.tmp']],
      // SOUL.md makes the first alternative true: it never reaches -delete.
      ["find . -name 'SOUL.*' -o -name '*.md' -delete", []],
      [
        "find . \\( -name '*.log' -o -name '*.tmp' \\) -mtime +4 -delete",
        ['a.tmp', 'logs/deep/older.log', 'logs/old.log', 'node_modules/pkg/stale.log'],
      ],
      ["find logs ! -name 'new.log' -type f -delete", ['logs/deep/older.log', 'logs/old.log']],
      ['find logs -not -mtime -30 -type f -delete', ['logs/deep/older.log', 'logs/old.log']],
      ["find . -name '*.log' -mtime +30 , -name '*.tmp' -delete", ['a.tmp']],
      // With -delete, -prune does nothing (it implies -depth): node_modules is still searched.
      [
        "find . -name node_modules -prune -o -name '*.log' -mtime +30 -delete",
        ['logs/deep/older.log', 'logs/old.log', 'node_modules/pkg/stale.log'],
      ],
      ["find . -name node_modules -prune -o -name '*.log' -mtime +30 -exec rm {} +", ['logs/deep/older.log', 'logs/old.log']],
      ['find . -type f -mtime +30 -execdir rm -f {} \\;', ['logs/deep/older.log', 'logs/old.log', 'node_modules/pkg/stale.log']],
      ['find . -mtime +30 -type f -exec unlink {} \\;', ['logs/deep/older.log', 'logs/old.log', 'node_modules/pkg/stale.log']],
      // Tests after the action do not narrow what it acts on.
      ['find logs -type f -delete -mtime +30', ['logs/deep/older.log', 'logs/new.log', 'logs/old.log']],
    ];
    for (const [command, want] of cases) {
      it(command, () => assert.deepEqual(deleted(command), want.sort()));
    }
  });

  describe('protection checks exactly the selected entries', () => {
    for (const command of [
      'find . -mtime +30 -delete',
      'find . -size +10k -delete',
      'find . -empty -delete',
      "find . -name '*.log' -o -name '*.tmp' -delete",
      "find . -name '*.log' -o -name '*.tmp' -exec rm -rf {} +",
      'find . -mtime +30 -execdir rm {} \\;',
      'find . -type f -mtime +30 -print0 | xargs -0 rm -f',
      'find . -type f -mtime +30 | xargs rm',
    ]) {
      it(`a protected file that does not match is not deleted: ${command}`, async () => {
        const d = await decide(command);
        assert.notEqual(d.decision, 'block', show(d));
      });
    }
    for (const [command, rule] of [
      ['find . -mmin -10 -type f -delete', 'self.workspace_state'],
      ["find . ! -name 'SOUL.*' -size -1k -type f -delete", 'self.workspace_state'],
      ["find . -name '*.tmp' -o -mmin -10 -name '*.md' -delete", 'ws.soul'],
      ['find . -type f -size +50c -size -200c -exec rm {} +', 'deny.any.ssh_private_key'],
      ['find . -mtime -1 -name "*.md" -delete', 'ws.soul'],
      // A matched directory removed with rm -rf takes what is below it.
      ['find . -maxdepth 1 -type d -mmin -10 -exec rm -rf {} +', 'self.workspace_state'],
      ['find . -type f -size +50c -size -200c | xargs rm -f', 'deny.any.ssh_private_key'],
    ] as const) {
      it(`one that matches is: ${command}`, async () => {
        const d = await decide(command);
        assert.equal(d.decision, 'block', show(d));
        assert.ok(d.rules.includes(rule), show(d));
      });
    }
  });

  describe('what cannot be evaluated keeps the whole start directory (fail closed)', () => {
    for (const command of [
      'find -L . -mtime +30 -delete',
      'find . -daystart -mtime +30 -delete',
      'find . -follow -size +10k -delete',
      'find . -mtime +30 -files0-from list -delete',
      'find . -mtime +30 -frobnicate -delete',
    ]) {
      it(command, async () => {
        assert.deepEqual(deleted(command), ['.']);
        const d = await decide(command);
        assert.equal(d.decision, 'block', show(d));
        assert.ok(d.rules.includes('self.workspace_state'), show(d));
      });
    }

    it('a start directory or an operator that is not literal is unknown', () => {
      for (const command of ['find "$DIR" -mtime +30 -delete', 'find . -mtime +30 "$OP" -delete']) {
        const a = analyse(command);
        assert.ok(a.opaque || a.deletes.includes(ws), `${command}: ${JSON.stringify(a)}`);
      }
    });

    it('a test it cannot answer (owner, regex) may be true: the entries it could select all count', () => {
      assert.ok(deleted('find . -user nobody -mtime +30 -delete').length === 3);
      const all = deleted('find logs -regex ".*x" -delete');
      assert.deepEqual(all, ['logs', 'logs/deep', 'logs/deep/older.log', 'logs/new.log', 'logs/old.log']);
    });

    it('more matches than it checks one by one: the whole directory, as before', async () => {
      const many = path.join(ws, 'many');
      fs.mkdirSync(many);
      try {
        for (let i = 0; i <= MAX_FIND_SELECTED; i++) fs.writeFileSync(path.join(many, `f${i}.tmp`), '');
        fs.mkdirSync(path.join(many, '.bulwark'));
        assert.deepEqual(deleted('find many -empty -delete'), ['many']);
        assert.deepEqual(deleted('find many -name "f1*.tmp" -empty -delete').length, 1111);
      } finally {
        fs.rmSync(many, { recursive: true, force: true });
      }
    });
  });

  describe('the clock is a port, and an age close to the limit counts as matching', () => {
    it('the same tree, later: more files are old enough', () => {
      assert.deepEqual(deleted('find logs -type f -mtime +30 -delete', clockAt(NOW)), ['logs/deep/older.log', 'logs/old.log']);
      assert.deepEqual(deleted('find logs -type f -mtime +30 -delete', clockAt(NOW + 60 * DAY)), [
        'logs/deep/older.log',
        'logs/new.log',
        'logs/old.log',
      ]);
      assert.deepEqual(deleted('find logs -type f -mtime +30 -delete', clockAt(NOW - 80 * DAY)), []);
    });

    it(`within ${FIND_CLOCK_MARGIN_MS / MINUTE} minutes of the limit, either reading counts (the stricter one)`, () => {
      const f = 'clock/edge.tmp';
      put(f, 55 * MINUTE);
      try {
        // 55 minutes old: -mmin +60 may hold by the time the command runs; so may its negation.
        assert.deepEqual(deleted('find clock -type f -mmin +60 -delete'), [f]);
        assert.deepEqual(deleted('find clock -type f ! -mmin +60 -delete'), [f]);
        // Far from the limit it is certain both ways.
        assert.deepEqual(deleted('find clock -type f -mmin +120 -delete'), []);
        assert.deepEqual(deleted('find clock -type f ! -mmin +10 -delete'), []);
      } finally {
        fs.rmSync(path.join(ws, 'clock'), { recursive: true, force: true });
      }
    });

    it('without a clock, every age test may hold', () => {
      assert.deepEqual(deleted('find logs -type f -mtime +30 -delete', null), ['logs/deep/older.log', 'logs/new.log', 'logs/old.log']);
    });
  });

  describe('find feeding xargs: the names it prints', () => {
    it('xargs rm removes exactly what find prints (-print and -print0 | xargs -0)', () => {
      for (const command of [
        'find . -type f -mtime +30 | xargs rm',
        'find . -type f -mtime +30 -print0 | xargs -0 rm -f',
        'find logs -name "*.log" -mtime +30 -print | xargs -I{} rm {}',
      ]) {
        const want = command.startsWith('find logs')
          ? ['logs/deep/older.log', 'logs/old.log']
          : ['logs/deep/older.log', 'logs/old.log', 'node_modules/pkg/stale.log'];
        assert.deepEqual(deleted(command), want, command);
        // The -exec form's analysis, not a review of unknown names: xargs gets exactly what find printed.
        assert.equal(analyse(command).opaque, false, command);
      }
    });

    it('xargs cat reads exactly the printed files, and the listing is only of the printed names', () => {
      const a = analyse('find logs -mtime +30 -type f | xargs cat');
      assert.deepEqual(
        a.reads
          .filter((p) => p.endsWith('.log'))
          .map((p) => path.relative(ws, p))
          .sort(),
        ['logs/deep/older.log', 'logs/old.log'],
      );
      assert.deepEqual(
        a.searches.map((x) => ({ ...x, names: x.names?.slice().sort() })),
        [{ path: path.join(ws, 'logs'), mode: 'names', names: ['old.log', 'older.log'] }],
      );
    });

    it('the start directory `.` is never removed (find and rm refuse it); printed, it is not passed on as a name', () => {
      age('.', 40 * DAY);
      assert.deepEqual(deleted('find . -mtime +30 -exec rm -rf {} +'), [
        'logs/deep/older.log',
        'logs/old.log',
        'node_modules/pkg/stale.log',
      ]);
      assert.deepEqual(deleted('find . -mtime +30 -delete'), ['logs/deep/older.log', 'logs/old.log', 'node_modules/pkg/stale.log']);
      const piped = analyse('find . -mtime +30 | xargs rm -rf');
      assert.equal(piped.opaque, true);
      assert.ok(!piped.deletes.includes(ws), JSON.stringify(piped.deletes));
    });

    it('names xargs would split differently, or an output that is not only names, stay as before', () => {
      put('odd/a b.log', 40 * DAY);
      try {
        const a = analyse('find odd -mtime +30 | xargs rm');
        assert.equal(a.opaque, true);
        assert.deepEqual(a.deletes, []);
        assert.equal(analyse('find logs -mtime +30 -printf "%p\\n" | xargs rm').opaque, true);
      } finally {
        fs.rmSync(path.join(ws, 'odd'), { recursive: true, force: true });
      }
    });
  });
});
