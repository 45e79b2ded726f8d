// Information flow control: the policy model (security/ifc/*.yaml) and the shape of a decision.
// Pure types and constants: no I/O, no `vscode`.

/** Sensitivity levels, lowest to highest; the rank is the index (public 0 … critical 4). */
export const SENSITIVITIES = ['public', 'internal', 'confidential', 'restricted', 'critical'] as const;
export type Sensitivity = (typeof SENSITIVITIES)[number];
export const sensitivityRank = (s: Sensitivity): number => SENSITIVITIES.indexOf(s);
export const maxSensitivity = (a: Sensitivity, b: Sensitivity): Sensitivity => (sensitivityRank(b) > sensitivityRank(a) ? b : a);

export const IFC_MODES = ['enforce', 'audit'] as const;
export type IfcMode = (typeof IFC_MODES)[number];

export const IFC_VERDICTS = ['allow', 'block', 'escalate'] as const;
export type IfcVerdict = (typeof IFC_VERDICTS)[number];

/** Match criteria of one source rule. Every criterion given must hold; none given = catch-all. */
export const MATCH_CRITERIA = [
  'basename_in',
  'basename_not_in',
  'basename_suffix_in',
  'basename_contains',
  'path_contains',
  'path_in',
] as const;
export type MatchCriterion = (typeof MATCH_CRITERIA)[number];
export type IfcMatch = { readonly [K in MatchCriterion]?: readonly string[] };

export interface IfcSource {
  readonly name: string;
  readonly sensitivity: Sensitivity;
  readonly description?: string;
  readonly match: IfcMatch;
  /** Paths this source must classify, and paths its own criteria must not match (tested for the presets). */
  readonly examples?: { readonly match: readonly string[]; readonly no_match: readonly string[] };
}

export interface IfcPolicy {
  /** Preset name (`default`, …) or the file the policy was read from; used in reasons. */
  readonly name: string;
  readonly origin: 'preset' | 'file';
  readonly description?: string;
  readonly mode: IfcMode;
  /** Ordered: the first source whose criteria all hold classifies the path. */
  readonly sources: readonly IfcSource[];
  /** Sink category → action types. Each action type is in at most one category. */
  readonly sinks: Readonly<Record<string, readonly string[]>>;
  /** Sensitivity → sink category → decision; complete for every level and every category. */
  readonly rules: Readonly<Record<Sensitivity, Readonly<Record<string, IfcVerdict>>>>;
}

export interface Classification {
  readonly sensitivity: Sensitivity;
  /** Name of the source rule that classified the path (`unclassified` when no rule matched). */
  readonly source: string;
}

export interface ClassifiedPath extends Classification {
  readonly path: string;
  readonly access: 'read' | 'write';
}

/** What executing an action adds to its session's taint: the most sensitive path it reads. */
export interface ReadTaint {
  readonly sensitivity: Sensitivity;
  readonly path?: string;
  readonly source?: string;
}

/** What an action touches, as the caller found it (payload paths and shell analysis). */
export interface IfcTouched {
  /** Paths whose content the action reads: read/list/search/grep targets, copy and move sources, shell read targets. */
  readonly reads: readonly string[];
  /** Paths the action creates, changes or deletes (including copy/move destinations and shell write targets). */
  readonly writes: readonly string[];
  /**
   * Network destinations of a shell command (URLs or hosts from shell analysis). Non-empty makes
   * the action also a flow into the sink category of `http_request` (external in the presets), so
   * `cat .env | curl …` is judged as critical → external as well as critical → exec.
   */
  readonly network?: readonly string[];
  /**
   * Paths among `reads` whose whole content the protection check read and found to be public
   * material only (certificates, public keys): public whatever their names say (`ca.pem`).
   */
  readonly publicMaterial?: readonly string[];
}

export interface IfcDecision {
  /** `allow` in audit mode whatever the matrix says, except `escalate` (kept) and store errors (block). */
  readonly decision: IfcVerdict;
  /** False in audit mode: the matrix's block was recorded, not applied. */
  readonly enforced: boolean;
  /** The matrix says block (in either mode), or a store error blocked. */
  readonly wouldBlock: boolean;
  /** Sensitivity of the data in the flow: max(session taint, every path touched). */
  readonly sensitivity: Sensitivity;
  /** Sink category that decided (undefined when the action type is in no category). */
  readonly sink?: string;
  /** `ifc.<sensitivity>.<sink>`, `ifc.no_sink` or `ifc.store_error`. */
  readonly rule: string;
  readonly reason: string;
  readonly classified: readonly ClassifiedPath[];
  /** The session's taint before this action (critical when the store could not be read). */
  readonly taint: Sensitivity;
  /** Pass to IfcEngine.commitRead once the action has actually run. */
  readonly readTaint: ReadTaint;
}
