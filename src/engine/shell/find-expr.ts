// find's expression evaluated on the entries below its starting points, through the file-system
// port: which entries each action (-delete, -exec rm {} +, -print) may act on. Evaluation is
// three-valued: a test whose answer cannot be known here (an owner, a regex, an age too close to
// call before the command runs) may go either way, and an action counts for every entry it may
// reach, so a selection never holds less than what find would act on. Whatever cannot be modelled
// (an unknown primary, -L, -daystart, a word that is not literal) makes the parse fail: the caller
// then keeps its coarser reading (the whole start directory).
import type { ClockPort, FileFacts, FileSystemPort } from '../ports';
import type { WordValue } from './words';

/** What a test or action may return for one entry. */
interface Maybe {
  readonly t: boolean;
  readonly f: boolean;
}
const TRUE: Maybe = { t: true, f: false };
const FALSE: Maybe = { t: false, f: true };
const EITHER: Maybe = { t: true, f: true };
const known = (b: boolean): Maybe => (b ? TRUE : FALSE);
const either = (a: Maybe, b: Maybe): Maybe => ({ t: a.t || b.t, f: a.f || b.f });

/** Most entries listed below one start directory (as protection lists for `find -name`). */
export const MAX_FIND_LISTING = 50_000;
/** Most entries one action may select and still be checked one by one; more: the caller's coarse reading. */
export const MAX_FIND_SELECTED = 2000;
/**
 * How far the clock may move between the decision and the run: a Tier 3 approval waits up to
 * 5 minutes, and file times may come from a clock a few minutes off. An age test whose answer
 * changes within this margin of now counts as matching.
 */
export const FIND_CLOCK_MARGIN_MS = 10 * 60_000;

/** What an action does with the entries that reach it. */
export type FindActionKind = 'delete' | 'remove' | 'print' | 'print0' | 'prune' | 'other';

interface FindEntry {
  readonly path: string;
  /** The path as find prints it: the start directory as written, then the part below it. */
  readonly shown: string;
  /** The base name that -name matches. */
  readonly name: string;
  readonly depth: number;
  /** A symbolic link (find does not follow it: its own type, not its target's). */
  readonly link: boolean;
  readonly children: readonly string[];
  /** stat of the entry (undefined for a link, or when it cannot be inspected). */
  facts(): FileFacts | undefined;
}

/** What one evaluation knows besides the entry: which entries deleting actions may already have removed. */
interface EvalState {
  readonly gone: ReadonlySet<string>;
}

type Test = (e: FindEntry, s: EvalState) => Maybe;

type Expr =
  | { readonly op: 'and' | 'or' | 'comma'; readonly left: Expr; readonly right: Expr }
  | { readonly op: 'not'; readonly arg: Expr }
  | { readonly op: 'test'; readonly test: Test }
  | { readonly op: 'action'; readonly at: number; readonly kind: FindActionKind; readonly result: Maybe };

export interface FindExpression {
  readonly expr: Expr;
  readonly maxDepth: number;
  readonly minDepth: number;
  /** -depth, or -delete (which implies it): an entry's contents come before the entry, and -prune does nothing. */
  readonly depthFirst: boolean;
  /** Some test looks at more than names and types (times, sizes, emptiness, paths, owners…). */
  readonly beyondNames: boolean;
  /** The action at each word index. With no action but -prune, -print applies to the whole expression (index -1). */
  readonly actions: ReadonlyMap<number, FindActionKind>;
}

/** What find's file-system questions are answered with. */
export interface FindEnv {
  readonly fs: FileSystemPort;
  readonly clock?: ClockPort;
  /** Absolute, normalised forms of a path word (a -newer reference), empty when it cannot be resolved. */
  resolve(text: string): string[];
}

