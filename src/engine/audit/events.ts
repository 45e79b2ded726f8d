// Mapping engine decisions and host happenings to audit events. Pure.
import type { CheckResult } from '../engine';
import type { AuditEventInput, AuditEventType } from './types';
import { ruleAliasesOf } from '../content/rule-aliases';

// Where secrets leave the audit trail: AuditLog redacts every string of every entry before hashing.
export { redactArgs } from './redact';

export interface DecisionArgs {
  readonly session?: string;
  readonly actionType: string;
  readonly payload: unknown;
  readonly cwd?: string;
}

const SHIELD_ERROR_RULES = new Set([
  'engine.error',
  'ifc.error',
  'ifc.store_error',
  'tier2.internal_error',
  'tier2.store_error',
  'tier2.misconfigured',
  'tier3.store_error',
  'tier3.surface_error',
  'shell.unavailable',
]);
const PROTECTION_PREFIXES = ['deny.', 'editor.', 'ws.', 'protection.'];

/** Every rule id in the decision and its tier trail. */
function allRules(r: CheckResult): string[] {
  return [...r.rules, ...(r.trail ?? []).flatMap((t) => t.rules)];
}

/**
 * `rule_aliases`: the former coded id of each rule named that has one (`{"heuristic.prompt-injection.ignore-previous":
 * "heuristic.PI-001"}`), so the log can be searched by either; absent when no rule has one.
 */
function ruleAliasesField(rules: readonly string[]): { rule_aliases?: Record<string, string> } {
  const aliases = ruleAliasesOf(rules);
  return Object.keys(aliases).length ? { rule_aliases: aliases } : {};
}

/**
 * One engine decision → its audit events, in order: ACTION_PROPOSED, ACTION_EVALUATED (the full
 * decision), the derived events (IFC, canary, budget, rate limit, protection, self-protection, Shield
 * errors), then ACTION_APPROVED or ACTION_BLOCKED (nothing for `escalate`: it is still pending).
 */
export function eventsForDecision(result: CheckResult, args: DecisionArgs): AuditEventInput[] {
  const session = args.session ?? result.sessionId ?? 'unknown';
  const at = args.actionType;
  const ev = (event: AuditEventType, details: Record<string, unknown>): AuditEventInput => ({
    event,
    session,
    action_type: at,
    details: { action_id: result.id ?? null, ...details },
  });
  // `reasons`: the structured reasons the text was rendered from (entries written before they existed have only `reason`).
  const decision = {
    decision: result.decision,
    tier: result.tier,
    min_tier: result.minTier,
    level: result.level,
    rules: [...result.rules],
    reason: result.reason,
    reasons: result.reasons.map((r) => ({ rule: r.rule, tier: r.tier, kind: r.kind, message: r.message })),
    ...(result.confidence === undefined ? {} : { confidence: result.confidence }),
  };
  const out: AuditEventInput[] = [
    // Not redacted here: the audit log redacts every string of every entry once, before hashing.
    ev('ACTION_PROPOSED', { args: args.payload ?? {}, ...(args.cwd ? { cwd: args.cwd } : {}) }),
    ev('ACTION_EVALUATED', {
      decision,
      ...(result.trail
        ? {
            trail: result.trail.map((t) => ({
              decision: t.decision,
              tier: t.tier,
              confidence: t.confidence,
              rules: [...t.rules],
              reason: t.reason,
            })),
          }
        : {}),
      ...ruleAliasesField(allRules(result)),
    }),
  ];
  const rules = allRules(result);
  const has = (id: string) => rules.includes(id);
  const ifc = result.ifc;
  if (ifc) {
    out.push(
      ev('IFC_CLASSIFIED', {
        sensitivity: ifc.sensitivity,
        taint: ifc.taint,
        sink: ifc.sink ?? null,
        rule: ifc.rule,
        paths: ifc.classified.length,
      }),
    );
    if (ifc.wouldBlock && ifc.enforced && result.decision === 'block') out.push(ev('IFC_BLOCKED', { rule: ifc.rule, reason: ifc.reason }));
    else if (ifc.wouldBlock && !ifc.enforced) out.push(ev('IFC_WOULD_BLOCK', { rule: ifc.rule, reason: ifc.reason }));
  } else if (has('ifc.would_block')) {
    out.push(ev('IFC_WOULD_BLOCK', { rule: 'ifc.would_block', reason: result.reason }));
  }
  for (const t of result.trail ?? []) {
    if (t.tier !== 2) continue;
    const canary = (t as { canary?: string }).canary;
    if (
      canary === 'verified' ||
      (canary === undefined && t.rules.some((x) => x === 'tier2.allow' || x === 'tier2.block' || x === 'tier2.escalate'))
    )
      out.push(ev('CANARY_VERIFIED', { tier: 2, rules: [...t.rules] }));
    if (t.rules.includes('tier2.canary_missing') || t.rules.includes('tier2.canary_in_payload'))
      out.push(ev('CANARY_MISSING', { tier: 2, rules: [...t.rules], reason: t.reason }));
    if (t.rules.includes('tier2.budget_exhausted')) out.push(ev('BUDGET_EXHAUSTED', { tier: 2, reason: t.reason }));
  }
  if (!result.trail && (has('tier2.canary_missing') || has('tier2.canary_in_payload')))
    out.push(ev('CANARY_MISSING', { tier: 2, reason: result.reason }));
  if (!result.trail && has('tier2.budget_exhausted')) out.push(ev('BUDGET_EXHAUSTED', { tier: 2, reason: result.reason }));
  if (has('tier3.rate_limited')) out.push(ev('RATE_LIMIT_HIT', { tier: 3, rule: 'tier3.rate_limited' }));
  const selfRules = result.rules.filter((x) => x.startsWith('self.'));
  if (selfRules.length) out.push(ev('SELF_PROTECTION', { rules: selfRules, blocked: result.decision === 'block' }));
  const protRules = result.rules.filter((x) => PROTECTION_PREFIXES.some((p) => x.startsWith(p)));
  if (result.decision === 'block' && (protRules.length || selfRules.length) && result.tier === 0)
    out.push(ev('PROTECTION_BLOCKED', { rules: [...selfRules, ...protRules], level: result.level }));
  const errs = rules.filter((x) => SHIELD_ERROR_RULES.has(x));
  if (errs.length) out.push(ev('SHIELD_ERROR', { rules: [...new Set(errs)], reason: result.reason }));
  if (result.decision === 'allow') out.push(ev('ACTION_APPROVED', { tier: result.tier, rules: [...result.rules] }));
  else if (result.decision === 'block')
    out.push(ev('ACTION_BLOCKED', { tier: result.tier, rules: [...result.rules], reason: result.reason }));
  return out;
}

