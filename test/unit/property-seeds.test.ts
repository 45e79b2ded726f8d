// The seeds of the randomized tests (helpers/seeds.ts): the fixed seed always runs, the fresh one can
// be forced to reproduce a failure, and a failure names its seed and how to rerun it.
import assert from 'node:assert/strict';
import { PROPERTY_SEED_ENV, freshSeed, runSeeds, withSeed, withSeedAsync } from './helpers/seeds';

describe('randomized tests: seeds', () => {
  it("runs the fixed seed first, then this run's fresh one", () => {
    const [fixed, fresh] = runSeeds(20240501);
    assert.deepEqual(fixed, { seed: 20240501, label: 'fixed seed 20240501', fresh: false });
    assert.equal(fresh!.fresh, true);
    assert.ok(Number.isSafeInteger(fresh!.seed) && fresh!.seed >= 0);
  });

  it('the fresh seed is random unless BULWARK_PROPERTY_SEED forces it; a bad value is an error, not ignored', () => {
    const seen = new Set(Array.from({ length: 8 }, () => freshSeed({}).seed));
    assert.ok(seen.size > 1, 'eight draws of a 31-bit random seed are not all equal');
    assert.deepEqual(freshSeed({ [PROPERTY_SEED_ENV]: ' 1234 ' }), { seed: 1234, forced: true });
    for (const bad of ['abc', '-1', '1.5', '4294967296'])
      assert.throws(() => freshSeed({ [PROPERTY_SEED_ENV]: bad }), new RegExp(PROPERTY_SEED_ENV));
  });

  it('a failure names the seed and, for a fresh seed, the variable that reproduces it; the original error is kept', () => {
    const original = new assert.AssertionError({ message: 'output differs', actual: 'a', expected: 'b' });
    const fresh = { seed: 987, label: 'fresh seed 987', fresh: true };
    assert.throws(
      () =>
        withSeed(fresh, () => {
          throw original;
        }),
      (e: Error) =>
        e.message.startsWith(`failed with fresh seed 987 (rerun with ${PROPERTY_SEED_ENV}=987 to reproduce)`) &&
        e.message.includes('output differs') &&
        e.cause === original,
    );
    assert.throws(
      () =>
        withSeed({ seed: 1, label: 'fixed seed 1', fresh: false }, () => {
          throw new Error('x');
        }),
      /failed with fixed seed 1 \(it fails on every run\)/,
    );
    assert.equal(
      withSeed(fresh, (seed) => seed + 1),
      988,
    );
  });

  it('an async body: a rejection names the seed the same way (once), and every test file of a run shares the fresh seed', async () => {
    const fresh = { seed: 55, label: 'fresh seed 55', fresh: true };
    const original = new Error('chain verified after tampering');
    await assert.rejects(
      withSeedAsync(fresh, async () => {
        throw original;
      }),
      (e: Error) =>
        e.message.startsWith(`failed with fresh seed 55 (rerun with ${PROPERTY_SEED_ENV}=55 to reproduce)`) &&
        e.message.split('failed with').length === 2 &&
        e.cause === original,
    );
    assert.equal(await withSeedAsync(fresh, async (seed) => seed * 2), 110);
    const shared = (globalThis as Record<symbol, { seed: number } | undefined>)[Symbol.for('bulwark.test.freshSeed')];
    assert.equal(shared?.seed, runSeeds(1)[1]!.seed);
  });
});
