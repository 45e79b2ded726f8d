// Shapes of the Tier 1 heuristic rules (security/heuristics/*.yaml) and of their results.
// Pure types: no I/O, no `vscode`.

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const HEURISTIC_CATEGORIES = [
  'shell_injection',
  'prompt_injection',
  'path_traversal',
  'data_exfiltration',
  'sensitive_data',
  'encoding_evasion',
  'self_protection',
  'editor_config',
] as const;
export type HeuristicCategory = (typeof HEURISTIC_CATEGORIES)[number];

/** Each rule family (the id up to its last dot, `prompt-injection.ignore-previous` → `prompt-injection`) and the category its rules carry. */
export const ID_FAMILY_CATEGORY: Readonly<Record<string, HeuristicCategory>> = {
  'shell.cross-platform': 'shell_injection',
  'shell.unix': 'shell_injection',
  'shell.windows': 'shell_injection',
  'prompt-injection': 'prompt_injection',
  'path-traversal': 'path_traversal',
  'data-exfiltration': 'data_exfiltration',
  'sensitive-data': 'sensitive_data',
  'encoding-evasion': 'encoding_evasion',
  'self-protection': 'self_protection',
  'editor-config': 'editor_config',
};

/** Prefix of each former coded id (a rule's `alias`, `PI-001`) and the category of its rules. */
export const ALIAS_PREFIX_CATEGORY: Readonly<Record<string, HeuristicCategory>> = {
  XP: 'shell_injection',
  UX: 'shell_injection',
  WIN: 'shell_injection',
  PI: 'prompt_injection',
  PT: 'path_traversal',
  DE: 'data_exfiltration',
  SD: 'sensitive_data',
  EE: 'encoding_evasion',
  SP: 'self_protection',
  ED: 'editor_config',
};

/** A descriptive rule id: dot-separated kebab-case words, at least a family and a name. */
export const DESCRIPTIVE_RULE_ID = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+$/;
/** Longest rule id. */
export const MAX_RULE_ID_LENGTH = 60;
/** A former coded rule id (`PI-001`), kept as the rule's alias. */
export const CODED_RULE_ID = /^[A-Z]{2,4}-\d{3}$/;

/**
 * Classes of payload text a rule can look at. Every string in a payload is put in one class by
 * the name of its key (see FIELD_CLASS_OF_KEY in fields.ts); strings under unknown keys count as
 * `content`, so no text escapes the rules.
 */
export const FIELD_CLASSES = ['command', 'path', 'url', 'content', 'body', 'message', 'query', 'pattern'] as const;
export type FieldClass = (typeof FIELD_CLASSES)[number];
export type RuleField = FieldClass | 'all';

export type HeuristicAction = 'block' | 'escalate';

/**
 * What a prompt-injection rule's text tries to do (required for category prompt_injection, used by
 * content inspection's decision matrix): `instruction` — take over the model's instructions
 * (overrides, role reassignment, tool-use coercion, hidden directives); `exfiltration` — get
 * secrets, files or the system prompt out; `content` — forge the structure of the conversation
 * (fake role markers, chat-template tokens, text addressed to AI readers).
 */
export const PROMPT_RISKS = ['instruction', 'exfiltration', 'content'] as const;
export type PromptRisk = (typeof PROMPT_RISKS)[number];

/**
 * Which text a rule sees. `normalized` (default): every normalised variant of a field (NFKC,
 * invisible characters removed, whitespace collapsed, homoglyphs folded, decoded blobs, smuggled tag text, the
 * de-quoted shell view). `raw`: the field as given, before normalisation — for rules about the
 * characters that normalisation removes (zero-width, bidi, tag characters, variation selectors,
 * control bytes). Raw rules run only on fields from which normalisation removed something.
 */
export type ScanMode = 'normalized' | 'raw';

