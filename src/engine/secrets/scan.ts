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
import type { SecretRule, SecretRuleSet } from './rules';

export interface SecretFinding {
  readonly ruleId: string;
  readonly description: string;
  /** Offset of the secret value in the input (UTF-16 code units). */
  readonly start: number;
  /** End offset (exclusive) of the secret value. */
  readonly end: number;
}

/** One accepted match: match span [ms, me), secret span [ss, se). */
export interface Candidate {
  readonly rule: SecretRule;
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

const byteCounts = new Int32Array(256);

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  const n = s.length;
  if (n === 0) return 0;
  let wide: Map<number, number> | undefined;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 256) byteCounts[c]!++;
    else (wide ??= new Map()).set(c, (wide.get(c) ?? 0) + 1);
  }
  let h = 0;
  const add = (k: number): void => {
    const p = k / n;
    h -= p * Math.log2(p);
  };
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 256 && byteCounts[c]! > 0) {
      add(byteCounts[c]!);
      byteCounts[c] = 0;
    }
  }
  if (wide) for (const k of wide.values()) add(k);
  return h;
}

/** Keyword index → start offsets (ascending) of its occurrences; keywords that do not occur are absent. */
export type KeywordOccurrences = Map<number, number[]>;

/**
 * Adds to `out` every keyword occurrence in `low` that starts at or after `from` and ends after
 * `endsAfter` (so an index can be extended as text is appended without listing anything twice).
 */
export function indexKeywords(set: SecretRuleSet, low: string, from: number, out: KeywordOccurrences = new Map(), endsAfter = 0): KeywordOccurrences {
  const flags = set.keywordBucketFlags;
  const n = low.length;
  if (from < 0) from = 0;
  if (from >= n - 1) return out;
  let c0 = low.charCodeAt(from);
  for (let i = from; i < n - 1; i++) {
    const c1 = low.charCodeAt(i + 1);
    if (c0 < 256 && c1 < 256 && flags[(c0 << 8) | c1] === 1) {
      for (const id of set.keywordBuckets.get((c0 << 8) | c1)!) {
        const k = set.keywords[id]!;
        if (i + k.length > endsAfter && low.startsWith(k, i)) {
          const list = out.get(id);
          if (list) list.push(i);
          else out.set(id, [i]);
        }
      }
    }
    c0 = c1;
  }
  return out;
}

/** Index of the first value >= x in an ascending list (the list's length if none). */
export function lowerBound(list: readonly number[], x: number): number {
  let lo = 0;
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
  let merged: number[] | undefined;
  let lists = 0;
  for (const id of set.ruleKeywords[slot]!) {
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

interface RawMatch { readonly ms: number; readonly me: number; readonly ss: number; readonly se: number }

function toRaw(rule: SecretRule, m: RegExpExecArray, offset: number): RawMatch | null {
  const ms = m.index + offset;
  const me = ms + m[0].length;
  if (!rule.hasGroup) return { ms, me, ss: ms, se: me };
  const g = m.indices?.[1];
  if (!g || g[0] === g[1]) return { ms, me, ss: -1, se: -1 };
  return { ms, me, ss: g[0] + offset, se: g[1] + offset };
}

/** The first raw match starting in [ws, p], or null. */
function firstAttempt(rule: SecretRule, text: string, ws: number, p: number, context: number): RawMatch | null {
  if (p - ws <= 16 || rule.maxLength === Infinity) {
    const re = rule.sticky;
    for (let q = ws; q <= p; q++) {
      re.lastIndex = q;
      const m = re.exec(text);
      if (m) return toRaw(rule, m, 0);
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

function accepted(rule: SecretRule, text: string, low: string, m: RawMatch): boolean {
  if (m.ss < 0) return false;
  const inMatch = low.slice(m.ms, m.me);
  const anchored = rule.keywords.some((k) => {
    const q = inMatch.indexOf(k);
    return q >= 0 && (rule.anchor === 'in_match' || m.ms + q <= m.ss);
  });
  if (!anchored) return false;
  const value = text.slice(m.ss, m.se);
  if (rule.entropy !== undefined && shannonEntropy(value) < rule.entropy) return false;
  return !rule.allowlist.some((a) => a.test(value));
}

/**
 * Accepted matches of one rule starting at or after `from`, given the rule's keyword positions
 * (sorted, >= from). Only positions within `rule.reach` before a keyword are tried: a match
 * anywhere else cannot contain its anchoring keyword.
 */
export function scanRule(set: SecretRuleSet, rule: SecretRule, text: string, low: string, from: number, positions: readonly number[], out: Candidate[]): void {
  let next = from; // every position before `next` is settled
  for (const p of positions) {
    if (p < next) continue;
    let ws = Math.max(next, p - rule.reach);
    while (ws <= p) {
      const m = firstAttempt(rule, text, ws, p, set.contextChars);
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

/** Every accepted match of every rule in `text` (before overlap resolution). */
export function allCandidates(set: SecretRuleSet, text: string, low = lowerAscii(text)): Candidate[] {
  const occurrences = indexKeywords(set, low, 0);
  const out: Candidate[] = [];
  set.rules.forEach((rule, slot) => {
    const positions = rulePositions(set, slot, occurrences, 0);
    if (positions.length > 0) scanRule(set, rule, text, low, 0, positions, out);
  });
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
 * `text` with every secret value replaced by `[REDACTED:<rule-id>]`; the surrounding text is kept.
 * A private-key block is replaced whole, from its BEGIN line to its END line (to the end of the
 * text when the END line is missing).
 */
export function redactSecrets(rules: SecretRuleSet, text: string): { text: string; findings: SecretFinding[] } {
  const found = resolveOverlaps(allCandidates(rules, text));
  return { text: applyRedactions(text, 0, text.length, found), findings: found.map(toFinding) };
}
