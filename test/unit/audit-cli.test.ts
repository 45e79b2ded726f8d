// `bulwark audit verify|query|export` and `bulwark check --audit-log`. Runs the CLI's main() from this
// bundle in a child process (`node -e`): dist/cli.js needs better-sqlite3 copied beside it first.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { main } from '../../src/cli/main';
import { makeTempDir } from './helpers/repo';

export const cliMain = main;

function run(args: string[], input = '', env: Record<string, string> = {}) {
  const r = spawnSync(
    process.execPath,
    ['-e', `require(${JSON.stringify(__filename)}).cliMain(process.argv.slice(1)).then((c) => { process.exitCode = c; })`, ...args],
    { input, timeout: 60000, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 },
  );
  return { code: r.status, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}

if (typeof describe === 'function')
  describe('bulwark audit CLI', function () {
    this.timeout(120000);
    let tmp: string;
    let log: string;
    let db: string;
    before(() => {
      tmp = makeTempDir('bulwark-audit-cli-');
      log = path.join(tmp, 'audit.jsonl');
      db = path.join(tmp, 'state.db');
      fs.mkdirSync(path.join(tmp, 'home', '.ssh'), { recursive: true });
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it('check --audit-log appends each decision and creates a 0600 key file', () => {
      const input =
        [
          { id: 'a', session: 'sA', type: 'read_file', payload: { path: path.join(tmp, 'home', '.ssh', 'id_rsa') } },
          { id: 'b', session: 'sB', type: 'list_directory', payload: { path: tmp } },
        ]
          .map((l) => JSON.stringify(l))
          .join('\n') + '\n';
      const r = run(
        ['check', '--home', path.join(tmp, 'home'), '--no-resolve', '--policy', 'none', '--audit-log', log, '--audit-db', db],
        input,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim().split('\n').length, 2);
      assert.equal(fs.statSync(`${db}.key`).mode & 0o777, 0o600);
      const events = fs
        .readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).event as string);
      assert.equal(events[0], 'SESSION_STARTED');
      assert.equal(events.at(-1), 'SESSION_ENDED');
      assert.ok(events.includes('ACTION_BLOCKED') && events.includes('ACTION_PROPOSED') && events.includes('ACTION_EVALUATED'));
    });

    it('verify: exit 0 for an intact chain, 1 with the first broken entry otherwise', () => {
      const ok = run(['audit', 'verify', '--log', log, '--db', db]);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /entries checked/);
      assert.equal(run(['audit', 'verify', '--log', log, '--db', db, '--strict']).code, 0);
      const lines = fs.readFileSync(log, 'utf8').split('\n');
      const bad = path.join(tmp, 'bad.jsonl');
      fs.writeFileSync(bad, lines.slice(0, -2).join('\n') + '\n'); // drop the last entry
      fs.copyFileSync(db, path.join(tmp, 'bad.db'));
      fs.copyFileSync(`${db}.key`, path.join(tmp, 'bad.db.key'));
      const r = run(['audit', 'verify', '--log', bad, '--db', path.join(tmp, 'bad.db')]);
      assert.equal(r.code, 1);
      assert.match(r.stdout, /BROKEN: truncation/);
      const edited = lines.map((l, i) => (i === 2 ? l.replace('"session":"', '"session":"X') : l)).join('\n');
      fs.writeFileSync(bad, edited);
      const r2 = run(['audit', 'verify', '--log', bad, '--db', path.join(tmp, 'bad.db')]);
      assert.equal(r2.code, 1);
      assert.match(r2.stdout, /BROKEN: hash_mismatch at line 3/);
      assert.equal(run(['audit', 'verify', '--log', log, '--db', db], '', { BULWARK_AUDIT_KEY: 'a-different-key-entirely' }).code, 1);
    });

    it('query filters by session, type, since and decision', () => {
      const q = (args: string[]) =>
        run(['audit', 'query', '--log', log, ...args])
          .stdout.trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { session: string; event: string });
      assert.ok(q(['--session', 'sA']).every((e) => e.session === 'sA'));
      assert.ok(q(['--session', 'sA']).length >= 3);
      assert.deepEqual([...new Set(q(['--type', 'ACTION_BLOCKED']).map((e) => e.event))], ['ACTION_BLOCKED']);
      assert.ok(q(['--decision', 'block']).length >= 2);
      assert.ok(q(['--decision', 'block']).every((e) => e.session === 'sA'));
      assert.equal(q(['--since', '2999-01-01T00:00:00Z']).length, 0);
      assert.ok(q(['--since', '1h']).length > 0);
      assert.equal(run(['audit', 'query', '--log', log, '--type', 'NOPE']).code, 2);
    });

    it('export jsonl and csv', () => {
      const n = fs.readFileSync(log, 'utf8').trim().split('\n').length;
      const j = run(['audit', 'export', '--log', log, '--format', 'jsonl']);
      assert.equal(j.code, 0);
      assert.equal(j.stdout.trim().split('\n').length, n);
      const c = run(['audit', 'export', '--log', log, '--format', 'csv']);
      assert.equal(c.code, 0);
      const rows = c.stdout.trim().split('\r\n');
      assert.match(rows[0]!, /^seq,id,ts,session,event,action_type,decision,rules,reason,details,prev_hash,hash$/);
      assert.equal(rows.length, n + 1);
    });
  });
