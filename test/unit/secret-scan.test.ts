// The batch scan's shortcuts (the keyword and lead-string index, the start filter, the windows
// before each keyword) find exactly what the matching semantics of scan.ts define: here a naive
// reference tries every rule's regex at every position of random texts (rule examples, keywords in
// mixed case, fragments and noise) and accepts a match as scan.ts documents (a keyword of the
// rule in it, the entropy floor, the allow-list; an accepted match consumes its text, a rejected
// one does not). Lead strings of a case-sensitive regex are matched as written.
import assert from 'node:assert/strict';
import { compileSecretRules, findSecrets, loadSecretRules, type SecretRuleSet } from '../../src/engine/secrets';
import type { SecretRule } from '../../src/engine/secrets/rules';
import { parseRegex } from '../../src/engine/secrets/regex-syntax';
import { allCandidates, lowerAscii, valueAccepted } from '../../src/engine/secrets/scan';
import { leadLiterals } from '../../src/engine/secrets/start-filter';
import { prng } from './helpers/prng';
import { itSeeded } from './helpers/seeds';

const rules = loadSecretRules();

interface Found {
  readonly rule: string;
  readonly ms: number;
  readonly me: number;
  readonly ss: number;
  readonly se: number;
}

/** The matching semantics of one rule, with no shortcut: the regex at every position. */
function referenceScan(rule: SecretRule, text: string, out: Found[]): void {
  const low = lowerAscii(text);
  const hay = rule.exactKeywords ? text : low;
  const re = new RegExp(rule.sticky.source, `y${rule.hasGroup ? 'd' : ''}${rule.caseInsensitive ? 'i' : ''}`);
  let q = 0;
  while (q < text.length) {
    re.lastIndex = q;
    const m = re.exec(text);
    if (!m) {
      q++;
      continue;
    }
    const ms = m.index;
    const me = ms + m[0].length;
    const g = rule.hasGroup ? m.indices?.[1] : [ms, me];
    const ok =
      g !== undefined &&
      g[0] < g[1] &&
      rule.keywords.some((k) => {
        for (let p = hay.indexOf(k, ms); p >= 0 && p + k.length <= me; p = hay.indexOf(k, p + 1))
          if (rule.anchor === 'in_match' || p <= g[0]) return true;
        return false;
      }) &&
      valueAccepted(rule, text.slice(g[0], g[1]));
    if (ok) {
      out.push({ rule: rule.id, ms, me, ss: g[0], se: g[1] });
      q = me;
    } else q++;
  }
}

const key = (f: Found): string => `${f.rule}@${f.ss}-${f.se} (${f.ms}-${f.me})`;
const sorted = (list: Found[]): string[] => list.map(key).sort();

function batch(set: SecretRuleSet, text: string): string[] {
  return sorted(allCandidates(set, text).map((c) => ({ rule: c.rule.id, ms: c.ms, me: c.me, ss: c.ss, se: c.se })));
}

function reference(set: SecretRuleSet, text: string): string[] {
  const out: Found[] = [];
  for (const r of set.rules) referenceScan(r, text, out);
  return sorted(out);
}

const FRAGMENTS = [' ', '\n', '=', ': ', '"', "'", '_', '-', '.', 'KEY', 'Key', 'TOKEN ', 'SECRET ', 'api', 'x', '\u212a', 'é', '0'];

function randomText(rnd: () => number, plants: readonly string[], length: number): string {
  const words = rules.keywords;
  let s = '';
  while (s.length < length) {
    const r = rnd();
    if (r < 0.25) s += plants[Math.floor(rnd() * plants.length)]!;
    else if (r < 0.55) {
      const w = words[Math.floor(rnd() * words.length)]!;
      const mode = rnd();
      s += mode < 0.4 ? w : mode < 0.7 ? w.toUpperCase() : [...w].map((c) => (rnd() < 0.5 ? c.toUpperCase() : c)).join('');
    } else if (r < 0.8) s += FRAGMENTS[Math.floor(rnd() * FRAGMENTS.length)]!;
    else {
      const n = 1 + Math.floor(rnd() * 24);
      for (let i = 0; i < n; i++) s += String.fromCharCode(33 + Math.floor(rnd() * 94));
    }
  }
  return s;
}

