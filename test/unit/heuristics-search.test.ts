// The search machinery behind Tier 1's rules finds exactly what a plain whole-text search finds:
// the keyword index (in JavaScript and in WebAssembly) against a naive search, the rule search
// (alternatives whose literals occur, sticky tries where matches start, windows) against the whole
// regex on texts dense with the rules' own words, and the shortcuts of normalisation (the plain
// check, the sampled blob finder, the cue prefilter) against what they stand for.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { load } from 'js-yaml';
import { loadHeuristicRules, type HeuristicRuleFile } from '../../src/engine/heuristics';
import { execRule } from '../../src/engine/heuristics/evaluate';
import { findBlobs, isPlainText, prepareField, type Blob } from '../../src/engine/heuristics/normalize';
import { MAX_POSITIONS, WASM_WALK_FROM, isAscii, type KeywordIndex } from '../../src/engine/heuristics/prefilter';
import { prng } from './helpers/prng';
import { itSeeded } from './helpers/seeds';
import { repoRoot } from './helpers/repo';

const set = loadHeuristicRules();
const DIR = path.join(repoRoot(), 'security/heuristics');
const EXAMPLES = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => (load(fs.readFileSync(path.join(DIR, f), 'utf8')) as HeuristicRuleFile).rules)
  .flatMap((r) => [...r.examples.match, ...r.examples.no_match]);

/** Every occurrence of each keyword, found naively in the text read as the automaton reads it (each code unit as its symbol). */
function naiveEnds(index: KeywordIndex, text: string): Map<number, number[]> {
  const sym = (s: string) => {
    let out = '';
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      out += String.fromCharCode(0x100 + (c < 128 ? index.classOf[c]! : 0));
    }
    return out;
  };
  const t = sym(text);
  const out = new Map<number, number[]>();
  index.keywords.forEach((k, id) => {
    if (k === '\u0080') return;
    const s = sym(k);
    for (let at = t.indexOf(s); at >= 0; at = t.indexOf(s, at + 1)) (out.get(id) ?? out.set(id, []).get(id)!).push(at + s.length);
  });
  return out;
}

function denseText(rnd: () => number, length: number): string {
  let s = '';
  while (s.length < length) {
    const r = rnd();
    if (r < 0.5) s += EXAMPLES[Math.floor(rnd() * EXAMPLES.length)]!;
    else if (r < 0.6) s += ['\n', '  ', '\t', '. ', 'é', '\u200b'][Math.floor(rnd() * 6)]!;
    else s += set.keywords.keywords[Math.floor(rnd() * set.keywords.keywords.length)]!;
    s += ' ';
  }
  return s.slice(0, length);
}

describe('heuristics: keyword index', () => {
  itSeeded('finds every keyword occurrence a naive search finds, and no other, in JavaScript and in WebAssembly', 0xbeef, (seed) => {
    const rnd = prng(seed);
    for (const length of [300, 1500, WASM_WALK_FROM + 1, 20_000, 140_000]) {
      const text = denseText(rnd, length);
      const hits = set.keywords.scan(text);
      const expected = naiveEnds(set.keywords, text);
      let compared = 0;
      set.keywords.keywords.forEach((k, id) => {
        if (k === '\u0080') {
          assert.equal(hits.found[id], isAscii(text) ? 0 : 1);
          return;
        }
        const want = expected.get(id) ?? [];
        assert.equal(hits.found[id], want.length > 0 ? 1 : 0, `${JSON.stringify(k)} at length ${length}`);
        const ends = hits.ends([id]);
        if (want.length > MAX_POSITIONS) assert.equal(ends, null, JSON.stringify(k));
        else {
          assert.deepEqual(
            ends!.sort((a, b) => a - b),
            want,
            `${JSON.stringify(k)} at length ${length}`,
          );
          compared++;
        }
        const starts = hits.starts([id]);
        if (starts) {
          const got: number[] = [];
          for (let q = starts.next(); q >= 0; q = starts.next()) got.push(q);
          assert.deepEqual(
            got,
            want.map((e) => e - k.length),
            `starts of ${JSON.stringify(k)}`,
          );
        }
      });
      assert.ok(compared > 100);
    }
  });
});

