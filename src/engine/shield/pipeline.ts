// The Shield pipeline after protection: IFC classification → Tier 0 → Tier 1 → Tier 2 → Tier 3 →
// IFC decision. Minimum tier = max(protection, policy tier_override, action-type floor, opaque
// command, IFC escalate). An allow below the minimum tier continues upward. Every missing part,
// error or timeout blocks — or, in `report` mode (the CLI, which never calls a model or a human),
// stops with `escalate` naming the tier that would decide next.
import type { EffectJudgement } from '../effects';
import type { Tier, Verdict } from '../types';
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
  | { readonly ok: true; readonly policies: readonly CompiledPolicy[] }
  | { readonly ok: false; readonly error: string };

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
  /** Minimum tier from protection, the action-type floor and opaque commands, with the rules behind it. */
  readonly floor: Tier;
  readonly floorRules: readonly string[];
  readonly floorReasons: readonly string[];
  /** Protection rules that applied without blocking (shown with the decision). */
  readonly protectionRules: readonly string[];
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
  readonly rules: readonly string[];
  readonly reason: string;
  readonly confidence: number;
  /** Every tier's verdict, in order, for the audit log. */
  readonly trail: readonly TierVerdict[];
  readonly ifc?: IfcDecision;
}

const VERDICT_RANK: Record<Verdict, number> = { allow: 0, escalate: 1, block: 2 };

