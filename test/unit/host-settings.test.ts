// The host's settings (src/node/host-settings.ts): unset values give the documented defaults, a
// wrong value falls back to one never looser than it could mean, and is reported.
import assert from 'node:assert/strict';
import { HOST_SETTING_DEFAULTS, normalizeHostSettings, policyLabel, type HostSettingKey } from '../../src/node/host-settings';

const settingsFrom = (raw: Partial<Record<HostSettingKey, unknown>>) => normalizeHostSettings((k) => raw[k]);

describe('host settings', () => {
  it('unset settings give the documented defaults and no problems', () => {
    const { settings, problems } = settingsFrom({});
    assert.deepEqual(settings, HOST_SETTING_DEFAULTS);
    assert.deepEqual(problems, []);
  });

  it('values of the wrong type or out of range fall back to the default and are reported', () => {
    const { settings, problems } = settingsFrom({
      'classifier.threshold': 1.5,
      'tier2.dailyBudget': -1,
      'tier2.timeoutSeconds': 0,
      'tier3.maxPerHour': 2.5,
      'tier3.timeoutSeconds': 'soon',
      'tier2.backend': 'gpt',
      'tier2.onUnavailable': 'allow',
      'tier2.cacheTtlSeconds': Number.NaN,
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
    assert.ok(
      problems.every((p) => p.startsWith('setting bulwark.')),
      problems.join('\n'),
    );
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

  it("the IFC mode: empty is the policy's own, a bad value is read as enforce", () => {
    assert.equal(settingsFrom({ 'ifc.mode': '' }).settings.ifcMode, undefined);
    assert.equal(settingsFrom({ 'ifc.mode': 'audit' }).settings.ifcMode, 'audit');
    const bad = settingsFrom({ 'ifc.mode': 'off' });
    assert.equal(bad.settings.ifcMode, 'enforce');
    assert.equal(bad.problems.length, 1);
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
