// Why a decision came out as it did: the structured reasons every decision carries, and the one
// function that turns them into the human text (`Decision.reason`) and clears secrets from both.
// Pure.
import type { Decision, Reason, ReasonKind, Tier } from './types';
import type { TierVerdict } from './shield/types';
import { redactText } from './audit/redact';
import type { SecretRuleSet } from './secrets';

export type { Reason, ReasonKind };

export const reasonOf = (rule: string, tier: Tier, kind: ReasonKind, message: string): Reason => ({ rule, tier, kind, message });

/**
 * How a decision's reasons read as one sentence: `<lead><stated, joined by "; "> (<context>).` and,
 * after it, an IFC audit-mode note. Each text the decision shows once is a Reason; the lead holds only
 * Bulwark's own fixed words ("Blocked at Tier 0: ", "Needs Tier 2: ").
 */
export interface ReasonText {
  /** The opening words with their punctuation, e.g. `Blocked: `; none when the stated reason opens itself (an IFC block). */
  readonly lead?: string;
  /** The reasons that decided, in order. */
  readonly stated: readonly Reason[];
  /** The reasons that raised the minimum tier, in brackets after the stated ones (a message said twice is said once). */
  readonly context?: readonly Reason[];
  /** IFC in audit mode: what it would have blocked, after the sentence. */
  readonly auditNote?: Reason;
}

/** A protection rule quoted in brackets is a sentence of its own: `Protected: <message>.` */
export function contextClause(r: Reason): string {
  return r.kind === 'protection' ? `Protected: ${r.message}.` : r.message;
}

/**
 * The human text of a decision, with every secret in it replaced by `[REDACTED:<rule-id>]`: the one
 * place where reasons are put into words on their way out of the engine. Each message is redacted,
 * then the sentence as a whole when it joins several (joining texts could complete a secret). Throws if
 * the secret rules are broken.
 */
export function renderReasons(text: ReasonText, secretRules?: SecretRuleSet): string {
  return renderWith(text, redactor(secretRules), secretRules);
}

/** redactText with each distinct message redacted once: a decision repeats its messages (reasons, text, trail). */
function redactor(rules: SecretRuleSet | undefined): (message: string) => string {
  const done = new Map<string, string>();
  return (message) => {
    let clear = done.get(message);
    if (clear === undefined) {
      clear = redactText(message, rules);
      done.set(message, clear);
    }
    return clear;
  };
}

function renderWith(text: ReasonText, clear: (message: string) => string, rules: SecretRuleSet | undefined): string {
  const sentence = sentenceOf(clearedText(text, (r) => ({ ...r, message: clear(r.message) })));
  // One message after Bulwark's own lead words and before a full stop: nothing joined that a secret could
  // continue into, so the message's own redaction is the sentence's (most decisions; each pass costs ~3 µs).
  const parts = text.stated.length + (text.context?.length ?? 0) + (text.auditNote ? 1 : 0);
  return parts <= 1 ? sentence : redactText(sentence, rules);
}

/** The words of renderReasons without the redaction: for texts that hold only Bulwark's own words (a host's block). */
export function sentenceOf(text: ReasonText): string {
  const context = [...new Set((text.context ?? []).map(contextClause))];
  const body = `${text.lead ?? ''}${text.stated.map((r) => r.message).join('; ')}${context.length ? ` (${context.join('; ')})` : ''}`;
  const note = text.auditNote ? ` (IFC audit mode: ${text.auditNote.message})` : '';
  return `${body}${body.endsWith('.') ? '' : '.'}${note}`;
}

/** A decision still to be put into words: its reasons (every rule, in order) and how they read. */
export type DecisionDraft<T extends Decision> = Omit<T, 'rules' | 'reason' | 'reasons'> & {
  readonly reasons: readonly Reason[];
  readonly text: ReasonText;
  readonly trail?: readonly TierVerdict[];
  readonly ifc?: { readonly reason: string };
};

/**
 * The decision as it leaves the engine (Engine.check): `rules` are the reasons' rule ids (first
 * occurrence, in order), `reason` is renderReasons of its text, and every text it carries has its
 * secrets replaced by `[REDACTED:<rule-id>]`: each reason's message, each tier's reason and the IFC
 * reason. Rule ids, tiers and verdicts are Bulwark's own and stay. Throws if
 * the secret rules are broken (Engine.check turns that into a block).
 */
export function renderDecision<T extends Decision>(draft: DecisionDraft<T>, rules?: SecretRuleSet): T {
  const { text, reasons, ...rest } = draft;
  const clear = redactor(rules);
  const out = {
    ...rest,
    rules: [...new Set(reasons.map((r) => r.rule))],
    reason: renderWith(text, clear, rules),
    reasons: reasons.map((r) => ({ ...r, message: clear(r.message) })),
    ...(draft.trail ? { trail: draft.trail.map((t) => ({ ...t, reason: clear(t.reason) })) } : {}),
    ...(draft.ifc ? { ifc: { ...draft.ifc, reason: clear(draft.ifc.reason) } } : {}),
  };
  return out as unknown as T;
}

function clearedText(text: ReasonText, clear: (r: Reason) => Reason): ReasonText {
  return {
    ...(text.lead === undefined ? {} : { lead: text.lead }),
    stated: text.stated.map(clear),
    ...(text.context ? { context: text.context.map(clear) } : {}),
    ...(text.auditNote ? { auditNote: clear(text.auditNote) } : {}),
  };
}

/**
 * A block a host decides without the engine (the engine cannot be set up, the audit log cannot be
 * written, the hook's state is unavailable): one reason, in the same words as the engine's blocks.
 */
export function hostBlock(rule: string, kind: ReasonKind, message: string, level: Decision['level'] = 'unprotected'): Decision {
  const r = reasonOf(rule, 0, kind, message);
  return {
    decision: 'block',
    tier: 0,
    minTier: 0,
    level,
    rules: [rule],
    reasons: [r],
    reason: sentenceOf({ lead: 'Blocked: ', stated: [r] }),
  };
}
