// Finding and redacting secrets in a whole text. The streaming redactor uses the same pieces
// (keyword index, windowed rule scan, overlap resolution), so both produce the same findings.
//
// Matching semantics, per rule: scanning left to right, the regex is tried at each position; a
// match counts (is "accepted") when one of the rule's keywords occurs in it (at or before the
// secret for `before_secret` rules), the secret value reaches the entropy floor and no allow-list
// pattern matches the value. A match that is not accepted does not consume text: the scan retries
// at the next position. So accepted matches never depend on rejected ones, and positions that no
// keyword is near can be skipped without changing the result. Across rules, overlapping findings
// are merged into one, named after the longest (then the earlier, then the rule listed first).
//
// Skipping more positions the same way (none of them could hold a match, so the result is the
// same; see start-filter.ts): one automaton pass (Aho-Corasick; in WebAssembly for the batch
// scan) finds every keyword, and every lead string (a literal each match of a rule starts with); a
// rule with lead strings is tried only where one starts, near one of its keywords; at every other
// position tried, cheap necessary conditions derived from the regex (characters at fixed or
// bounded offsets, a leading `\b`) are checked first, and the scan skips ahead to where they can
// hold. Keywords are compared with case folded as lowerAscii folds it, except for rules with
// case-sensitive keywords (`keyword_case: exact`). The batch scan indexes the text itself and
// keeps each rule's keyword spans for the keyword check, so it needs no lower-cased copy; the
// streaming redactor passes its lower-cased buffer too.
import type { SecretRule, SecretRuleSet } from './rules';
import { type KnownValues, knownValueSkipReason, processKnownValues } from './known-values';
import { keywordWalker } from './keyword-walk';
import { shannonEntropy } from './entropy';
import { SHAPE_TESTS } from './shapes';
import { JumpState, NONE, mayStartAt, nextJump, passesChecks, runStartBefore } from './start-filter';

export interface SecretFinding {
  readonly ruleId: string;
  readonly description: string;
  /** Offset of the secret value in the input (UTF-16 code units). */
  readonly start: number;
  /** End offset (exclusive) of the secret value. */
  readonly end: number;
}

/** What a finding needs of the rule that made it (a detector's rule, or a known value's: known-values.ts). */
export type CandidateRule = Pick<SecretRule, 'id' | 'description' | 'index'>;

/** One accepted match: match span [ms, me), secret span [ss, se). */
export interface Candidate {
  readonly rule: CandidateRule;
  readonly ms: number;
  readonly me: number;
  readonly ss: number;
  readonly se: number;
}

export const redactionPlaceholder = (ruleId: string): string => `[REDACTED:${ruleId}]`;

