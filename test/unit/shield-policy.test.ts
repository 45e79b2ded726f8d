// Tier 0: presets, evaluation order, glob semantics, examples, and exact error locations.
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { CompiledPolicy, PRESET_NAMES, parseShieldPolicy, presetPolicy } from '../../src/engine/shield/policy';
import { runPolicyExamples } from '../../src/engine/shield/policy-examples';
import { DataFileError } from '../../src/engine/data-file';
import { loadYaml } from './helpers/repo';

const ENV = { home: '/home/u', platform: 'linux' as const };
const compile = (text: string, label = 'test') => new CompiledPolicy(parseShieldPolicy(text, `${label}.yaml`), label, ENV);

describe('Tier 0 policy', () => {
  const validate = new Ajv({ allErrors: true }).compile(loadYaml<object>('security/shield/schema.json'));

  for (const name of PRESET_NAMES) {
    describe(`preset ${name}`, () => {
      it('is valid against the schema and identical to the file on disk', () => {
        const onDisk = loadYaml(`security/shield/${name}.yaml`);
        assert.ok(validate(onDisk), JSON.stringify(validate.errors));
        assert.deepEqual(presetPolicy(name), onDisk);
      });
      it('passes its own inline examples', () => {
        const compiled = new CompiledPolicy(presetPolicy(name), name, ENV);
        const outcomes = runPolicyExamples(compiled, ENV);
        assert.ok(outcomes.length >= 8, 'each preset documents its behaviour with examples');
        for (const o of outcomes) assert.ok(o.passed, `${name} example #${o.index} ${o.example.name ?? ''}: ${o.problem}`);
      });
    });
  }

  it('checks deny before verify before allow, first match wins', () => {
    const p = compile(`
allow: [{ name: allow_all_writes, action_types: [write_file] }]
verify: [{ name: verify_src, action_types: [write_file], paths: ["src/**"], tier_override: 2 }]
deny: [{ name: deny_secret, action_types: [write_file], paths: ["src/secret/**"] }]
`);
    assert.equal(p.evaluate('write_file', ['/w/src/secret/a']).decision, 'block');
    assert.deepEqual(p.evaluate('write_file', ['/w/src/a.ts']), {
      decision: 'escalate',
      minTier: 2,
      rule: 'policy.verify.verify_src',
      reason: 'the test policy sends write_file on /w/src/a.ts to Tier 2 (rule verify_src)',
    });
    assert.equal(p.evaluate('write_file', ['/w/docs/a.md']).decision, 'allow');
  });

  it('escalates to Tier 1 when no rule matches', () => {
    const r = compile('allow: [{ name: reads, action_types: [read_file] }]').evaluate('write_file', ['/w/a']);
    assert.deepEqual([r.decision, r.minTier, r.rule], ['escalate', 1, 'policy.no_match']);
  });

  it('expands ~, matches bare names anywhere, and dir/** matches the directory itself', () => {
    const p = compile(
      'deny: [{ name: d, action_types: ["*"], paths: ["~/.ssh/**", "SOUL.md", "C:\\\\Windows\\\\System32\\\\config\\\\**"] }]',
    );
    assert.equal(p.evaluate('list_directory', ['/home/u/.ssh']).decision, 'block');
    assert.equal(p.evaluate('read_file', ['/home/u/.ssh/id_rsa']).decision, 'block');
    assert.equal(p.evaluate('read_file', ['/elsewhere/.ssh/id_rsa']).decision, 'escalate');
    assert.equal(p.evaluate('write_file', ['/deep/down/SOUL.md']).decision, 'block');
    assert.equal(p.evaluate('write_file', ['/deep/down/soul.MD']).decision, 'block', 'case never bypasses a deny');
    assert.equal(p.evaluate('read_file', ['C:/Windows/System32/config/SAM']).decision, 'block');
  });

  it('an allow with tier_override still climbs to that tier', () => {
    const r = compile('allow: [{ name: a, action_types: [execute_command], tier_override: 2 }]').evaluate('execute_command', []);
    assert.deepEqual([r.decision, r.minTier], ['escalate', 2]);
  });

  describe('errors say file, line and column', () => {
    const fails = (text: string, re: RegExp, line: number, column?: number) => {
      try {
        parseShieldPolicy(text, '/p/policy.yaml');
      } catch (e) {
        assert.ok(e instanceof DataFileError, String(e));
        assert.match(e.message, re);
        assert.equal(e.file, '/p/policy.yaml');
        assert.equal(e.position?.line, line, e.message);
        if (column !== undefined) assert.equal(e.position?.column, column, e.message);
        return;
      }
      assert.fail('no error');
    };
    it('YAML syntax error', () => fails('deny:\n  - name: a\n    action_types: [read_file\n', /\/p\/policy\.yaml:\d+:\d+: /, 4));
    it('bad tier_override value', () =>
      fails('verify:\n  - name: a\n    action_types: [read_file]\n    tier_override: 9\n', /tier_override` must be <= 3/, 4, 20));
    it('unknown field', () => fails('deny:\n  - name: a\n    action_typs: [read_file]\n', /unknown field `action_typs`/, 2));
    it('missing action_types', () => fails('allow:\n  - name: a\n', /missing the field `action_types`/, 2));
    it('verify needs a tier of at least 1', () =>
      fails('verify:\n  - { name: a, action_types: [x], tier_override: 0 }\n', /tier_override/, 2));
    it('duplicate rule names', () =>
      fails('deny:\n  - { name: a, action_types: [x] }\nallow:\n  - { name: a, action_types: [y] }\n', /used twice/, 4));
    it('empty file', () => fails('', /empty/, 1));
    it('a document that is only a comment', () => fails('# nothing here\n', /empty/, 1));
    it('no rule lists at all', () => fails('name: x\n', /must match a schema in anyOf|missing the field/, 1));
  });
});
