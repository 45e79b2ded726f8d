// Secret detection rules: security/secrets/*.yaml, compiled into the bundle by esbuild and validated
// here (malformed data throws: fail closed). Each rule is a keyword prefilter, a regular expression
// whose first capturing group (or whole match) is the secret value, an optional entropy floor and
// an allow-list of placeholder values. See security/secrets/schema.json for the data format.
import aiFile from '../../../security/secrets/ai.yaml';
import authFile from '../../../security/secrets/auth.yaml';
import cloudFile from '../../../security/secrets/cloud.yaml';
import databasesFile from '../../../security/secrets/databases.yaml';
import devtoolsFile from '../../../security/secrets/devtools.yaml';
import genericFile from '../../../security/secrets/generic.yaml';
import messagingFile from '../../../security/secrets/messaging.yaml';
import paymentsFile from '../../../security/secrets/payments.yaml';
import privateKeysFile from '../../../security/secrets/private-keys.yaml';
import registriesFile from '../../../security/secrets/registries.yaml';
import saasFile from '../../../security/secrets/saas.yaml';
import sourceHostingFile from '../../../security/secrets/source-hosting.yaml';
import {
  type RegexNode,
  RegexSyntaxError,
  maxLength,
  maxOffsetOfFirstGroup,
  minLength,
  parseRegex,
  prefixSource,
  regexFacts,
  secretStartSource,
  secretTail,
  secretTailLength,
} from './regex-syntax';
import { type CharSet, type StartFilter, consumable, leadLiterals, startFilter } from './start-filter';
import type { ValueShape } from './shapes';

/**
 * Where a rule's keyword must sit in a match. `before_secret` (default): a keyword starts inside
 * the match at or before the secret value, so a stream only holds back from the keyword on.
 * `in_match`: anywhere inside the match (for formats whose distinctive part is in the middle or
 * after the secret); the stream then holds back from the earliest position a match could start.
 */
export type KeywordAnchor = 'before_secret' | 'in_match';

export interface SecretRule {
  readonly id: string;
  readonly description: string;
  /** The YAML file (provider family) the rule comes from. */
  readonly family: string;
  /**
   * Literals, one of which must occur in the match (see `anchor`): lower-case and compared
   * case-insensitively, or, with `exactKeywords`, compared exactly as written.
   */
  readonly keywords: readonly string[];
  /**
   * `keyword_case: exact` in the data: the keywords are matched case-sensitively. For rules whose
   * matches start with a short case-sensitive literal (a Discord token's `MT`, `ND`…), which as a
   * case-insensitive keyword would occur in nearly every word of prose and code ("content", "and").
   */
  readonly exactKeywords: boolean;
  readonly anchor: KeywordAnchor;
  /** The regex source as written in the data (a leading `(?i)` becomes the `i` flag). */
  readonly source: string;
  readonly caseInsensitive: boolean;
  /** Global: the scanning expression (with indices unless `secretAtEnd`). */
  readonly regex: RegExp;
  /** Sticky: one attempt at one position (with indices unless `secretAtEnd`). */
  readonly sticky: RegExp;
  /**
   * The secret ends where the match ends (no group, or the group is the last thing the regex
   * consumes): its span follows from the group's length, so the regexes need no indices, which
   * V8 builds for every match.
   */
  readonly secretAtEnd: boolean;
  /** Global: earliest position from which the text up to its end (±lookahead) could still grow into a match. */
  readonly prefix: RegExp;
  /** The same, sticky: can the text from one given position still grow into a match? */
  readonly prefixSticky: RegExp;
  /** Global, for a secret in a top-level group: earliest position where a secret of a match the text can still grow into could start. */
  readonly secretStart?: RegExp;
  /** The most characters a `secretStart` match consumes (it ends at the end of the text): it starts no earlier than that before the end. */
  readonly secretTail: number;
  /** Every character a `secretStart` match can consume: it starts no earlier than the run of these that ends the text. */
  readonly secretChars: CharSet;
  readonly entropy?: number;
  /** Values of these shapes pass the entropy floor (src/engine/secrets/shapes.ts). */
  readonly entropyExemptShapes: readonly ValueShape[];
  /** Values of these shapes are not secrets, like an allow-list match. */
  readonly allowShapes: readonly ValueShape[];
  readonly allowlist: readonly RegExp[];
  /** Longest possible match (Infinity for a block that runs to its footer or the end of the text). */
  readonly maxLength: number;
  /** Longest lookahead; a match's outcome can depend on this many characters past the text it consumed. */
  readonly lookahead: number;
  /** Longest lookbehind (a `\b` counts as 1): how far before a match start the regex may look. */
  readonly lookbehind: number;
  /** Longest distance from a match's start to its anchoring keyword. */
  readonly reach: number;
  /** Necessary conditions for a match at a position, checked before running the regex there. */
  readonly filter: StartFilter;
  /**
   * Strings one of which every match starts with; absent when unknown. For a case-insensitive regex
   * they are lower-case and found case-insensitively, else found exactly as written.
   */
  readonly leads?: readonly string[];
  /** Whether the secret is the first capturing group (else the whole match). */
  readonly hasGroup: boolean;
  /** Examples with the YAML's split form already joined. */
  readonly examples: { readonly match: readonly string[]; readonly no_match: readonly string[] };
  /** Position in the rule set: the tie-breaker when two findings have the same length. */
  readonly index: number;
}

