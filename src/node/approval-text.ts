// The text of a Tier 3 approval prompt: the tool, its arguments with secrets redacted, and what every
// tier said. Pure formatting (no `vscode`), shared by every approval surface and unit-tested.
import { loadSecretRules, redactSecrets } from '../engine/secrets';
import { redactTextOrWithhold } from '../engine/audit/redact';
import type { ApprovalRequest } from '../engine/shield/tier3';
import type { Reason } from '../engine/types';
import { errorMessage } from '../engine/error-message';

/** Longest argument text shown (the rest is cut and the cut is stated). */
export const MAX_ARGUMENT_CHARS = 2048;
/** Longest reason line shown per tier. */
const MAX_REASON_CHARS = 600;

export interface ApprovalText {
  readonly title: string;
  readonly detail: string;
}

const TIER_NAMES: Readonly<Record<number, string>> = { 0: 'Tier 0 (policy)', 1: 'Tier 1 (heuristics)', 2: 'Tier 2', 3: 'Tier 3' };

/** Who said it: a tier, or before the tiers ran, the protection check, the policy or a failing part. */
function reasonLabel(r: Reason): string {
  if (r.tier === 0 && r.kind === 'protection') return 'Protection';
  if (r.kind === 'error') return `${TIER_NAMES[r.tier] ?? `Tier ${r.tier}`}, a failure`;
  return TIER_NAMES[r.tier] ?? `Tier ${r.tier}`;
}

/** Control and invisible characters would hide text in a dialog: shown as visible escapes instead. */
function visible(s: string): string {
  return s.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g,
    (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`,
  );
}

function cut(s: string, max: number, what: string): string {
  return s.length > max ? `${s.slice(0, max)}… [${what} cut: ${s.length - max} more characters not shown]` : s;
}

/** Arguments as indented JSON with secrets replaced by `[REDACTED:<rule>]`; never the raw text if redaction fails. */
export function redactedArguments(payload: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(payload, null, 2) ?? String(payload);
  } catch (e) {
    return `(the arguments cannot be shown: ${errorMessage(e)})`;
  }
  try {
    json = redactSecrets(loadSecretRules(), json).text;
  } catch (e) {
    return `(the arguments are hidden because secret redaction failed: ${errorMessage(e)})`;
  }
  return cut(visible(json), MAX_ARGUMENT_CHARS, 'arguments');
}

/**
 * `requester`: who asks, when known (e.g. "Claude Code" through its hook). Every text is redacted:
 * the reasons come from the tiers before the engine's own redaction (a heuristic's evidence, the
 * Tier 2 model's words), and the action type is the agent's tool name.
 */
export function approvalText(request: ApprovalRequest, requester?: string): ApprovalText {
  const shown = (s: string) => visible(redactTextOrWithhold(s));
  const reasons = request.reasons.length
    ? request.reasons
        .map((r) => `${reasonLabel(r)}: ${cut(shown(r.message), MAX_REASON_CHARS, 'reason')} [${shown(r.rule).slice(0, 100)}]`)
        .join('\n')
    : '(no tier gave a reason)';
  return {
    title: `Bulwark: approve ${shown(request.actionType).slice(0, 100)}?${requester ? ` (asked by ${visible(requester).slice(0, 100)})` : ''}`,
    detail: [
      `${requester ? `${visible(requester).slice(0, 100)} wants` : 'An agent wants'} to run this action. Approve it only if you expect it; the approval applies to this exact action only.`,
      '',
      'Arguments:',
      redactedArguments(request.payload),
      '',
      'Why you are asked:',
      reasons,
      '',
      `Session: ${shown(request.sessionId).slice(0, 200)}`,
    ].join('\n'),
  };
}
