// Secrets out of everything Bulwark says or records. Two places cannot be bypassed: Engine.check
// redacts every text of its result (renderDecision in ../reasons.ts: the reason, each structured
// reason, each tier's reason, the IFC reason) before any caller sees it, and the audit log redacts
// every string of every entry before it is hashed (a secret in a hash-chained entry can never be
// removed again). Surfaces that build texts of their own (CLI errors, hook answers, approval
// dialogs) use redactText. Pure.
import { loadSecretRules, redactSecrets, type SecretRuleSet } from '../secrets';
import { errorMessage } from '../error-message';

/** Rule of the block that replaces a decision whose texts could not be redacted. */
export const REDACTION_FAILED_RULE = 'engine.redaction_failed';

/** `text` with every secret replaced by `[REDACTED:<rule-id>]`. Throws if the secret rules are broken. */
export function redactText(text: string, rules: SecretRuleSet = loadSecretRules()): string {
  return redactSecrets(rules, text).text;
}

/**
 * For texts on their way out of an error path: a redaction that itself fails withholds the text
 * (its length only), never lets it through as it was.
 */
export function redactTextOrWithhold(text: string, rules?: SecretRuleSet): string {
  try {
    return redactText(text, rules);
  } catch (e) {
    return `[text withheld: secret redaction failed (${errorMessage(e)}); ${text.length} characters]`;
  }
}

/** Redacts secrets in every string inside `v` (keys too), without changing its shape. */
export function redactArgs(v: unknown, rules: SecretRuleSet = loadSecretRules(), depth = 0): unknown {
  if (typeof v === 'string') return redactSecrets(rules, v).text;
  if (depth > 32) return '[too deep]';
  if (Array.isArray(v)) return v.map((x) => redactArgs(x, rules, depth + 1));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[redactSecrets(rules, k).text] = redactArgs(x, rules, depth + 1);
    return out;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v); // JCS has no NaN/Infinity
  if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') return String(v);
  return v;
}