export async function runShield(parts: ShieldParts, input: ShieldInput): Promise<ShieldDecision> {
  const trail: TierVerdict[] = [];
  const rules = new Set<string>([...input.protectionRules, ...input.floorRules]);
  let minTier: Tier = input.floor;
  const reasons: string[] = [...input.floorReasons];
  const finish = (decision: Verdict, tier: Tier, reason: string, confidence = 1, extra: readonly string[] = []): ShieldDecision => {
    for (const r of extra) rules.add(r);
    const note = ifc && !ifc.enforced && ifc.wouldBlock ? ` (IFC audit mode: ${ifc.reason})` : '';
    if (note) rules.add('ifc.would_block');
    return { decision, tier, minTier, rules: [...rules], reason: reason + note, confidence, trail, ifc };
  };

  // IFC classification: escalate raises the minimum tier before any tier runs; a block is applied
  // at the IFC decision step, but before anyone is asked (no point approving what IFC will block).
  let ifc: IfcDecision | undefined;
  if (parts.ifc) {
    ifc = parts.ifc.evaluate(input.sessionId, input.action.type, { reads: input.reads, writes: input.writes, network: input.network, ...(input.publicMaterial?.length ? { publicMaterial: input.publicMaterial } : {}) });
    if (ifc.decision === 'escalate') { minTier = maxTier(minTier, 2); rules.add(ifc.rule); reasons.push(ifc.reason); }
  }

  // Tier 0: policy.
  const t0 = tier0(parts.policy, input);
  trail.push({ decision: t0.decision, tier: 0, confidence: 1, rules: [t0.rule], reason: t0.reason });
  rules.add(t0.rule);
  if (t0.decision === 'block') return finish('block', 0, `Blocked at Tier 0: ${t0.reason}.`);
  minTier = maxTier(minTier, t0.minTier);
  if (ifc?.decision === 'block') return finish('block', 0, ifc.reason.endsWith('.') ? ifc.reason : `${ifc.reason}.`, 1, [ifc.rule]);

  if (t0.decision === 'allow' && minTier === 0) {
    // A policy allow never skips the always-block heuristics (the original did).
    const hard = evaluateHeuristics(parts.heuristics, input.action.type, input.action.payload, { alwaysBlockOnly: true });
    if (hard.verdict === 'block') return heuristicBlock(hard, finish, trail);
    return finish('allow', 0, `Allowed at Tier 0: ${t0.reason}.`);
  }

  // Tier 1: heuristics and the classifier. They run also when Tier 2+ is required anyway: their
  // block is final at any minimum tier, so a command that is both flagged and opaque is not
  // judged more leniently than one that is only flagged.
  {
    const h = input.heuristics ?? evaluateHeuristics(parts.heuristics, input.action.type, input.action.payload);
    trail.push(heuristicVerdict(h));
    if (h.verdict === 'block') return heuristicBlock(h, finish, trail, false);
    let t1: Verdict = h.verdict;
    let t1Reason = h.verdict === 'escalate' ? heuristicReason(h) : 'no heuristic rule matched';
    let confidence = h.confidence;
    const skip = (parts.classifierSkipTypes ?? DEFAULT_CLASSIFIER_SKIP_TYPES).has(input.action.type);
    if (parts.classifier && !skip) {
      const threshold = parts.classifierThreshold ?? 0.85;
      let score: number;
      try {
        score = await parts.classifier.injectionScore(classifierText(input.action));
      } catch (e) {
        return finish('block', 1, `Blocked at Tier 1: the injection classifier failed (${errorMessage(e)}), and Tier 1 fails closed.`, 1, ['tier1.classifier_error']);
      }
      if (!Number.isFinite(score) || score < 0 || score > 1) return finish('block', 1, `Blocked at Tier 1: the injection classifier returned an invalid score (${score}).`, 1, ['tier1.classifier_error']);
      const label = score >= 0.5 ? 'INJECTION' : 'SAFE';
      trail.push({ decision: label === 'INJECTION' ? (score >= threshold ? 'block' : 'escalate') : 'allow', tier: 1, confidence: label === 'INJECTION' ? score : 1 - score, rules: [`tier1.classifier.${label.toLowerCase()}`], reason: `classifier ${parts.classifier.id}: ${label} ${score.toFixed(3)} (threshold ${threshold})` });
      if (label === 'INJECTION' && score >= threshold) return finish('block', 1, `Blocked at Tier 1: the classifier rates the payload a prompt injection (${score.toFixed(3)} ≥ threshold ${threshold}).`, score, ['tier1.classifier.injection']);
      if (label === 'INJECTION') { t1 = 'escalate'; t1Reason = `the classifier suspects a prompt injection (${score.toFixed(3)}, below the blocking threshold ${threshold})`; rules.add('tier1.classifier.injection'); confidence = score; }
    } else if (parts.classifier && skip && t1 === 'allow') {
      // The classifier over-fires on these types: the LLM evaluator judges their content instead.
      minTier = maxTier(minTier, 2);
      reasons.push(`${input.action.type} skips the classifier and goes to Tier 2`);
    }
    if (t1 === 'allow' && minTier <= 1) return finish('allow', 1, `Allowed at Tier 1: ${t1Reason}; ${t0.reason}.`, confidence);
    if (t1 === 'escalate') { rules.add('tier1.escalate'); reasons.push(t1Reason); }
  }
  minTier = maxTier(minTier, 2);
  const why = reasons.length ? ` (${[...new Set(reasons)].join('; ')})` : '';

  // Tier 2: the LLM evaluator.
  let t2Reason: string;
  if (!parts.tier2) {
    if (parts.mode === 'report') return finish('escalate', 2, `Needs Tier 2${minTier > 2 ? ', then your approval (Tier 3)' : ''}: ${t0.reason}${why}.`, 1);
    if (parts.tier2Unavailable !== 'escalate') return finish('block', 2, `Blocked: this action needs the Tier 2 evaluator${why}, but none is configured.`, 1, ['tier2.not_configured']);
    rules.add('tier2.not_configured');
    t2Reason = 'no Tier 2 evaluator is configured, and you chose to be asked instead';
    trail.push({ decision: 'escalate', tier: 2, confidence: 1, rules: ['tier2.not_configured'], reason: t2Reason });
  } else {
    const t2 = await parts.tier2.evaluate(input.action);
    trail.push(t2);
    for (const r of t2.rules) rules.add(r);
    if (t2.decision === 'block') return finish('block', 2, `Blocked at Tier 2: ${t2.reason}.`, t2.confidence);
    if (t2.decision === 'allow' && minTier <= 2) return finish('allow', 2, `Allowed at Tier 2: ${t2.reason}.`, t2.confidence);
    t2Reason = t2.reason;
  }
  minTier = 3;

  // Tier 3: a human.
  if (!parts.tier3) {
    if (parts.mode === 'report') return finish('escalate', 3, `Needs your approval (Tier 3): ${t2Reason}${why}.`, 1);
    return finish('block', 3, 'Blocked: this action needs your approval (Tier 3), but no approval surface is available.', 1, ['tier3.no_surface']);
  }
  const t3 = await parts.tier3.decide({ id: input.id, sessionId: input.sessionId, actionType: input.action.type, payload: input.action.payload, reasons: [...[...new Set(reasons)].map((reason) => ({ tier: 0, reason })), ...trail.map((t) => ({ tier: t.tier, reason: t.reason }))] });
  trail.push(t3);
  for (const r of t3.rules) rules.add(r);
  if (t3.decision === 'allow') return finish('allow', 3, `Allowed at Tier 3: ${t3.reason}.`);
  return finish('block', 3, `Blocked at Tier 3: ${t3.reason}.`);
}

