// Seeds of the randomized tests. Each runs with its fixed seed (the same inputs on every run, so a
// regression there is always caught) and with one fresh seed per run (from the OS random source), so
// runs over time explore more inputs. A failure names its seed; BULWARK_PROPERTY_SEED=<n> forces the
// fresh seed to <n> to reproduce it.
import { randomInt } from 'node:crypto';

export const PROPERTY_SEED_ENV = 'BULWARK_PROPERTY_SEED';

export interface RunSeed {
  readonly seed: number;
  /** "fixed seed 20240501" or "fresh seed 123 (…)", for test titles and failure messages. */
  readonly label: string;
  readonly fresh: boolean;
}

/** The fresh seed of this run: BULWARK_PROPERTY_SEED when set (a whole number ≥ 0, else an error), else a random one. */
export function freshSeed(env: NodeJS.ProcessEnv = process.env): { seed: number; forced: boolean } {
  const raw = env[PROPERTY_SEED_ENV];
  if (raw === undefined || raw.trim() === '') return { seed: randomInt(0, 2 ** 31 - 1), forced: false };
  const seed = Number(raw.trim());
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error(`${PROPERTY_SEED_ENV} must be a whole number from 0 to 4294967295 (got ${JSON.stringify(raw)})`);
  return { seed, forced: true };
}

// Every test file is bundled with its own copy of this module: the run's one fresh seed lives on globalThis,
// so all files of a mocha run share it (and one BULWARK_PROPERTY_SEED reproduces any of them).
const RUN_SEED = Symbol.for('bulwark.test.freshSeed');
const holder = globalThis as { [RUN_SEED]?: { seed: number; forced: boolean } };
const thisRun = (holder[RUN_SEED] ??= freshSeed());

/** The fixed seed, then this run's fresh one. */
export function runSeeds(fixed: number): readonly RunSeed[] {
  return [
    { seed: fixed, label: `fixed seed ${fixed}`, fresh: false },
    { seed: thisRun.seed, label: `fresh seed ${thisRun.seed}${thisRun.forced ? ` (from ${PROPERTY_SEED_ENV})` : ''}`, fresh: true },
  ];
}

/** The error a failure becomes: the seed and how to reproduce it in front of the original message (the original is the cause). */
function seedFailure(s: RunSeed, e: unknown): Error {
  const how = s.fresh ? `rerun with ${PROPERTY_SEED_ENV}=${s.seed} to reproduce` : 'it fails on every run';
  // The message only: the test runner prints the cause with its stack below.
  const original = e instanceof Error ? e.message : String(e);
  return new Error(`failed with ${s.label} (${how}):\n${original}`, { cause: e });
}

/** Runs `body` with the seed; a failure is rethrown as seedFailure says. */
export function withSeed<T>(s: RunSeed, body: (seed: number) => T): T {
  try {
    return body(s.seed);
  } catch (e) {
    throw seedFailure(s, e);
  }
}

/** withSeed for an async body: a throw or a rejection is rethrown the same way. */
export async function withSeedAsync<T>(s: RunSeed, body: (seed: number) => Promise<T>): Promise<T> {
  try {
    return await body(s.seed);
  } catch (e) {
    throw seedFailure(s, e);
  }
}

/** One mocha test per seed of runSeeds(fixed); the title names the seed, a failure says how to reproduce it. */
export function itSeeded(title: string, fixed: number, body: (seed: number, s: RunSeed) => void | Promise<void>): void {
  for (const s of runSeeds(fixed)) it(`${title} (${s.label})`, () => withSeedAsync(s, async (seed) => body(seed, s)));
}