/** One rule as written in security/heuristics/*.yaml. */
export interface HeuristicRule {
  /** `<family>.<what it catches>`, e.g. `prompt-injection.ignore-previous`. */
  readonly id: string;
  /** The former coded id (`PI-001`), if the rule had one: recorded beside the id in the audit log. */
  readonly alias?: string;
  readonly category: HeuristicCategory;
  readonly severity: Severity;
  readonly action: HeuristicAction;
  /** Runs even when a policy allowed the action. Never together with `action: escalate`. */
  readonly always_block?: boolean;
  readonly fields: readonly RuleField[];
  /** Only for these action types; omitted = every action type. */
  readonly action_types?: readonly string[];
  readonly scan?: ScanMode;
  /** Prompt-injection rules only: the kind of risk (content inspection's matrix). */
  readonly risk?: PromptRisk;
  /** JavaScript RegExp source; a leading `(?i)`, `(?s)`, `(?m)` (or a combination) becomes flags. */
  readonly pattern: string;
  readonly description: string;
  readonly examples: { readonly match: readonly string[]; readonly no_match: readonly string[] };
}

export interface HeuristicRuleFile {
  readonly version: 1;
  readonly description?: string;
  readonly rules: readonly HeuristicRule[];
}

export interface HeuristicFinding {
  readonly ruleId: string;
  readonly category: string;
  readonly severity: Severity;
  readonly action: HeuristicAction;
  readonly alwaysBlock: boolean;
  /** Where the text was found: the payload key path, e.g. `command`, `edits[0].newText`. */
  readonly field: string;
  /**
   * The matched text, at most 120 characters, invisible and control characters shown as `\u{…}`,
   * secrets replaced by `[REDACTED:<rule>]`; a sensitive-data rule's match is `[REDACTED:<its id>]`.
   */
  readonly match: string;
  readonly description: string;
  /** The variant the match was found in, when it was not the normalised text itself. */
  readonly variant?: Exclude<VariantKind, 'normalized'> | 'raw';
}

export interface HeuristicResult {
  readonly verdict: 'block' | 'escalate' | 'allow';
  readonly confidence: number;
  /** Block findings first, then by severity (highest first), then in the order of the rule set (CompiledRuleSet.order). */
  readonly findings: readonly HeuristicFinding[];
  readonly normalization: NormalizationReport;
}

export type VariantKind =
  'normalized' | 'homoglyph' | 'hidden' | 'base64' | 'hex' | 'url' | 'escape' | 'shell' | 'spaced' | 'rot13' | 'reversed';

export interface DecodedBlob {
  readonly kind: 'base64' | 'hex' | 'url' | 'escape';
  /** Payload key path of the field (set by evaluateHeuristics). */
  readonly field?: string;
  /** Length of the decoded text in characters. */
  readonly length: number;
}

/** What normalisation found and did. Counts are summed over all scanned fields. */
export interface NormalizationReport {
  /** Zero-width characters removed: U+200B–U+200F, U+2060–U+2064, U+FEFF, U+00AD. */
  readonly zeroWidth: number;
  /** Bidirectional controls removed: U+202A–U+202E, U+2066–U+2069. */
  readonly bidi: number;
  /** Unicode tag characters removed: U+E0000–U+E007F. */
  readonly tagChars: number;
  /** Variation selectors U+FE00–U+FE0F and U+E0100–U+E01EF removed (runs of them can carry hidden bytes). */
  readonly variationSelectors: number;
  /** C0/C1 control characters removed (everything below U+0020 except tab, LF, CR; U+007F–U+009F). */
  readonly controlChars: number;
  /** ASCII text carried by tag characters (decoded and scanned as its own variant), first 120 characters. */
  readonly hiddenText: string;
  /** Latin look-alike letters (Cyrillic, Greek, Armenian…) folded to ASCII in the `homoglyph` variant. */
  readonly homoglyphs: number;
  /** NFKC changed the text (fullwidth letters, ligatures, compatibility forms…). */
  readonly nfkcChanged: boolean;
  readonly decoded: readonly DecodedBlob[];
  /** Some text was not scanned: a field longer than the scan window, or more strings/depth than the limits. */
  readonly truncated: boolean;
}