export interface SecretRuleSet {
  readonly rules: readonly SecretRule[];
  /** Characters of text a regex may look at before a match start (lookbehind, `\b`). */
  readonly contextChars: number;
  /** All distinct keywords; rules refer to them by index. */
  readonly keywords: readonly string[];
  /** Per keyword (by index): 1 when it is matched case-sensitively (see SecretRule.exactKeywords). */
  readonly keywordExact: Uint8Array;
  /** For each rule (by position in `rules`), the indices of its keywords in `keywords`. */
  readonly ruleKeywords: readonly (readonly number[])[];
  /** For each keyword, the positions in `rules` of the rules that use it. */
  readonly keywordRules: readonly (readonly number[])[];
  /**
   * Proper prefixes of keywords, lower-cased → keyword indices (to spot a keyword cut off at the
   * end of a chunk; for a case-sensitive keyword this over-approximates, which only holds back more).
   */
  readonly keywordPrefixes: ReadonlyMap<string, readonly number[]>;
  /** Char code → lengths of the keyword prefixes that end with that character. */
  readonly prefixLengthsByLastChar: ReadonlyMap<number, readonly number[]>;
  readonly maxKeywordLength: number;
  /**
   * Length of each string the automaton finds: the keywords (indices below `keywords.length`),
   * then the rules' lead strings that are not keywords.
   */
  readonly keywordLengths: Uint8Array;
  /**
   * For each rule (by position), its keyword group: rules with the same keywords share one (the
   * batch scan lists their positions once); `leadGroup`: the same for lead strings, -1 for none.
   */
  readonly keywordGroup: Uint32Array;
  readonly leadGroup: Int32Array;
  /** The automaton that finds the keywords and lead strings: see KeywordAutomaton. */
  readonly automaton: KeywordAutomaton;
}

/**
 * A deterministic automaton that finds the keywords and the rules' lead strings (ids as in
 * `keywordLengths`) on ASCII code units: the product of two Aho-Corasick automata, one over the
 * folded strings (upper-case letters fold to lower-case) and one over the case-sensitive keywords
 * (see SecretRule.exactKeywords). A code unit >= 128 is in no string and leads back to the start,
 * state 0; U+212A KELVIN SIGN, which lower-cases to `k`, has a class of its own (`kelvinClass`: a
 * `k` for the folded strings, in no case-sensitive one).
 * Code units are grouped into classes (`classOf[c]`, class 0: in no string). `delta[(state << shift)
 * | class]` is the next state `t`, stored as `t << shift`, or as `~(t << shift)` when strings end
 * in `t`: those are `outIds[outOff[t] .. outOff[t + 1])`.
 */
