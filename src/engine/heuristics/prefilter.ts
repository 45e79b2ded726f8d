// Literal prefilter for the heuristic rules: from each pattern, the literal strings that any match
// must contain and an upper bound on how much text a match can examine (both derived from the
// regex itself, never written by hand), and one Aho-Corasick pass per text that tells which of
// those literals occur and where. A rule's regex runs only if every one of its required literal
// sets has a member in the text, and then only in windows around the occurrences — so a 64 KB
// field costs one linear scan plus a few short regex runs.
//
// Soundness: the analysis only ever drops information. Anything it does not understand (classes
// larger than a few characters, back-references, optional or repeated parts) becomes "no
// constraint", and a pattern it cannot parse gets no prefilter at all (its regex runs on the whole
// text). Keywords are matched with folding — ASCII letters to lower case, newline to space, double
// quote to single quote — on both sides, which can only report more occurrences, never fewer
// (without the `u` flag, the `i` flag only folds ASCII letters onto each other).
// The scanned variants contain no whitespace but single spaces and single newlines (normalisation
// collapses every run), so `\s`, `\s+` and `\s*` are read as exactly one space (or nothing, for
// `\s*`): literals keep their spaces ("rm -r") and the length bound stays finite.
import { keywordWalker, type KeywordWalker } from '../secrets/keyword-walk';

/** Info about a regex node. */
interface Info {
  /** Every string the node can match (folded as above), when there are at most MAX_EXACT of them. */
  readonly exact: readonly string[] | null;
  /** Conjunction of disjunctions: any match contains at least one string of every set. */
  readonly and: readonly (readonly string[])[];
  /** Upper bound of the text the node examines (match plus lookarounds), Infinity if unbounded. */
  readonly max: number;
  /** The node is exactly `\s`: in a variant it matches one " " or "\n", and so does any repetition. */
  readonly space?: true;
  /**
   * When not exact: strings one of which every match starts with ('' among them: the start is
   * unknown), computed on demand (only the pattern's own start is ever asked for).
   */
  readonly prefix?: () => readonly string[] | null;
}

const MAX_EXACT = 32;
/** Most strings a match-start set may have. */
const MAX_LEADS = 64;
const MIN_KEYWORD = 3;
/**
 * Shorter keywords are allowed when they contain punctuation and are not common in code and prose:
 * two characters with at least one of them punctuation (`$'`, `![`, `\x`), or one rare character.
 */
