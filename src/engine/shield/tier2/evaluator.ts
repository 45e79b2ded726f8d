// Tier 2: one LLM review of one action, fail closed. Order per action:
//   configuration → canonical action (+ canary-in-payload check) → verdict cache → back end present
//   → daily budget → backend call under a timeout → strict answer parsing + canary check → cache.
// Every path returns a TierVerdict with tier 2, a rule id and a reason; nothing throws. Only the
// "evaluator unavailable" paths (not configured, budget exhausted, unreachable) honour
// onUnavailable: 'escalate'; a wrong canary, a malformed answer or a store error always blocks.
import type { ActionView, Clock, StateStore, TierVerdict } from '../types';
import { DailyBudget, localDateKey } from './budget';
import { VerdictCache } from './cache';
import { canonicalJson } from './canonical';
import { isValidCanary } from './canary';
import { type CanaryStatus, type EvaluatorDecision, type Tier2Event, parseEvaluatorAnswerDetailed } from './parse';
import { buildEvaluatorPrompt, userMessageFor } from './prompt';
import { sha256Hex } from './sha256';

/** One chat completion: system + user message in, raw assistant text out. Throws on transport errors/timeouts. */
export interface ChatBackend {
  readonly id: string;
  complete(system: string, user: string, signal: AbortSignal): Promise<string>;
}

export interface Tier2Options {
  backend: ChatBackend | undefined;
  /** The workspace canary: 64 hex characters. */
  canary: string;
  store: StateStore;
  clock: Clock;
  /** Backend calls per local day (default 100). */
  dailyBudget?: number;
  /** How long a verified verdict is reused (default 60 000 ms). */
  cacheTtlMs?: number;
  /** Abort the backend call after this long (default 30 000 ms). */
  timeoutMs?: number;
  /** Evaluator unavailable: 'block' (default) or 'escalate' (the user opted in to route to Tier 3). */
  onUnavailable?: 'block' | 'escalate';
  /** Local time minus UTC in minutes at the current instant (UTC+2 → 120); default from `Date`. */
  timeZoneOffsetMinutes?: () => number;
}

export type Tier2Result = TierVerdict & {
  cached: boolean;
  canary: CanaryStatus;
  event?: Tier2Event;
};

export const TIER2_DEFAULTS = { dailyBudget: 100, cacheTtlMs: 60_000, timeoutMs: 30_000 } as const;

export const TIER2_RULES = {
  allow: 'tier2.allow',
  block: 'tier2.block',
  escalate: 'tier2.escalate',
  canaryMissing: 'tier2.canary_missing',
  canaryInPayload: 'tier2.canary_in_payload',
  budgetExhausted: 'tier2.budget_exhausted',
  unreachable: 'tier2.unreachable',
  notConfigured: 'tier2.not_configured',
  malformed: 'tier2.malformed',
  unknownDecision: 'tier2.unknown_decision',
  storeError: 'tier2.store_error',
  actionInvalid: 'tier2.action_invalid',
  misconfigured: 'tier2.misconfigured',
  internalError: 'tier2.internal_error',
} as const;

/** Longest evaluator reasoning / error text copied into a reason. */
const MAX_REASON_TEXT = 500;

export class Tier2Evaluator {
  private readonly backend: ChatBackend | undefined;
  private readonly canary: string;
  private readonly clock: Clock;
  private readonly budget: DailyBudget;
  private readonly cache: VerdictCache;
  private readonly ttl: number;
  private readonly timeoutMs: number;
  private readonly onUnavailable: 'block' | 'escalate';
  private readonly tzOffset: () => number;
  /** Set when the options are unusable: every evaluation then blocks with this text. */
  private readonly configError: string | undefined;