export interface KeywordAutomaton {
  /**
   * Per state `t`, what ends there for the batch scan: `targets[targetOff[t] .. targetOff[t + 1])`,
   * each `g << 1` (a keyword of keyword group `g`) or `g << 1 | 1` (a lead string of lead group
   * `g`), with the string's length at the same index of `targetLengths`.
   */
  readonly targetOff: Uint32Array;
  readonly targets: Uint32Array;
  readonly targetLengths: Uint8Array;
  readonly classOf: Uint8Array;
  readonly kelvinClass: number;
  readonly shift: number;
  readonly delta: Int32Array;
  readonly outOff: Uint32Array;
  readonly outIds: Uint32Array;
}

export class SecretRuleError extends Error {
  override readonly name = 'SecretRuleError';
}

/** The rule files compiled into this build, in precedence order (earlier wins a tie). */
export const BUNDLED_SECRET_FILES: readonly (readonly [string, unknown])[] = [
  ['security/secrets/private-keys.yaml', privateKeysFile],
  ['security/secrets/cloud.yaml', cloudFile],
  ['security/secrets/source-hosting.yaml', sourceHostingFile],
  ['security/secrets/devtools.yaml', devtoolsFile],
  ['security/secrets/payments.yaml', paymentsFile],
  ['security/secrets/messaging.yaml', messagingFile],
  ['security/secrets/ai.yaml', aiFile],
  ['security/secrets/databases.yaml', databasesFile],
  ['security/secrets/registries.yaml', registriesFile],
  ['security/secrets/saas.yaml', saasFile],
  ['security/secrets/auth.yaml', authFile],
  ['security/secrets/generic.yaml', genericFile],
];

const ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const KEYWORD = /^[\x20-\x40\x5b-\x7e]{2,64}$/; // printable ASCII without upper-case letters
const EXACT_KEYWORD = /^[\x20-\x7e]{2,64}$/; // printable ASCII
const FAMILY = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_LOOKAROUND = 64;
const FILE_KEYS = new Set(['version', 'family', 'description', 'rules']);
const RULE_KEYS = new Set([
  'id',
  'description',
  'keywords',
  'keyword_case',
  'anchor',
  'regex',
  'entropy',
  'entropy_exempt_shapes',
  'allow_shapes',
  'allowlist',
  'examples',
]);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(where: string, why: string): never {
  throw new SecretRuleError(`${where}: ${why}`);
}

function checkKeys(o: Obj, allowed: Set<string>, where: string): void {
  for (const k of Object.keys(o)) if (!allowed.has(k)) fail(where, `unknown key \`${k}\``);
}

function str(o: Obj, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== 'string' || v.trim() === '') fail(where, `\`${key}\` must be a non-empty string`);
  return v;
}

/**
 * A rule's list of value shapes, each once and of the kind the key takes (as in schema.json): a password or
 * passphrase is exempt from the entropy floor, a code name is allowed.
 */
const SHAPES_OF: Readonly<Record<'entropy_exempt_shapes' | 'allow_shapes', readonly ValueShape[]>> = {
  entropy_exempt_shapes: ['password', 'passphrase'],
  allow_shapes: ['code_identifier'],
};
function shapeList(o: Obj, key: keyof typeof SHAPES_OF, where: string): ValueShape[] {
  const v = o[key] ?? [];
  const known = SHAPES_OF[key];
  if (!Array.isArray(v)) fail(where, `\`${key}\` must be a list`);
  for (const s of v)
    if (!(known as readonly unknown[]).includes(s))
      fail(where, `\`${key}\`: unknown shape ${JSON.stringify(s)} (known: ${known.join(', ')})`);
  if (new Set(v).size !== v.length) fail(where, `\`${key}\` lists a shape twice`);
  return v as ValueShape[];
}

/** A leading `(?i)` (the gitleaks convention) becomes the `i` flag. */
function splitFlags(source: string): { body: string; i: boolean } {
  return source.startsWith('(?i)') ? { body: source.slice(4), i: true } : { body: source, i: false };
}