const SHORT_OK = /^(?:[^a-z0-9\s][^\s]|[a-z0-9][^a-z0-9\s]|[`^%$~\\])$/;
/** Keywords are cut to this many characters (a prefix of a required literal is required too). */
const MAX_KEYWORD = 8;
const MAX_SETS_PER_RULE = 3;
/** A keyword that occurs in nearly every English text: one of the most frequent short words or pieces (`the `, ` th`, `is `). */
const everywhere = (k: string): boolean => /^ ?(?:the|th|to|of|and|an|a|in|is|it|at|as|on|be|by|or) ?$/.test(k);
/** Pseudo-keyword for "the text contains a non-ASCII character" (the automaton is ASCII-only). */
export const NON_ASCII = '\u0080';

const info = (exact: readonly string[] | null, and: readonly (readonly string[])[], max: number): Info => ({ exact, and, max });
const ONE = info(null, [], 1);
const SPACE: Info = { exact: [' '], and: [], max: 1, space: true };
const EMPTY = info([''], [], 0);
const NEEDS_NON_ASCII = info(null, [[NON_ASCII]], 1);

const uniq = (xs: readonly string[]): string[] => [...new Set(xs)];
const goodKeyword = (s: string): boolean => s === NON_ASCII || (s.trim().length > 0 && (s.length >= MIN_KEYWORD || SHORT_OK.test(s)));
const good = (set: readonly string[] | null): set is readonly string[] => !!set && set.length > 0 && set.every(goodKeyword);
const toAnd = (x: Info): readonly (readonly string[])[] => (x.exact ? (good(x.exact) ? [x.exact] : []) : x.and);
const prefixOf = (x: Info): readonly string[] | null => x.exact ?? (x.prefix ? x.prefix() : null);
/** `f`, evaluated once, on first call. */
function once<T>(f: () => T): () => T {
  let done = false;
  let v: T;
  return () => {
    if (!done) {
      v = f();
      done = true;
    }
    return v;
  };
}

function lit(ch: string): Info {
  if (ch.charCodeAt(0) >= 128) return NEEDS_NON_ASCII;
  return info([canonicalChar(ch)], [], 1);
}

/**
 * At most MAX_LEADS match starts, cut to MAX_KEYWORD characters and shorter if need be (a prefix
 * of a start is one too); null if none. Only the start of something that is not exact is cut,
 * and seq never extends a start past such an item.
 */
function fewerStarts(starts: readonly string[]): string[] | null {
  let out = uniq(starts.map((x) => x.slice(0, MAX_KEYWORD)));
  for (let len = Math.max(...out.map((x) => x.length)) - 1; out.length > MAX_LEADS && len > 0; len--)
    out = uniq(out.map((x) => x.slice(0, len)));
  return out.length > 0 && out.length <= MAX_LEADS ? out : null;
}

function product(a: readonly string[], b: readonly string[], limit = MAX_EXACT): string[] | null {
  if (a.length * b.length > limit) return null;
  const out: string[] = [];
  for (const x of a) for (const y of b) out.push(x + y);
  // Members of each side are distinct, so with one member on a side so are the products.
  return a.length === 1 || b.length === 1 ? out : uniq(out);
}

/**
 * Selectivity of a literal set for choosing among alternatives: the length of its shortest member,
 * much less if a member is (or is made of) a common word or punctuation that occurs everywhere.
 */
const COMMON = new Set([
  'the',
  'and',
  'for',
  'from',
  'with',
  'this',
  'that',
  'you',
  'your',
  'not',
  'all',
  'any',
  'are',
  'was',
  'were',
  'will',
  'can',
  'has',
  'have',
  'been',
  'but',
  'get',
  'set',
  'new',
  'run',
  'use',
  'file',
  'code',
  'key',
  'con',
  'cat',
  'env',
  'one',
  'our',
  'out',
  'its',
  'his',
  'her',
  'who',
  'how',
  'what',
  'when',
  'then',
  'than',
  'into',
  'more',
  'some',
  'also',
  'true',
  'false',
  'null',
  'return',
  'const',
  'let',
  'var',
  'function',
  'type',
  'string',
  'value',
  'data',
  'name',
  'path',
  'text',
  'user',
  'never',
  'only',
  'must',
  'should',
  'now',
  'may',
  'make',
  'like',
  'just',
  'over',
  'such',
  'each',
  'per',
  'via',
  'see',
]);
function rank(set: readonly string[]): number {
  let worst = Infinity;
  for (const k of set) {
    const words = k.split(/[^a-z0-9_]+/).filter(Boolean);
    const letters = words.join('').length;
    const common = words.length > 0 && words.every((w) => COMMON.has(w));
    worst = Math.min(worst, common || letters === 0 ? Math.min(k.length, 2) : Math.min(k.length, letters + 2));
  }
  return worst;
}

function bestSet(x: Info): readonly string[] | null {
  let best: readonly string[] | null = null;
  for (const set of toAnd(x)) if (good(set) && (!best || rank(set) > rank(best))) best = set;
  return best;
}

function seq(items: readonly Info[]): Info {
  let run: string[] = [''];
  let allExact = true;
  let max = 0;
  const ands: (readonly string[])[] = [];
  const flush = () => {
    if (good(run)) ands.push(run);
  };
  // How every match starts: the exact items from the start, then the first other item's start.
  const prefix = once(() => {
    let start: string[] = [''];
    for (const it of items) {
      const p = prefixOf(it);
      const next = p && product(start, p, MAX_LEADS);
      if (next) start = next;
      if (!next || !it.exact) break;
    }
    return start;
  });
  for (const it of items) {
    max += it.max;
    if (it.exact) {
      const p = product(run, it.exact);
      if (p) {
        run = p;
        continue;
      }
      allExact = false;
      flush();
      run = [...it.exact];
      continue;
    }
    allExact = false;
    flush();
    run = [''];
    ands.push(...it.and);
  }
  if (allExact) return info(run, [], max);
  flush();
  return { exact: null, and: ands, max, prefix };
}

function alt(branches: readonly Info[]): Info {
  const max = Math.max(...branches.map((b) => b.max));
  if (branches.every((b) => b.exact)) {
    const all = uniq(branches.flatMap((b) => b.exact!));
    if (all.length <= MAX_EXACT) return info(all, [], max);
  }
  const prefix = once(() => {
    const starts = branches.map(prefixOf);
    return starts.every((p) => p !== null) ? fewerStarts(starts.flatMap((p) => p!)) : null;
  });
  const or: string[] = [];
  for (const b of branches) {
    const best = bestSet(b);
    if (!best) return { exact: null, and: [], max, prefix };
    or.push(...best);
  }
  return { exact: null, and: [uniq(or)], max, prefix };
}

function repeat(x: Info, min: number, maxCount: number): Info {
  if (maxCount === 0) return EMPTY;
  if (x.space) return min === 0 ? info(['', ' '], [], 1) : SPACE;
  const max = x.max === 0 ? 0 : x.max * maxCount;
  if (min === 0)
    return maxCount === 1 && x.exact && x.exact.length < MAX_EXACT
      ? info(uniq([...x.exact, '']), [], max)
      : {
          exact: null,
          and: [],
          max,
          prefix: once(() => {
            const p = prefixOf(x);
            return p ? uniq([...p, '']) : [''];
          }),
        };
  if (min === 1 && maxCount === 1) return x;
  if (x.exact && min === maxCount && min <= 4) {
    let acc: string[] | null = [''];
    for (let k = 0; k < min && acc; k++) acc = product(acc, x.exact);
    if (acc) return info(acc, [], max);
  }
  return { exact: null, and: toAnd(x), max, prefix: () => prefixOf(x) };
}

class Parser {
  private i = 0;
  /** Examined-length bound of each capture group, by group number (for back-references). */
  private readonly groups: number[] = [];
  private readonly names = new Map<string, number>();
  /** The alternatives of the alternation parsed last. */
  private lastBranches: Info[] = [];
  /** The alternatives inside a `(?:…)` that spans the whole pattern, if it does. */
  private wholeGroup: Info[] | null = null;
  constructor(private readonly s: string) {}

  parse(): Info {
    const result = this.alt();
    if (this.i !== this.s.length) throw new Error(`unexpected \`${this.s[this.i]}\` at ${this.i}`);
    return result;
  }

  /**
   * The pattern and, when it is an alternation at the top (or one non-capturing group around
   * one), each alternative as topLevelAlternatives (rules.ts) cuts them; no parse of its own.
   */
  parseAlternatives(): { whole: Info; alternatives: Info[] | null } {
    const whole = this.parse();
    const top = this.lastBranches;
    return { whole, alternatives: top.length > 1 ? top : this.wholeGroup && this.wholeGroup.length > 1 ? this.wholeGroup : null };
  }

  private alt(): Info {
    const branches = [this.seq()];
    while (this.s[this.i] === '|') {
      this.i++;
      branches.push(this.seq());
    }
    this.lastBranches = branches;
    return branches.length === 1 ? branches[0]! : alt(branches);
  }

  private seq(): Info {
    const items: Info[] = [];
    while (this.i < this.s.length && this.s[this.i] !== '|' && this.s[this.i] !== ')') items.push(this.quant(this.atom()));
    return seq(items);
  }

  private atom(): Info {
    const c = this.s[this.i++]!;
    switch (c) {
      case '(': {
        let look = false;
        let capture = true;
        let name: string | undefined;
        if (this.s[this.i] === '?') {
          capture = false;
          const n = this.s[this.i + 1];
          if (n === ':') this.i += 2;
          else if (n === '=' || n === '!') {
            this.i += 2;
            look = true;
          } else if (n === '<' && (this.s[this.i + 2] === '=' || this.s[this.i + 2] === '!')) {
            this.i += 3;
            look = true;
          } else if (n === '<') {
            const e = this.s.indexOf('>', this.i);
            if (e < 0) throw new Error('bad group name');
            name = this.s.slice(this.i + 2, e);
            capture = true;
            this.i = e + 1;
          } else throw new Error('unsupported group');
        }
        const index = capture ? this.groups.push(Infinity) : 0;
        if (name !== undefined) this.names.set(name, index);
        const start = this.i;
        const inner = this.alt();
        if (this.s[this.i] !== ')') throw new Error('unbalanced parenthesis');
        this.i++;
        if (start === 3 && !capture && !look && this.i === this.s.length) this.wholeGroup = this.lastBranches;
        if (capture) this.groups[index - 1] = inner.max;
        // A lookaround consumes nothing but examines text: it counts towards the examined length.
        return look ? info([''], [], inner.max) : inner;
      }
      case '[':
        return this.cls();
      case '.':
        return ONE;
      case '^':
      case '$':
        return EMPTY;
      case '\\':
        return this.esc(false) as Info;
      case '*':
      case '+':
      case '?':
        throw new Error('nothing to repeat');
      default:
        return lit(c);
    }
  }

  private quant(atom: Info): Info {
    const c = this.s[this.i];
    let min: number;
    let max: number;
    if (c === '*') {
      min = 0;
      max = Infinity;
      this.i++;
    } else if (c === '+') {
      min = 1;
      max = Infinity;
      this.i++;
    } else if (c === '?') {
      min = 0;
      max = 1;
      this.i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(?:(,)(\d*))?\}/.exec(this.s.slice(this.i, this.i + 24));
      if (!m) return atom; // a literal `{`
      min = Number(m[1]);
      max = m[2] ? (m[3] ? Number(m[3]) : Infinity) : min;
      this.i += m[0].length;
    } else return atom;
    if (this.s[this.i] === '?') this.i++; // lazy
    return repeat(atom, min, max);
  }

  /** An escape; inside a class it returns the characters (or null for a large set). */
  private esc(inClass: boolean): Info | string[] | null {
    const c = this.s[this.i++];
    if (c === undefined) throw new Error('trailing backslash');
    const one = (ch: string) => (inClass ? [ch] : lit(ch));
    if (c === 's') return inClass ? [' '] : SPACE;
    if ('dDwWS'.includes(c)) return inClass ? null : ONE;
    if (c === 'b') return inClass ? ['\b'] : EMPTY;
    if (c === 'B') return inClass ? null : EMPTY;
    // A back-reference matches what its group matched: bounded by the group's bound.
    const backref = (n: number | undefined) =>
      inClass ? null : info(null, [], n !== undefined && n >= 1 && n <= this.groups.length ? this.groups[n - 1]! : Infinity);
    if (c >= '1' && c <= '9') {
      let d = c;
      while (/\d/.test(this.s[this.i] ?? '')) d += this.s[this.i++];
      return backref(Number(d));
    }
    if (c === 'k' && this.s[this.i] === '<') {
      const e = this.s.indexOf('>', this.i);
      const n = this.s.slice(this.i + 1, e);
      this.i = e + 1;
      return backref(this.names.get(n));
    }
    if (c === 'x' && /^[0-9a-fA-F]{2}/.test(this.s.slice(this.i, this.i + 2))) {
      const ch = String.fromCharCode(parseInt(this.s.slice(this.i, this.i + 2), 16));
      this.i += 2;
      return one(ch);
    }
    if (c === 'u' && /^[0-9a-fA-F]{4}/.test(this.s.slice(this.i, this.i + 4))) {
      const ch = String.fromCharCode(parseInt(this.s.slice(this.i, this.i + 4), 16));
      this.i += 4;
      return one(ch);
    }
    if (c === 'c' && /[A-Za-z]/.test(this.s[this.i] ?? '')) {
      const ch = String.fromCharCode(this.s.charCodeAt(this.i) % 32);
      this.i++;
      return one(ch);
    }
    const controls: Record<string, string> = { n: '\n', r: '\r', t: '\t', f: '\f', v: '\v', '0': '\0' };
    return one(controls[c] ?? c);
  }

  private cls(): Info {
    let negated = false;
    if (this.s[this.i] === '^') {
      negated = true;
      this.i++;
    }
    const chars = new Set<string>();
    let big = false;
    let ascii = false;
    const add = (code: number) => {
      if (code >= 128) big = true;
      else {
        ascii = true;
        chars.add(canonicalChar(String.fromCharCode(code)));
      }
    };
    while (this.i < this.s.length && this.s[this.i] !== ']') {
      let first: string[] | null;
      if (this.s[this.i] === '\\') {
        this.i++;
        first = this.esc(true) as string[] | null;
      } else first = [this.s[this.i++]!];
      if (first && first.length === 1 && this.s[this.i] === '-' && this.s[this.i + 1] !== ']' && this.i + 1 < this.s.length) {
        this.i++;
        let last: string[] | null;
        if (this.s[this.i] === '\\') {
          this.i++;
          last = this.esc(true) as string[] | null;
        } else last = [this.s[this.i++]!];
        if (!last || last.length !== 1) {
          big = true;
          ascii = true;
          continue;
        }
        const from = first[0]!.charCodeAt(0);
        const to = last[0]!.charCodeAt(0);
        if (from >= 128 && to >= 128) big = true;
        else if (to - from > 8) {
          big = true;
          ascii = true;
        } else for (let k = from; k <= to; k++) add(k);
        continue;
      }
      if (!first) {
        big = true;
        ascii = true;
      } else for (const ch of first) add(ch.charCodeAt(0));
    }
    if (this.s[this.i] !== ']') throw new Error('unterminated class');
    this.i++;
    if (!negated && !ascii && big) return NEEDS_NON_ASCII; // only non-ASCII members
    if (negated || big || chars.size === 0 || chars.size > 6) return ONE;
    return info([...chars], [], 1);
  }
}

