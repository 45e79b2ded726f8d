// The Shield pipeline after protection: IFC classification → Tier 0 → Tier 1 → Tier 2 → Tier 3 →
// IFC decision. Minimum tier = max(protection, policy tier_override, action-type floor, opaque
// command, IFC escalate). An allow below the minimum tier continues upward. Every missing part,
// error or timeout blocks — or, in `report` mode (the CLI, which never calls a model or a human),
// stops with `escalate` naming the tier that would decide next.
import type { EffectJudgement } from '../effects';
import type { Reason, ReasonKind, Tier, Verdict } from '../types';
import { contextClause, reasonOf, type ReasonText } from '../reasons';
import type { CompiledRuleSet, HeuristicResult } from '../heuristics';
import { evaluateHeuristics } from '../heuristics';
import type { IfcDecision, IfcEngine } from '../ifc';
import type { CompiledPolicy, Tier0Result } from './policy';
import type { ApprovalRequest } from './tier3';
import type { ActionView, TierVerdict } from './types';
import { CLASSIFIER_SKIP_TYPES, actionSpec } from '../actions';
import { errorMessage } from '../error-message';

/** Prompt-injection classifier (Tier 1), e.g. ONNX inference. Throws on failure (the pipeline blocks). */
export interface InjectionClassifier {
  readonly id: string;
  /** Probability that the text is a prompt injection, 0..1. */
  injectionScore(text: string): Promise<number>;
}

export type PolicyState =
  { readonly ok: true; readonly policies: readonly CompiledPolicy[] } | { readonly ok: false; readonly error: string };

export interface ShieldParts {
  /** The user's policy, then any workspace policy: a workspace can only tighten (the stricter result wins). */
  readonly policy: PolicyState;
  readonly heuristics: CompiledRuleSet;
  readonly classifier?: InjectionClassifier;
  readonly classifierThreshold?: number; // default 0.85
  readonly classifierSkipTypes?: ReadonlySet<string>;
  readonly tier2?: { evaluate(action: ActionView): Promise<TierVerdict & { event?: string }> };
  readonly tier3?: { decide(request: ApprovalRequest): Promise<TierVerdict & { event?: string }> };
  readonly ifc?: IfcEngine;
  /** `enforce` (extension): a missing tier blocks. `report` (CLI): stop and report the tier that would decide. */
  readonly mode: 'enforce' | 'report';
  /**
   * When no Tier 2 evaluator is configured: block (default), or — only if the user opted in — ask a
   * human at Tier 3 instead. (Budget exhaustion and unreachable evaluators follow the evaluator's own
   * `onUnavailable` option.)
   */
  readonly tier2Unavailable?: 'block' | 'escalate';
}

/** Types whose payload the classifier over-fires on (the action table's `skipClassifier`): Tier 2 judges them instead. */
export const DEFAULT_CLASSIFIER_SKIP_TYPES: ReadonlySet<string> = CLASSIFIER_SKIP_TYPES;

/** What the engine already knows when the Shield starts. */
export interface ShieldInput {
  readonly id: string;
  readonly sessionId: string;
  readonly action: ActionView;
  /** Normalised absolute paths the action touches (payload and shell analysis). */
  readonly paths: readonly string[];
  readonly reads: readonly string[];
  readonly writes: readonly string[];
  readonly network: readonly string[];
  /** Paths among `reads` the protection check found to hold only public material (certificates, public keys): public to IFC. */
  readonly publicMaterial?: readonly string[];
  /** What the action does, judged (effects.ts): Tier 0 rules with `effects:` match on its class. */
  readonly effects?: EffectJudgement;
  /** Minimum tier from protection, the action-type floor and opaque commands. */
  readonly floor: Tier;
  /** What the engine found before the Shield (protection, floors), in rule order; every decision carries them. */
  readonly reasons: readonly Reason[];
  /** Those of `reasons` that explain the floor: quoted in brackets when a higher tier is needed. */
  readonly floorReasons: readonly Reason[];
  /**
   * Tier 1's heuristic evaluation of this action (all rules, with `parts.heuristics`), when the
   * engine already ran it (for a memory write's content inspection): not computed twice.
   */
  readonly heuristics?: HeuristicResult;
}

