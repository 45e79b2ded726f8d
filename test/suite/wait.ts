// Polling helpers shared by the extension-host suites.
import * as assert from 'node:assert/strict';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns something other than undefined, or fails after `ms`. */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) assert.fail(`timed out waiting: ${what}`);
    await sleep(50);
  }
}
