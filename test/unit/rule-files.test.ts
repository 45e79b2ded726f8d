// The content-style rule files (security/content/, security/memory/) share one validator: a
// malformed file is refused with what is wrong and where, never half-loaded.
import assert from 'node:assert/strict';
import { ContentRuleError, validateContentFile } from '../../src/engine/content/rules';
import { MemoryRuleError, validateMemoryFile } from '../../src/engine/content/memory';

const rule = (extra: Record<string, unknown> = {}) => ({ severity: 'high', pattern: 'x', description: 'a description long enough', examples: { match: ['a', 'b'], no_match: ['c', 'd'] }, ...extra });
const file = (category: string, rules: unknown[]) => ({ version: 1, category, description: 'rules for the test', rules });

describe('content-style rule files: one validator', () => {
  it('accepts a well-formed content file and a well-formed memory file', () => {
    assert.deepEqual(validateContentFile(file('invisible_text', [rule({ id: 'IT-001' })]), 't').map((r) => [r.id, r.category]), [['IT-001', 'invisible_text']]);
    assert.deepEqual(validateMemoryFile(file('prompt_injection', [rule({ id: 'MD-001', risk: 'instruction' })]), 't').map((r) => [r.id, r.risk]), [['MD-001', 'instruction']]);
  });

  const refusals: [string, unknown, RegExp][] = [
    ['not an object', [], /not an object/],
    ['unknown top key', { ...file('invisible_text', [rule({ id: 'IT-001' })]), extra: 1 }, /unknown key `extra`/],
    ['wrong version', { ...file('invisible_text', [rule({ id: 'IT-001' })]), version: 2 }, /version must be 1/],
    ['no rules', file('invisible_text', []), /non-empty list/],
    ['id of another category', file('invisible_text', [rule({ id: 'CR-001' })]), /id must look like IT-001/],
    ['unknown rule key', file('invisible_text', [rule({ id: 'IT-001', risk: 'x' })]), /rule `IT-001`: unknown key `risk`/],
    ['bad severity', file('invisible_text', [rule({ id: 'IT-001', severity: 'huge' })]), /bad severity/],
    ['one example', file('invisible_text', [rule({ id: 'IT-001', examples: { match: ['a'], no_match: ['c', 'd'] } })]), /at least 2 match/],
  ];
  for (const [what, data, why] of refusals) {
    it(`content file refused: ${what}`, () => assert.throws(() => validateContentFile(data, 't'), (e: Error) => e instanceof ContentRuleError && why.test(e.message) && /content rules `t`/.test(e.message)));
  }
  it('memory file refused: wrong category, id, missing risk; its own error class', () => {
    for (const [data, why] of [
      [file('invisible_text', [rule({ id: 'MD-001', risk: 'instruction' })]), /category must be prompt_injection/],
      [file('prompt_injection', [rule({ id: 'PI-001', risk: 'instruction' })]), /id must look like MD-001/],
      [file('prompt_injection', [rule({ id: 'MD-001' })]), /rule `MD-001`: risk must be one of/],
      [file('prompt_injection', [rule({ id: 'MD-001', risk: 'instruction', pattern: '' })]), /pattern missing/],
    ] as const) {
      assert.throws(() => validateMemoryFile(data, 't'), (e: Error) => e instanceof MemoryRuleError && why.test(e.message) && /memory rules `t`/.test(e.message));
    }
  });
});
