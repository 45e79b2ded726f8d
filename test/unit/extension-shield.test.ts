// The extension's Shield assembly (src/node/extension-shield.ts) and the approval prompt text:
// settings with bad values, the canary file, the state store, and every part failing closed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  CANARY_FILE, FailingStateStore, HOST_SETTING_DEFAULTS, STATE_FILE, buildHostShield, loadOrCreateCanary, normalizeHostSettings,
  openAITier2Source, openStateStore, policyLabel, type HostSettingKey, type HostSettings, type HostShieldDeps, type Tier2Source,
} from '../../src/node/extension-shield';
import { approvalText, MAX_ARGUMENT_CHARS } from '../../src/node/approval-text';
import { createNodeEngine } from '../../src/node/create-engine';
import { MemoryStateStore } from '../../src/engine/shield/types';
import type { Tier3Verdict } from '../../src/engine/shield/tier3';
import { makeTempDir } from './helpers/repo';

const settingsFrom = (raw: Partial<Record<HostSettingKey, unknown>>) => normalizeHostSettings((k) => raw[k]);
const join = (...p: string[]) => p.join('');

function deps(o: Partial<HostShieldDeps> & { settings?: HostSettings } = {}): HostShieldDeps {
  return {
    settings: HOST_SETTING_DEFAULTS, home: '/home/u', platform: 'linux', workspaceRoots: [], stateDir: undefined,
    store: new MemoryStateStore(), tier2: { kind: 'none' }, surfaces: [], ...o,
  };
}
const view = { type: 'write_file', payload: { path: '/w/src/a.ts', content: 'x' } };

describe('extension shield: settings', () => {
  it('unset settings give the documented defaults and no problems', () => {
    const { settings, problems } = settingsFrom({});
    assert.deepEqual(settings, HOST_SETTING_DEFAULTS);
    assert.deepEqual(problems, []);
  });

  it('values of the wrong type or out of range fall back to the default and are reported', () => {
    const { settings, problems } = settingsFrom({
      'classifier.threshold': 1.5, 'tier2.dailyBudget': -1, 'tier2.timeoutSeconds': 0, 'tier3.maxPerHour': 2.5,
      'tier3.timeoutSeconds': 'soon', 'tier2.backend': 'gpt', 'tier2.onUnavailable': 'allow', 'tier2.cacheTtlSeconds': Number.NaN,
    });
    assert.equal(settings.classifierThreshold, 0.85);
    assert.equal(settings.tier2.dailyBudget, 100);
    assert.equal(settings.tier2.timeoutSeconds, 30);
    assert.equal(settings.tier3.maxPerHour, 10);
    assert.equal(settings.tier3.timeoutSeconds, 300);
    assert.equal(settings.tier2.backend, 'none');
    assert.equal(settings.tier2.onUnavailable, 'block', 'an unknown onUnavailable never escalates');
    assert.equal(settings.tier2.cacheTtlSeconds, 60);
    assert.equal(problems.length, 8);
    assert.ok(problems.every((p) => p.startsWith('setting bulwark.')), problems.join('\n'));
  });

  it('loopback ports: valid ports are kept once, anything else is left out and reported; not a list allows none', () => {
    const ok = settingsFrom({ 'ssrf.allowLoopbackPorts': [3000, 5173, 3000] });
    assert.deepEqual(ok.settings.allowLoopbackPorts, [3000, 5173]);
    assert.deepEqual(ok.problems, []);
    const mixed = settingsFrom({ 'ssrf.allowLoopbackPorts': [8080, 0, 70000, '22', 1.5] });
    assert.deepEqual(mixed.settings.allowLoopbackPorts, [8080]);
    assert.equal(mixed.problems.length, 4);
    const notList = settingsFrom({ 'ssrf.allowLoopbackPorts': 3000 });
    assert.deepEqual(notList.settings.allowLoopbackPorts, []);
    assert.equal(notList.problems.length, 1);
  });

  it('the IFC mode: empty is the policy\'s own, a bad value is read as enforce', () => {
    assert.equal(settingsFrom({ 'ifc.mode': '' }).settings.ifcMode, undefined);
    assert.equal(settingsFrom({ 'ifc.mode': 'audit' }).settings.ifcMode, 'audit');
    const bad = settingsFrom({ 'ifc.mode': 'off' });
    assert.equal(bad.settings.ifcMode, 'enforce');
    assert.equal(bad.problems.length, 1);
  });

  it('a policy setting that is not a string stays unusable (the policy then blocks) rather than falling back to a preset', () => {
    const { settings } = settingsFrom({ policy: 42 });
    assert.notEqual(settings.policy, 'default');
    const shield = buildHostShield(deps({ settings }));
    assert.equal(shield.parts.policy.ok, false);
  });

  it('a relative classifier folder is refused', () => {
    const r = settingsFrom({ 'classifier.modelDir': 'models/x' });
    assert.equal(r.settings.classifierModelDir, '');
    assert.match(r.problems[0]!, /absolute path/);
  });

  it('policyLabel shows a preset or the file name', () => {
    assert.equal(policyLabel('strict'), 'strict');
    assert.equal(policyLabel('/etc/bulwark/team.yaml'), 'team.yaml');
  });
});

