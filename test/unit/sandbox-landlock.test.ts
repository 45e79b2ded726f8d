// Landlock, the second file-system layer of the OS sandbox (src/node/sandbox/landlock.ts), on the real
// kernel: alone (the Perl wrapper around a command) and inside bubblewrap, where a writable tmpfs the plan
// never named (/run) is still not writable.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { LANDLOCK_SCRIPT, landlockSupport, landlockWrapped } from '../../src/node/sandbox/landlock';
import { repoRoot } from './helpers/repo';

describe('sandbox: Landlock under the mounts', function () {
  this.timeout(60_000);
  let base: string;
  before(function () {
    const s = landlockSupport();
    if (!s.available) {
      console.log(`      (skipped: ${s.reason})`);
      this.skip();
    }
    base = fs.mkdtempSync('/var/tmp/bulwark-landlock-test-');
    fs.mkdirSync(path.join(base, 'ws'));
    fs.mkdirSync(path.join(base, 'outside'));
  });
  after(() => {
    if (base) fs.rmSync(base, { recursive: true, force: true });
  });

  it('restricts writes to the named directories and files; reads stay as they were', () => {
    const ws = path.join(base, 'ws');
    const outside = path.join(base, 'outside');
    fs.writeFileSync(path.join(outside, 'readable.txt'), 'still readable\n');
    const control = spawnSync('sh', ['-c', `touch ${outside}/control`]);
    assert.equal(control.status, 0, 'control: without Landlock the write works');
    const argv = landlockWrapped(
      landlockSupport().perl!,
      [ws, '/dev/null'],
      ['sh', '-c', `touch ${ws}/in && cat ${outside}/readable.txt && echo x > /dev/null && touch ${outside}/out; echo "out:$?"`],
    );
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(fs.existsSync(path.join(ws, 'in')), 'the named directory is writable');
    assert.match(r.stdout, /still readable/);
    assert.match(r.stdout, /out:1/);
    assert.match(r.stderr, /Permission denied/);
    assert.ok(!fs.existsSync(path.join(outside, 'out')), 'nothing was written outside');
  });

  it('never runs the command without the layer: a failing step exits 125 and says which', () => {
    const marker = path.join(base, 'ran');
    // An impossible prctl number makes setting no_new_privs fail.
    const r = spawnSync(landlockSupport().perl!, ['-e', LANDLOCK_SCRIPT, '999999', path.join(base, 'ws'), '--', 'touch', marker], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 125, r.stderr);
    assert.match(r.stderr, /Landlock could not be set up \(prctl\(PR_SET_NO_NEW_PRIVS\)/);
    assert.ok(!fs.existsSync(marker));
  });

  it('inside the sandbox a writable tmpfs the plan does not name (/run) refuses writes; the workspace and /tmp do not', () => {
    const cli = path.join(repoRoot(), 'dist', 'cli.js');
    if (!fs.existsSync(cli)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` before the unit tests');
    const ws = path.join(base, 'ws');
    const r = spawnSync(
      process.execPath,
      [
        cli,
        'exec',
        '--cwd',
        ws,
        '--workspace',
        ws,
        '--',
        'sh',
        '-c',
        'touch /run/probe; echo "run:$?"; touch /tmp/t && echo tmp-ok; touch in-ws && echo ws-ok',
      ],
      { encoding: 'utf8', cwd: ws },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /run:1/);
    assert.match(r.stderr, /\/run\/probe'?: Permission denied/);
    assert.match(r.stdout, /tmp-ok/);
    assert.match(r.stdout, /ws-ok/);
  });
});
