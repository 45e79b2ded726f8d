// The extension's Shield assembly (src/node/host-shield.ts): every part fails closed (policy, IFC,
// Tier 2 not configured or misconfigured, an unusable canary), and the Tier 3 rate limit from the settings.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { HOST_SETTING_DEFAULTS, normalizeHostSettings, type HostSettings } from '../../src/node/host-settings';
import { buildHostShield, type HostShieldDeps } from '../../src/node/host-shield';
import { CANARY_FILE, openAITier2Source, type Tier2Source } from '../../src/node/tier2-setup';
import { createNodeEngine } from '../../src/node/create-engine';
import { MemoryStateStore } from '../../src/engine/shield/types';
import type { Tier3Verdict } from '../../src/engine/shield/tier3';
import { makeTempDir } from './helpers/repo';

function deps(o: Partial<HostShieldDeps> & { settings?: HostSettings } = {}): HostShieldDeps {
  return {
    settings: HOST_SETTING_DEFAULTS,
    home: '/home/u',
    platform: 'linux',
    workspaceRoots: [],
    stateDir: undefined,
    store: new MemoryStateStore(),
    tier2: { kind: 'none' },
    surfaces: [],
    ...o,
  };
}
const view = { type: 'write_file', payload: { path: '/w/src/a.ts', content: 'x' } };

