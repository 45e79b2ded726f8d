// Content inspection: what a text is, where it is going, and what was found in it. Pure types.
import type { PromptRisk, Severity } from '../heuristics/types';

/**
 * Where the text is going: into a model's prompt (`pre_prompt`), into a tool call or command that
 * is about to run (`pre_execution`), or out of Bulwark's hands — a log, an export, a report, a
 * file others will read (`export`).
 */
export const CONTENT_PHASES = ['pre_prompt', 'pre_execution', 'export'] as const;
export type ContentPhase = (typeof CONTENT_PHASES)[number];

/**
 * Who wrote the text: the user or their own workspace (`trusted`), anyone else — web pages, issue
 * comments, tool output, dependencies (`untrusted`) — or a mix of both (`mixed`, always treated as
 * untrusted: the trusted part cannot vouch for the rest).
 */
export const TRUST_LABELS = ['trusted', 'untrusted', 'mixed'] as const;
export type TrustLabel = (typeof TRUST_LABELS)[number];

export const FINDING_CATEGORIES = ['prompt_injection', 'secret_leak', 'credential_reference', 'invisible_text'] as const;
export type FindingCategory = (typeof FINDING_CATEGORIES)[number];

/** Lowest to highest; the result's action is the highest any finding asks for. */
export const CONTENT_ACTIONS = ['allow', 'annotate', 'redact', 'require_approval', 'block'] as const;
export type ContentAction = (typeof CONTENT_ACTIONS)[number];
export const actionRank = (a: ContentAction): number => CONTENT_ACTIONS.indexOf(a);

export interface ContentFinding {
  readonly category: FindingCategory;
  /** The rule's id: PI-xxx (prompt injection), a secret rule id, CR-xxx, IT-xxx. */
  readonly rule: string;
  readonly severity: Severity;
  /** Start of the finding in the original text, UTF-16 code units. */
  readonly start: number;
  /** End (exclusive). For a match found in decoded text: the span of the encoded blob. */
  readonly end: number;
  /** Prompt injection only. */
  readonly risk?: PromptRisk;
  readonly description: string;
  /** Prompt injection only: where the match was found, when not in the normalised text itself. */
  readonly variant?: 'homoglyph' | 'hidden' | 'base64' | 'hex' | 'url' | 'escape';
  /** The action the decision matrix gives this finding alone. */
  readonly action: ContentAction;
}

export interface InspectionResult {
  readonly action: ContentAction;
  readonly phase: ContentPhase;
  readonly trust: TrustLabel;
  readonly source: string;
  /** In text order (then by rule id). */
  readonly findings: readonly ContentFinding[];
  /**
   * The text with secrets replaced by `[REDACTED:<rule>]` and invisible characters removed, when
   * the action is `redact`.
   */
  readonly redacted?: string;
  /** Only the first MAX_INSPECT_CHARS characters were scanned for prompt injection. */
  readonly truncated?: boolean;
}