function compileAllowlist(source: unknown, where: string): RegExp {
  if (typeof source !== 'string' || source === '') fail(where, 'must be a non-empty string');
  const { body, i } = splitFlags(source);
  try {
    return new RegExp(body, i ? 'i' : '');
  } catch (e) {
    fail(where, `invalid regular expression: ${(e as Error).message}`);
  }
}

/** An example is a string or a list of strings joined with "" (so token-shaped test data is never one literal). */
function example(v: unknown, where: string): string {
  if (typeof v === 'string' && v !== '') return v;
  if (Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string')) {
    const joined = v.join('');
    if (joined !== '') return joined;
  }
  fail(where, 'must be a non-empty string or a list of strings');
}

function examples(raw: unknown, where: string): SecretRule['examples'] {
  // Examples are left out of the shipped bundles (see esbuild.mjs); the tests check them on the files.
  if (raw === undefined) return { match: [], no_match: [] };
  if (!isObj(raw)) fail(where, '`examples` must be a mapping with `match` and `no_match`');
  checkKeys(raw, new Set(['match', 'no_match']), where);
  const list = (key: 'match' | 'no_match'): string[] => {
    const v = raw[key];
    if (!Array.isArray(v) || v.length < 2) fail(`${where}.${key}`, 'must list at least two examples');
    return v.map((e, i) => example(e, `${where}.${key}[${i}]`));
  };
  return { match: list('match'), no_match: list('no_match') };
}

/** Whether the first capturing group is the last item the regex consumes (only lookarounds after it, at the top level). */
function groupEndsMatch(tree: RegexNode): boolean {
  const items: RegexNode[] = [];
  const flat = (n: RegexNode): void => {
    if (n.t === 'seq') n.items.forEach(flat);
    else if (n.t === 'group' && !n.capture) flat(n.body);
    else items.push(n);
  };
  flat(tree);
  let i = items.length - 1;
  while (
    i >= 0 &&
    items[i]!.t === 'assert' &&
    (items[i] as { kind: string }).kind !== 'end' &&
    (items[i] as { kind: string }).kind !== 'boundary'
  )
    i--;
  const last = items[i];
  if (!last || last.t !== 'group' || !last.capture) return false;
  // It must be the first group too (the one the scanner reads).
  return items.slice(0, i).every((n) => regexFacts(n).groups === 0);
}

/** Lead strings are worth indexing only when the rule's regex is tried over a window (reach > 0). */
function leadsOf(tree: ReturnType<typeof parseRegex>, reach: number, caseInsensitive: boolean): { leads?: string[] } {
  if (reach === 0) return {};
  const leads = leadLiterals(tree, caseInsensitive);
  return leads ? { leads } : {};
}