  constructor(o: Tier2Options) {
    this.backend = o.backend;
    this.canary = o.canary;
    this.clock = o.clock;
    const budget = o.dailyBudget ?? TIER2_DEFAULTS.dailyBudget;
    this.ttl = o.cacheTtlMs ?? TIER2_DEFAULTS.cacheTtlMs;
    this.timeoutMs = o.timeoutMs ?? TIER2_DEFAULTS.timeoutMs;
    this.onUnavailable = o.onUnavailable ?? 'block';
    this.tzOffset = o.timeZoneOffsetMinutes ?? (() => -new Date(this.clock.now()).getTimezoneOffset());
    this.budget = new DailyBudget(o.store, budget);
    this.cache = new VerdictCache(o.store);

    const problems: string[] = [];
    if (!isValidCanary(o.canary)) problems.push('the workspace canary is not 64 hex characters, so answers cannot be verified');
    if (!Number.isSafeInteger(budget) || budget < 0) problems.push(`dailyBudget must be a whole number ≥ 0 (got ${String(budget)})`);
    if (!Number.isFinite(this.ttl) || this.ttl < 0) problems.push(`cacheTtlMs must be a number ≥ 0 (got ${String(this.ttl)})`);
    if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0)
      problems.push(`timeoutMs must be a number > 0 (got ${String(this.timeoutMs)})`);
    if (this.onUnavailable !== 'block' && this.onUnavailable !== 'escalate')
      problems.push(`onUnavailable must be 'block' or 'escalate' (got ${String(this.onUnavailable)})`);
    this.configError = problems.length ? problems.join('; ') : undefined;
  }

  /** Never throws: every failure is a verdict (block, or escalate where the user opted in). */
  async evaluate(action: ActionView): Promise<Tier2Result> {
    try {
      return await this.run(action);
    } catch (e) {
      return this.fail(TIER2_RULES.internalError, `Tier 2 failed unexpectedly: ${errorText(e)}; blocked`);
    }
  }

  private async run(action: ActionView): Promise<Tier2Result> {
    if (this.configError) return this.fail(TIER2_RULES.misconfigured, `Tier 2 is misconfigured: ${this.configError}; blocked`);

    // 1. The action as canonical JSON: cache key and the data shown to the evaluator.
    let compact: string;
    let display: string;
    try {
      if (
        action === null ||
        typeof action !== 'object' ||
        typeof action.type !== 'string' ||
        action.payload === null ||
        typeof action.payload !== 'object'
      ) {
        throw new TypeError('expected { type: string, payload: object }');
      }
      compact = canonicalJson({ type: action.type, payload: action.payload });
      display = canonicalJson({ type: action.type, payload: action.payload }, 2);
    } catch (e) {
      return this.fail(TIER2_RULES.actionInvalid, `Tier 2 cannot serialise the action: ${errorText(e)}; blocked`);
    }
    // The canary lives with Bulwark's FullBlock state; an action that carries it has read it
    // somewhere it must not, or is trying to forge an evaluator answer.
    if (compact.toLowerCase().includes(this.canary.toLowerCase())) {
      return this.fail(
        TIER2_RULES.canaryInPayload,
        "The action contains the Tier 2 workspace canary, which only Bulwark and its evaluator should know (canary leaked or an attempt to forge the evaluator's answer); blocked without asking the evaluator",
      );
    }
    const key = sha256Hex(compact);

    // 2. Verdict cache: hits cost no budget.
    const now = this.clock.now();
    let hit;
    try {
      hit = this.cache.get(key, now);
    } catch (e) {
      return this.storeFailed('reading the verdict cache', e);
    }
    if (hit) {
      const age = Math.round((now - hit.storedAt) / 1000);
      return this.verdict(hit.decision, hit.confidence, hit.reasoning, hit.backend, true, ` (cached verdict from ${age} s ago)`);
    }

    // 3. A back end at all.
    const backend = this.backend;
    if (!backend) {
      return this.unavailable(
        TIER2_RULES.notConfigured,
        'evaluator_unreachable',
        'Tier 2 is not configured: no LLM evaluator back end is set up (configure an OpenAI-compatible endpoint or a VS Code language model)',
      );
    }

    // 4. Budget: one unit per real backend call, taken before the call.
    let day: string;
    try {
      day = localDateKey(now, this.tzOffset());
    } catch (e) {
      return this.fail(TIER2_RULES.misconfigured, `Tier 2 cannot tell the local date for its daily budget: ${errorText(e)}; blocked`);
    }
    let ok: boolean;
    try {
      ok = this.budget.tryConsume(day);
    } catch (e) {
      return this.storeFailed('updating the daily budget', e);
    }
    if (!ok) {
      return this.unavailable(
        TIER2_RULES.budgetExhausted,
        'budget_exhausted',
        `The Tier 2 daily budget is exhausted: all ${this.budget.limit} evaluations for ${day} are used (it resets at local midnight)`,
      );
    }

    // 5. The call, aborted after timeoutMs.
    const userMessage = userMessageFor(display, key);
    if (userMessage.includes(this.canary)) {
      return this.fail(TIER2_RULES.internalError, 'Tier 2 refused to send a user message that contains the canary; blocked');
    }
    let answer: string;
    try {
      answer = await withTimeout(this.timeoutMs, (signal) => backend.complete(buildEvaluatorPrompt(this.canary), userMessage, signal));
    } catch (e) {
      return this.unavailable(
        TIER2_RULES.unreachable,
        'evaluator_unreachable',
        `The Tier 2 evaluator (${backend.id}) is unreachable: ${errorText(e)}`,
      );
    }

    // 6. Strict parse and canary check.
    const parsed = parseEvaluatorAnswerDetailed(answer, this.canary);
    const r = parsed.result;
    if ('error' in r) {
      const rule =
        r.event === 'canary_missing'
          ? TIER2_RULES.canaryMissing
          : r.event === 'unknown_decision'
            ? TIER2_RULES.unknownDecision
            : TIER2_RULES.malformed;
      const what = r.event === 'canary_missing' ? 'failed the canary check' : 'gave an unusable answer';
      return {
        ...this.fail(rule, `The Tier 2 evaluator (${backend.id}) ${what}: ${clean(r.error)}; blocked`),
        canary: parsed.canary,
        event: r.event,
      };
    }

    // 7. Cache the verified verdict, then return it.
    const storedAt = this.clock.now();
    try {
      if (this.ttl > 0)
        this.cache.set(key, {
          decision: r.decision,
          confidence: r.confidence,
          reasoning: r.reasoning,
          backend: backend.id,
          storedAt,
          expiresAt: storedAt + this.ttl,
        });
    } catch (e) {
      return this.storeFailed('writing the verdict cache', e);
    }
    return this.verdict(r.decision, r.confidence, r.reasoning, backend.id, false, '');
  }

  private verdict(
    decision: EvaluatorDecision,
    confidence: number,
    reasoning: string,
    backendId: string,
    cached: boolean,
    suffix: string,
  ): Tier2Result {
    const said = clean(reasoning) || '(no reasoning given)';
    return {
      decision,
      tier: 2,
      confidence,
      rules: [TIER2_RULES[decision]],
      cached,
      canary: 'verified',
      reason: `Tier 2 evaluator (${clean(backendId)}) answered ${decision.toUpperCase()} with confidence ${confidence}${suffix}: ${said}`,
    };
  }

  /** A block that no setting turns into anything else. */
  private fail(rule: string, reason: string): Tier2Result {
    return { decision: 'block', tier: 2, confidence: 1, rules: [rule], reason, cached: false, canary: 'n/a' };
  }

  private storeFailed(what: string, e: unknown): Tier2Result {
    return this.fail(TIER2_RULES.storeError, `Tier 2 state store failed while ${what}: ${errorText(e)}; blocked (fail closed)`);
  }

  /** The evaluator cannot be asked: block, or escalate to Tier 3 if the user opted in. */
  private unavailable(rule: string, event: Tier2Event, why: string): Tier2Result {
    const escalate = this.onUnavailable === 'escalate';
    return {
      decision: escalate ? 'escalate' : 'block',
      tier: 2,
      confidence: 1,
      rules: [rule],
      cached: false,
      canary: 'n/a',
      event,
      reason: escalate ? `${why}; escalated to Tier 3 (a human) because Tier 2 is set to escalate when unavailable` : `${why}; blocked`,
    };
  }
}

/** Runs `task` with a signal that aborts after `ms`; rejects at the deadline even if the task ignores the signal. */
async function withTimeout<T>(ms: number, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error(`no answer within ${ms} ms (timed out)`);
      controller.abort(err);
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([Promise.resolve().then(() => task(controller.signal)), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function errorText(e: unknown): string {
  const msg = e instanceof Error ? e.message || e.name : String(e);
  return clean(msg) || 'unknown error';
}

/** Text from outside (model reasoning, error messages) made safe for one line of a reason. */
function clean(s: string): string {
  const flat = s
    .replace(/[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g, ' ')
    .replace(/\udb40[\udc00-\udc7f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > MAX_REASON_TEXT ? `${flat.slice(0, MAX_REASON_TEXT)}…` : flat;
}