/** Lower-cases ASCII letters and keeps every other code unit at its offset. */
export function lowerAscii(s: string): string {
  const l = s.toLowerCase();
  // Only U+0130 lower-cases to two code units; fall back to an ASCII-only mapping when offsets would shift.
  return l.length === s.length ? l : s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** Texts at least this long are walked in WebAssembly by default (the decision reasons and short fields are not). */
export const WASM_WALK_FROM = 512;

/** Keyword index → start offsets (ascending) of its occurrences; keywords that do not occur are absent. */
export type KeywordOccurrences = Map<number, number[]>;

/**
 * Adds to `out` every keyword occurrence in `text` that starts at or after `from` and ends after
 * `endsAfter` (so an index can be extended as text is appended without listing anything twice).
 * `low` is `text` lower-cased chunk by chunk (lowerAscii): U+212A reads as `k` where it became one.
 */
export function indexKeywords(
  set: SecretRuleSet,
  text: string,
  low: string,
  from: number,
  out: KeywordOccurrences = new Map(),
  endsAfter = 0,
): KeywordOccurrences {
  if (from < 0) from = 0;
  if (from >= text.length - 1) return out;
  runAutomaton(set, text, low, from, out, endsAfter, set.keywords.length);
  return out;
}

/**
 * Per keyword group (see `keywordGroup`), where its keywords occur in the whole text (batch
 * scan): the sorted, distinct start offsets with, for each, the end of the shortest keyword
 * starting there; per lead group, the sorted, distinct start offsets of its lead strings.
 * Absent: none.
 */
export interface RuleIndex {
  readonly starts: (number[] | undefined)[];
  readonly ends: (number[] | undefined)[];
  readonly leads: (number[] | undefined)[];
}

/** A rule's keyword spans, for the keyword check of a match in the batch scan. */
export interface RuleKeywordSpans {
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

/**
 * The rule index of `text`, with case folded as lowerAscii(text) folds it. With `raw`, U+212A
 * KELVIN SIGN (the one code unit outside ASCII that lower-cases to an ASCII letter) reads as `k`,
 * and the result is null when the text holds U+0130, whose lower case is two code units
 * (lowerAscii then maps ASCII letters only): the caller indexes again without `raw`.
 * In raw mode the automaton runs in WebAssembly (keyword-walk.ts) when `wasm` is true (by default:
 * for texts of WASM_WALK_FROM code units or more, below which copying the text in costs more than
 * the walk) and WebAssembly is available; both walks give the same index.
 */
export function indexRulesOf(set: SecretRuleSet, s: string, raw: boolean, wasm = s.length >= WASM_WALK_FROM): RuleIndex | null {
  const { delta, classOf, kelvinClass, shift, targetOff, targets, targetLengths } = set.automaton;
  const starts: (number[] | undefined)[] = new Array(set.rules.length);
  const ends: (number[] | undefined)[] = new Array(set.rules.length);
  const leads: (number[] | undefined)[] = new Array(set.rules.length);
  // The strings that end in state t, just before `end`.
  const record = (t: number, end: number): void => {
    const e = targetOff[t + 1]!;
    for (let o = targetOff[t]!; o < e; o++) {
      const target = targets[o]!;
      const slot = target >> 1;
      const at = end - targetLengths[o]!;
      if ((target & 1) === 1) {
        const list = leads[slot];
        if (!list) leads[slot] = [at];
        else {
          const last = list[list.length - 1]!;
          if (last < at) list.push(at);
          else if (last !== at) insertSorted(list, undefined, at, end);
        }
      } else {
        const list = starts[slot];
        if (!list) {
          starts[slot] = [at];
          ends[slot] = [end];
        } else {
          const last = list[list.length - 1]!;
          if (last < at) {
            list.push(at);
            ends[slot]!.push(end);
          } else insertSorted(list, ends[slot], at, end);
        }
      }
    }
  };
  const n = s.length;
  if (raw) {
    if (s.indexOf('\u0130') >= 0) return null;
    const walker = wasm ? keywordWalker(set.automaton, set.keywordLengths) : null;
    if (walker) {
      walker.walk(s, record);
      return { starts, ends, leads };
    }
  }
  let state = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128) {
      if (raw && c === 0x212a) state = delta[state | kelvinClass]!;
      else {
        state = 0;
        continue;
      }
    } else state = delta[state | classOf[c]!]!;
    if (state >= 0) continue;
    state = ~state;
    record(state >> shift, i + 1);
  }
  return { starts, ends, leads };
}

/** Inserts `at` into the sorted `list` (out of order by at most a keyword's length), keeping it distinct; `ends` keeps the smallest end per start. */
function insertSorted(list: number[], ends: number[] | undefined, at: number, end: number): void {
  let i = list.length;
  while (i > 0 && list[i - 1]! > at) i--;
  if (i > 0 && list[i - 1] === at) {
    if (ends && ends[i - 1]! > end) ends[i - 1] = end;
    return;
  }
  list.splice(i, 0, at);
  if (ends) ends.splice(i, 0, end);
}