function compileRule(raw: unknown, family: string, where: string, index: number): SecretRule {
  if (!isObj(raw)) fail(where, 'must be a mapping');
  checkKeys(raw, RULE_KEYS, where);
  const id = str(raw, 'id', where);
  where = `${where} (${id})`;
  if (!ID.test(id)) fail(where, 'id must be kebab-case');
  const description = str(raw, 'description', where);

  const caseRaw = raw['keyword_case'] ?? 'fold';
  if (caseRaw !== 'fold' && caseRaw !== 'exact') fail(where, '`keyword_case` must be fold or exact');
  const exactKeywords = caseRaw === 'exact';
  const kw = raw['keywords'];
  if (!Array.isArray(kw) || kw.length === 0) fail(where, '`keywords` must be a non-empty list');
  const pattern = exactKeywords ? EXACT_KEYWORD : KEYWORD;
  for (const k of kw) {
    if (typeof k !== 'string' || !pattern.test(k)) {
      fail(
        where,
        `keyword \`${String(k)}\` must be 2-64 printable ASCII characters${exactKeywords ? '' : ' without upper-case letters (or set `keyword_case: exact`)'}`,
      );
    }
  }
  const keywords = [...new Set(kw as string[])];

  const anchorRaw = raw['anchor'] ?? 'before_secret';
  if (anchorRaw !== 'before_secret' && anchorRaw !== 'in_match') fail(where, '`anchor` must be before_secret or in_match');
  const anchor: KeywordAnchor = anchorRaw;

  const source = str(raw, 'regex', where);
  const { body, i: caseInsensitive } = splitFlags(source);
  let tree;
  try {
    tree = parseRegex(body);
  } catch (e) {
    if (e instanceof RegexSyntaxError) fail(where, e.message);
    throw e;
  }
  const facts = regexFacts(tree);
  if (facts.captureInLookaround) fail(where, 'capturing groups inside lookarounds are not supported');
  if (facts.assertionInLookaround) fail(where, 'assertions inside lookarounds are not supported');
  if (facts.lookbehind > MAX_LOOKAROUND || facts.lookahead > MAX_LOOKAROUND)
    fail(where, `lookarounds may look at most ${MAX_LOOKAROUND} characters`);
  if (minLength(tree) === 0) fail(where, 'the regex can match the empty string');
  const max = maxLength(tree);
  const minKeyword = Math.min(...keywords.map((k) => k.length));
  const reach = anchor === 'before_secret' ? maxOffsetOfFirstGroup(tree) : max - minKeyword;
  if (!Number.isFinite(reach))
    fail(where, anchor === 'in_match' ? '`in_match` rules need a bounded regex' : 'the text before the secret must be bounded');

  const flags = caseInsensitive ? 'i' : '';
  let regex: RegExp;
  let sticky: RegExp;
  let prefix: RegExp;
  let prefixSticky: RegExp;
  let secretStart: RegExp | undefined;
  const secretAtEnd = facts.groups === 0 || groupEndsMatch(tree);
  const d = secretAtEnd ? '' : 'd';
  try {
    regex = new RegExp(body, `g${d}${flags}`);
    sticky = new RegExp(body, `y${d}${flags}`);
    const prefixBody = `(?:${prefixSource(tree)})$`;
    prefix = new RegExp(prefixBody, `g${flags}`);
    prefixSticky = new RegExp(prefixBody, `y${flags}`);
    const startSource = secretStartSource(tree);
    if (startSource !== undefined) secretStart = new RegExp(startSource, `g${flags}`);
  } catch (e) {
    fail(where, `invalid regular expression: ${(e as Error).message}`);
  }

  const entropyRaw = raw['entropy'];
  if (entropyRaw !== undefined && (typeof entropyRaw !== 'number' || !(entropyRaw > 0 && entropyRaw <= 8)))
    fail(where, '`entropy` must be a number in (0, 8]');
  const entropyExemptShapes = shapeList(raw, 'entropy_exempt_shapes', where);
  if (entropyExemptShapes.length > 0 && entropyRaw === undefined) fail(where, '`entropy_exempt_shapes` needs an `entropy` floor');
  const allowShapes = shapeList(raw, 'allow_shapes', where);
  const allowRaw = raw['allowlist'] ?? [];
  if (!Array.isArray(allowRaw)) fail(where, '`allowlist` must be a list');
  const allowlist = allowRaw.map((a, i) => compileAllowlist(a, `${where}.allowlist[${i}]`));

  return {
    id,
    description,
    family,
    keywords,
    exactKeywords,
    anchor,
    source,
    caseInsensitive,
    regex,
    sticky,
    secretAtEnd,
    prefix,
    prefixSticky,
    ...(secretStart ? { secretStart } : {}),
    secretTail: secretTailLength(tree),
    secretChars: consumable(secretTail(tree), caseInsensitive),
    ...(entropyRaw !== undefined ? { entropy: entropyRaw as number } : {}),
    entropyExemptShapes,
    allowShapes,
    allowlist,
    maxLength: max,
    lookahead: Math.max(1, facts.lookahead),
    lookbehind: facts.lookbehind,
    reach,
    filter: startFilter(tree, caseInsensitive),
    ...leadsOf(tree, reach, caseInsensitive),
    hasGroup: facts.groups > 0,
    examples: examples(raw['examples'], `${where}.examples`),
    index,
  };
}