export interface ShieldDecision {
  readonly decision: Verdict;
  readonly tier: Tier;
  readonly minTier: Tier;
  /** Every rule behind the decision, in order; `text` says how they read (reasons.ts renders it). */
  readonly reasons: readonly Reason[];
  readonly text: ReasonText;
  readonly confidence: number;
  /** Every tier's verdict, in order, for the audit log. */
  readonly trail: readonly TierVerdict[];
  readonly ifc?: IfcDecision;
}

const VERDICT_RANK: Record<Verdict, number> = { allow: 0, escalate: 1, block: 2 };

export async function runShield(parts: ShieldParts, input: ShieldInput): Promise<ShieldDecision> {
  return new ShieldRun(parts, input).run();
}

/**
 * One action through the Shield. Each tier's step returns the decision when it decides, or undefined to go on
 * upward; what the steps find accumulates in the run (the trail, the reasons, the minimum tier and what raised it).
 */
class ShieldRun {
  private readonly trail: TierVerdict[] = [];
  private readonly reasons: Reason[];
  private minTier: Tier;
  /** What raised the minimum tier on the way: said in brackets when a higher tier is needed. */
  private readonly raised: Reason[];
  private ifc: IfcDecision | undefined;
  /** Tier 0's answer as a reason: what an allow at Tier 1 or a Tier 2 request states. */
  private policy: Reason | undefined;

  constructor(
    private readonly parts: ShieldParts,
    private readonly input: ShieldInput,
  ) {
    this.reasons = [...input.reasons];
    this.minTier = input.floor;
    this.raised = [...input.floorReasons];
  }

  async run(): Promise<ShieldDecision> {
    this.classifyIfc();
    return this.tier0() ?? (await this.tier1()) ?? (await this.tier2()) ?? (await this.tier3());
  }

  private finish(decision: Verdict, tier: Tier, text: ReasonText, confidence = 1, extra: readonly Reason[] = []): ShieldDecision {
    const { reasons, ifc } = this;
    reasons.push(...extra);
    const auditNote = ifc && !ifc.enforced && ifc.wouldBlock ? reasonOf('ifc.would_block', 0, 'policy', ifc.reason) : undefined;
    if (auditNote) reasons.push(auditNote);
    const stated = auditNote ? { ...text, auditNote } : text;
    return { decision, tier, minTier: this.minTier, reasons, text: stated, confidence, trail: this.trail, ifc };
  }

  /** A decision stated by one reason found here. */
  private stop(
    decision: Verdict,
    tier: Tier,
    lead: string | undefined,
    r: Reason,
    confidence = 1,
    context?: readonly Reason[],
  ): ShieldDecision {
    return this.finish(decision, tier, { ...(lead ? { lead } : {}), stated: [r], ...(context ? { context } : {}) }, confidence, [r]);
  }

  /** Raises the minimum tier to at least `tier`, explained by `r`. */
  private raise(tier: Tier, r: Reason): void {
    this.minTier = maxTier(this.minTier, tier);
    this.reasons.push(r);
    this.raised.push(r);
  }

  /**
   * IFC classification: escalate raises the minimum tier before any tier runs; a block is applied at the IFC
   * decision step (after Tier 0), but before anyone is asked (no point approving what IFC will block).
   */
  private classifyIfc(): void {
    if (!this.parts.ifc) return;
    const { input } = this;
    const ifc = this.parts.ifc.evaluate(input.sessionId, input.action.type, {
      reads: input.reads,
      writes: input.writes,
      network: input.network,
      ...(input.publicMaterial?.length ? { publicMaterial: input.publicMaterial } : {}),
    });
    this.ifc = ifc;
    if (ifc.decision === 'escalate') this.raise(2, reasonOf(ifc.rule, 2, ifcKind(ifc.rule), ifc.reason));
  }

  /** Tier 0: policy (then the IFC block). A policy allow never skips the always-block heuristics. */
  private tier0(): ShieldDecision | undefined {
    const { parts, input, ifc } = this;
    const t0 = tier0(parts.policy, input);
    this.trail.push({ decision: t0.decision, tier: 0, confidence: 1, rules: [t0.rule], reason: t0.reason });
    const policy = reasonOf(t0.rule, 0, t0.rule === INVALID_POLICY_RULE ? 'error' : 'policy', t0.reason);
    this.policy = policy;
    this.reasons.push(policy);
    if (t0.decision === 'block') return this.finish('block', 0, { lead: 'Blocked at Tier 0: ', stated: [policy] });
    this.minTier = maxTier(this.minTier, t0.minTier);
    if (ifc?.decision === 'block') return this.stop('block', 0, undefined, reasonOf(ifc.rule, 0, ifcKind(ifc.rule), ifc.reason));
    if (t0.decision !== 'allow' || this.minTier !== 0) return undefined;
    const hard = evaluateHeuristics(parts.heuristics, input.action.type, input.action.payload, { alwaysBlockOnly: true });
    if (hard.verdict === 'block') return this.heuristicBlock(hard);
    return this.finish('allow', 0, { lead: 'Allowed at Tier 0: ', stated: [policy] });
  }

