// The WebAssembly keyword walk (src/engine/secrets/keyword-scan.wat) gives the same index as the
// JavaScript walk it speeds up: on random texts full of keywords and lead strings in mixed case,
// with non-ASCII code units, and across the chunk and segment boundaries of long texts.
import assert from 'node:assert/strict';
import { loadSecretRules } from '../../src/engine/secrets';
import { keywordWalker } from '../../src/engine/secrets/keyword-walk';
import { indexRulesOf } from '../../src/engine/secrets/scan';
import { prng } from './helpers/prng';

const rules = loadSecretRules();

function randomText(rnd: () => number, length: number): string {
  const words = rules.keywords;
  const odd = ['\u212a', '\u00e9', '\u0131', '\u017f', '\ud83d\udd11', '\u200b', '\u00c0', '\n', ' ', '=', '"', ':'];
  let s = '';
  while (s.length < length) {
    const r = rnd();
    if (r < 0.45) {
      const w = words[Math.floor(rnd() * words.length)]!;
      s += [...w].map((c) => (rnd() < 0.3 ? c.toUpperCase() : c)).join('');
    } else if (r < 0.6) s += odd[Math.floor(rnd() * odd.length)]!;
    else {
      const n = 1 + Math.floor(rnd() * 12);
      for (let i = 0; i < n; i++) s += String.fromCharCode(32 + Math.floor(rnd() * 95));
    }
  }
  return s.slice(0, length);
}

describe('secret scan: WebAssembly keyword walk', () => {
  it('is available for the bundled rules (the batch scan does not fall back silently)', () => {
    assert.ok(keywordWalker(rules.automaton, rules.keywordLengths));
  });

  it('gives the same index as the JavaScript walk on 400 random texts', () => {
    const rnd = prng(0x5eed);
    for (let i = 0; i < 400; i++) {
      const text = randomText(rnd, Math.floor(rnd() * (i % 10 === 0 ? 4000 : 300)));
      assert.deepEqual(indexRulesOf(rules, text, true, true), indexRulesOf(rules, text, true, false), JSON.stringify(text));
    }
  });

  it('gives the same index across chunk and segment boundaries of long texts', () => {
    const rnd = prng(7);
    for (const length of [131_071, 131_072, 131_073, 300_000, 524_300]) {
      const text = randomText(rnd, length);
      const a = indexRulesOf(rules, text, true, true);
      assert.deepEqual(a, indexRulesOf(rules, text, true, false), `length ${length}`);
      assert.ok(a!.starts.some((l) => l && l.length > 0));
    }
  });

  it('a keyword cut by a segment boundary is found once', () => {
    // Place "password" across every boundary the walker uses for a text of this length.
    const text = 'x'.repeat(200_000);
    const positions = [32_768, 65_536, 98_304, 131_072, 131_072 + 17_232, 163_840].map((b) => b - 3);
    let s = text;
    for (const p of positions) s = s.slice(0, p) + 'PassWord' + s.slice(p + 8);
    const wasm = indexRulesOf(rules, s, true, true)!;
    assert.deepEqual(wasm, indexRulesOf(rules, s, true, false));
    const g = rules.keywordGroup[rules.rules.findIndex((r) => r.keywords.includes('password'))]!;
    assert.deepEqual(wasm.starts[g], positions);
  });

  it('U+0130 sends both walks to the lower-cased copy (null)', () => {
    assert.equal(indexRulesOf(rules, 'password=\u0130abc', true, true), null);
    assert.equal(indexRulesOf(rules, 'password=\u0130abc', true, false), null);
  });
});