/** Lists the occurrences of the automaton's strings with ids below `words`. */
function runAutomaton(
  set: SecretRuleSet,
  s: string,
  low: string,
  from: number,
  out: KeywordOccurrences,
  endsAfter: number,
  words: number,
): void {
  const { delta, outOff, outIds, classOf, kelvinClass, shift } = set.automaton;
  const lengths = set.keywordLengths;
  const lists: (number[] | undefined)[] = new Array(words);
  const n = s.length;
  let state = 0; // the current state << shift
  for (let i = from; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128) {
      if (c === 0x212a && low.charCodeAt(i) === 107) state = delta[state | kelvinClass]!;
      else {
        state = 0;
        continue;
      }
    } else state = delta[state | classOf[c]!]!;
    if (state >= 0) continue;
    state = ~state;
    const t = state >> shift;
    const e = outOff[t + 1]!;
    if (i + 1 <= endsAfter) continue;
    for (let o = outOff[t]!; o < e; o++) {
      const id = outIds[o]!;
      if (id >= words) continue;
      const at = i + 1 - lengths[id]!;
      const list = lists[id];
      if (list) list.push(at);
      else lists[id] = [at];
    }
  }
  for (let id = 0; id < lists.length; id++) {
    const list = lists[id];
    if (!list) continue;
    const prev = out.get(id);
    if (prev) for (const p of list) prev.push(p);
    else out.set(id, list);
  }
}

