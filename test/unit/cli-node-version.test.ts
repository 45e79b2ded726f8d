// The CLI on a Node.js too old for its native modules: better-sqlite3 13 dies with a segmentation
// fault there, so every subcommand but --help refuses first, with one line that says what is needed.
// Runs the built dist/cli.js with an older node found on this machine (Debian's /usr/bin/node).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MIN_NODE_MAJOR, nodeVersionProblem } from '../../src/cli/node-version';
import { MIN_NODE_MAJOR as HOOK_MIN_NODE_MAJOR } from '../../src/cli/hook';
import { makeTempDir, repoRoot } from './helpers/repo';

const CLI = path.join(repoRoot(), 'dist', 'cli.js');

/** A node binary older than MIN_NODE_MAJOR on this machine, with its version. */
function oldNode(): { bin: string; version: string } | undefined {
  const candidates = new Set(['/usr/bin/node', '/usr/local/bin/node', '/bin/node']);
  try {
    for (const p of execFileSync('which', ['-a', 'node'], { encoding: 'utf8' }).split('\n')) if (p.trim()) candidates.add(p.trim());
  } catch {
    /* no which */
  }
  for (const bin of candidates) {
    if (!fs.existsSync(bin)) continue;
    const version = spawnSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 10000 }).stdout?.trim();
    if (version && Number(version.split('.')[0]) < MIN_NODE_MAJOR) return { bin, version };
  }
  return undefined;
}

describe('bulwark CLI on a Node.js that is too old', () => {
  it('the CLI, the hook and package.json engines name the same minimum', () => {
    assert.equal(HOOK_MIN_NODE_MAJOR, MIN_NODE_MAJOR);
    const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as { engines: Record<string, string> };
    assert.equal(manifest.engines.node, `>=${MIN_NODE_MAJOR}`);
    assert.equal(manifest.engines.vscode, '^1.104.0');
    assert.equal(nodeVersionProblem(`${MIN_NODE_MAJOR}.0.0`), undefined);
    assert.match(
      nodeVersionProblem('20.20.2') ?? '',
      new RegExp(`^Node\\.js ${MIN_NODE_MAJOR} or newer is needed \\(this is v20\\.20\\.2\\); install it from https://nodejs\\.org`),
    );
  });

  it('every subcommand refuses with one line and exit 2 instead of crashing; --help still answers', function () {
    const old: { bin: string; version: string } | undefined = oldNode();
    if (!old) {
      this.skip();
      return;
    } // no Node older than the minimum on this machine: nothing to run it with
    if (!fs.existsSync(CLI)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` before the unit tests');
    const tmp = makeTempDir();
    try {
      const runs: string[][] = [
        ['check', '--audit-log', path.join(tmp, 'audit.jsonl'), '--audit-db', path.join(tmp, 'audit.db')],
        ['audit', 'verify', '--log', path.join(tmp, 'audit.jsonl')],
        ['scan'],
        ['redact'],
        ['shell', '--', 'ls'],
        ['policy', 'validate', path.join(tmp, 'p.yaml')],
        ['hooks', 'status'],
      ];
      for (const args of runs) {
        const r: ReturnType<typeof spawnSync> & { stdout: string; stderr: string } = spawnSync(old.bin, [CLI, ...args], {
          input: '{"id":"1","type":"read_file","payload":{"path":"/tmp/x"}}\n',
          encoding: 'utf8',
          timeout: 30000,
        });
        const what: string = `${old.bin} (v${old.version}) dist/cli.js ${args.join(' ')}`;
        assert.equal(r.signal, null, `${what}: killed by ${r.signal}`);
        assert.equal(r.status, 2, `${what}: exit ${r.status}, stderr ${r.stderr}`);
        assert.equal(r.stdout, '', what);
        assert.equal(r.stderr, `bulwark: ${nodeVersionProblem(old.version)}\n`, what);
      }
      assert.ok(!fs.existsSync(path.join(tmp, 'audit.db')), 'nothing was created');
      const help = spawnSync(old.bin, [CLI, '--help'], { encoding: 'utf8', timeout: 30000 });
      assert.equal(help.status, 0, help.stderr);
      assert.match(help.stdout, /^usage:/);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
