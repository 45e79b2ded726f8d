// The Tier 1 heuristic rules: security/heuristics/*.yaml, compiled into the bundle by esbuild and
// validated here (malformed data throws: fail closed). Regexes and the keyword index are built once.
import shellCrossPlatform from '../../../security/heuristics/shell-cross-platform.yaml';
import shellUnix from '../../../security/heuristics/shell-unix.yaml';
import shellWindows from '../../../security/heuristics/shell-windows.yaml';
import promptInjection from '../../../security/heuristics/prompt-injection.yaml';
import pathTraversal from '../../../security/heuristics/path-traversal.yaml';
import dataExfiltration from '../../../security/heuristics/data-exfiltration.yaml';
import sensitiveData from '../../../security/heuristics/sensitive-data.yaml';
import encodingEvasion from '../../../security/heuristics/encoding-evasion.yaml';
import selfProtection from '../../../security/heuristics/self-protection.yaml';
import editorConfig from '../../../security/heuristics/editor-config.yaml';
import { CUES, type CuePrefilter, type CueName } from './normalize';
import { KeywordIndex, analyzeAlternatives, analyzePattern, type PatternAnalysis } from './prefilter';
import {
  ALIAS_PREFIX_CATEGORY,
  CODED_RULE_ID,
  DESCRIPTIVE_RULE_ID,
  FIELD_CLASSES,
  HEURISTIC_CATEGORIES,
  ID_FAMILY_CATEGORY,
  MAX_RULE_ID_LENGTH,
  PROMPT_RISKS,
  SEVERITIES,
  type FieldClass,
  type HeuristicRule,
  type HeuristicRuleFile,
  type RuleField,
} from './types';

/**
 * The bundled rule files, by name (file name without `.yaml`). Their order is the order of equally
 * ranked findings (see evaluateHeuristics): the order of the rules' former coded ids (DE, ED, EE,
 * PI, PT, SD, SP, UX, WIN, XP), so a decision lists its rules and names its first one as it did
 * when rules were sorted by those ids.
 */
export const BUNDLED_RULE_FILES: Readonly<Record<string, unknown>> = {
  'data-exfiltration': dataExfiltration,
  'editor-config': editorConfig,
  'encoding-evasion': encodingEvasion,
  'prompt-injection': promptInjection,
  'path-traversal': pathTraversal,
  'sensitive-data': sensitiveData,
  'self-protection': selfProtection,
  'shell-unix': shellUnix,
  'shell-windows': shellWindows,
  'shell-cross-platform': shellCrossPlatform,
};

export class HeuristicRuleError extends Error {
  override readonly name = 'HeuristicRuleError';
}

/** A regex with its literal prefilter and examined-length bound: a whole rule, or one alternative of it. */
export interface SearchablePattern {
  readonly regex: RegExp;
  /** Keyword ids: every inner list needs one present keyword for the regex to run; empty = always run. */
  readonly prefilter: readonly (readonly number[])[];
  /** Upper bound of the text one match examines (Infinity = unbounded): sizes the search windows. */
  readonly maxLength: number;
  /** Keyword ids one of which every match starts with (see PatternAnalysis.leads), or null. */
  readonly leads: readonly number[] | null;
  /** The same regex with the `g` flag (searching windows) and the `y` flag (confirming a match in the whole text), made on first use. */
  readonly windowed: () => { readonly global: RegExp; readonly sticky: RegExp };
}

export interface CompiledRule extends SearchablePattern {
  readonly rule: HeuristicRule;
  readonly alwaysBlock: boolean;
  readonly raw: boolean;
  /** Bit i set = the rule looks at FIELD_CLASSES[i]. */
  readonly fieldMask: number;
  readonly actionTypes: ReadonlySet<string> | null;
  /**
   * A pattern that is an alternation at the top (`a…|b…|c…`), as one searchable pattern per
   * alternative, each with its own (sharper) prefilter and bound; null otherwise. The rule's match
   * is the leftmost of theirs, the earlier alternative on a tie: what the whole regex finds.
   */
  readonly branches: readonly SearchablePattern[] | null;
}

export interface CompiledRuleSet {
  readonly rules: readonly CompiledRule[];
  readonly keywords: KeywordIndex;
  /** The normalisation cues' literal sets, as ids in `keywords`. */
  readonly cues: CuePrefilter;
  /** Applicable rules per `actionType|class|alwaysBlockOnly`, filled lazily. */
  readonly cache: Map<string, { readonly normalized: readonly CompiledRule[]; readonly raw: readonly CompiledRule[] }>;
  /** Rule id → its position in the rule set (file order, then rule order): the tie-break of findings. */
  readonly order: ReadonlyMap<string, number>;
}

