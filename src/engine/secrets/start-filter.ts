// Necessary conditions for a rule's regex to match at a given start position, derived from its
// syntax tree, so the scanner can skip a position without running the regex there.
//
// The regex's top-level sequence (groups flattened) is a list of items, each at an offset range
// [lo, hi] from the match start (the sums of the shortest and longest lengths of the items before
// it). An item that consumes at least one character puts a character from its first-character set
// at one of those offsets: if no such character is there, there is no match at that start. A
// leading `\b` is checked too. Everything is an over-approximation: lookarounds are ignored (they
// consume nothing), and a code unit >= 128 passes a set that may hold one (`wide`). The regexes are
// compiled without the `u` flag, where case-insensitive matching never pairs an ASCII character
// with a non-ASCII one, so the ASCII table and `wide` describe a set exactly enough.
import { type RegexNode, maxLength, minLength } from './regex-syntax';

export interface CharCondition {
  /** Per ASCII code unit: 1 if the item's first character may be it. */
  readonly table: Uint8Array;
  /** Whether a code unit >= 128 may be the item's first character. */
  readonly wide: boolean;
  /** Offset range from the match start where that character sits. */
  readonly lo: number;
  readonly hi: number;
  /**
   * When the item is one character (not `wide`): it, followed by the characters of the items
   * right after it that are one character each too (a literal that must occur whole at one of the
   * offsets; `table` describes its first character).
   */
  readonly single?: string;
  /**
   * Every character the items before this one can consume (ASCII table, `wide` as above): the text
   * from the match start up to where this condition's character sits consists of these.
   */
  readonly before: { readonly table: Uint8Array; readonly wide: boolean };
}

export interface StartFilter {
  /** The regex starts with `\b`. */
  readonly boundary: boolean;
  /** Conditions at a fixed offset (lo === hi), in regex order. */
  readonly fixed: readonly CharCondition[];
  /** Conditions over a short offset range (lo < hi), the most selective first (candidates for `jump`). */
  readonly ranges: readonly CharCondition[];
  /** The conditions the scanner skips ahead with (the first fixed one, then the ranges). */
  readonly jump: readonly CharCondition[];
  /** The conditions it checks at each remaining position (the other fixed ones). */
  readonly check: readonly CharCondition[];
}

/** Longest offset range a condition may span to be worth checking. */
const MAX_RANGE = 40;
const MAX_FIXED = 8;
const MAX_RANGES = 2;
const MAX_JUMP_SCORE = 200;
const MAX_JUMPS = 2;

function flatten(node: RegexNode): RegexNode[] {
  if (node.t === 'seq') return node.items.flatMap(flatten);
  if (node.t === 'group') return flatten(node.body);
  return [node];
}