describe('heuristics: rule search on long texts', () => {
  itSeeded(
    "finds the whole-text match (same offset, same text) of every rule, on texts dense with the rules' own words",
    20261126,
    (seed) => {
      const rnd = prng(seed);
      let matched = 0;
      let compared = 0;
      for (let i = 0; i < 12; i++) {
        const raw = denseText(rnd, [5000, 20_000, 64_000][i % 3]!);
        for (const v of prepareField(raw, i % 2 === 0).variants) {
          if (v.text.length < 4096) continue;
          const hits = set.keywords.scan(v.text);
          for (const r of set.rules) {
            if (r.raw || !r.prefilter.every((s) => s.some((k) => hits.found[k] === 1))) continue;
            const whole = r.regex.exec(v.text);
            const found = execRule(r, v.text, hits);
            compared++;
            assert.equal(found?.index, whole?.index, `${r.rule.id}: offset`);
            assert.equal(found?.[0], whole?.[0], `${r.rule.id}: matched text`);
            if (whole) matched++;
          }
        }
      }
      assert.ok(compared > 1000 && matched > 300, `${compared} comparisons, ${matched} matches`);
    },
  );

  it('and where a rule matches nowhere but its words are everywhere', () => {
    // Each rule's near misses, repeated: its literals occur thousands of times, its regex never matches.
    for (const r of set.rules) {
      if (r.raw) continue;
      const misses = r.rule.examples?.no_match ?? [];
      const text = Array.from({ length: 400 }, (_, i) => misses[i % misses.length])
        .join('\n')
        .slice(0, 60_000);
      if (text.length < 4096) continue;
      const hits = set.keywords.scan(text);
      if (!r.prefilter.every((s) => s.some((k) => hits.found[k] === 1))) continue;
      const whole = r.regex.exec(text);
      const found = execRule(r, text, hits);
      assert.equal(found?.index, whole?.index, `${r.rule.id}: offset`);
      assert.equal(found?.[0], whole?.[0], `${r.rule.id}: matched text`);
    }
  });
});

describe('heuristics: normalisation shortcuts', () => {
  itSeeded('the plain check agrees with the pattern it stands for', 5, (seed) => {
    const NOT_PLAIN = /[^\x09\x0a\x0d\x20-\x7e]/;
    const rnd = prng(seed);
    const odd = ['\u0000', '\u0007', '\u000b', '\u001f', '\u007f', '\u0080', 'é', '\ud83d\ude00', '\ud800', '\u200b', '\t', '\r', '\n'];
    for (let i = 0; i < 400; i++) {
      const base = 'plain text, code() and {braces} '.repeat(1 + Math.floor(rnd() * 40));
      const at = Math.floor(rnd() * base.length);
      const text = rnd() < 0.3 ? base : base.slice(0, at) + odd[Math.floor(rnd() * odd.length)]! + base.slice(at);
      assert.equal(isPlainText(text), !NOT_PLAIN.test(text), JSON.stringify(text.slice(Math.max(0, at - 5), at + 5)));
      assert.equal(isAscii(text), !/[^\x00-\x7f]/.test(text));
    }
  });

  itSeeded('the blob finder, reading every sixteenth character first, finds what a full walk finds', 99, (seed) => {
    const full = (text: string): Blob[] => {
      const out: Blob[] = [];
      for (const m of text.matchAll(/[A-Za-z0-9+/_-]+/g)) {
        if (out.length >= 16) break;
        const run = m[0];
        const start = m.index!;
        const end = start + run.length;
        if (run.length >= 16 && /^[0-9A-Fa-f]+$/.test(run)) out.push({ kind: 'hex', start, end: end - (run.length & 1) });
        else if (run.length >= 24 && /[A-Z]/.test(run) && /[a-z]/.test(run)) out.push({ kind: 'base64', start, end });
      }
      return out;
    };
    const rnd = prng(seed);
    const pieces = [
      'QUJDREVGR0hJSktMTU5PUFFSU1RVVldY',
      '0123456789abcdef0',
      'deadbeef',
      'aGVsbG8',
      'x',
      ' ',
      '\n',
      '.',
      '==',
      'é',
      '-_/+',
      'Zm9vYmFy',
    ];
    for (let i = 0; i < 2000; i++) {
      let text = '';
      while (text.length < (i % 50 === 0 ? 5000 : 200)) text += pieces[Math.floor(rnd() * pieces.length)]!;
      const got: Blob[] = [];
      findBlobs(text, got);
      assert.deepEqual(got, full(text), JSON.stringify(text));
    }
  });

  itSeeded('a plain text skips only the cue searches that cannot match (the same variants either way)', 17, (seed) => {
    const rnd = prng(seed);
    const cues = [
      'read it in reverse',
      'spelled\tin  reverse',
      'write\nin reverse',
      'backwards',
      'BACKWARD',
      'rot13',
      'ROT-13',
      'rot_13',
      'rot 13',
      'reversed  text',
      'reverse the\tmessage',
      'al revés',
      'ruckwarts',
    ];
    for (let i = 0; i < 300; i++) {
      let text = '';
      while (text.length < 3000) {
        text += rnd() < 0.1 ? cues[Math.floor(rnd() * cues.length)]! : 'some ordinary words and code(x);';
        text += ['  ', ' ', '\n', '\t', ' \n  '][Math.floor(rnd() * 5)]!;
      }
      const hits = set.keywords.newHits();
      const skipped = prepareField(text, false, set.keywords, hits, set.cues).variants.map((v) => [v.kind, v.text]);
      const full = prepareField(text, false).variants.map((v) => [v.kind, v.text]);
      assert.deepEqual(skipped, full);
    }
  });
});