export interface PatternAnalysis {
  /** Literal sets every match contains (lower-case); empty = no prefilter. The first is the most selective. */
  readonly literals: string[][];
  /**
   * Keywords one of which every match starts with (lower-case, folded as keywords are; zero-width
   * assertions may come first), or null when unknown or too common to be worth looking for.
   */
  readonly leads: string[] | null;
  /** Upper bound of the text one match examines, Infinity when unbounded or unknown. */
  readonly maxLength: number;
}

/**
 * The automaton folds a few characters onto one symbol (ASCII letters onto lower case, newline onto
 * space, double onto single quote), so a keyword stands for all its folded spellings. That only
 * ever makes the prefilter say "maybe" more often: sound, and it keeps the automaton small.
 */
const canonicalKeyword = (k: string): string => (k.indexOf('\n') < 0 && k.indexOf('"') < 0 ? k : k.replace(/\n/g, ' ').replace(/"/g, "'"));
function canonicalChar(ch: string): string {
  return ch === '\n' ? ' ' : ch === '"' ? "'" : ch.toLowerCase();
}

/** The longest substring (at least MIN_KEYWORD long) of every member of a set of two or more, if any. */
function commonSubstring(set: readonly string[]): string | undefined {
  if (set.length < 2 || set.includes(NON_ASCII)) return undefined;
  const shortest = set.reduce((a, b) => (b.length < a.length ? b : a));
  for (let len = shortest.length; len >= MIN_KEYWORD; len--) {
    for (let i = 0; i + len <= shortest.length; i++) {
      const t = shortest.slice(i, i + len);
      if (t.trim().length === len && set.every((x) => x.includes(t))) return t;
    }
  }
  return undefined;
}

/** Required literals and the examined-length bound of a RegExp source (without inline flags). */
export function analyzePattern(source: string, opts: { uncollapsed?: boolean } = {}): PatternAnalysis {
  let result: Info;
  try {
    result = new Parser(source).parse();
  } catch {
    return { literals: [], leads: null, maxLength: Infinity };
  }
  return analysisOf(result, opts.uncollapsed === true);
}

/**
 * For text whose whitespace is not collapsed (where a literal's one space may stand for a run):
 * the literal's best part without whitespace (longest, if it can be, of those that are not
 * everywhere), or '' when it has no usable part.
 */
function partWithoutSpace(k: string): string {
  if (k === NON_ASCII) return k;
  const parts = k
    .split(' ')
    .filter(goodKeyword)
    .sort((a, b) => Number(everywhere(a)) - Number(everywhere(b)) || b.length - a.length);
  return parts[0] ?? '';
}

/**
 * analyzePattern of the pattern and of each of its top-level alternatives (as topLevelAlternatives
 * in rules.ts cuts them; null if it has none), from one parse.
 */
export function analyzeAlternatives(source: string): { whole: PatternAnalysis; alternatives: PatternAnalysis[] | null } {
  let parsed: { whole: Info; alternatives: Info[] | null };
  try {
    parsed = new Parser(source).parseAlternatives();
  } catch {
    return { whole: { literals: [], leads: null, maxLength: Infinity }, alternatives: null };
  }
  return { whole: analysisOf(parsed.whole), alternatives: parsed.alternatives && parsed.alternatives.map((x) => analysisOf(x)) };
}

function analysisOf(result: Info, uncollapsed = false): PatternAnalysis {
  const sets = toAnd(result)
    .filter(good)
    .map((set) => (uncollapsed ? set.map((s) => partWithoutSpace(canonicalKeyword(s))) : set))
    .filter((set) => set.every((s) => s.length > 0))
    .map((set) => {
      const cut = uniq(set.map((s) => canonicalKeyword(s).slice(0, MAX_KEYWORD)));
      // A substring every member contains is required too: one keyword instead of many.
      const common = commonSubstring(cut);
      if (common) return [common];
      // If a shorter member is a substring of a longer one, the shorter one alone suffices.
      const sorted = cut.sort((a, b) => a.length - b.length);
      return sorted.filter((s, k) => !sorted.slice(0, k).some((t) => s.includes(t)));
    });
  sets.sort((a, b) => rank(b) - rank(a) || a.length - b.length);
  const seen = new Set<string>();
  const literals: string[][] = [];
  for (const s of sets) {
    // A set with a member that occurs everywhere ("the ") filters little and costs a keyword hit
    // at every occurrence: it is kept only when there is nothing better.
    if (literals.length > 0 && s.some(everywhere)) continue;
    const key = s.join('\u0000');
    if (seen.has(key)) continue;
    seen.add(key);
    literals.push(s);
    if (literals.length === MAX_SETS_PER_RULE) break;
  }
  const starts = prefixOf(result);
  const leads = starts && uniq(starts.map((s) => canonicalKeyword(s).slice(0, MAX_KEYWORD)));
  return { literals, leads: leads && leads.every((k) => goodKeyword(k) && !everywhere(k)) ? leads : null, maxLength: result.max };
}

/** The literal sets a pattern's matches must contain (see analyzePattern). */
export function requiredLiterals(source: string): string[][] {
  return analyzePattern(source).literals;
}

/** At most this many positions are kept per keyword; beyond, the keyword counts as dense. */
export const MAX_POSITIONS = 64;
/** A keyword that starts matches (KeywordIndex `leads`) keeps up to this many positions. */
export const MAX_LEAD_POSITIONS = 4096;

/**
 * Where keywords occurred in one text: which ones, and their end offsets. Offsets are kept per
 * automaton state (one entry per occurrence, however many keywords end there), up to the state's
 * cap: MAX_LEAD_POSITIONS if a keyword ending there starts matches (KeywordIndex `leads`), else
 * MAX_POSITIONS; beyond, its keywords count as dense.
 */
export class KeywordHits {
  readonly found: Uint8Array;
  private readonly touched: number[] = [];
  /** Per state, the end offsets where the scan reached it (up to its cap + 1). */
  private readonly at: (number[] | undefined)[];
  private readonly visited: number[] = [];
  constructor(private readonly index: KeywordIndex) {
    this.found = new Uint8Array(index.keywords.length);
    this.at = new Array<number[] | undefined>(index.stateCap.length).fill(undefined);
  }
  /** Keyword k occurs (for the one no automaton state stands for: NON_ASCII, which has no positions). */
  mark(k: number): void {
    if (this.found[k] === 0) {
      this.found[k] = 1;
      this.touched.push(k);
    }
  }
  /** The keywords `outList[outStart[t] .. outStart[t + 1])` end at `end`. */
  hitState(t: number, end: number): void {
    const p = this.at[t];
    if (p) {
      if (p.length <= this.index.stateCap[t]!) p.push(end);
      return;
    }
    this.at[t] = [end];
    this.visited.push(t);
    const { outStart, outList } = this.index;
    for (let j = outStart[t]!, e = outStart[t + 1]!; j < e; j++) this.mark(outList[j]!);
  }
  reset(): void {
    for (const k of this.touched) this.found[k] = 0;
    this.touched.length = 0;
    for (const t of this.visited) this.at[t] = undefined;
    this.visited.length = 0;
  }
  /** End offsets of all occurrences of these keywords, or null if one is too frequent (more than MAX_POSITIONS) or not positional. */
  ends(ids: readonly number[]): number[] | null {
    const out: number[] = [];
    const { stateStart, stateList } = this.index;
    for (const k of ids) {
      if (k === this.index.nonAsciiId) return null;
      let count = 0;
      for (let j = stateStart[k]!, e = stateStart[k + 1]!; j < e; j++) {
        const p = this.at[stateList[j]!];
        if (!p) continue;
        count += p.length;
        if (count > MAX_POSITIONS) return null;
        for (const x of p) out.push(x);
      }
    }
    return out;
  }
  /**
   * The start offsets of all occurrences of these keywords, in ascending order, or null if the
   * positions of one are incomplete (it is not kept as a lead, or occurs more than MAX_LEAD_POSITIONS times in a state).
   */
  starts(ids: readonly number[]): LeadStarts | null {
    const lists: number[][] = [];
    const lengths: number[] = [];
    const { stateStart, stateList, stateCap } = this.index;
    for (const k of ids) {
      if (this.index.keepOf[k] !== MAX_LEAD_POSITIONS) return null;
      for (let j = stateStart[k]!, e = stateStart[k + 1]!; j < e; j++) {
        const t = stateList[j]!;
        const p = this.at[t];
        if (!p) continue;
        if (p.length > stateCap[t]!) return null;
        lists.push(p);
        lengths.push(this.index.keywords[k]!.length);
      }
    }
    return new LeadStarts(lists, lengths);
  }
}

/** Start offsets merged from keywords' sorted end offsets, read in ascending order (each once). */
export class LeadStarts {
  /** How many occurrences there are in all (an offset where several keywords start counts for each). */
  readonly count: number;
  private readonly at: number[];
  private last = -1;
  constructor(
    private readonly lists: readonly number[][],
    private readonly lengths: readonly number[],
  ) {
    this.count = lists.reduce((n, l) => n + l.length, 0);
    this.at = lists.map(() => 0);
  }
  /** The next start offset, or -1 when there are no more. */
  next(): number {
    for (;;) {
      let best = -1;
      let from = -1;
      for (let j = 0; j < this.lists.length; j++) {
        const list = this.lists[j]!;
        const i = this.at[j]!;
        if (i >= list.length) continue;
        const q = list[i]! - this.lengths[j]!;
        if (best < 0 || q < best) {
          best = q;
          from = j;
        }
      }
      if (from < 0) return -1;
      this.at[from]!++;
      if (best !== this.last) {
        this.last = best;
        return best;
      }
    }
  }
}

/** The automaton reads at most this many symbols (symbol 0: any character no keyword contains). */
const MAX_SYMBOLS = 64;
/** Released KeywordHits kept for reuse per index. */
const MAX_SPARE_HITS = 4;
/** Texts at least this long are walked in WebAssembly (secrets/keyword-walk.ts) when it is available. */
export const WASM_WALK_FROM = 2048;
const HAS_NON_ASCII = /[^\x00-\x7f]/;
const ENCODER = new TextEncoder();
/** Texts up to this long are checked by encoding them into a reused buffer. */
const ENCODE_CHECK_MAX = 1 << 20;
let encoded = new Uint8Array(0);

/**
 * True when every code unit of `text` is below 128. (UTF-8 takes one byte for each of those and
 * more for any other, so the encoder fills a buffer of text.length bytes only when all are.)
 */
export function isAscii(text: string): boolean {
  if (text.length > ENCODE_CHECK_MAX) return !HAS_NON_ASCII.test(text);
  if (encoded.length < text.length) encoded = new Uint8Array(Math.max(text.length, 4096));
  return ENCODER.encodeInto(text, encoded.subarray(0, text.length)).read === text.length;
}

/**
 * Aho-Corasick automaton over ASCII keywords (letters folded to lower case, newline onto space,
 * double onto single quote), as a full transition table over a power-of-two alphabet, in the layout
 * of the secret scanner's automaton so that its WebAssembly walk can run it: `delta[(state <<
 * shift) | symbol]` is the next state `t` as `t << shift`, or `~(t << shift)` when keywords end in
 * `t`. States are numbered breadth-first, so the states a walk spends most time in (the root and
 * its near children) share a few cache lines. Scanning marks which keywords occur in a text, and where.
 */
export class KeywordIndex {
  readonly keywords: readonly string[];
  /** Id of the NON_ASCII pseudo-keyword, -1 if no rule needs it. */
  readonly nonAsciiId: number;
  /** Symbol of each ASCII character (0 = a character no keyword contains). */
  readonly classOf = new Uint8Array(128);
  /** Code units >= 128 are in no keyword: symbol 0, back to the root. */
  readonly kelvinClass = 0;
  /** log2 of the alphabet size. */
  readonly shift: number;
  readonly delta: Int32Array;
  /** outStart[state] … outStart[state + 1]: the keyword ids ending at a state, in outList. */
  readonly outStart: Int32Array;
  readonly outList: Int32Array;
  /** Positions kept per keyword: MAX_LEAD_POSITIONS for the `leads`, else MAX_POSITIONS. */
  readonly keepOf: Uint16Array;
  /** Per state, the most positions one of its keywords keeps. */
  readonly stateCap: Uint16Array;
  /** stateStart[k] … stateStart[k + 1]: the states keyword k ends in, in stateList. */
  readonly stateStart: Int32Array;
  readonly stateList: Int32Array;
  private readonly lengths: Uint8Array;
  private walker: KeywordWalker | null | undefined;
  private readonly spare: KeywordHits[] = [];

  /** `leads`: ids of keywords whose every position is wanted (where matches may start). */
  constructor(keywords: readonly string[], leads: Iterable<number> = []) {
    this.keywords = keywords;
    this.keepOf = new Uint16Array(keywords.length).fill(MAX_POSITIONS);
    for (const id of leads) this.keepOf[id] = MAX_LEAD_POSITIONS;
    this.nonAsciiId = keywords.indexOf(NON_ASCII);
    // Symbols: the characters the keywords use. Beyond MAX_SYMBOLS - 1, the characters used in
    // fewest keywords (never one of a keyword of one or two characters) share one symbol, so a
    // keyword with one of them also "occurs" where another of them stands: more occurrences, never
    // fewer (sound), and a table half the size.
    const uses = new Map<number, number>();
    for (const k of keywords) {
      if (k === NON_ASCII) continue;
      for (let i = 0; i < k.length; i++) {
        const c = k.charCodeAt(i);
        if (c >= 128) throw new Error(`keyword \`${k}\` is not ASCII`);
        // A character of a short keyword is never shared: each of its occurrences would be a hit.
        uses.set(fold(c), k.length <= 2 ? Infinity : (uses.get(fold(c)) ?? 0) + 1);
      }
    }
    const byUse = [...uses.keys()].sort((a, b) => uses.get(b)! - uses.get(a)! || a - b);
    byUse.forEach((c, i) => {
      this.classOf[c] = Math.min(i + 1, MAX_SYMBOLS - 1);
    });
    for (let c = 0; c < 128; c++) this.classOf[c] = this.classOf[fold(c)]!;
    const nsym = Math.min(byUse.length + 1, MAX_SYMBOLS);
    let shift = 0;
    while (1 << shift < nsym) shift++;
    this.shift = shift;
    const alpha = 1 << shift;
    // Trie in a flat table (-1 = no edge); the number of states is at most the total keyword length + 1.
    const cap = keywords.reduce((a, k) => a + (k === NON_ASCII ? 0 : k.length), 1);
    const trie = new Int32Array(cap * alpha).fill(-1);
    const ownEnd: number[][] = [];
    let n = 1;
    keywords.forEach((k, id) => {
      if (k === NON_ASCII) return;
      let st = 0;
      for (let i = 0; i < k.length; i++) {
        const e = st * alpha + this.classOf[k.charCodeAt(i)]!;
        if (trie[e] === -1) trie[e] = n++;
        st = trie[e]!;
      }
      (ownEnd[st] ??= []).push(id);
    });
    // Breadth-first numbering (the trie table rewritten in it as the states are reached); then
    // failure links (in that order, every state's failure target is done before it) turn the trie
    // into the full transition table, outputs following failure links.
    const next = new Int32Array(n * alpha);
    const out: number[][] = new Array<number[]>(n);
    const bfs = new Int32Array(n);
    const order = new Int32Array(n);
    let reached = 1;
    for (let h = 0; h < n; h++) {
      const st = order[h]!;
      out[h] = ownEnd[st] ? [...ownEnd[st]!] : [];
      for (let a = 0; a < alpha; a++) {
        const t = trie[st * alpha + a]!;
        if (t === -1) {
          next[h * alpha + a] = -1;
          continue;
        }
        bfs[t] = reached;
        order[reached++] = t;
        next[h * alpha + a] = bfs[t]!;
      }
    }
    const fail = new Int32Array(n);
    for (let a = 0; a < alpha; a++) {
      const t = next[a]!;
      if (t === -1) next[a] = 0;
      else fail[t] = 0;
    }
    const hasOut = new Uint8Array(n);
    hasOut[0] = out[0]!.length ? 1 : 0;
    for (let st = 1; st < n; st++) {
      const f = fail[st]!;
      if (out[f]!.length) out[st]!.push(...out[f]!);
      if (out[st]!.length) hasOut[st] = 1;
      for (let a = 0; a < alpha; a++) {
        const e = st * alpha + a;
        const t = next[e]!;
        if (t === -1) next[e] = next[f * alpha + a]!;
        else fail[t] = next[f * alpha + a]!;
      }
    }
    this.delta = next;
    for (let e = 0; e < n * alpha; e++) {
      const t = next[e]!;
      next[e] = hasOut[t] ? ~(t << shift) : t << shift;
    }
    this.outStart = new Int32Array(n + 1);
    const list: number[] = [];
    // A state's own keywords and those along its failure links are distinct (each shorter than the last).
    for (let st = 0; st < n; st++) {
      this.outStart[st] = list.length;
      for (const k of out[st]!) list.push(k);
    }
    this.outStart[n] = list.length;
    this.outList = Int32Array.from(list);
    this.stateCap = new Uint16Array(n);
    const statesOf: number[][] = keywords.map(() => []);
    for (let st = 0; st < n; st++) {
      for (let j = this.outStart[st]!; j < this.outStart[st + 1]!; j++) {
        const k = this.outList[j]!;
        this.stateCap[st] = Math.max(this.stateCap[st]!, this.keepOf[k]!);
        statesOf[k]!.push(st);
      }
    }
    this.stateStart = new Int32Array(keywords.length + 1);
    statesOf.forEach((l, k) => {
      this.stateStart[k + 1] = this.stateStart[k]! + l.length;
    });
    this.stateList = Int32Array.from(statesOf.flat());
    this.lengths = Uint8Array.from(keywords, (k) => (k === NON_ASCII ? 1 : k.length));
  }

  newHits(): KeywordHits {
    return new KeywordHits(this);
  }

  /** Cleared hits, reused when one was released (a 64 KB field's hits are not rebuilt from nothing on every call). */
  acquire(): KeywordHits {
    return this.spare.pop() ?? new KeywordHits(this);
  }
  /** Gives hits back for reuse; the caller must not use them afterwards. */
  release(hits: KeywordHits): void {
    hits.reset();
    if (this.spare.length < MAX_SPARE_HITS) this.spare.push(hits);
  }

  /**
   * Marks the keywords occurring in text (with the folding above) and their end offsets. `ascii`:
   * the caller knows the text has no code unit >= 128 (the NON_ASCII check is skipped).
   */
  scan(text: string, hits: KeywordHits = this.newHits(), ascii = false): KeywordHits {
    const n = text.length;
    if (n >= WASM_WALK_FROM) {
      this.walker ??= keywordWalker(this, this.lengths);
      if (this.walker) {
        const shift = this.shift;
        this.walker.walkSegments(text, (pairs, start, stop, offset) => {
          for (let h = start; h < stop; h += 2) hits.hitState(pairs[h + 1]! >> shift, pairs[h]! + offset);
        });
        if (this.nonAsciiId >= 0 && !ascii && !isAscii(text)) hits.mark(this.nonAsciiId);
        return hits;
      }
    }
    const { delta, classOf, shift } = this;
    let s = 0;
    let high = 0;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 128) {
        s = 0;
        high = 1;
        continue;
      }
      s = delta[s | classOf[c]!]!;
      if (s >= 0) continue;
      s = ~s;
      hits.hitState(s >> shift, i + 1);
    }
    if (high && this.nonAsciiId >= 0) hits.mark(this.nonAsciiId);
    return hits;
  }
}

const fold = (c: number): number => (c >= 65 && c <= 90 ? c + 32 : c === 10 ? 32 : c === 34 ? 39 : c);
