// The decision matrix of content inspection: one action per finding, by phase and trust; the
// result's action is the highest of them. Starting point: palyra-safety's decide_recommended_action
// (the Palyra agent's content-safety crate), with its weak spots fixed on purpose — each change says why.
import type { PromptRisk, Severity } from '../heuristics/types';
import type { ContentAction, ContentPhase, FindingCategory, TrustLabel } from './types';
import { actionRank } from './types';

const SEV: Record<Severity, number> = { low: 0, medium: 1, high: 2, critical: 3 };
const atLeast = (s: Severity, min: Severity): boolean => SEV[s] >= SEV[min];

/** What the matrix needs to know about one finding. */
export interface MatrixInput {
  readonly category: FindingCategory;
  readonly severity: Severity;
  readonly risk?: PromptRisk;
}

/**
 * The action for one finding.
 *
 * | phase          | finding                               | trusted           | untrusted / mixed |
 * |----------------|---------------------------------------|-------------------|-------------------|
 * | pre_prompt     | secret_leak                           | redact            | redact            |
 * |                | invisible_text                        | redact            | redact            |
 * |                | credential_reference                  | annotate          | annotate          |
 * |                | prompt_injection critical             | block             | block             |
 * |                | prompt_injection high, exfiltration   | block             | block             |
 * |                | prompt_injection high, other          | block             | require_approval  |
 * |                | prompt_injection medium / low         | annotate          | annotate          |
 * | pre_execution  | secret_leak                           | block             | block             |
 * |                | invisible_text                        | require_approval  | block             |
 * |                | credential_reference                  | annotate          | require_approval  |
 * |                | prompt_injection critical, or         | block             | block             |
 * |                |   exfiltration ≥ high                 |                   |                   |
 * |                | prompt_injection other                | require_approval  | require_approval  |
 * | export         | secret_leak                           | redact            | redact            |
 * |                | invisible_text                        | redact            | redact            |
 * |                | credential_reference, prompt_injection| annotate          | annotate          |
 *
 * Changes from palyra-safety's matrix, and why:
 * - `mixed` is untrusted. palyra-safety only distinguished TrustedLocal; a mix carries the
 *   untrusted part's instructions whatever else it contains.
 * - pre_prompt, untrusted, instruction-level ≥ high: palyra-safety only annotated — the injected
 *   text reached the model, wrapped in a notice the model may or may not heed. Now it is withheld
 *   unless a person releases it (require_approval); critical findings are blocked outright.
 * - pre_prompt, untrusted, exfiltration ≥ high: palyra-safety asked for approval; a directive to
 *   send secrets or the system prompt somewhere has no legitimate reader, so it is blocked.
 * - pre_prompt, secret_leak: palyra-safety blocked the whole text; redaction keeps the secret out
 *   of the prompt just as well (the same detector finds what is removed) and keeps the rest of the
 *   text useful, so users are not pushed to switch the check off.
 * - invisible_text (palyra-safety had no such category): stripping the characters gives the model
 *   exactly what a person sees (redact). The hidden text itself is scanned for injection, so a
 *   smuggled instruction still blocks through its prompt-injection finding. In something about to
 *   be executed there is nothing to strip safely — it blocks when untrusted, asks when trusted.
 * - pre_execution, exfiltration ≥ high: palyra-safety blocked only critical exfiltration; a high one
 *   in a tool's arguments is the exfiltration itself.
 * - pre_execution, credential_reference: palyra-safety asked for approval on every finding; a
 *   trusted command reading $GITHUB_TOKEN is ordinary, an untrusted one is how secrets leave.
 * - export keeps palyra-safety's rule (secrets redacted, the rest annotated) and strips invisible text.
 */
export function matrixAction(phase: ContentPhase, trust: TrustLabel, f: MatrixInput): ContentAction {
  const untrusted = trust !== 'trusted';
  switch (phase) {
    case 'pre_prompt':
      switch (f.category) {
        case 'secret_leak':
          return 'redact';
        case 'invisible_text':
          return 'redact';
        case 'credential_reference':
          return 'annotate';
        case 'prompt_injection':
          if (f.severity === 'critical') return 'block';
          if (atLeast(f.severity, 'high')) return f.risk === 'exfiltration' || !untrusted ? 'block' : 'require_approval';
          return 'annotate';
      }
      break;
    case 'pre_execution':
      switch (f.category) {
        case 'secret_leak':
          return 'block';
        case 'invisible_text':
          return untrusted ? 'block' : 'require_approval';
        case 'credential_reference':
          return untrusted ? 'require_approval' : 'annotate';
        case 'prompt_injection':
          if (f.severity === 'critical' || (f.risk === 'exfiltration' && atLeast(f.severity, 'high'))) return 'block';
          return 'require_approval';
      }
      break;
    case 'export':
      switch (f.category) {
        case 'secret_leak':
          return 'redact';
        case 'invisible_text':
          return 'redact';
        case 'credential_reference':
          return 'annotate';
        case 'prompt_injection':
          return 'annotate';
      }
      break;
  }
  return 'block'; // unreachable for valid input: an unknown phase or category fails closed
}

/** The highest action of a list (allow for none). */
export function combineActions(actions: Iterable<ContentAction>): ContentAction {
  let best: ContentAction = 'allow';
  for (const a of actions) if (actionRank(a) > actionRank(best)) best = a;
  return best;
}
