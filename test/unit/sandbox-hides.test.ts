// What a decision relies on the sandbox hiding (sandboxHides): added to the plan by name, and refused whole
// when it cannot be honoured or arrives malformed over the hook bridge (fail closed).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SandboxPlanError, withRequiredHides, type SandboxPlan } from '../../src/engine';
import { nodeFileSystem } from '../../src/node/fs-port';
import { parseAnswer } from '../../src/node/hooks/bridge-client';
import { makeTempDir } from './helpers/repo';

const emptyPlan = (writable: string): SandboxPlan => ({
  hidden: [],
  readOnly: [],
  guardDirs: [],
  watchMissing: [],
  reexposed: [],
  writable: [writable],
  incomplete: [],
});

describe('sandbox hides a decision relies on', () => {
  it('adds each existing path by name (a directory as a directory), skips a missing one and one already hidden', () => {
    const root = makeTempDir('bulwark-hides-');
    try {
      fs.mkdirSync(path.join(root, 'secrets'));
      fs.writeFileSync(path.join(root, '.env'), 'A=1\n');
      fs.writeFileSync(path.join(root, 'secrets', 'k.pem'), 'x');
      const plan = withRequiredHides(
        emptyPlan(root),
        [
          { path: path.join(root, '.env'), ruleId: 'r1' },
          { path: path.join(root, 'secrets'), ruleId: 'r2' },
          { path: path.join(root, 'secrets', 'k.pem'), ruleId: 'r3' },
          { path: path.join(root, 'gone.env'), ruleId: 'r4' },
        ],
        nodeFileSystem,
        'linux',
      );
      assert.deepEqual(
        plan.hidden.map((m) => [path.relative(root, m.path), m.kind, m.ruleId]),
        [
          ['.env', 'file', 'r1'],
          ['secrets', 'directory', 'r2'],
        ],
      );
      assert.equal(withRequiredHides(plan, [], nodeFileSystem, 'linux'), plan, 'nothing required: the plan as it was');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses a relative path, or a port that cannot state files, instead of running without the hide', () => {
    assert.throws(() => withRequiredHides(emptyPlan('/w'), [{ path: 'rel/.env', ruleId: 'r' }], nodeFileSystem, 'linux'), SandboxPlanError);
    const { statFile: _s, ...noStat } = nodeFileSystem;
    assert.throws(() => withRequiredHides(emptyPlan('/w'), [{ path: '/w/.env', ruleId: 'r' }], noStat, 'linux'), /cannot state files/);
  });

  it('the hook refuses a bridge decision whose sandboxHides is malformed, and keeps a well-formed one', () => {
    const line = (hides: unknown) =>
      Buffer.from(
        JSON.stringify({
          v: 1,
          ok: true,
          decision: { decision: 'allow', tier: 0, minTier: 0, level: 'unprotected', rules: [], reason: '', sandboxHides: hides },
        }),
      );
    for (const bad of ['x', [{ path: 'rel', ruleId: 'r' }], [{ path: '/a' }], [{ path: '/a\0b', ruleId: 'r' }]]) {
      assert.equal(parseAnswer(line(bad), 'decide'), 'a decision with malformed sandboxHides', JSON.stringify(bad));
    }
    const ok = parseAnswer(line([{ path: '/w/.env', ruleId: 'deny.any.env_file' }]), 'decide');
    assert.deepEqual(typeof ok === 'object' && ok.ok ? ok.decision?.sandboxHides : ok, [{ path: '/w/.env', ruleId: 'deny.any.env_file' }]);
  });
});
