// Contracts between the Shield pipeline (Tier 0–3) and its parts. Pure types.
import type { Tier, Verdict } from '../types';

/** What one tier concluded. `escalate` means "not mine to decide: go up". */
export interface TierVerdict {
  readonly decision: Verdict;
  readonly tier: Tier;
  /** 0..1; 1 for deterministic rules. */
  readonly confidence: number;
  readonly rules: readonly string[];
  readonly reason: string;
}

/** The action as a tier sees it: type and payload only (never the conversation). */
export interface ActionView {
  readonly type: string;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** Wall-clock source, injected so budgets, caches and timeouts are testable. */
export interface Clock {
  now(): number; // ms since the epoch
}

/**
 * Durable key/value state (Tier 2 budget and verdict cache, Tier 3 rate limit, session taint).
 * Implementations: SQLite in the extension and CLI, an in-memory map in pure tests. Methods throw on
 * store errors; callers on a decision path turn a throw into a block.
 */
export interface StateStore {
  get(namespace: string, key: string): string | undefined;
  set(namespace: string, key: string, value: string): void;
  delete(namespace: string, key: string): void;
}

export class MemoryStateStore implements StateStore {
  private readonly data = new Map<string, string>();
  get(ns: string, key: string): string | undefined {
    return this.data.get(`${ns}\u0000${key}`);
  }
  set(ns: string, key: string, value: string): void {
    this.data.set(`${ns}\u0000${key}`, value);
  }
  delete(ns: string, key: string): void {
    this.data.delete(`${ns}\u0000${key}`);
  }
}
