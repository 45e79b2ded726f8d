// The sandbox plan (src/engine/sandbox/plan.ts): what the OS sandbox hides and keeps read-only, read
// off the protection tables and a real home and workspace on disk.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Engine, SandboxPlanError, type SandboxPlan } from '../../src/engine';
import { nodeFileSystem } from '../../src/node/fs-port';
import { makeTempDir } from './helpers/repo';

function world(): { base: string; home: string; ws: string; put: (p: string, text?: string) => string } {
  const base = makeTempDir('bulwark-plan-');
  const home = path.join(base, 'home');
  const ws = path.join(base, 'ws');
  fs.mkdirSync(home);
  fs.mkdirSync(ws);
  const put = (p: string, text = 'x') => {
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
    return p;
  };
  return { base, home, ws, put };
}

function planFor(home: string, ws: string): SandboxPlan {
  return new Engine({ platform: 'linux', home, workspaceRoots: [ws], fs: nodeFileSystem }).sandboxPlan([ws]);
}

const paths = (ms: readonly { path: string }[]) => ms.map((m) => m.path);

describe('sandbox plan: what the OS sandbox hides and keeps read-only', () => {
  it('hides the credential locations of the home directory that exist, whole directories as one mount', () => {
    const { home, ws, put } = world();
    put(path.join(home, '.ssh/id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----');
    put(path.join(home, '.ssh/id_rsa.pub'), 'ssh-ed25519 AAAA');
    put(path.join(home, '.aws/credentials'));
    put(path.join(home, '.git-credentials'));
    put(path.join(home, '.config/chromium/Default/Cookies'));
    put(path.join(home, '.bash_history'));
    put(path.join(home, 'notes.txt'));
    const plan = planFor(home, ws);
    const hidden = paths(plan.hidden);
    for (const p of ['.ssh', '.aws', '.git-credentials', '.bash_history'])
      assert.ok(hidden.includes(path.join(home, p)), `${p} hidden: ${hidden.join(', ')}`);
    assert.ok(
      hidden.some((h) => path.join(home, '.config/chromium/Default/Cookies').startsWith(h)),
      'the browser cookie store is hidden',
    );
    assert.ok(!hidden.some((h) => h === path.join(home, 'notes.txt') || h === home), 'an ordinary file and the home itself stay visible');
    assert.equal(plan.hidden.find((h) => h.path === path.join(home, '.ssh'))?.kind, 'directory');
    // Public keys are bound back, read-only, after ~/.ssh is hidden.
    assert.deepEqual(paths(plan.reexposed), [path.join(home, '.ssh/id_rsa.pub')]);
    // Only the hidden directory itself is mounted, nothing below it.
    assert.ok(!hidden.includes(path.join(home, '.ssh/id_rsa')));
  });

  it('hides credential files by name anywhere in the workspace, and keeps protected files there read-only', () => {
    const { home, ws, put } = world();
    put(path.join(ws, '.env'), 'A=1');
    put(path.join(ws, 'services/api/.env.production'), 'A=1');
    put(path.join(ws, 'keys/deploy.p12'));
    put(path.join(ws, '.git/hooks/pre-commit'));
    put(path.join(ws, '.vscode/settings.json'), '{}');
    put(path.join(ws, 'AGENTS.md'), '# agents');
    put(path.join(ws, 'src/index.ts'));
    const plan = planFor(home, ws);
    const hidden = paths(plan.hidden);
    for (const p of ['.env', 'services/api/.env.production', 'keys/deploy.p12'])
      assert.ok(hidden.includes(path.join(ws, p)), `${p} hidden: ${hidden.join(', ')}`);
    const ro = paths(plan.readOnly);
    for (const p of ['.git/hooks', '.vscode/settings.json', 'AGENTS.md'])
      assert.ok(
        ro.some((r) => path.join(ws, p).startsWith(r)),
        `${p} read-only: ${ro.join(', ')}`,
      );
    assert.ok(![...hidden, ...ro].some((p) => p.startsWith(path.join(ws, 'src'))), 'source files are neither hidden nor read-only');
    assert.deepEqual(plan.writable, [ws]);
  });

  it('puts placeholders where protected configuration directories are missing, and watches missing protected files', () => {
    const { home, ws, put } = world();
    put(path.join(ws, 'README.md'));
    const plan = planFor(home, ws);
    const guards = paths(plan.guardDirs);
    assert.ok(guards.includes(path.join(ws, '.devcontainer')), `guards: ${guards.join(', ')}`);
    assert.ok(guards.includes(path.join(ws, '.husky')));
    // Never a placeholder `.git` (an empty one is a broken repository), nor a non-dot directory.
    assert.ok(
      !guards.some((g) => /\/\.git(\/|$)/.test(g) || g.endsWith('/node_modules') || g.includes('/node_modules/')),
      guards.join(', '),
    );
    const watched = paths(plan.watchMissing);
    assert.ok(watched.includes(path.join(ws, '.vscode/settings.json')), `watched: ${watched.join(', ')}`);
    assert.ok(watched.includes(path.join(ws, 'AGENTS.md')));
  });

  it('refuses a writable root that the tables protect (the command would get write access to it)', () => {
    const { home, put } = world();
    put(path.join(home, '.ssh/id_rsa'));
    assert.throws(
      () => planFor(home, path.join(home, '.ssh')),
      (e: unknown) => e instanceof SandboxPlanError && /deny\.home\.ssh/.test(e.message),
    );
  });

  it('plans nothing below the trees the sandbox mounts afresh (/proc, /dev)', () => {
    const { home, ws } = world();
    const plan = planFor(home, ws);
    const all = [...plan.hidden, ...plan.readOnly, ...plan.guardDirs, ...plan.watchMissing].map((m) => m.path);
    assert.ok(
      !all.some((p) => p.startsWith('/proc/') || p.startsWith('/dev/')),
      all.filter((p) => p.startsWith('/proc') || p.startsWith('/dev')).join(', '),
    );
  });

  it('resolves a symlinked credential directory to what it points at', () => {
    const { base, home, ws, put } = world();
    put(path.join(base, 'elsewhere/aws/credentials'));
    fs.symlinkSync(path.join(base, 'elsewhere/aws'), path.join(home, '.aws'));
    const plan = planFor(home, ws);
    assert.ok(paths(plan.hidden).includes(path.join(base, 'elsewhere/aws')), paths(plan.hidden).join(', '));
  });
});
