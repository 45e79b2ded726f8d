// The StreamingRedactor property, with fast-check: for random texts with planted secrets (every
// rule's match examples) and random chunkings with random pauses, (a) the concatenated output
// equals redactSecrets() of the whole text, and (b) no prefix of the output ever contains a planted
// secret. streaming-redactor.test.ts checks the same property with a seeded PRNG of its own. Runs
// with a fixed seed and with one fresh seed per run (helpers/seeds.ts: BULWARK_PROPERTY_SEED reproduces).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { StreamingRedactor, loadSecretRules, redactSecrets, type FlushScheduler } from '../../src/engine/secrets';
import { runSeeds, withSeed } from './helpers/seeds';
import { ruleMatchPlants } from './helpers/workloads';

const rules = loadSecretRules();

const PLANTS = ruleMatchPlants(rules);

const FRAGMENTS = [
  'gh',
  'ghp_',
  'xox',
  'sk-',
  'sk-ant-',
  'AKIA',
  'AIza',
  'eyJ',
  '-----',
  '-----BEGIN ',
  'PRIVATE KEY-----',
  'password',
  'token',
  '=',
  ': ',
  '"',
  "'",
  ' ',
  '\n',
  'Bearer ',
  '://',
  '@',
  'a1B2',
  '_',
  '🙂',
  'é',
];

const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PLANTS).map((p) => ({ text: p.text, secrets: p.secrets })) },
  { weight: 2, arbitrary: fc.string({ maxLength: 60 }).map((text) => ({ text, secrets: [] as string[] })) },
  {
    weight: 2,
    arbitrary: fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 12 }).map((f) => ({ text: f.join(''), secrets: [] as string[] })),
  },
);

const scenario = fc.record({
  pieces: fc.array(piece, { minLength: 1, maxLength: 6 }),
  separator: fc.constantFrom('\n', '\n\n', ' \n', '\r\n'),
  cuts: fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 400 }),
  pauses: fc.array(fc.integer({ min: 0, max: 120 }), { minLength: 1, maxLength: 50 }),
});

class FakeScheduler implements FlushScheduler {
  private now = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();
  private next = 1;
  set(fn: () => void, ms: number): unknown {
    assert.ok(ms <= 50);
    const id = this.next++;
    this.pending.set(id, { at: this.now + ms, fn });
    return id;
  }
  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  advance(ms: number): void {
    this.now += ms;
    for (const [id, t] of [...this.pending])
      if (t.at <= this.now) {
        this.pending.delete(id);
        t.fn();
      }
  }
}

describe('StreamingRedactor property (fast-check)', function () {
  this.timeout(300_000);

  for (const s of runSeeds(20240501))
    it(`output == batch redaction for every chunking, and no emitted prefix contains a planted secret (${s.fresh ? 'fresh' : 'fixed'} seed)`, () =>
      withSeed(s, (seed) => {
        fc.assert(
          fc.property(scenario, ({ pieces, separator, cuts, pauses }) => {
            const text = pieces.map((p) => p.text).join(separator);
            const secrets = pieces.flatMap((p) => p.secrets);
            const expected = redactSecrets(rules, text).text;
            for (const s of secrets) assert.ok(!expected.includes(s), `batch redaction left ${JSON.stringify(s)} in clear`);
            const clock = new FakeScheduler();
            let out = '';
            const r = new StreamingRedactor(
              rules,
              (safe) => {
                out += safe;
                assert.ok(expected.startsWith(out), 'emitted text is a prefix of the batch redaction');
                for (const s of secrets) assert.ok(!out.includes(s), `planted secret emitted: ${JSON.stringify(s)}`);
              },
              { scheduler: clock },
            );
            let at = 0;
            for (let i = 0; at < text.length; i++) {
              const n = cuts[i % cuts.length]!;
              r.write(text.slice(at, at + n));
              at += n;
              clock.advance(pauses[i % pauses.length]!);
            }
            r.close();
            assert.equal(out, expected);
          }),
          { numRuns: 1000, seed },
        );
      }));
});