/** Every policy is asked; the strictest answer wins, so a workspace policy can tighten but never loosen. */
function tier0(state: PolicyState, input: ShieldInput): Tier0Result {
  if (!state.ok) {
    if (actionSpec(input.action.type).readOnly) return { decision: 'escalate', minTier: 1, rule: 'policy.invalid', reason: `the policy is invalid (${state.error}); reads go on to Tier 1 until it is fixed` };
    return { decision: 'block', minTier: 0, rule: 'policy.invalid', reason: `the policy is invalid (${state.error}), and every non-read action is blocked until a valid policy is loaded` };
  }
  let strictest: Tier0Result | undefined;
  for (const p of state.policies) {
    const r = p.evaluate(input.action.type, input.paths, input.effects);
    if (!strictest || VERDICT_RANK[r.decision] > VERDICT_RANK[strictest.decision] || (r.decision === strictest.decision && r.minTier > strictest.minTier)) strictest = r;
  }
  return strictest ?? { decision: 'escalate', minTier: 1, rule: 'policy.none', reason: 'no policy is loaded, so Tier 1 decides' };
}

function heuristicVerdict(h: HeuristicResult): TierVerdict {
  return { decision: h.verdict, tier: 1, confidence: h.confidence, rules: h.findings.map((f) => `heuristic.${f.ruleId}`), reason: h.findings.length ? heuristicReason(h) : 'no heuristic rule matched' };
}

function heuristicReason(h: HeuristicResult): string {
  const f = h.findings[0]!;
  const more = h.findings.length > 1 ? ` (+${h.findings.length - 1} more)` : '';
  return `heuristic ${f.ruleId} (${f.category}, ${f.severity}): ${f.description} — matched \`${f.match}\` in ${f.field}${more}`;
}

function heuristicBlock(h: HeuristicResult, finish: (d: Verdict, t: Tier, r: string, c?: number, extra?: readonly string[]) => ShieldDecision, trail: TierVerdict[], record = true): ShieldDecision {
  if (record) trail.push(heuristicVerdict(h));
  const always = h.findings[0]?.alwaysBlock ? ' (an always-block rule: no policy can allow it)' : '';
  return finish('block', 1, `Blocked at Tier 1: ${heuristicReason(h)}${always}.`, h.confidence, h.findings.map((f) => `heuristic.${f.ruleId}`));
}

function classifierText(action: ActionView): string {
  return `${action.type}: ${JSON.stringify(action.payload)}`;
}

function maxTier(a: Tier, b: Tier): Tier {
  return (a > b ? a : b) as Tier;
}