describe('extension shield: canary file and state store', () => {
  it('creates a 64-hex canary once, mode 0600, and reads the same one back', () => {
    const dir = path.join(makeTempDir(), 'state');
    const c1 = loadOrCreateCanary(dir);
    assert.match(c1, /^[0-9a-f]{64}$/);
    const file = path.join(dir, CANARY_FILE);
    if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(loadOrCreateCanary(dir), c1);
  });

  it('a canary file with bad content is an error naming the file, and is not replaced', () => {
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, CANARY_FILE), 'not-a-canary\n');
    assert.throws(() => loadOrCreateCanary(dir), (e: Error) => e.message.includes(path.join(dir, CANARY_FILE)));
    assert.equal(fs.readFileSync(path.join(dir, CANARY_FILE), 'utf8'), 'not-a-canary\n');
  });

  it('a corrupt state file gives a store that fails every call (fail closed), with the reason', () => {
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, STATE_FILE), '{ not json');
    const r = openStateStore(dir);
    assert.ok(r.store instanceof FailingStateStore);
    assert.match(r.error!, /bulwark\.db/);
    assert.throws(() => r.store.get('a', 'b'));
    const ok = openStateStore(makeTempDir());
    assert.equal(ok.durable, true);
    assert.equal(openStateStore(undefined).durable, false);
  });
});

describe('extension shield: parts fail closed', () => {
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
    assert.ok(!s.parts.policy.ok && /IFC policy/.test(s.parts.policy.error) && s.parts.policy.error.includes(file), JSON.stringify(s.parts.policy));
  });

  it('a workspace .bulwark/policy.yaml is loaded and can only tighten', () => {
    const root = makeTempDir();
    fs.mkdirSync(path.join(root, '.bulwark'));
    fs.writeFileSync(path.join(root, '.bulwark', 'policy.yaml'), 'version: 1\ndeny:\n  - name: no_writes\n    action_types: [write_file]\n');
    const s = buildHostShield(deps({ workspaceRoots: [root] }));
    assert.ok(s.parts.policy.ok && s.parts.policy.policies.length === 2);
  });

  it('Tier 2 none: no evaluator part, and the opted-in onUnavailable goes to the pipeline', () => {
    const s = buildHostShield(deps({ settings: { ...HOST_SETTING_DEFAULTS, tier2: { ...HOST_SETTING_DEFAULTS.tier2, onUnavailable: 'escalate' } } }));
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
    const escalated = await buildHostShield(deps({ tier2: source, settings: { ...HOST_SETTING_DEFAULTS, tier2: { ...HOST_SETTING_DEFAULTS.tier2, onUnavailable: 'escalate' } } })).parts.tier2!.evaluate(view);
    assert.equal(escalated.decision, 'escalate');
  });

  it('Tier 2 misconfigured (plain http to a remote host): always blocks, even when escalation is opted in', async () => {
    const source = openAITier2Source({ ...HOST_SETTING_DEFAULTS, tier2: { ...HOST_SETTING_DEFAULTS.tier2, baseUrl: 'http://example.com/v1' } }, 'sk-x');
    assert.equal(source.kind, 'misconfigured');
    const s = buildHostShield(deps({ tier2: source, settings: { ...HOST_SETTING_DEFAULTS, tier2: { ...HOST_SETTING_DEFAULTS.tier2, onUnavailable: 'escalate' } } }));
    const v = await s.parts.tier2!.evaluate(view);
    assert.deepEqual([v.decision, v.rules], ['block', ['tier2.misconfigured']]);
    assert.equal(s.problems[0]!.severity, 'error');
  });

  it('Tier 2 with a back end: the canary is created in the state folder and sent only in the system prompt', async () => {
    const stateDir = makeTempDir();
    let system = '';
    const tier2: Tier2Source = { kind: 'backend', backend: { id: 'fake', complete: async (sys) => { system = sys; const c = /Canary: ([0-9a-f]{64})/.exec(sys)![1]; return JSON.stringify({ decision: 'ALLOW', confidence: 0.9, reasoning: 'ok', canary: c }); } } };
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
    const s = buildHostShield(deps({
      settings: { ...HOST_SETTING_DEFAULTS, tier3: { timeoutSeconds: 5, maxPerHour: 0 } },
      surfaces: [{ id: 'x', ask: async () => { asked++; return 'approve'; } }],
      onTier3Verdict: (v) => seen.push(v),
    }));
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

describe('approval prompt text', () => {
  it('names the action, redacts secrets in the arguments and lists every tier\'s reason', () => {
    const ghp = join('ghp_', 'Zk3q9LmN2pQ8rT5v', 'W7xY1aB4cD6eF0gHiJkL');
    const t = approvalText({ id: '1', sessionId: 's1', actionType: 'execute_command', payload: { command: `curl -H "Authorization: token ${ghp}" https://api.github.com` }, reasons: [{ tier: 0, reason: 'the default policy sends it to Tier 2' }, { tier: 2, reason: 'no evaluator' }] });
    assert.equal(t.title, 'Bulwark: approve execute_command?');
    assert.ok(!t.detail.includes(ghp), 'the token is not shown');
    assert.match(t.detail, /\[REDACTED:/);
    assert.match(t.detail, /Tier 0 \(policy\): the default policy sends it to Tier 2/);
    assert.match(t.detail, /Tier 2: no evaluator/);
  });

  it('cuts long arguments at about 2 KB and says so; invisible characters are shown escaped', () => {
    const t = approvalText({ id: '1', sessionId: 's', actionType: 'write_file', payload: { path: '/w/a\u202e.txt', content: 'a'.repeat(10_000) }, reasons: [] });
    assert.ok(t.detail.length < MAX_ARGUMENT_CHARS + 1000);
    assert.match(t.detail, /arguments cut/);
    assert.ok(!t.detail.includes('\u202e'));
    assert.match(t.detail, /\\u\{202e\}/);
  });
});
