// Issue 15 ("one source for each fact"): the settings the code reads and their defaults are the ones
// package.json contributes, so the manifest (what users see in the Settings editor) and the code cannot drift.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { HOST_SETTING_DEFAULTS, HOST_SETTING_KEYS } from '../../src/node/host-settings';
import { SANDBOX_SETTING_DEFAULTS } from '../../src/node/run-command';
import { repoRoot } from './helpers/repo';

interface Property {
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}

const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, Property> } | { properties: Record<string, Property> }[] };
};
const properties: Record<string, Property> = Object.assign({}, ...[manifest.contributes.configuration].flat().map((c) => c.properties));

/** The code's default for each host setting key (the manifest's empty string stands for "not set"). */
const hostDefault = (key: (typeof HOST_SETTING_KEYS)[number]): unknown => {
  const d = HOST_SETTING_DEFAULTS;
  switch (key) {
    case 'policy':
      return d.policy;
    case 'ifc.policy':
      return d.ifcPolicy;
    case 'ifc.mode':
      return d.ifcMode ?? '';
    case 'classifier.threshold':
      return d.classifierThreshold;
    case 'classifier.modelDir':
      return d.classifierModelDir;
    case 'ssrf.allowLoopbackPorts':
      return d.allowLoopbackPorts;
    case 'boundary.extraReadRoots':
      return d.extraReadRoots;
    default: {
      const [group, name] = key.split('.') as ['tier2' | 'tier3', string];
      return (d[group] as Record<string, unknown>)[name];
    }
  }
};

describe('settings: the code and package.json agree', () => {
  it('every setting the engine host reads is contributed, with the same default', () => {
    for (const key of HOST_SETTING_KEYS) {
      const p = properties[`bulwark.${key}`];
      assert.ok(p, `bulwark.${key} is read by the code but not contributed in package.json`);
      assert.deepEqual(
        p.default,
        hostDefault(key),
        `bulwark.${key}: package.json default ${JSON.stringify(p.default)}, code default ${JSON.stringify(hostDefault(key))}`,
      );
      if (p.enum && p.default !== undefined) assert.ok(p.enum.includes(p.default), `bulwark.${key}: the default is one of its enum values`);
    }
  });

  it('every sandbox setting is contributed, with the same default', () => {
    for (const [name, value] of Object.entries(SANDBOX_SETTING_DEFAULTS)) {
      const p = properties[`bulwark.sandbox.${name}`];
      assert.ok(p, `bulwark.sandbox.${name} is not contributed`);
      assert.deepEqual(p.default, value, `bulwark.sandbox.${name}`);
    }
  });

  it('every contributed bulwark.* setting is read somewhere (none is dead)', () => {
    const read = new Set([
      ...HOST_SETTING_KEYS.map((k) => `bulwark.${k}`),
      ...Object.keys(SANDBOX_SETTING_DEFAULTS).map((k) => `bulwark.sandbox.${k}`),
      'bulwark.audit.logFile',
    ]);
    for (const key of Object.keys(properties)) assert.ok(read.has(key), `${key} is contributed but no known reader lists it`);
    const audit = fs.readFileSync(path.join(repoRoot(), 'src/vscode/audit-host.ts'), 'utf8');
    assert.match(audit, /audit\.logFile|'logFile'/, 'the audit host reads bulwark.audit.logFile');
  });
});
