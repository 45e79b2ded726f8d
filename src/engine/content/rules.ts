// Content inspection rules that are not prompt injection or secrets: credential references and
// invisible text (security/content/*.yaml, compiled into the bundle). Validated when loaded;
// malformed data throws (fail closed).
import credentialReferences from '../../../security/content/credential-references.yaml';
import invisibleText from '../../../security/content/invisible-text.yaml';
import { NON_ASCII, isAscii, requiredLiterals } from '../heuristics/prefilter';
import { compilePattern } from '../heuristics/rules';
import { DESCRIPTIVE_RULE_ID, MAX_RULE_ID_LENGTH, SEVERITIES, type Severity } from '../heuristics/types';

export type ContentRuleCategory = 'credential_reference' | 'invisible_text';

export interface ContentRule {
  /** `<family>.<what it catches>`, e.g. `invisible-text.tag-characters`. */
  readonly id: string;
  /** The former coded id (`IT-001`), if the rule had one: recorded beside the id in the audit log. */
  readonly alias?: string;
  readonly category: ContentRuleCategory;
  readonly severity: Severity;
  readonly pattern: string;
  readonly description: string;
  readonly examples?: { readonly match: readonly string[]; readonly no_match: readonly string[] };
}

export interface CompiledContentRule {
  readonly rule: ContentRule;
  /** The pattern with the `g` flag. */
  readonly regex: RegExp;
}

export class ContentRuleError extends Error {
  override readonly name = 'ContentRuleError';
}

export const BUNDLED_CONTENT_FILES: Readonly<Record<string, unknown>> = {
  'credential-references': credentialReferences,
  'invisible-text': invisibleText,
};

/** The id family and the former coded-id prefix (the alias) of each category. */
const ID_FAMILY: Record<ContentRuleCategory, string> = { credential_reference: 'credential-reference', invisible_text: 'invisible-text' };
const ALIAS_PREFIX: Record<ContentRuleCategory, string> = { credential_reference: 'CR', invisible_text: 'IT' };
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringList = (v: unknown, min: number): v is string[] =>
  Array.isArray(v) && v.length >= min && v.every((s) => typeof s === 'string' && s.length > 0);

/** What every content-style rule carries (security/content/ and security/memory/). */
export interface BaseRuleFields {
  readonly id: string;
  readonly alias?: string;
  readonly severity: Severity;
  readonly pattern: string;
  readonly description: string;
  readonly examples?: { readonly match: readonly string[]; readonly no_match: readonly string[] };
}

export interface RuleFileShape<C extends string, R> {
  /** Throws the caller's error for `msg` (its own class and label). */
  readonly fail: (msg: string) => never;
  /** The file's category, or a failure saying which ones are allowed. */
  readonly category: (v: unknown) => C;
  /** Rule ids of a category: the family (ids are `<family>.<name>`) and the prefix of its former coded ids (aliases, `IT-001`). */
  readonly id: (category: C) => { readonly family: string; readonly aliasPrefix: string };
  /** Keys a rule may have beyond the base ones. */
  readonly extraKeys?: readonly string[];
  /** The rule from its checked base fields (and its raw object, for the extra keys). */
  readonly rule: (base: BaseRuleFields, raw: Obj, category: C, where: (msg: string) => never) => R;
}

/**
 * The checks every content-style rule file shares: version 1, a category, a description and a
 * non-empty rule list; each rule's id (`<family>.<what it catches>`), optional alias (its former coded
 * id), severity, pattern, description and optional examples (at least two that must and two that must
 * not match), and no unknown key; no id or alias twice in the file.
 */
export function validateRuleFile<C extends string, R>(data: unknown, shape: RuleFileShape<C, R>): R[] {
  const fail = shape.fail;
  if (!isObj(data)) fail('not an object');
  const f = data as Obj;
  for (const k of Object.keys(f)) if (!['version', 'category', 'description', 'rules'].includes(k)) fail(`unknown key \`${k}\``);
  if (f.version !== 1) fail('version must be 1');
  const category = shape.category(f.category);
  if (typeof f.description !== 'string' || f.description.length < 10) fail('description missing');
  if (!Array.isArray(f.rules) || f.rules.length === 0) fail('rules must be a non-empty list');
  const keys = ['id', 'alias', 'severity', ...(shape.extraKeys ?? []), 'pattern', 'description', 'examples'];
  const { family, aliasPrefix } = shape.id(category);
  const aliasShape = new RegExp(`^${aliasPrefix}-\\d{3}$`);
  const seen = new Set<string>();
  return (f.rules as unknown[]).map((r, i) => {
    if (!isObj(r)) return fail(`rule ${i}: not an object`);
    const id =
      typeof r.id === 'string' &&
      DESCRIPTIVE_RULE_ID.test(r.id) &&
      r.id.length <= MAX_RULE_ID_LENGTH &&
      r.id.slice(0, r.id.lastIndexOf('.')) === family
        ? r.id
        : fail(
            `rule ${i}: id must be ${family}.<what it catches> in lower-case kebab-case words, at most ${MAX_RULE_ID_LENGTH} characters`,
          );
    const where = (msg: string): never => fail(`rule \`${id}\`: ${msg}`);
    for (const k of Object.keys(r)) if (!keys.includes(k)) where(`unknown key \`${k}\``);
    if (r.alias !== undefined && (typeof r.alias !== 'string' || !aliasShape.test(r.alias)))
      where(`alias must be a former coded id like ${aliasPrefix}-001`);
    for (const name of [id, r.alias as string | undefined]) {
      if (name === undefined) continue;
      if (seen.has(name)) where(`duplicate rule id or alias \`${name}\``);
      seen.add(name);
    }
    if (!SEVERITIES.includes(r.severity as never)) where('bad severity');
    if (typeof r.pattern !== 'string' || r.pattern.length === 0) where('pattern missing');
    if (typeof r.description !== 'string' || r.description.length < 10) where('description missing');
    const ex = r.examples;
    if (ex !== undefined && (!isObj(ex) || !isStringList(ex.match, 2) || !isStringList(ex.no_match, 2)))
      where('examples need at least 2 match and 2 no_match strings');
    const base: BaseRuleFields = {
      id,
      ...(r.alias === undefined ? {} : { alias: r.alias as string }),
      severity: r.severity as Severity,
      pattern: r.pattern as string,
      description: r.description as string,
      ...(ex ? { examples: ex as BaseRuleFields['examples'] } : {}),
    };
    return shape.rule(base, r, category, where);
  });
}

