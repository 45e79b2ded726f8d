// The daily Tier 2 budget: how many evaluator calls were made on each local calendar day, in the
// state store (namespace `tier2.budget`, key `YYYY-MM-DD`), so the count survives restarts and a new
// day (local midnight) starts from zero. Store errors propagate; the evaluator blocks on them.
import type { StateStore } from '../types';

export const BUDGET_NAMESPACE = 'tier2.budget';

/**
 * The local calendar date of `nowMs`. `offsetMinutes` is local time minus UTC (UTC+02:00 → 120,
 * UTC−05:00 → −300), i.e. the negation of `Date#getTimezoneOffset()`.
 */
export function localDateKey(nowMs: number, offsetMinutes: number): string {
  const d = new Date(nowMs + offsetMinutes * 60_000);
  if (Number.isNaN(d.getTime())) throw new RangeError(`no calendar date for time ${nowMs} with offset ${offsetMinutes} min`);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}`;
}

export class DailyBudget {
  constructor(
    private readonly store: StateStore,
    readonly limit: number,
  ) {}

  /** Calls made on `day`. A stored value that is not a count is reported as store corruption. */
  used(day: string): number {
    const raw = this.store.get(BUDGET_NAMESPACE, day);
    if (raw === undefined) return 0;
    if (!/^\d{1,15}$/.test(raw)) throw new Error(`the Tier 2 budget record for ${day} is corrupt (${JSON.stringify(raw.slice(0, 20))})`);
    return Number(raw);
  }

  /**
   * Takes one call from `day`'s budget: true if one was left (and is now used), false if exhausted.
   * Read and write happen in one synchronous step, so concurrent evaluations cannot overspend.
   */
  tryConsume(day: string): boolean {
    const used = this.used(day);
    if (used >= this.limit) return false;
    this.store.set(BUDGET_NAMESPACE, day, String(used + 1));
    return true;
  }
}
