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
 * Hard-coded protection levels, lowest to highest. The seed's four plus `approval_required`,
 * Bulwark's level for files that configure code execution or agent permissions: writing them
 * always needs a human (Tier 3).
 */
export const PROTECTION_LEVELS = [
  'unprotected', 'write_tier1_min', 'escalate_tier2', 'approval_required', 'read_only', 'full_block',
] as const;
export type ProtectionLevel = (typeof PROTECTION_LEVELS)[number];
export const levelRank = (l: ProtectionLevel): number => PROTECTION_LEVELS.indexOf(l);

/** How an action touches one path. Creating a file counts as writing it. */
export type PathAccess = 'read' | 'write' | 'delete';

export type Verdict = 'allow' | 'block' | 'escalate';
export type Tier = 0 | 1 | 2 | 3;

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
  readonly reason: string;
}