describe('secret scan: the batch scan equals a naive scan', () => {
  const plants = rules.rules.flatMap((r) => [...r.examples.match, ...r.examples.no_match]);

  it('on every rule example', () => {
    for (const text of plants) assert.deepEqual(batch(rules, text), reference(rules, text), JSON.stringify(text));
  });

  itSeeded('on 150 random texts of rule examples, keywords in mixed case and noise', 0x5ca7, (seed) => {
    const rnd = prng(seed);
    for (let i = 0; i < 150; i++) {
      const text = randomText(rnd, plants, 40 + Math.floor(rnd() * (i % 10 === 0 ? 1500 : 300)));
      assert.deepEqual(batch(rules, text), reference(rules, text), JSON.stringify(text));
    }
  });
});

describe('secret scan: lead strings', () => {
  const leads = (source: string, fold = true): string[] | undefined => leadLiterals(parseRegex(source), fold);

  it('spell out a class of a few printable characters at the start, cut at 4 characters', () => {
    assert.deepEqual(leads('[ ,;]key=([0-9]{8})'), [' key', ',key', ';key']);
    assert.deepEqual(leads('[?&](?:token|sig)=([^&]{8,})'), ['&sig', '&tok', '?sig', '?tok']);
    assert.deepEqual(leads('(?:[_.-]key|secret)[ \\t]+(\\S{8,})'), ['-key', '.key', '_key', 'secret']);
  });

  it('end at a class after the first two characters, or at a class of many characters', () => {
    assert.deepEqual(leads('api[_.-]?key=(\\w{8,})'), ['api']);
    assert.equal(leads('[a-z]key=(\\w{8,})'), undefined);
    assert.equal(leads('[ \\t]key=(\\w{8,})'), undefined);
    assert.equal(leads('[^a]key=(\\w{8,})'), undefined);
  });
});

describe('secret scan: lead strings follow the case of the regex', () => {
  const demo = compileSecretRules([
    [
      't.yaml',
      {
        version: 1,
        family: 'demo',
        description: 'demo rules',
        rules: [
          {
            id: 'cased-lead',
            description: 'case-sensitive regex: its lead string KEY is matched as written',
            keywords: ['key'],
            regex: '(?:KEY|Key)[ =]{1,3}([0-9a-f]{8})',
            examples: { match: ['KEY = 0a1b2c3d', 'Key 0a1b2c3d'], no_match: ['key = 0a1b2c3d', 'kEY = 0a1b2c3d'] },
          },
          {
            id: 'folded-lead',
            description: 'case-insensitive regex: its lead string is folded',
            keywords: ['tok'],
            regex: '(?i)tok[ =]{1,3}([0-9a-f]{8})',
            examples: { match: ['tok = 0a1b2c3d', 'TOK = 0A1B2C3D'], no_match: ['tok = 0a1b', 'to = 0a1b2c3d'] },
          },
        ],
      },
    ],
  ]);

  it('keeps the case of a case-sensitive regex and folds a case-insensitive one', () => {
    const cased = demo.rules.find((r) => r.id === 'cased-lead')!;
    const folded = demo.rules.find((r) => r.id === 'folded-lead')!;
    assert.deepEqual(cased.leads, ['KEY', 'Key']);
    assert.deepEqual(folded.leads, ['tok']);
  });

  it('finds what the regex matches, in any case the regex allows, and nothing else', () => {
    const text = 'a KEY = 0a1b2c3d b key = 0a1b2c3d c Key=0a1b2c3d d kEY 0a1b2c3d e TOK = 0A1B2C3D f tOk 0a1b2c3d';
    const after = (s: string): number => text.indexOf(s) + s.length;
    assert.deepEqual(
      findSecrets(demo, text).map((f) => `${f.ruleId}:${f.start}`),
      [`cased-lead:${after('KEY = ')}`, `cased-lead:${after('Key=')}`, `folded-lead:${after('TOK = ')}`, `folded-lead:${after('tOk ')}`],
    );
    assert.deepEqual(batch(demo, text), reference(demo, text));
  });
});