  /**
   * Tier 1: heuristics and the classifier. They run also when Tier 2+ is required anyway: their block is final
   * at any minimum tier, so a command that is both flagged and opaque is not judged more leniently than one
   * that is only flagged.
   */
  private async tier1(): Promise<ShieldDecision | undefined> {
    const { parts, input } = this;
    const h = input.heuristics ?? evaluateHeuristics(parts.heuristics, input.action.type, input.action.payload);
    this.trail.push(heuristicVerdict(h));
    if (h.verdict === 'block') return this.heuristicBlock(h, false);
    let t1: Verdict = h.verdict;
    let t1Reason = h.verdict === 'escalate' ? heuristicReason(h) : NO_HEURISTIC_MATCHED;
    let confidence = h.confidence;
    const skip = (parts.classifierSkipTypes ?? DEFAULT_CLASSIFIER_SKIP_TYPES).has(input.action.type);
    if (parts.classifier && !skip) {
      const c = await this.classify(parts.classifier);
      if ('decision' in c) return c;
      if (c.suspected) {
        t1 = 'escalate';
        t1Reason = c.suspected.message;
        confidence = c.score;
        this.reasons.push(c.suspected);
      }
    } else if (parts.classifier && skip && t1 === 'allow') {
      // The classifier over-fires on these types: the LLM evaluator judges their content instead.
      this.raise(2, reasonOf(CLASSIFIER_SKIPPED_RULE, 2, 'policy', `${input.action.type} skips the classifier and goes to Tier 2`));
    }
    // (t1 is allow only when no heuristic matched: Tier 1's own words, no rule's.)
    if (t1 === 'allow' && this.minTier <= 1)
      return this.finish('allow', 1, { lead: `Allowed at Tier 1: ${NO_HEURISTIC_MATCHED}; `, stated: [this.policy!] }, confidence);
    if (t1 === 'escalate') this.raise(2, reasonOf('tier1.escalate', 2, 'policy', t1Reason));
    this.minTier = maxTier(this.minTier, 2);
    return undefined;
  }

  /** The injection classifier: a block (a score at the threshold, or a failure: Tier 1 fails closed), or its suspicion. */
  private async classify(classifier: InjectionClassifier): Promise<ShieldDecision | { score: number; suspected?: Reason }> {
    const threshold = this.parts.classifierThreshold ?? 0.85;
    const failed = (message: string) => this.stop('block', 1, 'Blocked at Tier 1: ', reasonOf(CLASSIFIER_ERROR_RULE, 1, 'error', message));
    let score: number;
    try {
      score = await classifier.injectionScore(classifierText(this.input.action));
    } catch (e) {
      return failed(`the injection classifier failed (${errorMessage(e)}), and Tier 1 fails closed`);
    }
    if (!Number.isFinite(score) || score < 0 || score > 1) return failed(`the injection classifier returned an invalid score (${score})`);
    const label = score >= 0.5 ? 'INJECTION' : 'SAFE';
    this.trail.push({
      decision: label === 'INJECTION' ? (score >= threshold ? 'block' : 'escalate') : 'allow',
      tier: 1,
      confidence: label === 'INJECTION' ? score : 1 - score,
      rules: [`tier1.classifier.${label.toLowerCase()}`],
      reason: `classifier ${classifier.id}: ${label} ${score.toFixed(3)} (threshold ${threshold})`,
    });
    if (label === 'INJECTION' && score >= threshold) {
      const why = `the classifier rates the payload a prompt injection (${score.toFixed(3)} ≥ threshold ${threshold})`;
      return this.stop('block', 1, 'Blocked at Tier 1: ', reasonOf('tier1.classifier.injection', 1, 'policy', why), score);
    }
    if (label !== 'INJECTION') return { score };
    const why = `the classifier suspects a prompt injection (${score.toFixed(3)}, below the blocking threshold ${threshold})`;
    return { score, suspected: reasonOf('tier1.classifier.injection', 1, 'policy', why) };
  }