/** Validates and compiles rule files (`[path, parsed YAML]`); throws SecretRuleError on anything malformed. */
export function compileSecretRules(files: readonly (readonly [string, unknown])[]): SecretRuleSet {
  const rules: SecretRule[] = [];
  for (const [path, data] of files) {
    if (!isObj(data)) fail(path, 'must be a mapping');
    checkKeys(data, FILE_KEYS, path);
    if (data['version'] !== 1) fail(path, '`version` must be 1');
    const family = str(data, 'family', path);
    if (!FAMILY.test(family)) fail(path, '`family` must be kebab-case');
    const list = data['rules'];
    if (!Array.isArray(list) || list.length === 0) fail(path, '`rules` must be a non-empty list');
    list.forEach((raw, i) => rules.push(compileRule(raw, family, `${path}: rules[${i}]`, rules.length)));
  }
  if (rules.length === 0) fail('secret rules', 'no rules');
  const seen = new Set<string>();
  for (const r of rules) {
    if (seen.has(r.id)) fail(`rule ${r.id}`, 'id is used twice');
    seen.add(r.id);
  }
  return indexRules(rules);
}

/** The id of `key` in `list` (added at the end if new). */
function intern<K>(key: K, list: K[], ids: Map<K, number>): number {
  let id = ids.get(key);
  if (id === undefined) {
    id = list.length;
    list.push(key);
    ids.set(key, id);
  }
  return id;
}

function indexRules(rules: readonly SecretRule[]): SecretRuleSet {
  // Ids are per string and case mode: a case-sensitive `NT` and a folded `nt` are different keywords.
  const keywordKeys: string[] = [];
  const keywordIds = new Map<string, number>();
  const ruleKeywords = rules.map((r) => r.keywords.map((k) => intern(`${r.exactKeywords ? '=' : '~'}${k}`, keywordKeys, keywordIds)));
  const keywords = keywordKeys.map((k) => k.slice(1));
  const keywordExact = Uint8Array.from(keywordKeys, (k) => (k[0] === '=' ? 1 : 0));
  const keywordRules: number[][] = keywords.map(() => []);
  ruleKeywords.forEach((ids, slot) => {
    for (const id of ids) keywordRules[id]!.push(slot);
  });
  const prefixes = new Map<string, number[]>();
  const byLastChar = new Map<number, Set<number>>();
  keywords.forEach((word, id) => {
    const k = word.toLowerCase();
    for (let l = 1; l < k.length; l++) {
      const p = k.slice(0, l);
      const ids = prefixes.get(p);
      if (ids) ids.push(id);
      else prefixes.set(p, [id]);
      const last = k.charCodeAt(l - 1);
      const lengths = byLastChar.get(last);
      if (lengths) lengths.add(l);
      else byLastChar.set(last, new Set([l]));
    }
  });
  const lookbehind = Math.max(1, ...rules.map((r) => r.lookbehind));
  // The automaton also finds the rules' lead strings (so a rule is tried only where a match can start).
  const wordKeys = [...keywordKeys];
  const wordIds = new Map(keywordIds);
  const ruleLeads = rules.map((r) => (r.leads ?? []).map((w) => intern(`${r.caseInsensitive ? '~' : '='}${w}`, wordKeys, wordIds)));
  const words = wordKeys.map((k) => k.slice(1));
  const wordExact = wordKeys.map((k) => k[0] === '=');
  const keywordGroups = groupsOf(ruleKeywords);
  const leadGroups = groupsOf(ruleLeads);
  return {
    rules,
    contextChars: lookbehind + 1,
    keywords,
    keywordExact,
    ruleKeywords,
    keywordRules,
    keywordPrefixes: prefixes,
    prefixLengthsByLastChar: new Map([...byLastChar].map(([c, set]) => [c, [...set].sort((a, b) => a - b)])),
    maxKeywordLength: Math.max(...keywords.map((k) => k.length)),
    keywordLengths: Uint8Array.from(words, (k) => k.length),
    keywordGroup: Uint32Array.from(keywordGroups.of),
    leadGroup: Int32Array.from(leadGroups.of),
    automaton: keywordAutomaton(words, wordExact, keywordGroups.lists, leadGroups.lists),
  };
}

