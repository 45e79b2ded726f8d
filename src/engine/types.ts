// The action model and the shape of every decision. Pure types: no I/O, no `vscode`.

/** Action types Bulwark knows by name (the table in actions.ts). Tools from other agents may use any other string. */
export { KNOWN_ACTION_TYPES, PATH_FIELDS, type KnownActionType } from './actions';
import type { KnownActionType } from './actions';
/** A known type, or any other tool's name (kept as given). */
export type ActionType = KnownActionType | (string & {});

/** One proposed tool invocation, before it runs. */
export interface ActionRequest {
  /** Caller's correlation id (echoed back in results). */
  readonly id?: string;
  readonly type: ActionType;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly sessionId: string;
  /** Absolute working directory of the invocation, when the caller knows it. */
  readonly cwd?: string;
  /**
   * The surface will run this action inside the OS sandbox (set by Bulwark's own run-command tool,
   * sandboxed terminal or hook wrapping, never taken from an agent's payload). Project code such as
   * `npm test` is then judged harmless (effects class project_code_sandboxed).
   */
  readonly sandboxed?: boolean;
}

export type Platform = 'linux' | 'darwin' | 'win32';

/**
 * Hard-coded protection levels, lowest to highest: OpenParallax's four (full_block, read_only, escalate_tier2,
 * write_tier1_min) plus `approval_required`,
 * Bulwark's level for files that configure code execution or agent permissions: writing them
 * always needs a human (Tier 3).
 */
export const PROTECTION_LEVELS = [
  'unprotected',
  'write_tier1_min',
  'escalate_tier2',
  'approval_required',
  'read_only',
  'full_block',
] as const;
export type ProtectionLevel = (typeof PROTECTION_LEVELS)[number];
export const levelRank = (l: ProtectionLevel): number => PROTECTION_LEVELS.indexOf(l);

/** How an action touches one path. Creating a file counts as writing it. */
export type PathAccess = 'read' | 'write' | 'delete';

export type Verdict = 'allow' | 'block' | 'escalate';
export type Tier = 0 | 1 | 2 | 3;

/**
 * What a reason is about:
 * - `protection`: the hard-coded protection check of the paths an action touches (the tables under
 *   security/protection, Bulwark's own state, content-based blocks, hard links, unreadable or too large
 *   trees, invalid or uninterpretable paths: `deny.*`, `ws.*`, `editor.*`, `self.*`, `protection.*`,
 *   `path.invalid`, `payload.unclear`).
 * - `policy`: a rule that judged the action: Tier 0 policy, shell analysis (`shell.opaque`,
 *   `shell.review`, `shell.approval`), SSRF (`ssrf.*`), action types and invalid actions
 *   (`action_type.*`, `action.invalid`), content and memory rules (`content.*`), heuristics and the
 *   classifier (`heuristic.*`, `tier1.*`), IFC (`ifc.*`), the Tier 2 evaluator's verdicts and canary
 *   checks, a person's answer and the approval rate limit (`tier3.*`).
 * - `error`: a part of Bulwark failed or is missing, so it could not judge (fail closed): `engine.error`,
 *   `engine.redaction_failed`, `shell.unavailable`, `policy.invalid`, `tier1.classifier_error`,
 *   `ifc.error`, `ifc.store_error`, the Tier 2 evaluator's back-end, timeout, budget, parse, store and
 *   configuration errors and `tier2.not_configured`, `tier3.no_surface`, `tier3.surface_error`,
 *   `tier3.store_error`.
 */
export type ReasonKind = 'policy' | 'protection' | 'error';

/** One rule behind a decision and what it says, before it is put into the decision's text (reasons.ts). */
export interface Reason {
  readonly rule: string;
  /**
   * The tier whose check this is (0: protection, SSRF, Tier 0 policy and the engine's own checks; 1:
   * heuristics and the classifier; 2: the evaluator; 3: approval); for a rule that only raises the
   * minimum tier, the tier it requires.
   */
  readonly tier: Tier;
  readonly kind: ReasonKind;
  readonly message: string;
}

/** Every result explains itself: the same object goes to the user and to the audit log. */
export interface Decision {
  readonly decision: Verdict;
  /** The tier that decided (`allow`/`block`), or the tier that would decide next (`escalate`). */
  readonly tier: Tier;
  /** Lowest tier allowed to approve this action. */
  readonly minTier: Tier;
  /** Highest protection level among the paths the action touches. */
  readonly level: ProtectionLevel;
  /** Ids of the rules that produced this decision, most important first. */
  readonly rules: readonly string[];
  /** The reasons put into words (renderReasons in reasons.ts): what the user, the agent and the audit log read. */
  readonly reason: string;
  /** Every rule of `rules` with what it says, in order (a rule may give more than one). */
  readonly reasons: readonly Reason[];
}
