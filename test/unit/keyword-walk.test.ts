// The WebAssembly keyword walk (src/engine/secrets/keyword-scan.wat) gives the same index as the
// JavaScript walk it speeds up: on random texts full of keywords and lead strings in mixed case,
// with non-ASCII code units, and across the chunk and segment boundaries of long texts. And
// case-sensitive keywords (keyword_case: exact) are found only as written, in every walk.
import assert from 'node:assert/strict';
import { StreamingRedactor, compileSecretRules, findSecrets, loadSecretRules, redactSecrets } from '../../src/engine/secrets';
import { keywordWalker } from '../../src/engine/secrets/keyword-walk';
import { indexKeywords, indexRulesOf, lowerAscii } from '../../src/engine/secrets/scan';
import { prng } from './helpers/prng';
import { itSeeded } from './helpers/seeds';

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

  itSeeded('gives the same index as the JavaScript walk on 400 random texts', 0x5eed, (seed) => {
    const rnd = prng(seed);
    for (let i = 0; i < 400; i++) {
      const text = randomText(rnd, Math.floor(rnd() * (i % 10 === 0 ? 4000 : 300)));
      assert.deepEqual(indexRulesOf(rules, text, true, true), indexRulesOf(rules, text, true, false), JSON.stringify(text));
    }
  });

  itSeeded('gives the same index across chunk and segment boundaries of long texts', 7, (seed) => {
    const rnd = prng(seed);
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

describe('secret scan: case-sensitive keywords (keyword_case: exact)', () => {
  // Two rules with the same case-insensitive regex: one folds its keyword, one matches it exactly.
  const demo = compileSecretRules([
    [
      't.yaml',
      {
        version: 1,
        family: 'demo',
        description: 'demo rules',
        rules: [
          {
            id: 'exact-demo',
            description: 'exact keyword',
            keywords: ['QX', 'Zk'],
            keyword_case: 'exact',
            regex: '(?i)\\b((?:qx|zk)[0-9]{6})\\b',
            examples: { match: ['QX123456', 'Zk123456'], no_match: ['qx123456', 'ZK123456'] },
          },
          {
            id: 'fold-demo',
            description: 'folded keyword',
            keywords: ['qx7'],
            regex: '(?i)\\b(qx7[0-9]{5})\\b',
            examples: { match: ['qx712345', 'QX712345'], no_match: ['qx71234', 'zk712345'] },
          },
          {
            id: 'fold-words',
            description: 'folded keywords sharing letters',
            keywords: ['token', 'zkey', 'nt'],
            regex: '(?i)(?:token|zkey|nt)=([a-z0-9]{8})',
            examples: { match: ['token=abcd1234', 'NT=abcd1234'], no_match: ['token=abc', 'tok=abcd1234'] },
          },
        ],
      },
    ],
  ]);

  it('finds a case-sensitive keyword only as written, beside folded keywords with the same letters', () => {
    assert.deepEqual(
      findSecrets(demo, 'a QX123456 b').map((f) => f.ruleId),
      ['exact-demo'],
    );
    assert.deepEqual(findSecrets(demo, 'a qx123456 b Qx123456 zK123456'), []);
    assert.deepEqual(
      findSecrets(demo, 'a Zk123456').map((f) => f.ruleId),
      ['exact-demo'],
    );
    // The folded rule still folds: qx7…, QX7…, Qx7… all count (and the exact rule sees QX7 too: one finding, merged).
    for (const t of ['qx712345', 'QX712345', 'Qx712345']) assert.equal(findSecrets(demo, t).length, 1, t);
    assert.deepEqual(
      findSecrets(demo, 'x TOKEN=abcd1234 ZKEY=abcd1234 nT=abcd1234').map((f) => f.ruleId),
      ['fold-words', 'fold-words', 'fold-words'],
    );
  });

  itSeeded('the index lists exactly the occurrences a naive search finds, in both walks and in the streaming index', 99, (seed) => {
    const rnd = prng(seed);
    const pieces = [
      'QX',
      'qx',
      'Qx',
      'Zk',
      'ZK',
      'zk',
      'qx7',
      'QX7',
      'token',
      'TOKEN',
      'zkey',
      'ZkEy',
      'nt',
      'NT',
      '\u212a',
      'Z\u212aey',
      ' ',
      '=',
      '1',
    ];
    for (let i = 0; i < 300; i++) {
      let text = '';
      const n = 1 + Math.floor(rnd() * 40);
      for (let j = 0; j < n; j++) text += pieces[Math.floor(rnd() * pieces.length)];
      const low = lowerAscii(text);
      const occ = indexKeywords(demo, text, low, 0);
      demo.keywords.forEach((k, id) => {
        const hay = demo.keywordExact[id] === 1 ? text : low;
        const want: number[] = [];
        for (let p = hay.indexOf(k); p >= 0; p = hay.indexOf(k, p + 1)) want.push(p);
        assert.deepEqual(occ.get(id) ?? [], want, `${JSON.stringify(text)} keyword ${k}`);
      });
      assert.deepEqual(indexRulesOf(demo, text, true, true), indexRulesOf(demo, text, true, false), JSON.stringify(text));
    }
  });

  it('the streaming redactor gives the batch result for case-sensitive keywords at every cut', () => {
    const text = 'a Qx123456 QX123456 b qx123456\nZk654321 zk654321 QX712345 end';
    const batch = redactSecrets(demo, text).text;
    assert.match(batch, /\[REDACTED:exact-demo\].*\[REDACTED:exact-demo\]/s);
    for (let cut = 1; cut < text.length; cut++) {
      let out = '';
      const r = new StreamingRedactor(demo, (s) => {
        out += s;
      });
      r.write(text.slice(0, cut));
      r.write(text.slice(cut));
      r.close();
      assert.equal(out, batch, `cut at ${cut}`);
    }
  });

  it('the bundled Discord token rule uses case-sensitive keywords: "content" and "and" are no keyword hits', () => {
    const discord = rules.rules.find((r) => r.id === 'discord-bot-token')!;
    assert.ok(discord.exactKeywords);
    const occ = indexKeywords(rules, 'content and node', 'content and node', 0);
    for (const k of discord.keywords)
      assert.equal(occ.get(rules.keywords.findIndex((w, id) => w === k && rules.keywordExact[id] === 1)), undefined, k);
  });
});