/** `-exec CMD … {} ;|+` starting at words[from] (CMD's index): CMD removes exactly the entry found (rm, rmdir, unlink). */
export function removesEachEntry(words: readonly WordValue[], from: number): boolean {
  const cmd = words[from];
  if (!cmd || cmd.dynamic || !/^(rm|rmdir|unlink)$/.test(cmd.text.replace(/^.*\//, ''))) return false;
  let braces = 0;
  for (let j = from + 1; j < words.length; j++) {
    const a = words[j]!;
    if (a.dynamic) return false;
    if (a.text === ';' || a.text === '+') return braces === 1;
    if (a.text === '{}') braces++;
    else if (!/^-[a-zA-Z]+$/.test(a.text) && a.text !== '--') return false;
  }
  return false;
}

// ------------------------------------------------------------------------------------------
// Parsing: find's grammar (! > -a > -o > ,) over the words after the start directories.

class ParseFailure extends Error {}

/** Options that only tune the walk; true wherever they stand. */
const HARMLESS_OPTIONS = new Set([
  '-depth',
  '-d',
  '-xdev',
  '-mount',
  '-noleaf',
  '-ignore_readdir_race',
  '-noignore_readdir_race',
  '-nowarn',
  '-warn',
  '-true',
]);
/** Tests this analysis cannot answer (owners, permissions, regexes…), with whether they take a value. */
const UNKNOWN_TESTS: ReadonlyMap<string, boolean> = new Map([
  ...[
    '-regex',
    '-iregex',
    '-lname',
    '-ilname',
    '-user',
    '-group',
    '-uid',
    '-gid',
    '-perm',
    '-links',
    '-inum',
    '-samefile',
    '-fstype',
    '-context',
    '-used',
    '-xtype',
  ].map((t) => [t, true] as const),
  ...['-nouser', '-nogroup', '-readable', '-writable', '-executable'].map((t) => [t, false] as const),
]);
/** Actions that print or write names or details and return true; with the number of values they take. */
const OUTPUT_ACTIONS: ReadonlyMap<string, number> = new Map([
  ['-printf', 1],
  ['-fprint', 1],
  ['-fprint0', 1],
  ['-fprintf', 2],
  ['-ls', 0],
  ['-fls', 1],
  ['-quit', 0],
]);
const AGE_UNITS: Readonly<Record<string, { time: 'mtime' | 'atime' | 'ctime'; seconds: number }>> = {
  '-mtime': { time: 'mtime', seconds: 86_400 },
  '-atime': { time: 'atime', seconds: 86_400 },
  '-ctime': { time: 'ctime', seconds: 86_400 },
  '-mmin': { time: 'mtime', seconds: 60 },
  '-amin': { time: 'atime', seconds: 60 },
  '-cmin': { time: 'ctime', seconds: 60 },
};

/**
 * The expression of `find ROOTS… EXPR` (EXPR = words[start…]), or undefined when some part of it
 * cannot be modelled. Tests that need the file system or the clock read them when evaluated.
 */
export function parseFindExpression(words: readonly WordValue[], start: number, env: FindEnv): FindExpression | undefined {
  try {
    return new Parser(words, start, env).parse();
  } catch (e) {
    if (e instanceof ParseFailure) return undefined;
    throw e;
  }
}

class Parser {
  private k: number;
  private maxDepth = Number.MAX_SAFE_INTEGER;
  private minDepth = 0;
  private depthFirst = false;
  private beyondNames = false;
  private readonly actions = new Map<number, FindActionKind>();
  private readonly now: number | undefined;

  constructor(
    private readonly words: readonly WordValue[],
    start: number,
    private readonly env: FindEnv,
  ) {
    this.k = start;
    this.now = env.clock?.now();
  }

  parse(): FindExpression {
    let expr: Expr = this.k < this.words.length ? this.comma() : { op: 'test', test: () => TRUE };
    if (this.k < this.words.length) throw new ParseFailure();
    const printing = [...this.actions.values()].some((a) => a !== 'prune');
    if (!printing) {
      // No action (or only -prune): find prints what the whole expression is true for.
      expr = { op: 'and', left: expr, right: { op: 'action', at: -1, kind: 'print', result: TRUE } };
      this.actions.set(-1, 'print');
    }
    return {
      expr,
      maxDepth: this.maxDepth,
      minDepth: this.minDepth,
      depthFirst: this.depthFirst,
      beyondNames: this.beyondNames,
      actions: this.actions,
    };
  }

  private peek(): WordValue | undefined {
    return this.words[this.k];
  }

  private literal(w: WordValue | undefined): string {
    if (!w || w.dynamic || w.glob) throw new ParseFailure();
    return w.text;
  }

  private comma(): Expr {
    let left = this.or();
    while (this.peek()?.text === ',' && !this.peek()!.dynamic) {
      this.k++;
      left = { op: 'comma', left, right: this.or() };
    }
    return left;
  }

  private or(): Expr {
    let left = this.and();
    while (this.peek() && !this.peek()!.dynamic && (this.peek()!.text === '-o' || this.peek()!.text === '-or')) {
      this.k++;
      left = { op: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Expr {
    let left = this.not();
    for (;;) {
      const w = this.peek();
      if (!w) return left;
      const t = this.literal(w);
      if (t === '-o' || t === '-or' || t === ',' || t === ')') return left;
      if (t === '-a' || t === '-and') this.k++;
      left = { op: 'and', left, right: this.not() };
    }
  }

  private not(): Expr {
    const t = this.literal(this.peek());
    if (t === '!' || t === '-not') {
      this.k++;
      return { op: 'not', arg: this.not() };
    }
    return this.primary();
  }

  /** The value word after a primary, literal or not (undefined past the end: find refuses). */
  private value(): WordValue {
    const v = this.words[this.k++];
    if (!v) throw new ParseFailure();
    return v;
  }

  private primary(): Expr {
    const at = this.k;
    const t = this.literal(this.words[this.k++]);
    if (t === '(') {
      const inner = this.comma();
      if (this.literal(this.words[this.k++]) !== ')') throw new ParseFailure();
      return inner;
    }
    if (HARMLESS_OPTIONS.has(t)) {
      if (t === '-depth' || t === '-d') this.depthFirst = true;
      return { op: 'test', test: () => TRUE };
    }
    if (t === '-false') return { op: 'test', test: () => FALSE };
    if (t === '-maxdepth' || t === '-mindepth') {
      const n = this.literal(this.value());
      if (!/^\d+$/.test(n)) throw new ParseFailure();
      if (t === '-maxdepth') this.maxDepth = Number(n);
      else this.minDepth = Number(n);
      return { op: 'test', test: () => TRUE };
    }
    if (t === '-regextype') {
      this.value();
      return { op: 'test', test: () => TRUE };
    }
    if (t === '-name' || t === '-iname') return this.nameTest(this.value(), t === '-iname', 'name');
    if (t === '-path' || t === '-ipath' || t === '-wholename' || t === '-iwholename') {
      this.beyondNames = true;
      return this.nameTest(this.value(), t.startsWith('-i'), 'shown');
    }
    if (t === '-type') return { op: 'test', test: typeTest(this.literal(this.value())) };
    if (t === '-empty') {
      this.beyondNames = true;
      return { op: 'test', test: emptyTest };
    }
    if (t === '-size') {
      this.beyondNames = true;
      return { op: 'test', test: sizeTest(this.value()) };
    }
    const age = AGE_UNITS[t];
    if (age) {
      this.beyondNames = true;
      return { op: 'test', test: ageTest(this.value(), age.time, age.seconds, this.now) };
    }
    if (t === '-newer' || t === '-anewer' || t === '-cnewer' || /^-newer[aBcmt][aBcmt]$/.test(t)) {
      this.beyondNames = true;
      const [own, ref] = t === '-newer' ? ['m', 'm'] : t === '-anewer' ? ['a', 'm'] : t === '-cnewer' ? ['c', 'm'] : [t[6]!, t[7]!];
      return { op: 'test', test: this.newerTest(this.value(), own, ref) };
    }
    const unknownValued = UNKNOWN_TESTS.get(t);
    if (unknownValued !== undefined) {
      this.beyondNames = true;
      if (unknownValued) this.value();
      return { op: 'test', test: () => EITHER };
    }
    if (t === '-delete') {
      this.depthFirst = true;
      return this.action(at, 'delete', EITHER);
    }
    if (t === '-print' || t === '-print0') return this.action(at, t === '-print' ? 'print' : 'print0', TRUE);
    if (t === '-prune') return this.action(at, 'prune', TRUE);
    if (t === '-exec' || t === '-execdir' || t === '-ok' || t === '-okdir') {
      const removes = removesEachEntry(this.words, this.k);
      let end = this.k;
      for (; end < this.words.length; end++) {
        const a = this.words[end]!;
        if (!a.dynamic && (a.text === ';' || (a.text === '+' && end > this.k && this.words[end - 1]!.text === '{}'))) break;
      }
      if (end >= this.words.length || end === this.k) throw new ParseFailure();
      const batched = this.words[end]!.text === '+';
      this.k = end + 1;
      // One command per entry answers with its exit status; a batch (`{} +`) is always true.
      return this.action(at, removes ? 'remove' : 'other', batched && !t.startsWith('-ok') ? TRUE : EITHER);
    }
    const outputs = OUTPUT_ACTIONS.get(t);
    if (outputs !== undefined) {
      for (let n = 0; n < outputs; n++) this.value();
      return this.action(at, 'other', TRUE);
    }
    // -follow and -daystart change what every other test means; -files0-from, the start directories; anything else is unknown.
    throw new ParseFailure();
  }

  private action(at: number, kind: FindActionKind, result: Maybe): Expr {
    this.actions.set(at, kind);
    return { op: 'action', at, kind, result };
  }

  private nameTest(v: WordValue, nocase: boolean, of: 'name' | 'shown'): Expr {
    if (v.dynamic || v.glob) return { op: 'test', test: () => EITHER };
    // -name never sees a `/` in a base name: find warns and the test is not modelled.
    const match = of === 'name' && v.text.includes('/') ? undefined : fnmatcher(v.text, nocase);
    if (!match) return { op: 'test', test: () => EITHER };
    return { op: 'test', test: (e) => match(of === 'name' ? e.name : e.shown) };
  }

  /** -newer REF and -newerXY REF: the entry's time X after REF's time Y. */
  private newerTest(v: WordValue, own: string, ref: string): Test {
    if (v.dynamic || v.glob || ref === 't' || ref === 'B' || own === 'B') return () => EITHER;
    const paths = this.env.resolve(v.text);
    const path = paths.length === 1 ? paths[0]! : undefined;
    // find compares with the reference link itself, not what it points to: a link stays unknown.
    const refFacts = path !== undefined && this.env.fs.resolvePhysical(path) === path ? this.env.fs.statFile?.(path) : undefined;
    const refTime = refFacts ? timeOf(refFacts, ref) : undefined;
    if (refTime === undefined) return () => EITHER;
    return (e) => {
      const f = e.facts();
      const t = f ? timeOf(f, own) : undefined;
      return t === undefined ? EITHER : known(t > refTime);
    };
  }
}

function timeOf(f: FileFacts, which: string): bigint | undefined {
  const text = which === 'm' ? f.mtime : which === 'c' ? f.ctime : which === 'a' ? f.atime : undefined;
  if (text === undefined || !/^-?\d+$/.test(text)) return undefined;
  return BigInt(text);
}

/** -type with one letter or a comma-separated list (GNU). */
function typeTest(spec: string): Test {
  const letters = spec.split(',');
  if (letters.some((l) => !/^[bcdpflsD]$/.test(l))) throw new ParseFailure();
  return (e) => {
    if (e.link) return known(letters.includes('l'));
    const f = e.facts();
    if (!f) return EITHER;
    if (f.kind === 'file') return known(letters.includes('f'));
    if (f.kind === 'directory') return known(letters.includes('d'));
    // A FIFO, socket or device: the port does not say which.
    return letters.some((l) => 'bcpsD'.includes(l)) ? EITHER : FALSE;
  };
}

/** -empty: an empty regular file, or a directory with nothing left in it (depth-first, its contents may be deleted first). */
function emptyTest(e: FindEntry, s: EvalState): Maybe {
  if (e.link) return FALSE;
  const f = e.facts();
  if (!f) return EITHER;
  if (f.kind === 'file') return known(f.size === 0);
  if (f.kind !== 'directory') return FALSE;
  if (e.children.length === 0) return TRUE;
  return e.children.every((c) => s.gone.has(c)) ? EITHER : FALSE;
}

const SIZE_UNITS: Readonly<Record<string, number>> = { '': 512, b: 512, c: 1, w: 2, k: 1024, M: 1024 ** 2, G: 1024 ** 3 };

/**
 * -size [+-]N[cwbkMG]. GNU rounds the size up to whole units (`-size -1M` is only empty files); BSD
 * compares scaled sizes in bytes: a size is judged by both readings, and counts when either matches.
 */
function sizeTest(v: WordValue): Test {
  const m = v.dynamic || v.glob ? null : /^([+-]?)(\d+)([cwbkMG]?)$/.exec(v.text);
  if (!m) return () => EITHER;
  const [, sign, digits, suffix] = m;
  const n = Number(digits);
  const unit = SIZE_UNITS[suffix!]!;
  const cmp = (x: number) => (sign === '+' ? x > n : sign === '-' ? x < n : x === n);
  return (e) => {
    if (e.link) return EITHER;
    const f = e.facts();
    if (!f) return EITHER;
    return either(known(cmp(Math.ceil(f.size / unit))), known(cmp(f.size / unit)));
  };
}

/**
 * -mtime/-atime/-ctime N (days) and -mmin/-amin/-cmin N (minutes), N with + (more than) or -
 * (less than). find compares whole units of age: GNU drops the fraction, BSD rounds up. The age is
 * known up to the clock margin, so every whole number from the lowest possible age rounded down
 * to the highest rounded up is a possible reading, and so is every exact age in between.
 */
function ageTest(v: WordValue, time: 'mtime' | 'atime' | 'ctime', unitSeconds: number, now: number | undefined): Test {
  const m = v.dynamic || v.glob ? null : /^([+-]?)(\d+(?:\.\d*)?|\.\d+)$/.exec(v.text);
  if (!m || now === undefined) return () => EITHER;
  const sign = m[1]!;
  const n = Number(m[2]!);
  return (e) => {
    if (e.link) return EITHER;
    const f = e.facts();
    const stamp = f ? timeOf(f, time[0]!) : undefined;
    if (stamp === undefined) return EITHER;
    const thenMs = Number(stamp / 1_000_000n);
    const unitMs = unitSeconds * 1000;
    const lowest = (now - FIND_CLOCK_MARGIN_MS - thenMs) / unitMs;
    const highest = (now + FIND_CLOCK_MARGIN_MS - thenMs) / unitMs;
    const [lo, hi] = [Math.floor(lowest), Math.ceil(highest)];
    if (sign === '+') return { t: hi > n, f: lo <= n };
    if (sign === '-') return { t: lo < n, f: hi >= n };
    return { t: lo <= n && n <= hi, f: !(lo === n && hi === n) };
  };
}

// ------------------------------------------------------------------------------------------
// fnmatch(3) without FNM_PATHNAME or FNM_PERIOD, as find matches names and paths.

const CLASSES: Readonly<Record<string, string>> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: ' \\t\\n\\r\\f\\v',
  xdigit: '0-9a-fA-F',
  punct: '!-\\/:-@\\[-`{-~',
  blank: ' \\t',
  cntrl: '\\x00-\\x1f\\x7f',
  print: '\\x20-\\x7e',
  graph: '\\x21-\\x7e',
};

const escapeChar = (c: string): string => (/[A-Za-z0-9]/.test(c) ? c : `\\u{${c.codePointAt(0)!.toString(16)}}`);

/**
 * A matcher for a find pattern: `*` and `?` match any characters (`/` and a leading dot too), `[…]`
 * a set. A set with a range or a class depends on the locale for letters outside ASCII and, in some
 * locales, on case: where the readings could differ the answer is unknown. Undefined for a pattern
 * that ends in a lone backslash (fnmatch's answer is not portable).
 */
export function fnmatcher(pattern: string, nocase: boolean): ((s: string) => Maybe) | undefined {
  let re = '';
  let localeDependent = false;
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\') {
      if (i + 1 >= chars.length) return undefined;
      re += escapeChar(chars[++i]!);
    } else if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const set = bracket(chars, i);
      if (!set) {
        re += escapeChar(c);
        continue;
      }
      re += set.re;
      localeDependent ||= set.rangeOrClass;
      i = set.end;
    } else re += escapeChar(c);
  }
  const flags = nocase ? 'isu' : 'su';
  const exact = new RegExp(`^${re}$`, flags);
  const folded = new RegExp(`^${re}$`, 'isu');
  return (s) => {
    const a = exact.test(s);
    // Case folding outside ASCII, and sets in any locale, may differ from the C library's.
    const beyondAscii = /[^\x00-\x7f]/.test(s);
    if ((nocase && beyondAscii) || (localeDependent && (beyondAscii || a !== folded.test(s)))) return EITHER;
    return known(a);
  };
}

/** The bracket expression starting at chars[start], or undefined when it is not closed (then `[` is literal). */
function bracket(chars: readonly string[], start: number): { re: string; end: number; rangeOrClass: boolean } | undefined {
  let i = start + 1;
  let negate = false;
  if (chars[i] === '!' || chars[i] === '^') {
    negate = true;
    i++;
  }
  let set = '';
  let rangeOrClass = false;
  let first = true;
  for (; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === ']' && !first) return { re: set === '' ? (negate ? '.' : '(?!)') : `[${negate ? '^' : ''}${set}]`, end: i, rangeOrClass };
    first = false;
    if (c === '[' && chars[i + 1] === ':') {
      const close = chars.indexOf(':', i + 2);
      if (close > 0 && chars[close + 1] === ']') {
        const cls = CLASSES[chars.slice(i + 2, close).join('')];
        if (cls === undefined) return undefined;
        set += cls;
        rangeOrClass = true;
        i = close + 1;
        continue;
      }
    }
    let lit = c;
    if (c === '\\' && i + 1 < chars.length) lit = chars[++i]!;
    if (chars[i + 1] === '-' && chars[i + 2] !== undefined && chars[i + 2] !== ']') {
      let hi = chars[i + 2]!;
      let skip = 2;
      if (hi === '\\' && chars[i + 3] !== undefined) {
        hi = chars[i + 3]!;
        skip = 3;
      }
      if (lit.codePointAt(0)! > hi.codePointAt(0)!) return undefined;
      set += `${escapeChar(lit)}-${escapeChar(hi)}`;
      rangeOrClass = true;
      i += skip;
      continue;
    }
    set += escapeChar(lit);
  }
  return undefined;
}

// ------------------------------------------------------------------------------------------
// Evaluation on one start directory.

/** What one action may act on below one start directory. */
export interface ActedOn {
  /** Absolute paths of the entries. */
  readonly paths: readonly string[];
  /** More entries than MAX_FIND_SELECTED: the list is incomplete. */
  readonly truncated: boolean;
}

/** One line (or NUL-terminated name) find writes to its standard output. */
export interface PrintedName {
  readonly shown: string;
  readonly terminator: '\n' | '\0';
  /** Printed whatever the clock and the unknown tests say (not only possibly). */
  readonly certain: boolean;
}

export interface FindRun {
  readonly actedOn: ReadonlyMap<number, ActedOn>;
  /** What -print/-print0 write to standard output, in find's order (at most MAX_FIND_SELECTED + 1). */
  readonly printed: readonly PrintedName[];
}

/**
 * Walks the start directory `root` (its text as written, and its absolute path) the way find does
 * and records, for every action, the entries it may act on. Undefined when the walk cannot be
 * modelled: the start is not a directory (or is a link), the listing is incomplete or too large,
 * or the port does not tell links apart.
 */
export function evaluateFind(x: FindExpression, rootText: string, rootPath: string, env: FindEnv): FindRun | undefined {
  const fs = env.fs;
  if (!fs.statFile) return undefined;
  // `..` after a symbolic link goes elsewhere than the lexical path: not modelled.
  if (/(^|\/)\.\.(\/|$)/.test(rootText) && fs.resolvePhysical(rootPath) !== rootPath) return undefined;
  const tree = fs.listTree(rootPath, MAX_FIND_LISTING);
  if (!tree || tree.truncated || tree.links === undefined) return undefined;
  const rootKey = rootPath === '/' ? '' : rootPath.replace(/\/+$/, '');
  const children = new Map<string, string[]>();
  for (const e of tree.entries) {
    if (!e.startsWith(`${rootKey}/`) || e.length <= rootKey.length + 1) return undefined;
    const parent = e.slice(0, e.lastIndexOf('/'));
    let list = children.get(parent);
    if (!list) children.set(parent, (list = []));
    list.push(e);
  }
  const links = new Set(tree.links);
  const statCache = new Map<string, FileFacts | undefined>();
  const factsOf = (p: string) => {
    if (!statCache.has(p)) statCache.set(p, fs.statFile!(p));
    return statCache.get(p);
  };
  const prefix = rootText.endsWith('/') ? rootText : `${rootText}/`;
  const rootName = rootText === '/' ? '/' : rootText.replace(/\/+$/, '').replace(/^.*\//, '');
  const entryOf = (path: string, depth: number): FindEntry => {
    const link = links.has(path);
    return {
      path,
      depth,
      link,
      shown: depth === 0 ? rootText : prefix + path.slice(rootKey.length + 1),
      name: depth === 0 ? rootName : path.slice(path.lastIndexOf('/') + 1),
      children: children.get(depth === 0 ? rootKey : path) ?? [],
      facts: () => (link ? undefined : factsOf(path)),
    };
  };
  // find never removes its start directory when it is `.` or `..` (rm refuses them too).
  const rootRemovable = !/^\.\.?$/.test(rootName);

  const acted = new Map<number, { paths: string[]; truncated: boolean }>();
  for (const [at, kind] of x.actions) if (kind !== 'prune') acted.set(at, { paths: [], truncated: false });
  const printed: PrintedName[] = [];
  const gone = new Set<string>();
  const state: EvalState = { gone };

  /** Evaluates the expression on one entry; true when -prune certainly stops the walk below it. */
  const visit = (e: FindEntry): boolean => {
    let prune = false;
    const run = (n: Expr, certain: boolean): Maybe => {
      switch (n.op) {
        case 'and': {
          const a = run(n.left, certain);
          if (!a.t) return FALSE;
          const b = run(n.right, certain && !a.f);
          return { t: b.t, f: a.f || b.f };
        }
        case 'or': {
          const a = run(n.left, certain);
          if (!a.f) return TRUE;
          const b = run(n.right, certain && !a.t);
          return { t: a.t || b.t, f: b.f };
        }
        case 'comma':
          run(n.left, certain);
          return run(n.right, certain);
        case 'not': {
          const a = run(n.arg, certain);
          return { t: a.f, f: a.t };
        }
        case 'test':
          return n.test(e, state);
        case 'action':
          act(n, e, certain);
          if (n.kind === 'prune' && certain) prune = true;
          return n.result;
      }
    };
    run(x.expr, true);
    return prune;
  };

  const act = (n: Extract<Expr, { op: 'action' }>, e: FindEntry, certain: boolean) => {
    if (n.kind === 'print' || n.kind === 'print0') {
      if (printed.length <= MAX_FIND_SELECTED) printed.push({ shown: e.shown, terminator: n.kind === 'print' ? '\n' : '\0', certain });
    }
    const record = acted.get(n.at);
    if (!record) return;
    if (n.kind === 'delete' || n.kind === 'remove') {
      if (e.depth === 0 && !rootRemovable) return;
      // -delete removes a directory only once it is empty: depth-first, its contents come first.
      if (n.kind === 'delete' && e.children.some((c) => !gone.has(c))) return;
      gone.add(e.path);
    }
    if (record.paths.length < MAX_FIND_SELECTED) record.paths.push(e.path);
    else record.truncated = true;
  };

  // Depth-first, in listing order: an entry before its contents, or after them with -depth/-delete.
  const stack: Array<{ entry: FindEntry; next: number }> = [];
  const enter = (entry: FindEntry) => {
    let pruned = false;
    if (!x.depthFirst && entry.depth >= x.minDepth) pruned = visit(entry);
    stack.push({ entry, next: pruned || entry.depth >= x.maxDepth ? entry.children.length : 0 });
  };
  enter(entryOf(rootPath, 0));
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    if (top.next < top.entry.children.length) {
      enter(entryOf(top.entry.children[top.next++]!, top.entry.depth + 1));
      continue;
    }
    stack.pop();
    if (x.depthFirst && top.entry.depth >= x.minDepth) visit(top.entry);
  }
  return { actedOn: acted, printed };
}
