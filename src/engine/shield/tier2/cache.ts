// The Tier 2 verdict cache: canary-verified, well-formed evaluator answers, keyed by the SHA-256 of
// the canonical JSON of {type, payload}, in the state store (namespace `tier2.cache`) with an
// absolute expiry. Expired or unreadable entries are deleted and treated as a miss (the evaluator is
// asked again). An index record lists the live entries so expired ones are removed even when the
// same action never comes back (the store has no listing). Store errors propagate; the evaluator
// blocks on them.
import type { StateStore } from '../types';
import type { EvaluatorDecision } from './parse';

export const CACHE_NAMESPACE = 'tier2.cache';
/** Index record: `[key, expiresAt][]` of the entries written and not yet pruned. Never a hex hash. */
export const CACHE_INDEX_KEY = 'index';

export interface CachedVerdict {
  readonly decision: EvaluatorDecision;
  readonly confidence: number;
  readonly reasoning: string;
  /** The back end that answered. */
  readonly backend: string;
  readonly storedAt: number;
  readonly expiresAt: number;
}

export class VerdictCache {
  constructor(private readonly store: StateStore) {}

  get(key: string, now: number): CachedVerdict | undefined {
    const raw = this.store.get(CACHE_NAMESPACE, key);
    if (raw === undefined) return undefined;
    const entry = decode(raw);
    // Expired, or stored "in the future" (the clock went back): not used.
    if (!entry || now >= entry.expiresAt || now < entry.storedAt) {
      this.store.delete(CACHE_NAMESPACE, key);
      return undefined;
    }
    return entry;
  }

  /** Stores `entry` and prunes entries that expired by `entry.storedAt`. */
  set(key: string, entry: CachedVerdict): void {
    const now = entry.storedAt;
    const live: [string, number][] = [];
    for (const [k, exp] of this.readIndex()) {
      if (k === key) continue;
      if (now >= exp) this.store.delete(CACHE_NAMESPACE, k);
      else live.push([k, exp]);
    }
    live.push([key, entry.expiresAt]);
    this.store.set(CACHE_NAMESPACE, key, JSON.stringify({ v: 1, ...entry }));
    this.store.set(CACHE_NAMESPACE, CACHE_INDEX_KEY, JSON.stringify(live));
  }

  private readIndex(): [string, number][] {
    const raw = this.store.get(CACHE_NAMESPACE, CACHE_INDEX_KEY);
    if (raw === undefined) return [];
    let o: unknown;
    try {
      o = JSON.parse(raw);
    } catch {
      return [];
    }
    if (!Array.isArray(o)) return [];
    return o.filter(
      (e): e is [string, number] => Array.isArray(e) && typeof e[0] === 'string' && /^[0-9a-f]{64}$/.test(e[0]) && Number.isFinite(e[1]),
    );
  }
}

function decode(raw: string): CachedVerdict | undefined {
  let o: unknown;
  try {
    o = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (o === null || typeof o !== 'object') return undefined;
  const e = o as Record<string, unknown>;
  const ok =
    e['v'] === 1 &&
    (e['decision'] === 'allow' || e['decision'] === 'block' || e['decision'] === 'escalate') &&
    typeof e['confidence'] === 'number' &&
    e['confidence'] >= 0 &&
    e['confidence'] <= 1 &&
    typeof e['reasoning'] === 'string' &&
    typeof e['backend'] === 'string' &&
    Number.isFinite(e['storedAt']) &&
    Number.isFinite(e['expiresAt']);
  if (!ok) return undefined;
  return {
    decision: e['decision'] as EvaluatorDecision,
    confidence: e['confidence'] as number,
    reasoning: e['reasoning'] as string,
    backend: e['backend'] as string,
    storedAt: e['storedAt'] as number,
    expiresAt: e['expiresAt'] as number,
  };
}