/** Validates one rule file (the shape of security/content/schema.json) and returns its rules. */
export function validateContentFile(data: unknown, name: string): ContentRule[] {
  const fail = (msg: string): never => {
    throw new ContentRuleError(`content rules \`${name}\`: ${msg}`);
  };
  return validateRuleFile<ContentRuleCategory, ContentRule>(data, {
    fail,
    category: (v) =>
      v === 'credential_reference' || v === 'invisible_text' ? v : fail('category must be credential_reference or invisible_text'),
    id: (category) => ({ family: ID_FAMILY[category], aliasPrefix: ALIAS_PREFIX[category] }),
    rule: (base, _raw, category) => ({
      id: base.id,
      ...(base.alias === undefined ? {} : { alias: base.alias }),
      category,
      severity: base.severity,
      pattern: base.pattern,
      description: base.description,
      ...(base.examples ? { examples: base.examples } : {}),
    }),
  });
}

/** Validates and compiles rule files (name → parsed YAML). Throws on any defect. */
export function compileContentRules(files: Readonly<Record<string, unknown>>): CompiledContentRule[] {
  const seen = new Set<string>();
  const out: CompiledContentRule[] = [];
  for (const [name, data] of Object.entries(files)) {
    for (const rule of validateContentFile(data, name)) {
      for (const name of rule.alias === undefined ? [rule.id] : [rule.id, rule.alias]) {
        if (seen.has(name)) throw new ContentRuleError(`content rules: duplicate rule id or alias \`${name}\``);
        seen.add(name);
      }
      let re: RegExp;
      try {
        re = compilePattern(rule.pattern);
      } catch (e) {
        throw new ContentRuleError(`content rules: rule \`${rule.id}\`: pattern does not compile: ${(e as Error).message}`);
      }
      out.push({ rule, regex: new RegExp(re.source, re.flags + 'g') });
    }
  }
  return out;
}

let bundled: CompiledContentRule[] | undefined;

/** The bundled credential-reference and invisible-text rules (validated, compiled once). */
export function loadContentRules(): readonly CompiledContentRule[] {
  bundled ??= compileContentRules(BUNDLED_CONTENT_FILES);
  return bundled;
}

/** Most findings one rule reports for one text (the rest would add nothing to the decision). */
export const MAX_MATCHES_PER_RULE = 64;

/** Every match of one rule in a text, as UTF-16 spans (at most MAX_MATCHES_PER_RULE). */
/** Per regex: every match holds a non-ASCII character (by its literal analysis), as the invisible-text patterns do. */
const nonAsciiOnly = new WeakMap<RegExp, boolean>();

/**
 * matchSpans, but first, for a regex whose every match holds a non-ASCII character, a check
 * (much cheaper than the regex on a long text) that the text has one. `ascii`: the caller knows.
 */
export function matchSpansIn(regex: RegExp, text: string, limit = MAX_MATCHES_PER_RULE, ascii?: boolean): [number, number][] {
  let needs = nonAsciiOnly.get(regex);
  if (needs === undefined) {
    needs = requiredLiterals(regex.source).some((set) => set.length === 1 && set[0] === NON_ASCII);
    nonAsciiOnly.set(regex, needs);
  }
  if (needs && (ascii ?? isAscii(text))) return [];
  return matchSpans(regex, text, limit);
}

export function matchSpans(regex: RegExp, text: string, limit = MAX_MATCHES_PER_RULE): [number, number][] {
  const spans: [number, number][] = [];
  regex.lastIndex = 0;
  for (let m = regex.exec(text); m && spans.length < limit; m = regex.exec(text)) {
    if (m[0].length === 0) {
      regex.lastIndex++;
      continue;
    }
    spans.push([m.index, m.index + m[0].length]);
  }
  regex.lastIndex = 0;
  return spans;
}
