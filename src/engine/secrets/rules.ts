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
  RegexSyntaxError, maxLength, maxOffsetOfFirstGroup, minLength, parseRegex, prefixSource, regexFacts, secretStartSource,
} from './regex-syntax';

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
  /** Lower-case literals; one must occur in the match (see `anchor`). */
  readonly keywords: readonly string[];
  readonly anchor: KeywordAnchor;
  /** The regex source as written in the data (a leading `(?i)` becomes the `i` flag). */
  readonly source: string;
  readonly caseInsensitive: boolean;
  /** Global, with indices: the scanning expression. */
  readonly regex: RegExp;
  /** Sticky, with indices: one attempt at one position. */
  readonly sticky: RegExp;
  /** Global: earliest position from which the text up to its end (±lookahead) could still grow into a match. */
  readonly prefix: RegExp;
  /** The same, sticky: can the text from one given position still grow into a match? */
  readonly prefixSticky: RegExp;
  /** Global, for a secret in a top-level group: earliest position where a secret of a match the text can still grow into could start. */
  readonly secretStart?: RegExp;
  readonly entropy?: number;
  readonly allowlist: readonly RegExp[];
  /** Longest possible match (Infinity for a block that runs to its footer or the end of the text). */
  readonly maxLength: number;
  /** Longest lookahead; a match's outcome can depend on this many characters past the text it consumed. */
  readonly lookahead: number;
  /** Longest lookbehind (a `\b` counts as 1): how far before a match start the regex may look. */
  readonly lookbehind: number;
  /** Longest distance from a match's start to its anchoring keyword. */
  readonly reach: number;
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
  /** For each rule (by position in `rules`), the indices of its keywords in `keywords`. */
  readonly ruleKeywords: readonly (readonly number[])[];
  /** For each keyword, the positions in `rules` of the rules that use it. */
  readonly keywordRules: readonly (readonly number[])[];
  /** Keyword indices by the char codes of their first two characters (`c0 << 8 | c1`). */
  readonly keywordBuckets: ReadonlyMap<number, readonly number[]>;
  readonly keywordBucketFlags: Uint8Array;
  /** Proper prefixes of keywords → keyword indices (to spot a keyword cut off at the end of a chunk). */
  readonly keywordPrefixes: ReadonlyMap<string, readonly number[]>;
  /** Char code → lengths of the keyword prefixes that end with that character. */
  readonly prefixLengthsByLastChar: ReadonlyMap<number, readonly number[]>;
  readonly maxKeywordLength: number;
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
const FAMILY = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_LOOKAROUND = 64;
const FILE_KEYS = new Set(['version', 'family', 'description', 'rules']);
const RULE_KEYS = new Set(['id', 'description', 'keywords', 'anchor', 'regex', 'entropy', 'allowlist', 'examples']);

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

function compileRule(raw: unknown, family: string, where: string, index: number): SecretRule {
  if (!isObj(raw)) fail(where, 'must be a mapping');
  checkKeys(raw, RULE_KEYS, where);
  const id = str(raw, 'id', where);
  where = `${where} (${id})`;
  if (!ID.test(id)) fail(where, 'id must be kebab-case');
  const description = str(raw, 'description', where);

  const kw = raw['keywords'];
  if (!Array.isArray(kw) || kw.length === 0) fail(where, '`keywords` must be a non-empty list');
  for (const k of kw) if (typeof k !== 'string' || !KEYWORD.test(k)) fail(where, `keyword \`${String(k)}\` must be 2-64 printable ASCII characters without upper-case letters`);
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
  if (facts.lookbehind > MAX_LOOKAROUND || facts.lookahead > MAX_LOOKAROUND) fail(where, `lookarounds may look at most ${MAX_LOOKAROUND} characters`);
  if (minLength(tree) === 0) fail(where, 'the regex can match the empty string');
  const max = maxLength(tree);
  const minKeyword = Math.min(...keywords.map((k) => k.length));
  const reach = anchor === 'before_secret' ? maxOffsetOfFirstGroup(tree) : max - minKeyword;
  if (!Number.isFinite(reach)) fail(where, anchor === 'in_match' ? '`in_match` rules need a bounded regex' : 'the text before the secret must be bounded');

  const flags = caseInsensitive ? 'i' : '';
  let regex: RegExp;
  let sticky: RegExp;
  let prefix: RegExp;
  let prefixSticky: RegExp;
  let secretStart: RegExp | undefined;
  try {
    regex = new RegExp(body, `gd${flags}`);
    sticky = new RegExp(body, `yd${flags}`);
    const prefixBody = `(?:${prefixSource(tree)})$`;
    prefix = new RegExp(prefixBody, `g${flags}`);
    prefixSticky = new RegExp(prefixBody, `y${flags}`);
    const startSource = secretStartSource(tree);
    if (startSource !== undefined) secretStart = new RegExp(startSource, `g${flags}`);
  } catch (e) {
    fail(where, `invalid regular expression: ${(e as Error).message}`);
  }

  const entropyRaw = raw['entropy'];
  if (entropyRaw !== undefined && (typeof entropyRaw !== 'number' || !(entropyRaw > 0 && entropyRaw <= 8))) fail(where, '`entropy` must be a number in (0, 8]');
  const allowRaw = raw['allowlist'] ?? [];
  if (!Array.isArray(allowRaw)) fail(where, '`allowlist` must be a list');
  const allowlist = allowRaw.map((a, i) => compileAllowlist(a, `${where}.allowlist[${i}]`));

  return {
    id, description, family, keywords, anchor, source, caseInsensitive, regex, sticky, prefix, prefixSticky,
    ...(secretStart ? { secretStart } : {}),
    ...(entropyRaw !== undefined ? { entropy: entropyRaw as number } : {}),
    allowlist, maxLength: max, lookahead: Math.max(1, facts.lookahead), lookbehind: facts.lookbehind, reach, hasGroup: facts.groups > 0,
    examples: examples(raw['examples'], `${where}.examples`), index,
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

function indexRules(rules: readonly SecretRule[]): SecretRuleSet {
  const keywords: string[] = [];
  const keywordIds = new Map<string, number>();
  const ruleKeywords = rules.map((r) => r.keywords.map((k) => {
    let id = keywordIds.get(k);
    if (id === undefined) {
      id = keywords.length;
      keywords.push(k);
      keywordIds.set(k, id);
    }
    return id;
  }));
  const keywordRules: number[][] = keywords.map(() => []);
  ruleKeywords.forEach((ids, slot) => { for (const id of ids) keywordRules[id]!.push(slot); });
  const buckets = new Map<number, number[]>();
  const flags = new Uint8Array(65536);
  const prefixes = new Map<string, number[]>();
  const byLastChar = new Map<number, Set<number>>();
  keywords.forEach((k, id) => {
    const code = (k.charCodeAt(0) << 8) | k.charCodeAt(1);
    flags[code] = 1;
    const list = buckets.get(code);
    if (list) list.push(id);
    else buckets.set(code, [id]);
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
  return {
    rules,
    contextChars: lookbehind + 1,
    keywords,
    ruleKeywords,
    keywordRules,
    keywordBuckets: buckets,
    keywordBucketFlags: flags,
    keywordPrefixes: prefixes,
    prefixLengthsByLastChar: new Map([...byLastChar].map(([c, set]) => [c, [...set].sort((a, b) => a - b)])),
    maxKeywordLength: Math.max(...keywords.map((k) => k.length)),
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