  /** Tier 2: the LLM evaluator (missing: a block, or in report mode or by the user's choice a question for Tier 3). */
  private async tier2(): Promise<ShieldDecision | undefined> {
    const { parts, raised } = this;
    let t2Reason: Reason;
    if (!parts.tier2) {
      if (parts.mode === 'report') {
        const then = this.minTier > 2 ? ', then your approval (Tier 3)' : '';
        return this.finish('escalate', 2, { lead: `Needs Tier 2${then}: `, stated: [this.policy!], context: raised }, 1);
      }
      if (parts.tier2Unavailable !== 'escalate') {
        const why = 'this action needs the Tier 2 evaluator, but none is configured';
        return this.stop('block', 2, 'Blocked: ', reasonOf(TIER2_NOT_CONFIGURED_RULE, 2, 'error', why), 1, raised);
      }
      t2Reason = reasonOf(TIER2_NOT_CONFIGURED_RULE, 2, 'error', 'no Tier 2 evaluator is configured, and you chose to be asked instead');
      this.reasons.push(t2Reason);
      this.trail.push({ decision: 'escalate', tier: 2, confidence: 1, rules: [TIER2_NOT_CONFIGURED_RULE], reason: t2Reason.message });
    } else {
      const t2 = await parts.tier2.evaluate(this.input.action);
      this.trail.push(t2);
      const said = verdictReasons(t2, 'tier2.verdict');
      this.reasons.push(...said);
      const stated = said.slice(0, 1);
      if (t2.decision === 'block') return this.finish('block', 2, { lead: 'Blocked at Tier 2: ', stated }, t2.confidence);
      if (t2.decision === 'allow' && this.minTier <= 2)
        return this.finish('allow', 2, { lead: 'Allowed at Tier 2: ', stated }, t2.confidence);
      t2Reason = said[0]!;
    }
    this.minTier = 3;
    this.t2Reason = t2Reason;
    return undefined;
  }

  /** What Tier 2 said when it passed the action up: what a Tier 3 request in report mode states. */
  private t2Reason: Reason | undefined;

  /** Tier 3: a human. */
  private async tier3(): Promise<ShieldDecision> {
    const { parts, input, raised, trail } = this;
    if (!parts.tier3) {
      if (parts.mode === 'report')
        return this.finish('escalate', 3, { lead: 'Needs your approval (Tier 3): ', stated: [this.t2Reason!], context: raised }, 1);
      const why = 'this action needs your approval (Tier 3), but no approval surface is available';
      return this.stop('block', 3, 'Blocked: ', reasonOf('tier3.no_surface', 3, 'error', why));
    }
    const t3 = await parts.tier3.decide({
      id: input.id,
      sessionId: input.sessionId,
      actionType: input.action.type,
      payload: input.action.payload,
      reasons: [
        ...approvalContext(raised),
        ...trail.map((t) => reasonOf(t.rules[0] ?? `tier${t.tier}.verdict`, t.tier, tierRuleKind(t.rules[0] ?? ''), t.reason)),
      ],
    });
    trail.push(t3);
    const answered = verdictReasons(t3, 'tier3.verdict');
    this.reasons.push(...answered);
    const stated = answered.slice(0, 1);
    if (t3.decision === 'allow') return this.finish('allow', 3, { lead: 'Allowed at Tier 3: ', stated });
    return this.finish('block', 3, { lead: 'Blocked at Tier 3: ', stated });
  }

  private heuristicBlock(h: HeuristicResult, record = true): ShieldDecision {
    if (record) this.trail.push(heuristicVerdict(h));
    const always = h.findings[0]?.alwaysBlock ? ' (an always-block rule: no policy can allow it)' : '';
    // The first finding speaks for the block (naming how many more matched); each other finding says what it is.
    const found = h.findings.map((f, i) =>
      reasonOf(`heuristic.${f.ruleId}`, 1, 'policy', i === 0 ? `${heuristicReason(h)}${always}` : findingReason(f)),
    );
    return this.finish('block', 1, { lead: 'Blocked at Tier 1: ', stated: found.slice(0, 1) }, h.confidence, found);
  }
}