/**
 * After an allowed action has run: ACTION_EXECUTED, or ACTION_FAILED with the error. `details` adds
 * what the action did (e.g. the file tools' per-file before/after SHA-256, the refusing rule ids).
 */
export function executionEvent(
  result: Pick<CheckResult, 'id' | 'sessionId'>,
  args: { session?: string; actionType: string; ok: boolean; error?: string; durationMs?: number; details?: Record<string, unknown> },
): AuditEventInput {
  const details = {
    ...(args.details ?? {}),
    action_id: result.id ?? null,
    ...(args.durationMs === undefined ? {} : { duration_ms: args.durationMs }),
    ...(args.ok ? {} : { error: args.error ?? 'unknown error' }),
  };
  return {
    event: args.ok ? 'ACTION_EXECUTED' : 'ACTION_FAILED',
    session: args.session ?? result.sessionId ?? 'unknown',
    action_type: args.actionType,
    details,
  };
}

/** SESSION_STARTED / SESSION_ENDED, e.g. an agent session or one `bulwark check` run. */
export function sessionEvent(kind: 'started' | 'ended', session: string, details: Record<string, unknown> = {}): AuditEventInput {
  return { event: kind === 'started' ? 'SESSION_STARTED' : 'SESSION_ENDED', session, details };
}

/** CONFIG_CHANGED: the names (never the values of secrets) of the settings that changed. */
export function configChangedEvent(session: string, keys: readonly string[], details: Record<string, unknown> = {}): AuditEventInput {
  return { event: 'CONFIG_CHANGED', session, details: { keys: [...keys], ...details } };
}

/** POLICY_CHANGED: which policy source changed and the SHA-256 of its new text. */
export function policyChangedEvent(
  session: string,
  source: string,
  sha256: string,
  details: Record<string, unknown> = {},
): AuditEventInput {
  return { event: 'POLICY_CHANGED', session, details: { source, sha256, ...details } };
}

/** SANDBOX_STATUS: whether and how actions are sandboxed (helper available, degraded, off). */
export function sandboxStatusEvent(session: string, status: string, details: Record<string, unknown> = {}): AuditEventInput {
  return { event: 'SANDBOX_STATUS', session, details: { status, ...details } };
}
