// Tier 3: human approval. The engine asks every registered approval surface at once; the first
// answer wins, silence until the timeout denies, and more than `maxPerHour` requests in an hour
// are denied without asking anyone (approval fatigue is an attack).
import type { Reason } from '../types';
import type { Clock, StateStore, TierVerdict } from './types';
import { errorMessage } from '../error-message';

export interface ApprovalRequest {
  readonly id: string;
  readonly sessionId: string;
  readonly actionType: string;
  /** Arguments to show, secrets already redacted by the caller. */
  readonly payload: Readonly<Record<string, unknown>>;
  /**
   * Why a human is asked, in order: what raised the minimum tier before the tiers ran (tier 0, each clause once),
   * then each tier's verdict (its first rule, its tier, its words). Structured like a decision's reasons.
   */
  readonly reasons: readonly Reason[];
}

export type ApprovalAnswer = 'approve' | 'deny';

/** One place a human can answer (a modal in VS Code, a CLI prompt…). Must settle or honour the abort signal. */
export interface ApprovalSurface {
  readonly id: string;
  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

export interface Tier3Options {
  readonly surfaces: readonly ApprovalSurface[];
  readonly store: StateStore;
  readonly clock: Clock;
  readonly timeoutMs?: number; // default 300 000
  readonly maxPerHour?: number; // default 10
}

export interface Tier3Verdict extends TierVerdict {
  readonly event: 'approved' | 'denied' | 'timeout' | 'rate_limited' | 'no_surface' | 'error';
  readonly surface?: string;
}

const RATE_NS = 'tier3.rate';
const HOUR_MS = 3_600_000;

export class ApprovalBroker {
  private readonly timeoutMs: number;
  private readonly maxPerHour: number;

  constructor(private readonly o: Tier3Options) {
    this.timeoutMs = o.timeoutMs ?? 300_000;
    this.maxPerHour = o.maxPerHour ?? 10;
  }

  async decide(request: ApprovalRequest): Promise<Tier3Verdict> {
    const deny = (event: Tier3Verdict['event'], reason: string, rules: string[], surface?: string): Tier3Verdict => ({
      decision: 'block',
      tier: 3,
      confidence: 1,
      rules,
      reason,
      event,
      surface,
    });
    if (this.o.surfaces.length === 0)
      return deny('no_surface', 'Tier 3 needs a human, but no approval surface is available', ['tier3.no_surface']);
    try {
      if (!this.admit()) {
        return deny(
          'rate_limited',
          `more than ${this.maxPerHour} approval requests in the last hour; further requests are denied without asking, to protect you from approval fatigue`,
          ['tier3.rate_limited'],
        );
      }
    } catch (e) {
      return deny('error', `the approval rate limit could not be read (${errorMessage(e)})`, ['tier3.store_error']);
    }
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<{ answer: 'timeout' }>((resolve) => {
      timer = setTimeout(() => resolve({ answer: 'timeout' }), this.timeoutMs);
    });
    const answers = this.o.surfaces.map((s) =>
      s.ask(request, controller.signal).then(
        (answer) => ({ answer, surface: s.id }),
        (e: unknown) => ({ answer: 'error' as const, surface: s.id, error: errorMessage(e) }),
      ),
    );
    try {
      // First definite answer wins; a surface that fails does not decide for the others.
      const first = await Promise.race([timeout, firstDefinite(answers)]);
      if (first.answer === 'timeout')
        return deny('timeout', `no answer within ${Math.round(this.timeoutMs / 1000)} s, so the action is denied`, ['tier3.timeout']);
      if (first.answer === 'approve')
        return {
          decision: 'allow',
          tier: 3,
          confidence: 1,
          rules: ['tier3.approved'],
          reason: `approved by you (${first.surface})`,
          event: 'approved',
          surface: first.surface,
        };
      if (first.answer === 'deny') return deny('denied', `denied by you (${first.surface})`, ['tier3.denied'], first.surface);
      return deny('error', `every approval surface failed (${'error' in first ? first.error : 'unknown error'})`, ['tier3.surface_error']);
    } finally {
      clearTimeout(timer);
      controller.abort(); // the other surfaces close their prompts
    }
  }

  /** Sliding one-hour window of request times, kept in the durable store. */
  private admit(): boolean {
    const now = this.o.clock.now();
    const raw = this.o.store.get(RATE_NS, 'requests');
    const times = (raw ? (JSON.parse(raw) as number[]) : []).filter((t) => now - t < HOUR_MS);
    if (times.length >= this.maxPerHour) {
      this.o.store.set(RATE_NS, 'requests', JSON.stringify(times));
      return false;
    }
    times.push(now);
    this.o.store.set(RATE_NS, 'requests', JSON.stringify(times));
    return true;
  }
}

type SurfaceAnswer = { answer: ApprovalAnswer; surface: string } | { answer: 'error'; surface: string; error: string };

/** Resolves with the first approve/deny; if every surface errs, with the last error. */
function firstDefinite(answers: Promise<SurfaceAnswer>[]): Promise<SurfaceAnswer> {
  return new Promise((resolve) => {
    let pending = answers.length;
    for (const a of answers) {
      void a.then((r) => {
        pending--;
        if (r.answer !== 'error' || pending === 0) resolve(r);
      });
    }
  });
}