const INVALID_POLICY_RULE = 'policy.invalid';
const TIER2_NOT_CONFIGURED_RULE = 'tier2.not_configured';
const CLASSIFIER_ERROR_RULE = 'tier1.classifier_error';
/** The action type skips the classifier (classifierSkipTypes), which raises its minimum tier to 2. */
export const CLASSIFIER_SKIPPED_RULE = 'tier1.classifier_skipped';
const NO_HEURISTIC_MATCHED = 'no heuristic rule matched';

/** Rules of Tier 2 and Tier 3 that say a part failed or is missing rather than judging the action. */
const TIER_ERROR_RULES: ReadonlySet<string> = new Set([
  'tier2.internal_error',
  'tier2.store_error',
  'tier2.misconfigured',
  'tier2.action_invalid',
  'tier2.not_configured',
  'tier2.unreachable',
  'tier2.budget_exhausted',
  'tier2.malformed',
  'tier2.unknown_decision',
  'tier3.store_error',
  'tier3.surface_error',
  'tier3.no_surface',
]);
const tierRuleKind = (rule: string): ReasonKind => (TIER_ERROR_RULES.has(rule) ? 'error' : 'policy');

/** A Tier 2 or Tier 3 verdict as reasons: each of its rules says its reason (`fallback` names a verdict that gave no rule). */
function verdictReasons(v: TierVerdict, fallback: string): Reason[] {
  const rules = v.rules.length ? v.rules : [fallback];
  return rules.map((rule) => reasonOf(rule, v.tier, tierRuleKind(rule), v.reason));
}
/** What raised the minimum tier, as a Tier 3 request states it: each clause once, said before any tier ran. */
function approvalContext(raised: readonly Reason[]): Reason[] {
  const seen = new Set<string>();
  return raised.flatMap((r) => {
    const clause = contextClause(r);
    if (seen.has(clause)) return [];
    seen.add(clause);
    return [reasonOf(r.rule, 0, r.kind, clause)];
  });
}
const ifcKind = (rule: string): ReasonKind => (rule === 'ifc.error' || rule === 'ifc.store_error' ? 'error' : 'policy');

/** Every policy is asked; the strictest answer wins, so a workspace policy can tighten but never loosen. */
function tier0(state: PolicyState, input: ShieldInput): Tier0Result {
  if (!state.ok) {
    if (actionSpec(input.action.type).readOnly)
      return {
        decision: 'escalate',
        minTier: 1,
        rule: 'policy.invalid',
        reason: `the policy is invalid (${state.error}); reads go on to Tier 1 until it is fixed`,
      };
    return {
      decision: 'block',
      minTier: 0,
      rule: 'policy.invalid',
      reason: `the policy is invalid (${state.error}), and every non-read action is blocked until a valid policy is loaded`,
    };
  }
  let strictest: Tier0Result | undefined;
  for (const p of state.policies) {
    const r = p.evaluate(input.action.type, input.paths, input.effects);
    if (
      !strictest ||
      VERDICT_RANK[r.decision] > VERDICT_RANK[strictest.decision] ||
      (r.decision === strictest.decision && r.minTier > strictest.minTier)
    )
      strictest = r;
  }
  return strictest ?? { decision: 'escalate', minTier: 1, rule: 'policy.none', reason: 'no policy is loaded, so Tier 1 decides' };
}

function heuristicVerdict(h: HeuristicResult): TierVerdict {
  return {
    decision: h.verdict,
    tier: 1,
    confidence: h.confidence,
    rules: h.findings.map((f) => `heuristic.${f.ruleId}`),
    reason: h.findings.length ? heuristicReason(h) : 'no heuristic rule matched',
  };
}

function heuristicReason(h: HeuristicResult): string {
  const more = h.findings.length > 1 ? ` (+${h.findings.length - 1} more)` : '';
  return `${findingReason(h.findings[0]!)}${more}`;
}

function findingReason(f: HeuristicResult['findings'][number]): string {
  return `heuristic ${f.ruleId} (${f.category}, ${f.severity}): ${f.description} — matched \`${f.match}\` in ${f.field}`;
}

function classifierText(action: ActionView): string {
  return `${action.type}: ${JSON.stringify(action.payload)}`;
}

function maxTier(a: Tier, b: Tier): Tier {
  return (a > b ? a : b) as Tier;
}