const RULE_KEYS = new Set([
  'id',
  'alias',
  'category',
  'severity',
  'action',
  'always_block',
  'fields',
  'action_types',
  'scan',
  'risk',
  'pattern',
  'description',
  'examples',
]);
const RULE_FIELDS: readonly string[] = [...FIELD_CLASSES, 'all'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringList = (v: unknown, min: number): v is string[] =>
  Array.isArray(v) && v.length >= min && v.every((s) => typeof s === 'string' && s.length > 0);

/** Splits a leading `(?i)`/`(?s)`/`(?m)` group (JavaScript has no inline flags) into RegExp flags. */
export function compilePattern(pattern: string): RegExp {
  const m = /^\(\?([ims]+)\)/.exec(pattern);
  const flags = m ? [...new Set(m[1]!.split(''))].join('') : '';
  return new RegExp(m ? pattern.slice(m[0].length) : pattern, flags);
}

/** Shape check of one rule file; returns its rules (patterns are compiled once, by compileRuleSet). */
export function validateRuleFile(data: unknown, name: string): HeuristicRuleFile {
  const fail = (msg: string): never => {
    throw new HeuristicRuleError(`heuristic rules \`${name}\`: ${msg}`);
  };
  if (!isObj(data)) fail('not an object');
  const f = data as Obj;
  for (const k of Object.keys(f)) if (!['version', 'description', 'rules'].includes(k)) fail(`unknown key \`${k}\``);
  if (f.version !== 1) fail('version must be 1');
  if (!Array.isArray(f.rules) || f.rules.length === 0) fail('rules must be a non-empty list');
  for (const [i, r] of (f.rules as unknown[]).entries()) {
    if (!isObj(r)) fail(`rule ${i}: not an object`);
    const rule = r as Obj;
    const id =
      typeof rule.id === 'string' && DESCRIPTIVE_RULE_ID.test(rule.id) && rule.id.length <= MAX_RULE_ID_LENGTH
        ? rule.id
        : fail(
            `rule ${i}: id must be <family>.<what it catches> in lower-case kebab-case words, at most ${MAX_RULE_ID_LENGTH} characters, like prompt-injection.ignore-previous`,
          );
    const where = (msg: string) => fail(`rule \`${id}\`: ${msg}`);
    for (const k of Object.keys(rule)) if (!RULE_KEYS.has(k)) where(`unknown key \`${k}\``);
    if (!HEURISTIC_CATEGORIES.includes(rule.category as never)) where('bad category');
    const family = id.slice(0, id.lastIndexOf('.'));
    if (ID_FAMILY_CATEGORY[family] !== rule.category)
      where(`id family \`${family}\` does not belong to category \`${String(rule.category)}\``);
    if (
      rule.alias !== undefined &&
      (typeof rule.alias !== 'string' ||
        !CODED_RULE_ID.test(rule.alias) ||
        ALIAS_PREFIX_CATEGORY[rule.alias.split('-')[0]!] !== rule.category)
    ) {
      where(`alias must be a former coded id of category \`${String(rule.category)}\`, like PI-001`);
    }
    if (!SEVERITIES.includes(rule.severity as never)) where('bad severity');
    if (rule.action !== 'block' && rule.action !== 'escalate') where('action must be block or escalate');
    if (rule.always_block !== undefined && typeof rule.always_block !== 'boolean') where('always_block must be a boolean');
    if (rule.always_block === true && rule.action !== 'block') where('always_block needs action: block');
    if (!isStringList(rule.fields, 1) || !rule.fields.every((x) => RULE_FIELDS.includes(x)))
      where(`fields must be a list of ${RULE_FIELDS.join(', ')}`);
    if (rule.action_types !== undefined && !isStringList(rule.action_types, 1)) where('action_types must be a non-empty list of strings');
    if (rule.scan !== undefined && rule.scan !== 'normalized' && rule.scan !== 'raw') where('scan must be normalized or raw');
    if (rule.category === 'prompt_injection' ? !PROMPT_RISKS.includes(rule.risk as never) : rule.risk !== undefined)
      where(`risk must be one of ${PROMPT_RISKS.join(', ')} for prompt_injection rules and absent otherwise`);
    if (typeof rule.pattern !== 'string' || rule.pattern.length === 0) where('pattern missing');
    if (typeof rule.description !== 'string' || rule.description.length < 10) where('description missing');
    // Examples are left out of the shipped bundles (see esbuild.mjs); when present they must be complete.
    const ex = rule.examples;
    if (ex !== undefined && (!isObj(ex) || !isStringList(ex.match, 2) || !isStringList(ex.no_match, 2)))
      where('examples need at least 2 match and 2 no_match strings');
  }
  return data as unknown as HeuristicRuleFile;
}

/** Rules with more top-level alternatives are searched whole. */
const MAX_BRANCHES = 48;

/**
 * The top-level alternatives of a RegExp source (`a|b(c|d)|[|]` → `a`, `b(c|d)`, `[|]`), or null
 * when there is one, or when the source has a back-reference (group numbers would change).
 */
export function topLevelAlternatives(source: string): string[] | null {
  const out: string[] = [];
  let depth = 0;
  let inClass = false;
  let from = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const n = source[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(n) || (n === 'k' && source[i + 2] === '<'))) return null;
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) {
      out.push(source.slice(from, i));
      from = i + 1;
    }
  }
  out.push(source.slice(from));
  // A pattern that is one group around an alternation, `(?:a|b)`: its alternatives.
  if (out.length === 1 && source.startsWith('(?:') && closingParen(source, 0) === source.length - 1)
    return topLevelAlternatives(source.slice(3, -1));
  return out.length > 1 ? out : null;
}