describe('host shield: parts fail closed', () => {
  it('a broken user policy file: policy state not ok, named with line and column, reported first', () => {
    const dir = makeTempDir();
    const file = path.join(dir, 'p.yaml');
    fs.writeFileSync(file, 'version: 1\nverify:\n  - name: w\n    action_types: [write_file]\n    tier_override: seven\n');
    const s = buildHostShield(deps({ settings: { ...HOST_SETTING_DEFAULTS, policy: file } }));
    assert.equal(s.parts.policy.ok, false);
    assert.ok(!s.parts.policy.ok && s.parts.policy.error.includes(`${file}:5:20`));
    assert.equal(s.problems[0]!.severity, 'error');
    assert.match(s.problems[0]!.message, /every action other than a read is blocked/);
  });

  it('a broken IFC policy file: the policy state is not ok either (non-reads block), and says IFC', () => {
    const dir = makeTempDir();
    const file = path.join(dir, 'ifc.yaml');
    fs.writeFileSync(file, 'mode: sometimes\n');
    const s = buildHostShield(deps({ settings: { ...HOST_SETTING_DEFAULTS, ifcPolicy: file } }));
    assert.equal(s.parts.policy.ok, false);
    assert.ok(
      !s.parts.policy.ok && /IFC policy/.test(s.parts.policy.error) && s.parts.policy.error.includes(file),
      JSON.stringify(s.parts.policy),
    );
  });

  it('a policy setting that is not a string stays unusable (the policy then blocks) rather than falling back to a preset', () => {
    const { settings } = normalizeHostSettings((k) => (k === 'policy' ? 42 : undefined));
    assert.notEqual(settings.policy, 'default');
    const shield = buildHostShield(deps({ settings }));
    assert.equal(shield.parts.policy.ok, false);
  });

  it('a workspace .bulwark/policy.yaml is loaded and can only tighten', () => {
    const root = makeTempDir();
    fs.mkdirSync(path.join(root, '.bulwark'));
    fs.writeFileSync(
      path.join(root, '.bulwark', 'policy.yaml'),
      'version: 1\ndeny:\n  - name: no_writes\n    action_types: [write_file]\n',
    );
    const s = buildHostShield(deps({ workspaceRoots: [root] }));
    assert.ok(s.parts.policy.ok && s.parts.policy.policies.length === 2);
  });

  it('Tier 2 none: no evaluator part, and the opted-in onUnavailable goes to the pipeline', () => {
    const s = buildHostShield(
      deps({ settings: { ...HOST_SETTING_DEFAULTS, tier2: { ...HOST_SETTING_DEFAULTS.tier2, onUnavailable: 'escalate' } } }),
    );
    assert.equal(s.parts.tier2, undefined);
    assert.equal(s.parts.tier2Unavailable, 'escalate');
    assert.equal(s.parts.mode, 'enforce');
  });

  it('Tier 2 chosen but not configured (no API key): block, or escalate when opted in; the reason says why', async () => {
    const source = openAITier2Source(HOST_SETTING_DEFAULTS, undefined);
    assert.equal(source.kind, 'not_configured');
    const blocked = await buildHostShield(deps({ tier2: source })).parts.tier2!.evaluate(view);
    assert.deepEqual([blocked.decision, blocked.rules], ['block', ['tier2.not_configured']]);
    assert.match(blocked.reason, /API key/);
    const escalated = await buildHostShield(
      deps({ tier2: source, settings: { ...HOST_SETTING_DEFAULTS, tier2: { ...HOST_SETTING_DEFAULTS.tier2, onUnavailable: 'escalate' } } }),
    ).parts.tier2!.evaluate(view);
    assert.equal(escalated.decision, 'escalate');
  });

  it('Tier 2 misconfigured (plain http to a remote host): always blocks, even when escalation is opted in', async () => {
    const source = openAITier2Source(
      { ...HOST_SETTING_DEFAULTS, tier2: { ...HOST_SETTING_DEFAULTS.tier2, baseUrl: 'http://example.com/v1' } },
      'sk-x',
    );
    assert.equal(source.kind, 'misconfigured');
    const s = buildHostShield(
      deps({ tier2: source, settings: { ...HOST_SETTING_DEFAULTS, tier2: { ...HOST_SETTING_DEFAULTS.tier2, onUnavailable: 'escalate' } } }),
    );
    const v = await s.parts.tier2!.evaluate(view);
    assert.deepEqual([v.decision, v.rules], ['block', ['tier2.misconfigured']]);
    assert.equal(s.problems[0]!.severity, 'error');
  });

  it('Tier 2 with a back end: the canary is created in the state folder and sent only in the system prompt', async () => {
    const stateDir = makeTempDir();
    let system = '';
    const tier2: Tier2Source = {
      kind: 'backend',
      backend: {
        id: 'fake',
        complete: async (sys) => {
          system = sys;
          const c = /Canary: ([0-9a-f]{64})/.exec(sys)![1];
          return JSON.stringify({ decision: 'ALLOW', confidence: 0.9, reasoning: 'ok', canary: c });
        },
      },
    };
    const s = buildHostShield(deps({ tier2, stateDir }));
    const v = await s.parts.tier2!.evaluate(view);
    assert.equal(v.decision, 'allow');
    const canary = fs.readFileSync(path.join(stateDir, CANARY_FILE), 'utf8').trim();
    assert.ok(system.includes(canary));
  });

  it('Tier 2 with a back end but an unusable canary file blocks', async () => {
    const stateDir = makeTempDir();
    fs.writeFileSync(path.join(stateDir, CANARY_FILE), 'x');
    const tier2: Tier2Source = { kind: 'backend', backend: { id: 'fake', complete: async () => 'never asked' } };
    const s = buildHostShield(deps({ tier2, stateDir }));
    assert.equal((await s.parts.tier2!.evaluate(view)).decision, 'block');
    assert.ok(s.problems.some((p) => p.message.includes(CANARY_FILE)));
  });

  it('Tier 3: the rate limit from the settings denies without asking, and the verdict is passed on (to tell the user)', async () => {
    const seen: Tier3Verdict[] = [];
    let asked = 0;
    const s = buildHostShield(
      deps({
        settings: { ...HOST_SETTING_DEFAULTS, tier3: { timeoutSeconds: 5, maxPerHour: 0 } },
        surfaces: [
          {
            id: 'x',
            ask: async () => {
              asked++;
              return 'approve';
            },
          },
        ],
        onTier3Verdict: (v) => seen.push(v),
      }),
    );
    const v = await s.parts.tier3!.decide({ id: '1', sessionId: 's', actionType: 'write_file', payload: {}, reasons: [] });
    assert.equal(v.decision, 'block');
    assert.equal(asked, 0);
    assert.equal(seen[0]?.event, 'rate_limited');
  });

  it('end to end through the engine: a command that needs Tier 2 with no evaluator blocks with tier2.not_configured', async () => {
    const root = makeTempDir();
    const s = buildHostShield(deps({ workspaceRoots: [root] }));
    const { engine } = await createNodeEngine({ workspaceRoots: [root], home: '/home/u', shield: s.parts, resolve: false });
    // The project's build, outside the sandbox: its effects cannot be known, so Tier 2 must judge it.
    const r = await engine.check({ type: 'execute_command', payload: { command: 'make build' }, sessionId: 's', cwd: root });
    assert.equal(r.decision, 'block');
    assert.ok(r.rules.includes('tier2.not_configured'), JSON.stringify(r.rules));
  });
});