/** Distinct id lists (`of[i]`: the group of list i; -1 for an empty list) and the group's ids. */
function groupsOf(lists: readonly (readonly number[])[]): { of: number[]; lists: (readonly number[])[] } {
  const keys: string[] = [];
  const byKey = new Map<string, number>();
  const groups: (readonly number[])[] = [];
  const of = lists.map((ids) => {
    if (ids.length === 0) return -1;
    const g = intern([...ids].sort((a, b) => a - b).join(','), keys, byKey);
    if (g === groups.length) groups.push(ids);
    return g;
  });
  return { of, lists: groups };
}

/** An Aho-Corasick automaton on ASCII code units: `next[state * classes + classOf[c]]`, and the string ids that end in each state. */
interface AhoCorasick {
  readonly classOf: Uint8Array;
  readonly classes: number;
  readonly next: Int32Array;
  readonly out: readonly (readonly number[])[];
}

/** The automaton of `strings` (id → string); with `fold`, A-Z read as a-z (the strings are lower-case). */
function ahoCorasick(strings: ReadonlyMap<number, string>, fold: boolean): AhoCorasick {
  // Classes: code units that occur in no string (class 0) all lead to the root; every other code
  // unit is a class of its own, shared by its upper case when folding.
  const classOf = new Uint8Array(128);
  let classes = 1;
  const used = new Set([...strings.values()].join(''));
  for (let c = 1; c < 128; c++) {
    if ((fold && c >= 65 && c <= 90) || !used.has(String.fromCharCode(c))) continue;
    classOf[c] = classes;
    if (fold && c >= 97 && c <= 122) classOf[c - 32] = classes;
    classes++;
  }
  // Trie over classes.
  const children: Map<number, number>[] = [new Map()];
  const ends: number[][] = [[]];
  for (const [id, k] of strings) {
    let s = 0;
    for (let i = 0; i < k.length; i++) {
      const c = classOf[k.charCodeAt(i)]!;
      let t = children[s]!.get(c);
      if (t === undefined) {
        t = children.length;
        children.push(new Map());
        ends.push([]);
        children[s]!.set(c, t);
      }
      s = t;
    }
    ends[s]!.push(id);
  }
  const states = children.length;
  const next = new Int32Array(states * classes);
  const fail = new Uint32Array(states);
  const out: number[][] = ends.map((e) => [...e]);
  // Breadth-first: complete the transition function and collect the outputs along failure links.
  const queue: number[] = [];
  for (const [c, t] of children[0]!) {
    next[c] = t;
    queue.push(t);
  }
  for (let qi = 0; qi < queue.length; qi++) {
    const s = queue[qi]!;
    const f = fail[s]!;
    out[s]!.push(...out[f]!);
    for (let c = 0; c < classes; c++) next[s * classes + c] = next[f * classes + c]!;
    for (const [c, t] of children[s]!) {
      fail[t] = next[f * classes + c]!;
      next[s * classes + c] = t;
      queue.push(t);
    }
  }
  return { classOf, classes, next, out };
}

/**
 * `words`: the keywords, then the lead strings; `exact[id]`: matched case-sensitively.
 * `keywordGroups` / `leadGroups`: the word ids of each keyword group and lead group (the batch
 * scan's targets).
 */