/** Offset of the parenthesis that closes the group opened at `open`, or -1. */
function closingParen(source: string, open: number): number {
  let depth = 0;
  let inClass = false;
  for (let i = open; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

const fieldMaskOf = (fields: readonly RuleField[]): number =>
  fields.includes('all') ? (1 << FIELD_CLASSES.length) - 1 : fields.reduce((m, f) => m | (1 << FIELD_CLASSES.indexOf(f as FieldClass)), 0);

/** Validates and compiles rule files (name → parsed YAML). Throws on any defect. */
export function compileRuleSet(files: Readonly<Record<string, unknown>>): CompiledRuleSet {
  const rules: HeuristicRule[] = [];
  for (const [name, data] of Object.entries(files)) rules.push(...validateRuleFile(data, name).rules);
  const ids = new Set<string>();
  for (const r of rules) {
    if (ids.has(r.id)) throw new HeuristicRuleError(`heuristic rules: duplicate rule id \`${r.id}\``);
    ids.add(r.id);
  }
  const aliases = new Set<string>();
  for (const r of rules) {
    if (r.alias === undefined) continue;
    if (aliases.has(r.alias)) throw new HeuristicRuleError(`heuristic rules: alias \`${r.alias}\` is given to more than one rule`);
    aliases.add(r.alias);
  }
  const keywordIds = new Map<string, number>();
  const leadIds = new Set<number>();
  const idOf = (k: string) => {
    let id = keywordIds.get(k);
    if (id === undefined) {
      id = keywordIds.size;
      keywordIds.set(k, id);
    }
    return id;
  };
  // An alternative's RegExp is made on first use (most are never searched alone).
  const searchable = (source: string, flags: string, analysis: PatternAnalysis, made?: RegExp): SearchablePattern => {
    let regex = made;
    let windowed: { readonly global: RegExp; readonly sticky: RegExp } | undefined;
    const leads = analysis.leads?.map(idOf) ?? null;
    for (const id of leads ?? []) leadIds.add(id);
    return {
      get regex() {
        return (regex ??= new RegExp(source, flags));
      },
      prefilter: analysis.literals.map((set) => set.map(idOf)),
      maxLength: analysis.maxLength,
      leads,
      windowed: () => (windowed ??= { global: new RegExp(source, flags + 'g'), sticky: new RegExp(source, flags + 'y') }),
    };
  };
  const compiled = rules.map((rule): CompiledRule => {
    let regex: RegExp;
    try {
      regex = compilePattern(rule.pattern);
    } catch (e) {
      throw new HeuristicRuleError(`heuristic rules: rule \`${rule.id}\`: pattern does not compile: ${(e as Error).message}`);
    }
    const raw = rule.scan === 'raw';
    // Raw rules see the text before normalisation, which the literal analysis does not describe: no prefilter.
    const analysis = raw
      ? { whole: { literals: [], leads: null, maxLength: Infinity }, alternatives: null }
      : analyzeAlternatives(regex.source);
    const whole = searchable(regex.source, regex.flags, analysis.whole, regex);
    const alternatives = raw ? null : topLevelAlternatives(regex.source);
    const branches =
      alternatives && alternatives.length <= MAX_BRANCHES
        ? alternatives.map((a, i) =>
            searchable(
              a,
              regex.flags,
              analysis.alternatives?.length === alternatives.length ? analysis.alternatives[i]! : analyzePattern(a),
            ),
          )
        : null;
    return {
      regex,
      prefilter: whole.prefilter,
      maxLength: whole.maxLength,
      leads: whole.leads,
      windowed: whole.windowed,
      rule,
      alwaysBlock: rule.always_block === true,
      raw,
      fieldMask: fieldMaskOf(rule.fields),
      actionTypes: rule.action_types ? new Set(rule.action_types) : null,
      branches,
    };
  });
  const cues = Object.fromEntries(
    Object.entries(CUES).map(([name, re]) => [name, analyzePattern(re.source).literals.map((set) => set.map(idOf))]),
  ) as Record<CueName, number[][]>;
  return {
    rules: compiled,
    keywords: new KeywordIndex([...keywordIds.keys()], leadIds),
    cues,
    cache: new Map(),
    order: new Map(rules.map((r, i) => [r.id, i])),
  };
}

let bundled: CompiledRuleSet | undefined;

/** The bundled rule set (validated, compiled once). Throws if the bundled data is malformed. */
export function loadHeuristicRules(): CompiledRuleSet {
  bundled ??= compileRuleSet(BUNDLED_RULE_FILES);
  return bundled;
}