const WIDE_SYNTAX = /\\[sSDWu]|\\x[89a-fA-F]|^\[\^|^\.$|[^\x00-\x7f]/;

const charSets = new Map<string, { table: Uint8Array; wide: boolean }>();

/** The ASCII code units a one-character atom matches, and whether it may match one >= 128. */
function charSet(src: string, ci: boolean): { table: Uint8Array; wide: boolean } {
  const key = `${ci ? 'i' : ''}/${src}`;
  let set = charSets.get(key);
  if (!set) {
    const re = new RegExp(`^(?:${src})$`, ci ? 'i' : '');
    const members = new Uint8Array(128);
    for (let c = 0; c < 128; c++) if (re.test(String.fromCharCode(c))) members[c] = 1;
    set = { table: members, wide: WIDE_SYNTAX.test(src) };
    charSets.set(key, set);
  }
  return set;
}

function addChar(table: Uint8Array, src: string, ci: boolean): boolean {
  const set = charSet(src, ci);
  for (let c = 0; c < 128; c++) if (set.table[c] === 1) table[c] = 1;
  return set.wide;
}

/** Adds the node's possible first characters; returns whether it can consume nothing. */
function first(node: RegexNode, ci: boolean, acc: { table: Uint8Array; wide: boolean }): boolean {
  switch (node.t) {
    case 'char':
      if (addChar(acc.table, node.src, ci)) acc.wide = true;
      return false;
    case 'assert':
      return true;
    case 'group':
      return first(node.body, ci, acc);
    case 'alt': {
      let nullable = false;
      for (const item of node.items) if (first(item, ci, acc)) nullable = true;
      return nullable;
    }
    case 'seq':
      for (const item of node.items) if (!first(item, ci, acc)) return false;
      return true;
    case 'quant': {
      if (node.max === 0) return true;
      const nullable = first(node.body, ci, acc);
      return nullable || node.min === 0;
    }
  }
}

/** Adds every character the node can consume (lookaround bodies consume nothing). */
function every(node: RegexNode, ci: boolean, acc: { table: Uint8Array; wide: boolean }): void {
  switch (node.t) {
    case 'char':
      if (addChar(acc.table, node.src, ci)) acc.wide = true;
      return;
    case 'assert':
      return;
    case 'group':
      every(node.body, ci, acc);
      return;
    case 'quant':
      every(node.body, ci, acc);
      return;
    case 'alt':
    case 'seq':
      for (const item of node.items) every(item, ci, acc);
  }
}

/** A set of code units: per ASCII code unit 1 if in it; `wide`: whether code units >= 128 may be. */
export interface CharSet {
  readonly table: Uint8Array;
  readonly wide: boolean;
}

/** Every character the nodes can consume (lookaround bodies consume nothing). */
export function consumable(nodes: readonly RegexNode[], ci: boolean): CharSet {
  const acc = { table: new Uint8Array(128), wide: false };
  for (const n of nodes) every(n, ci, acc);
  return acc;
}

/** The start of the longest run of `set` characters that ends at `end`, looking back no further than `floor`. */
export function runStart(set: CharSet, text: string, end: number, floor: number): number {
  const { table, wide } = set;
  let r = end;
  while (r > floor) {
    const x = text.charCodeAt(r - 1);
    if (x < 128 ? table[x] === 0 : !wide) break;
    r--;
  }
  return r;
}

export function startFilter(root: RegexNode, ci: boolean): StartFilter {
  let boundary = false;
  const fixed: CharCondition[] = [];
  const candidates: CharCondition[] = [];
  let lo = 0;
  let hi = 0;
  let literal: CharCondition | undefined; // the range condition the previous item ended, when it is a literal
  const consumed = { table: new Uint8Array(128), wide: false }; // every character the items so far can consume
  for (const item of flatten(root)) {
    if (hi === Infinity) break;
    const prev = literal;
    literal = undefined;
    if (item.t === 'assert') {
      if (item.kind === 'boundary' && item.src === '\\b' && hi === 0) boundary = true;
      continue;
    }
    if (minLength(item) >= 1) {
      const acc = { table: new Uint8Array(128), wide: false };
      first(item, ci, acc);
      const members = acc.table.reduce((n, x) => n + x, 0);
      const one = item.t === 'char' && members === 1 && !acc.wide ? String.fromCharCode(acc.table.indexOf(1)) : undefined;
      const cond: CharCondition = {
        table: acc.table,
        wide: acc.wide,
        lo,
        hi,
        ...(one !== undefined ? { single: one } : {}),
        before: { table: consumed.table.slice(), wide: consumed.wide },
      };
      if (one !== undefined && prev?.single !== undefined && prev.lo + prev.single.length === lo && prev.hi + prev.single.length === hi) {
        // A literal continues: the condition becomes the longer string.
        literal = { ...prev, single: prev.single + one };
        candidates[candidates.indexOf(prev)] = literal;
      } else if (members < 128 || !acc.wide) {
        if (lo === hi) {
          if (fixed.length < MAX_FIXED) fixed.push(cond);
        } else if (hi - lo <= MAX_RANGE && members <= 8 && !acc.wide) {
          candidates.push(cond);
          if (one !== undefined) literal = cond;
        }
      }
    }
    every(item, ci, consumed);
    lo += minLength(item);
    hi += maxLength(item);
  }
  // The most selective ranges first: few members, punctuation rather than letters, digits or blanks, narrow.
  const common = (c: number): boolean =>
    (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 32 || c === 9 || c === 10;
  const weight = (c: number): number => (common(c) ? 16 : 1);
  const score = (c: CharCondition): number => {
    let w = 0;
    c.table.forEach((x, ch) => {
      if (x) w += weight(ch);
    });
    const len = c.single?.length ?? 1;
    return (w * (c.hi - c.lo + 1)) / (len * len);
  };
  const ranges = candidates
    .map((c) => ({ c, s: score(c) }))
    .sort((a, b) => a.s - b.s)
    .slice(0, MAX_RANGES)
    .map((x) => x.c);
  // Skip ahead with the (at most two) most selective conditions; check the other fixed ones at each position.
  const ranked = [...fixed.filter((c) => !c.wide), ...ranges].map((c) => ({ c, s: score(c) })).sort((a, b) => a.s - b.s);
  const jump = ranked
    .filter((x, i) => i === 0 || x.s <= MAX_JUMP_SCORE)
    .slice(0, MAX_JUMPS)
    .map((x) => x.c);
  return { boundary, fixed, ranges, jump, check: fixed.filter((c) => !jump.includes(c)) };
}

const isWord = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;

/**
 * The first position at or after `from` and before `limit` where `c`'s character may sit, or
 * NONE. (`limit` <= text length.)
 */
export function nextMember(c: CharCondition, text: string, from: number, limit: number): number {
  const table = c.table;
  const wide = c.wide;
  for (let j = from; j < limit; j++) {
    const x = text.charCodeAt(j);
    if (x < 128 ? table[x] === 1 : wide) return j;
  }
  return NONE;
}

export const NONE = 0x7fffffff;

/**
 * Per jump condition, what a scan learned: the first member at or after `from` is `at`, or, when
 * `at` is -1, there is none in [from, to). Reused while a rule's scan moves forward.
 */
export class JumpState {
  readonly from = new Int32Array(MAX_JUMPS);
  readonly at = new Int32Array(MAX_JUMPS);
  readonly to = new Int32Array(MAX_JUMPS);
  /** For the member `runAt[k]`: the earliest position r such that text[r, runAt[k]) is all `before` characters. */
  readonly runAt = new Int32Array(MAX_JUMPS);
  readonly runStart = new Int32Array(MAX_JUMPS);
  /** Forgets everything (a new text or rule). */
  reset(): this {
    this.from.fill(-1);
    this.at.fill(-1);
    this.to.fill(-1);
    this.runAt.fill(-1);
    return this;
  }
}

/** The first member of `c` (the `k`-th jump condition) at or after `x`, looking at least up to `limit` (<= text length); NONE when there is none before `limit`. */
export function nextJump(c: CharCondition, k: number, st: JumpState, text: string, x: number, limit: number): number {
  const from = st.from[k]!;
  const at = st.at[k]!;
  let start = x;
  if (x >= from && from >= 0) {
    if (at >= 0) {
      if (x <= at) return at;
    } else {
      const to = st.to[k]!;
      if (limit <= to) return NONE;
      if (x < to) start = to;
    }
  }
  st.from[k] = x;
  if (c.single !== undefined) {
    const j = text.indexOf(c.single, start);
    st.at[k] = j;
    if (j < 0) {
      st.to[k] = text.length;
      return NONE;
    }
    return j;
  }
  const j = nextMember(c, text, start, limit);
  if (j === NONE) {
    st.at[k] = -1;
    st.to[k] = limit;
  } else st.at[k] = j;
  return j;
}

/**
 * The earliest position from which a match can reach the `k`-th jump condition's character at
 * `h`: the characters before it in the match are all `before` characters, and the match starts
 * at most `hi` before it.
 */
export function runStartBefore(c: CharCondition, k: number, st: JumpState, text: string, h: number): number {
  if (st.runAt[k] === h) return st.runStart[k]!;
  const { table, wide } = c.before;
  const floor = Math.max(0, h - c.hi);
  let r = h;
  while (r > floor) {
    const x = text.charCodeAt(r - 1);
    if (x < 128 ? table[x] === 0 : !wide) break;
    r--;
  }
  st.runAt[k] = h;
  st.runStart[k] = r;
  return r;
}

/** A `\b` at `q`: a word character on exactly one side. */
function atWordBoundary(text: string, q: number): boolean {
  const before = q > 0 && isWord(text.charCodeAt(q - 1));
  const after = q < text.length && isWord(text.charCodeAt(q));
  return before !== after;
}

/** Every character class in `list` holds at its fixed offset from `q`. */
function classesHoldAt(list: readonly CharCondition[], text: string, q: number): boolean {
  for (let k = 0; k < list.length; k++) {
    const c = list[k]!;
    const j = q + c.lo;
    if (j >= text.length) return false;
    const x = text.charCodeAt(j);
    if (x < 128 ? c.table[x] === 0 : !c.wide) return false;
  }
  return true;
}

/** The boundary and `check` conditions at `q` (the `jump` ones are the caller's). */
export function passesChecks(f: StartFilter, text: string, q: number): boolean {
  return (!f.boundary || atWordBoundary(text, q)) && classesHoldAt(f.check, text, q);
}

/**
 * False when the regex cannot match at `q` in `text` (true: it may), by the boundary and the fixed
 * conditions: for a position a lead string or a keyword already marks as a start. The range
 * conditions are left to the regex there: scanning their offset ranges at each such position cost
 * more than the failed attempts it saved (they serve to skip ahead over windows: `jump`).
 */
export function mayStartAt(f: StartFilter, text: string, q: number): boolean {
  return (!f.boundary || atWordBoundary(text, q)) && classesHoldAt(f.fixed, text, q);
}

const MAX_LEADS = 64;
const MAX_LEAD_LENGTH = 12;

/** The ASCII character a single-character atom stands for (lower-cased with `fold`), or undefined. */
function literalChar(src: string, fold: boolean): string | undefined {
  let ch: string | undefined;
  if (src.length === 1 && src !== '.') ch = src;
  else if (src.length === 2 && src[0] === '\\' && /[^A-Za-z0-9]/.test(src[1]!)) ch = src[1];
  if (ch === undefined || ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) >= 0x7f) return undefined;
  return fold ? ch.toLowerCase() : ch;
}

/** Most characters a class may stand for to be spelled out as that many lead strings. */
const MAX_LEAD_CLASS = 8;
/**
 * A class is spelled out only this close to the start of a lead (where a lead would otherwise be
 * too short to use), and the leads it makes are cut at CLASS_LEAD_LENGTH characters: every string
 * is a path in the keyword automaton, whose table the walk reads for every character.
 */
const CLASS_LEAD_DEPTH = 2;
const CLASS_LEAD_LENGTH = 4;

/**
 * The printable ASCII characters (lower-cased with `fold`, distinct) a one-character atom such as
 * `[ ,;]` or `\x60` stands for, or undefined when it may stand for more than MAX_LEAD_CLASS of
 * them, or for any other code unit.
 */
function classChars(src: string, fold: boolean): string[] | undefined {
  const { table, wide } = charSet(src, fold);
  if (wide) return undefined;
  const out = new Set<string>();
  for (let c = 0; c < 128; c++) {
    if (table[c] !== 1) continue;
    if (c < 0x20 || c >= 0x7f) return undefined;
    out.add(fold ? String.fromCharCode(c).toLowerCase() : String.fromCharCode(c));
    if (out.size > MAX_LEAD_CLASS) return undefined;
  }
  return out.size > 0 ? [...out] : undefined;
}

/**
 * Strings (printable ASCII) one of which every match starts with; undefined when there is no such
 * set of strings of at least two characters. Lookarounds and `\b` are skipped (they consume
 * nothing); a character class of a few printable characters stands for each of them. With `fold`
 * (a case-insensitive regex) the strings are lower-case and compared case-insensitively; without
 * it they are as the regex writes them and compared exactly (a case-sensitive `KEY` starts no
 * match at `key`).
 */
export function leadLiterals(root: RegexNode, fold = true): string[] | undefined {
  let overflow = false;
  // Every string the node list can start with, up to the first atom that is not one literal
  // character (or a short class near the start), and at most `limit` characters long.
  function lits(list: readonly RegexNode[], depth: number, limit = MAX_LEAD_LENGTH): string[] {
    if (overflow) return [''];
    if (list.length === 0 || depth >= limit) return [''];
    const [head, ...rest] = list as [RegexNode, ...RegexNode[]];
    switch (head.t) {
      case 'assert':
        return lits(rest, depth, limit);
      case 'group':
        return lits([head.body, ...rest], depth, limit);
      case 'seq':
        return lits([...head.items, ...rest], depth, limit);
      case 'alt': {
        const out = new Set<string>();
        for (const item of head.items) for (const s of lits([item, ...rest], depth, limit)) out.add(s);
        if (out.size > MAX_LEADS) overflow = true;
        return [...out];
      }
      case 'char': {
        const one = literalChar(head.src, fold);
        if (one !== undefined) return lits(rest, depth + 1, limit).map((s) => one + s);
        const chars = depth < CLASS_LEAD_DEPTH ? classChars(head.src, fold) : undefined;
        if (chars === undefined) return [''];
        const tails = lits(rest, depth + 1, Math.min(limit, CLASS_LEAD_LENGTH));
        if (chars.length * tails.length > MAX_LEADS) {
          overflow = true;
          return [''];
        }
        return chars.flatMap((c) => tails.map((s) => c + s));
      }
      case 'quant': {
        if (head.min === 1 && head.max === 1) return lits([head.body, ...rest], depth, limit);
        if (head.min === 0 && head.max === 1) {
          const out = new Set([...lits(rest, depth, limit), ...lits([head.body, ...rest], depth, limit)]);
          if (out.size > MAX_LEADS) overflow = true;
          return [...out];
        }
        if (head.min >= 1) return lits([head.body], depth, limit);
        return [''];
      }
    }
  }
  const out = lits([root], 0);
  if (overflow || out.length === 0 || out.some((s) => s.length < 2)) return undefined;
  // Drop strings that have another one as a prefix (the shorter one already marks the start).
  const sorted = [...new Set(out)].sort();
  return sorted.filter((s, i) => !sorted.slice(0, i).some((t) => s.startsWith(t)));
}
