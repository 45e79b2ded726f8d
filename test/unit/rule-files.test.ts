// The content-style rule files (security/content/, security/memory/) share one validator: a
// malformed file is refused with what is wrong and where, never half-loaded.
import assert from 'node:assert/strict';
import { ContentRuleError, validateContentFile } from '../../src/engine/content/rules';
import { MemoryRuleError, validateMemoryFile } from '../../src/engine/content/memory';

const rule = (extra: Record<string, unknown> = {}) => ({
  severity: 'high',
  pattern: 'x',
  description: 'a description long enough',
  examples: { match: ['a', 'b'], no_match: ['c', 'd'] },
  ...extra,
});
const file = (category: string, rules: unknown[]) => ({ version: 1, category, description: 'rules for the test', rules });

describe('content-style rule files: one validator', () => {
  it('accepts a well-formed content file and a well-formed memory file', () => {
    assert.deepEqual(
      validateContentFile(file('invisible_text', [rule({ id: 'invisible-text.tag-characters' })]), 't').map((r) => [r.id, r.category]),
      [['invisible-text.tag-characters', 'invisible_text']],
    );
    assert.deepEqual(
      validateMemoryFile(file('prompt_injection', [rule({ id: 'memory.standing-order-run-download', risk: 'instruction' })]), 't').map(
        (r) => [r.id, r.risk],
      ),
      [['memory.standing-order-run-download', 'instruction']],
    );
  });

  it("keeps a rule's alias (its former coded id) when it has one", () => {
    assert.deepEqual(
      validateContentFile(file('credential_reference', [rule({ id: 'credential-reference.ci-secret', alias: 'CR-002' })]), 't').map((r) => [
        r.id,
        r.alias,
      ]),
      [['credential-reference.ci-secret', 'CR-002']],
    );
    assert.deepEqual(
      validateMemoryFile(file('prompt_injection', [rule({ id: 'memory.some-order', alias: 'MD-007', risk: 'instruction' })]), 't').map(
        (r) => [r.id, r.alias],
      ),
      [['memory.some-order', 'MD-007']],
    );
  });

  const refusals: [string, unknown, RegExp][] = [
    ['not an object', [], /not an object/],
    ['unknown top key', { ...file('invisible_text', [rule({ id: 'invisible-text.tag-characters' })]), extra: 1 }, /unknown key `extra`/],
    ['wrong version', { ...file('invisible_text', [rule({ id: 'invisible-text.tag-characters' })]), version: 2 }, /version must be 1/],
    ['no rules', file('invisible_text', []), /non-empty list/],
    [
      'id of another category',
      file('invisible_text', [rule({ id: 'credential-reference.vault-reference-key' })]),
      /id must be invisible-text\.<what it catches>/,
    ],
    [
      'unknown rule key',
      file('invisible_text', [rule({ id: 'invisible-text.tag-characters', risk: 'x' })]),
      /rule `invisible-text.tag-characters`: unknown key `risk`/,
    ],
    ['bad severity', file('invisible_text', [rule({ id: 'invisible-text.tag-characters', severity: 'huge' })]), /bad severity/],
    ['coded id', file('invisible_text', [rule({ id: 'IT-001' })]), /id must be invisible-text\.<what it catches>/],
    ['id not in kebab-case words', file('invisible_text', [rule({ id: 'invisible-text.Tag_Characters' })]), /id must be invisible-text\./],
    [
      'alias of another category',
      file('invisible_text', [rule({ id: 'invisible-text.tag-characters', alias: 'CR-001' })]),
      /alias must be a former coded id like IT-001/,
    ],
    [
      'alias not a coded id',
      file('invisible_text', [rule({ id: 'invisible-text.tag-characters', alias: 'invisible-text.tags' })]),
      /alias must be/,
    ],
    [
      'alias twice',
      file('invisible_text', [rule({ id: 'invisible-text.a', alias: 'IT-001' }), rule({ id: 'invisible-text.b', alias: 'IT-001' })]),
      /duplicate rule id or alias `IT-001`/,
    ],
    [
      'id twice',
      file('invisible_text', [rule({ id: 'invisible-text.a' }), rule({ id: 'invisible-text.a' })]),
      /duplicate rule id or alias `invisible-text.a`/,
    ],
    [
      'one example',
      file('invisible_text', [rule({ id: 'invisible-text.tag-characters', examples: { match: ['a'], no_match: ['c', 'd'] } })]),
      /at least 2 match/,
    ],
  ];
  for (const [what, data, why] of refusals) {
    it(`content file refused: ${what}`, () =>
      assert.throws(
        () => validateContentFile(data, 't'),
        (e: Error) => e instanceof ContentRuleError && why.test(e.message) && /content rules `t`/.test(e.message),
      ));
  }
  it('memory file refused: wrong category, id, missing risk; its own error class', () => {
    for (const [data, why] of [
      [
        file('invisible_text', [rule({ id: 'memory.standing-order-run-download', risk: 'instruction' })]),
        /category must be prompt_injection/,
      ],
      [
        file('prompt_injection', [rule({ id: 'prompt-injection.ignore-previous', risk: 'instruction' })]),
        /id must be memory\.<what it catches>/,
      ],
      [
        file('prompt_injection', [rule({ id: 'memory.some-order', alias: 'PI-001', risk: 'instruction' })]),
        /alias must be a former coded id like MD-001/,
      ],
      [
        file('prompt_injection', [rule({ id: 'memory.standing-order-run-download' })]),
        /rule `memory.standing-order-run-download`: risk must be one of/,
      ],
      [file('prompt_injection', [rule({ id: 'memory.standing-order-run-download', risk: 'instruction', pattern: '' })]), /pattern missing/],
    ] as const) {
      assert.throws(
        () => validateMemoryFile(data, 't'),
        (e: Error) => e instanceof MemoryRuleError && why.test(e.message) && /memory rules `t`/.test(e.message),
      );
    }
  });
});