/** Index of the first value >= x in an ascending list (the list's length if none), searching from `lo`. */
export function lowerBound(list: ArrayLike<number>, x: number, lo = 0): number {
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Sorted, de-duplicated keyword positions (>= from) of the rule at `slot` in `set.rules`. */
export function rulePositions(set: SecretRuleSet, slot: number, occurrences: KeywordOccurrences, from: number): number[] {
  return mergedPositions(set.ruleKeywords[slot]!, occurrences, from);
}

function mergedPositions(ids: readonly number[], occurrences: KeywordOccurrences, from: number): number[] {
  let merged: number[] | undefined;
  let lists = 0;
  for (const id of ids) {
    const list = occurrences.get(id);
    if (!list) continue;
    const at = lowerBound(list, from);
    if (at === list.length) continue;
    const tail = at === 0 ? list : list.slice(at);
    merged = lists === 0 ? tail.slice() : merged!.concat(tail);
    lists++;
  }
  if (!merged) return [];
  if (lists > 1) {
    merged.sort((a, b) => a - b);
    let k = 0;
    for (const p of merged) if (k === 0 || merged[k - 1] !== p) merged[k++] = p;
    merged.length = k;
  }
  return merged;
}

interface RawMatch {
  readonly ms: number;
  readonly me: number;
  readonly ss: number;
  readonly se: number;
}

function toRaw(rule: SecretRule, m: RegExpExecArray, offset: number): RawMatch | null {
  const ms = m.index + offset;
  const me = ms + m[0].length;
  if (!rule.hasGroup) return { ms, me, ss: ms, se: me };
  if (rule.secretAtEnd) {
    const v = m[1];
    return v ? { ms, me, ss: me - v.length, se: me } : { ms, me, ss: -1, se: -1 };
  }
  const g = m.indices?.[1];
  if (!g || g[0] === g[1]) return { ms, me, ss: -1, se: -1 };
  return { ms, me, ss: g[0] + offset, se: g[1] + offset };
}

/** Scratch for scanRule (not re-entered). */
const jumpState = new JumpState();

/** The first raw match starting in [ws, p], or null. */
function firstAttempt(rule: SecretRule, text: string, ws: number, p: number, context: number, js: JumpState | undefined): RawMatch | null {
  const f = rule.filter;
  const jump = f.jump;
  if (js || p - ws <= 16 || rule.maxLength === Infinity) {
    // Skip ahead over positions where a necessary condition fails; run the regex at the others.
    const re = rule.sticky;
    const n = text.length;
    const nj = js ? jump.length : 0;
    let q = ws;
    outer: while (q <= p) {
      for (let k = 0; k < nj; k++) {
        const c = jump[k]!;
        const h = nextJump(c, k, js!, text, q + c.lo, Math.min(n, p + c.hi + 1));
        if (h > q + c.hi) {
          if (h === NONE) return null;
          q = h - c.hi;
          continue outer;
        }
        // The text from the match start to h holds only characters the items before can consume
        // (also for any later member: it holds the text up to h too).
        const r = runStartBefore(c, k, js!, text, h);
        if (q < r) {
          q = r;
          continue outer;
        }
      }
      if (passesChecks(f, text, q)) {
        re.lastIndex = q;
        const m = re.exec(text);
        if (m) return toRaw(rule, m, 0);
      }
      q++;
    }
    return null;
  }
  // Bounded rule, wide window: search a slice that holds everything an attempt in [ws, p] can read.
  const s0 = Math.max(0, ws - context);
  const e0 = Math.min(text.length, p + rule.maxLength + rule.lookahead + 1);
  const re = rule.regex;
  re.lastIndex = ws - s0;
  const m = re.exec(text.slice(s0, e0));
  if (!m || m.index + s0 > p) return null;
  return toRaw(rule, m, s0);
}

/** `keywords` is the text's lower-cased copy (lowerAscii), or the rule's keyword spans in the whole text. */
function accepted(rule: SecretRule, text: string, keywords: string | RuleKeywordSpans, m: RawMatch): boolean {
  if (m.ss < 0) return false;
  let anchored = false;
  if (typeof keywords === 'string') {
    const inMatch = (rule.exactKeywords ? text : keywords).slice(m.ms, m.me);
    anchored = rule.keywords.some((k) => {
      const q = inMatch.indexOf(k);
      return q >= 0 && (rule.anchor === 'in_match' || m.ms + q <= m.ss);
    });
  } else {
    // The spans of the rule's keywords, by start: one that starts in the match (before the secret
    // for `before_secret`) and ends inside it. (Per start the shortest keyword is listed.)
    const { starts, ends } = keywords;
    const last = rule.anchor === 'in_match' ? m.me - 1 : m.ss;
    for (let i = lowerBound(starts, m.ms); i < starts.length && starts[i]! <= last; i++) {
      if (ends[i]! <= m.me) {
        anchored = true;
        break;
      }
    }
  }
  return anchored && valueAccepted(rule, text.slice(m.ss, m.se));
}

/**
 * Whether a matched value is a secret for `rule`: not of a shape the rule allows (a code name), at or
 * above the entropy floor unless of a shape exempt from it (a password, a passphrase), and matched by no
 * allow-list pattern.
 */
export function valueAccepted(rule: SecretRule, value: string): boolean {
  if (
    rule.entropy !== undefined &&
    shannonEntropy(value) < rule.entropy &&
    !rule.entropyExemptShapes.some((shape) => SHAPE_TESTS[shape](value))
  )
    return false;
  if (rule.allowlist.some((a) => a.test(value))) return false;
  return !rule.allowShapes.some((shape) => SHAPE_TESTS[shape](value));
}

/**
 * Accepted matches of one rule starting at or after `from`, given the rule's keyword positions
 * (sorted, >= from). Only positions within `rule.reach` before a keyword are tried: a match
 * anywhere else cannot contain its anchoring keyword. `low` is the lower-cased text (lowerAscii),
 * or the rule's keyword spans in the whole text. `leads` (batch scan only): the sorted start
 * offsets of the rule's lead strings in the whole text; only those positions are tried.
 */
export function scanRule(
  set: SecretRuleSet,
  rule: SecretRule,
  text: string,
  low: string | RuleKeywordSpans,
  from: number,
  positions: ArrayLike<number>,
  out: Candidate[],
  leads?: ArrayLike<number>,
): void {
  if (rule.reach === 0) {
    // A match starts at its keyword: try the keyword positions themselves.
    scanAtKeywords(rule, text, low, from, positions, out);
    return;
  }
  if (leads) {
    // Every match starts at a lead string: try those within reach before a keyword.
    scanAtLeads(rule, text, low, from, positions, leads, out);
    return;
  }
  const js = rule.filter.jump.length > 0 ? jumpState.reset() : undefined;
  let next = from; // every position before `next` is settled
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i]!;
    if (p < next) continue;
    let ws = Math.max(next, p - rule.reach);
    while (ws <= p) {
      const m = firstAttempt(rule, text, ws, p, set.contextChars, js);
      if (!m) break;
      if (accepted(rule, text, low, m)) {
        out.push({ rule, ms: m.ms, me: m.me, ss: m.ss, se: m.se });
        ws = m.me;
        next = m.me;
      } else ws = m.ms + 1;
    }
    next = Math.max(next, p + 1);
  }
}

/**
 * scanRule for a rule with lead strings: in one pass over the leads (ascending), each lead at or
 * after the end of the last accepted match with a keyword position at most `reach` after it is
 * tried, which are the positions the windows before each keyword would try, in the same order.
 */