function keywordAutomaton(
  words: readonly string[],
  exact: readonly boolean[],
  keywordGroups: readonly (readonly number[])[],
  leadGroups: readonly (readonly number[])[],
): KeywordAutomaton {
  const folded = ahoCorasick(new Map(words.flatMap((w, id) => (exact[id] ? [] : [[id, w] as const]))), true);
  const cased = ahoCorasick(new Map(words.flatMap((w, id) => (exact[id] ? [[id, w] as const] : []))), false);
  // Classes of the product: code units that move both automata alike (a pair of classes, f * 256 + e).
  const pairs: number[] = [];
  const pairIds = new Map<number, number>();
  const classFor = (f: number, e: number): number => intern(f * 256 + e, pairs, pairIds);
  classFor(0, 0); // class 0: in no string
  const classOf = new Uint8Array(128);
  for (let c = 0; c < 128; c++) classOf[c] = classFor(folded.classOf[c]!, cased.classOf[c]!);
  const kelvinClass = classFor(folded.classOf[107]!, 0);
  const classes = pairs.length;
  if (classes > 256) throw new SecretRuleError('secret rules: keywords use too many distinct characters');
  let shift = 0;
  while (1 << shift < classes) shift++;
  // Breadth-first over the reachable pairs of states (f * E + e, E the cased automaton's state count).
  const E = cased.out.length;
  const stateKeys: number[] = [];
  const stateIds = new Map<number, number>();
  intern(0, stateKeys, stateIds);
  const moves: number[] = [];
  for (let s = 0; s < stateKeys.length; s++) {
    const f = Math.floor(stateKeys[s]! / E);
    const e = stateKeys[s]! % E;
    for (let k = 0; k < classes; k++) {
      const fc = pairs[k]! >> 8;
      const ec = pairs[k]! & 255;
      const nf = folded.next[f * folded.classes + fc]!;
      const ne = cased.next[e * cased.classes + ec]!;
      moves.push(intern(nf * E + ne, stateKeys, stateIds));
    }
  }
  const states = stateKeys.length;
  const out: (readonly number[])[] = stateKeys.map((key) => {
    const a = folded.out[Math.floor(key / E)]!;
    const b = cased.out[key % E]!;
    return b.length === 0 ? a : a.length === 0 ? b : [...a, ...b];
  });
  const delta = new Int32Array(states << shift);
  for (let s = 0; s < states; s++) {
    for (let k = 0; k < classes; k++) {
      const t = moves[s * classes + k]!;
      delta[(s << shift) | k] = out[t]!.length > 0 ? ~(t << shift) : t << shift;
    }
  }
  const outOff = new Uint32Array(states + 1);
  for (let s = 0; s < states; s++) outOff[s + 1] = outOff[s]! + out[s]!.length;
  const outIds = new Uint32Array(outOff[states]!);
  for (let s = 0; s < states; s++) outIds.set(out[s]!, outOff[s]!);
  const wordTargets: number[][] = words.map(() => []);
  keywordGroups.forEach((ids, g) => {
    for (const id of ids) wordTargets[id]!.push(g << 1);
  });
  leadGroups.forEach((ids, g) => {
    for (const id of ids) wordTargets[id]!.push((g << 1) | 1);
  });
  const targetOff = new Uint32Array(states + 1);
  const targetList: number[] = [];
  const lengthList: number[] = [];
  for (let s = 0; s < states; s++) {
    for (const id of out[s]!) {
      for (const t of wordTargets[id]!) {
        targetList.push(t);
        lengthList.push(words[id]!.length);
      }
    }
    targetOff[s + 1] = targetList.length;
  }
  return {
    targetOff,
    targets: Uint32Array.from(targetList),
    targetLengths: Uint8Array.from(lengthList),
    classOf,
    kelvinClass,
    shift,
    delta,
    outOff,
    outIds,
  };
}

/** A rule set with only the named rules (the order and tie-breaking of the full set are kept). */
export function secretRuleSubset(set: SecretRuleSet, ids: Iterable<string>): SecretRuleSet {
  const wanted = new Set(ids);
  const rules = set.rules.filter((r) => wanted.has(r.id));
  for (const id of wanted) if (!rules.some((r) => r.id === id)) throw new SecretRuleError(`rule ${id}: not in the rule set`);
  return indexRules(rules);
}

let bundled: SecretRuleSet | undefined;

/** The rules compiled into this build, validated once; throws SecretRuleError if the data is malformed. */
export function loadSecretRules(): SecretRuleSet {
  bundled ??= compileSecretRules(BUNDLED_SECRET_FILES);
  return bundled;
}