function scanAtLeads(
  rule: SecretRule,
  text: string,
  low: string | RuleKeywordSpans,
  from: number,
  positions: ArrayLike<number>,
  leads: ArrayLike<number>,
  out: Candidate[],
): void {
  const f = rule.filter;
  const reach = rule.reach;
  const nP = positions.length;
  const nL = leads.length;
  let next = from;
  let k = 0; // the first keyword position at or after the current lead
  let i = lowerBound(leads, from);
  while (i < nL) {
    const q = leads[i]!;
    if (q < next) {
      i = lowerBound(leads, next, i + 1);
      continue;
    }
    while (k < nP && positions[k]! < q) k++;
    if (k === nP) return;
    const p = positions[k]!;
    if (p - reach > q) {
      // No keyword within reach after this lead: go on from the first lead that reaches keyword p.
      i = lowerBound(leads, p - reach, i + 1);
      continue;
    }
    i++;
    if (!mayStartAt(f, text, q)) continue;
    const end = acceptAt(rule, text, low, q, out);
    if (end >= 0) next = end;
  }
}

/** scanRule for a rule whose matches start at a keyword (`reach` 0): the windows are single positions. */
function scanAtKeywords(
  rule: SecretRule,
  text: string,
  low: string | RuleKeywordSpans,
  from: number,
  positions: ArrayLike<number>,
  out: Candidate[],
): void {
  const f = rule.filter;
  let next = from;
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i]!;
    if (p < next || !mayStartAt(f, text, p)) continue;
    const end = acceptAt(rule, text, low, p, out);
    if (end >= 0) next = end;
  }
}

/** The rule's sticky regex tried at `q`: an accepted match is recorded and its end returned, or -1. */
function acceptAt(rule: SecretRule, text: string, low: string | RuleKeywordSpans, q: number, out: Candidate[]): number {
  const re = rule.sticky;
  re.lastIndex = q;
  const m = re.exec(text);
  if (!m) return -1;
  const raw = toRaw(rule, m, 0);
  if (!raw || !accepted(rule, text, low, raw)) return -1;
  out.push({ rule, ms: raw.ms, me: raw.me, ss: raw.ss, se: raw.se });
  return raw.me;
}

/** Every accepted match of every rule in `text` (before overlap resolution). */
export function allCandidates(set: SecretRuleSet, text: string): Candidate[] {
  const index = indexRulesOf(set, text, true) ?? indexRulesOf(set, text, false)!;
  const out: Candidate[] = [];
  const rules = set.rules;
  for (let slot = 0; slot < rules.length; slot++) {
    const g = set.keywordGroup[slot]!;
    const starts = index.starts[g];
    if (!starts) continue;
    const lg = set.leadGroup[slot]!;
    const leads = lg >= 0 ? (index.leads[lg] ?? []) : undefined;
    scanRule(set, rules[slot]!, text, { starts, ends: index.ends[g]! }, 0, starts, out, leads);
  }
  return out;
}

/**
 * Non-overlapping findings sorted by start. Overlapping candidates (a cluster connected by
 * overlaps) become one finding that covers all of them, so no part of any detected secret is left
 * in clear; it is named after the longest candidate (then the earlier, then the rule listed first).
 */
export function resolveOverlaps(candidates: readonly Candidate[]): Candidate[] {
  const sorted = [...candidates].sort((a, b) => a.ss - b.ss || b.se - a.se || a.rule.index - b.rule.index);
  const out: Candidate[] = [];
  let i = 0;
  while (i < sorted.length) {
    let best = sorted[i]!;
    let end = best.se;
    let ms = best.ms;
    let me = best.me;
    let j = i + 1;
    for (; j < sorted.length && sorted[j]!.ss < end; j++) {
      const c = sorted[j]!;
      end = Math.max(end, c.se);
      ms = Math.min(ms, c.ms);
      me = Math.max(me, c.me);
      const longer = c.se - c.ss - (best.se - best.ss);
      if (longer > 0 || (longer === 0 && c.ss === best.ss && c.rule.index < best.rule.index)) best = c;
    }
    out.push(j === i + 1 ? best : { rule: best.rule, ms, me, ss: sorted[i]!.ss, se: end });
    i = j;
  }
  return out;
}

/** `text[from, to)` with each finding's secret replaced by its placeholder (findings sorted, inside the range). */
export function applyRedactions(text: string, from: number, to: number, findings: readonly Candidate[]): string {
  let out = '';
  let at = from;
  for (const f of findings) {
    out += text.slice(at, f.ss) + redactionPlaceholder(f.rule.id);
    at = f.se;
  }
  return out + text.slice(at, to);
}

const toFinding = (c: Candidate): SecretFinding => ({ ruleId: c.rule.id, description: c.rule.description, start: c.ss, end: c.se });

/** Secrets in `text`: non-overlapping, sorted by start. */
export function findSecrets(rules: SecretRuleSet, text: string): SecretFinding[] {
  return resolveOverlaps(allCandidates(rules, text)).map(toFinding);
}

/**
 * `text` with every secret value replaced by `[REDACTED:<rule-id>]`; the surrounding text is kept. Every
 * copy of a value a detector found is masked too, and so is every value of `known` (the host's registry
 * of the user's secrets and of what earlier outputs held), which learns the values found here.
 * A private-key block is replaced whole, from its BEGIN line to its END line (to the end of the
 * text when the END line is missing).
 */
export function redactSecrets(rules: SecretRuleSet, text: string, known?: KnownValues): { text: string; findings: SecretFinding[] } {
  const found = withKnownValues(known ?? processKnownValues(), text, 0, text.length, resolveOverlaps(allCandidates(rules, text)));
  return { text: applyRedactions(text, 0, text.length, found), findings: found.map(toFinding) };
}

/** A known value's rule, one per rule id (they rank after every detector's rule on equal spans). */
const VALUE_RULE_INDEX = Number.MAX_SAFE_INTEGER;
const valueRules = new Map<string, CandidateRule>();
function valueRule(id: string): CandidateRule {
  let r = valueRules.get(id);
  if (!r)
    valueRules.set(
      id,
      (r = {
        id,
        description: id.startsWith('known-value.')
          ? 'a secret value Bulwark knows (masked by value)'
          : 'a value found as a secret before (masked by value)',
        index: VALUE_RULE_INDEX,
      }),
    );
  return r;
}

/**
 * Value masking: every copy in `text[from, to)` of a value a detector found (`detected`, sorted and
 * non-overlapping) becomes a finding of its own, named after that detector's rule (a bare copy of a
 * secret has no context a detector could see), and so does every occurrence of a value in `known`, the
 * session's registry, which learns the values found here: masked in every later output too.
 */
export function withKnownValues(
  known: KnownValues | undefined,
  text: string,
  from: number,
  to: number,
  detected: readonly Candidate[],
): Candidate[] {
  const extra: Candidate[] = [];
  const seen = new Set<string>();
  for (const c of detected) {
    // A known value's own finding (the streaming redactor passes them in): already known, its copies found below.
    if (c.rule.index === VALUE_RULE_INDEX) continue;
    const value = text.slice(c.ss, c.se);
    known?.add(value, c.rule.id);
    if (seen.has(value)) continue;
    seen.add(value);
    // Most values have no other copy: the skip rule (which reads the whole value) is asked only when one is found.
    let skip: boolean | undefined;
    for (let at = text.indexOf(value, from); at >= 0 && at + value.length <= to; at = text.indexOf(value, at + 1)) {
      if (at === c.ss) continue;
      skip ??= knownValueSkipReason(value) !== undefined;
      if (skip) break;
      extra.push({ rule: valueRule(c.rule.id), ms: at, me: at + value.length, ss: at, se: at + value.length });
    }
  }
  if (known) extra.push(...knownValueCandidates(known, text, from, to));
  return extra.length === 0 ? [...detected] : resolveOverlaps([...detected, ...extra]);
}

/** The occurrences of known values lying in `text[from, to)`, as findings. */
export function knownValueCandidates(known: KnownValues, text: string, from: number, to: number): Candidate[] {
  if (known.size === 0) return [];
  return known.find(text, from, to).map((m) => ({ rule: valueRule(m.ruleId), ms: m.start, me: m.end, ss: m.start, se: m.end }));
}
