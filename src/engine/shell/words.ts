// Turns a tree-sitter-bash word-like node into the literal value(s) bash would pass as argv entries:
// quote removal, backslash escapes, $'…' decoding, brace expansion, tilde and $HOME expansion.
// Anything that cannot be known statically (other variables, $(…), arithmetic) marks the word
// `dynamic`; unquoted `*`, `?` and `[…]` mark it `glob`.
import type { Node } from 'web-tree-sitter';
import type { Platform } from '../types';

/** One argv word as far as it can be known statically. */
export interface WordValue {
  /** Literal value. Dynamic parts are left out; glob characters are kept. */
  text: string;
  /** The source text of the node (for messages). */
  raw: string;
  /** Contains an expansion whose value is unknown. */
  dynamic: boolean;
  /** Contains an unquoted glob (`*`, `?`, `[…]`). */
  glob: boolean;
  /** Literal text before the first dynamic part or glob character. */
  prefix: string;
  /** What ended `prefix`: a dynamic part, a glob character, or nothing (fully literal). */
  stop: 'dyn' | 'glob' | null;
  /**
   * For a literal word with an unquoted glob: the pattern bash matches, with quoted `*?[]\\`
   * escaped by a backslash (`"a*"b*` -> `a\*b*`), so a quoted character never globs.
   */
  pattern?: string;
  /** The word is one process substitution (`<(sort a)`): a pipe to a command walked on its own, not a file. */
  fifo?: boolean;
}

/** What the evaluator needs from the analyser. */
export interface WordEnv {
  readonly platform: Platform;
  /** `$HOME`, or undefined when it was reassigned to something unknown. */
  readonly home: string | undefined;
  /** Value of a variable the analyser tracked as a literal, if any (HOME is handled here). */
  lookupVar(name: string): string | undefined;
  /** The single known working directory, for `$PWD` and `~+`. */
  pwd(): string | undefined;
  /** Walks a `$(…)`, backtick, `<(…)` or arithmetic node for its side effects. */
  walkNested(node: Node): void;
  /** Reports an unexpected condition (e.g. brace expansion too large). */
  note(reason: string): void;
}

/** A run of characters: literal (quoted or not) or an unknown expansion. */
type Piece = { s: string; q: boolean } | { dyn: true; fifo?: boolean };

const MAX_BRACE_RESULTS = 256;
const MAX_BRACE_WORD = 2048;

export function literalWord(text: string): WordValue {
  return { text, raw: text, dynamic: false, glob: false, prefix: text, stop: null };
}

/** A word whose value is entirely unknown (e.g. the file names xargs appends). */
export function unknownWord(raw: string): WordValue {
  return { text: '', raw, dynamic: true, glob: false, prefix: '', stop: 'dyn' };
}

/** The word minus its first `n` characters (for `-ofile`, `--out=file`, `of=file`). */
export function sliceWord(w: WordValue, n: number): WordValue {
  if (n <= w.prefix.length) {
    return { text: w.text.slice(n), raw: w.raw, dynamic: w.dynamic, glob: w.glob, prefix: w.prefix.slice(n), stop: w.stop };
  }
  return { text: w.text.slice(n), raw: w.raw, dynamic: w.dynamic, glob: w.glob, prefix: '', stop: w.stop ?? 'dyn' };
}

/** Evaluates an argument node into argv words (more than one after brace expansion). */
export function evalWord(node: Node, env: WordEnv, opts: { assignment?: boolean } = {}): WordValue[] {
  const pieces: Piece[] = [];
  collect(node, env, pieces, false);
  const raw = node.text;
  const variants = opts.assignment ? [pieces] : braceExpand(pieces, env);
  return variants.map((p) => finish(tilde(p, env, opts.assignment === true), raw, env.platform));
}

/** Evaluates a node that bash never splits or brace-expands (assignment values, heredoc words). */
export function evalSingle(node: Node, env: WordEnv, opts: { assignment?: boolean } = {}): WordValue {
  const pieces: Piece[] = [];
  collect(node, env, pieces, false);
  return finish(tilde(pieces, env, opts.assignment === true), node.text, env.platform);
}

function pushLit(out: Piece[], s: string, q: boolean): void {
  if (s === '') return;
  const last = out[out.length - 1];
  if (last && 's' in last && last.q === q) last.s += s;
  else out.push({ s, q });
}

function collect(node: Node, env: WordEnv, out: Piece[], inDouble: boolean): void {
  const win = env.platform === 'win32';
  switch (node.type) {
    case 'word':
    case 'number':
    case 'extglob_pattern': {
      if (node.namedChildCount > 0) {
        // `number` can wrap an expansion (e.g. `10#$x`): unknown value.
        walkChildren(node, env);
        out.push({ dyn: true });
        return;
      }
      const t = node.text;
      if (win) pushWin(out, t, false, env);
      else unescapeUnquoted(t, out);
      return;
    }
    case 'raw_string': {
      const t = node.text;
      pushLit(out, t.slice(1, t.length > 1 ? -1 : 1), true);
      return;
    }
    case 'ansi_c_string': {
      const t = node.text;
      pushLit(out, decodeAnsiC(t.slice(2, t.length > 2 ? -1 : 2)), true);
      return;
    }
    case 'string': {
      for (const c of node.children) {
        if (!c.isNamed) continue;
        if (c.type === 'string_content') {
          if (win) pushWin(out, c.text, true, env);
          else pushLit(out, unescapeDouble(c.text), true);
        } else collect(c, env, out, true);
      }
      return;
    }
    case 'translated_string': {
      for (const c of node.namedChildren) collect(c, env, out, true);
      return;
    }
    case 'simple_expansion': {
      const nameNode = node.namedChildren[0];
      const name = nameNode ? nameNode.text : '';
      // `$1`…`$9` are known inside `sh -c STRING ARGS…`; `$@`, `$*`, `$#`, `$?`… never are.
      const v =
        nameNode?.type === 'variable_name' || (nameNode?.type === 'special_variable_name' && /^\d$/.test(name))
          ? varValue(name, env)
          : undefined;
      pushVar(out, v, inDouble);
      return;
    }
    case 'expansion': {
      // Only `${NAME}` has a known value; every operator form (${x:-y}, ${!x}, ${x@P}…) is unknown.
      const named = node.namedChildren;
      if (named.length === 1 && named[0]!.type === 'variable_name' && node.childCount === 3) {
        pushVar(out, varValue(named[0]!.text, env), inDouble);
      } else {
        walkChildren(node, env);
        out.push({ dyn: true });
      }
      return;
    }
    case 'command_substitution': {
      env.walkNested(node);
      // `$(pwd)` is the working directory, when it is known.
      const pwd = isPwdSubstitution(node) ? env.pwd() : undefined;
      if (pwd !== undefined) pushLit(out, pwd, inDouble || !/\s/.test(pwd));
      else out.push({ dyn: true });
      return;
    }
    case 'process_substitution':
      env.walkNested(node);
      out.push({ dyn: true, fifo: true });
      return;
    case 'arithmetic_expansion':
      env.walkNested(node);
      out.push({ dyn: true });
      return;
    case 'concatenation': {
      const kids = node.children;
      for (let i = 0; i < kids.length; i++) {
        const c = kids[i]!;
        // PowerShell `$env:NAME`: bash sees `$env` followed by the word `:NAME…`.
        if (win && c.type === 'simple_expansion' && c.text === '$env' && kids[i + 1]?.type === 'word') {
          const next = kids[i + 1]!.text;
          const m = /^:([A-Za-z_][A-Za-z0-9_]*)/.exec(next);
          if (m) {
            const v = winEnvVar(m[1]!, env);
            if (v === undefined) out.push({ dyn: true });
            else pushLit(out, v, true);
            pushWin(out, next.slice(m[0].length), false, env);
            i++;
            continue;
          }
        }
        if (!c.isNamed) {
          pushLit(out, c.text, false);
          continue;
        }
        collect(c, env, out, inDouble);
      }
      return;
    }
    case 'brace_expression':
      // `{1..3}`: kept as unquoted text so braceExpand sees it.
      pushLit(out, node.text, false);
      return;
    case '$':
      pushLit(out, '$', false);
      return;
    default:
      walkChildren(node, env);
      out.push({ dyn: true });
  }
}

/** `$(pwd)` with nothing else inside. */
function isPwdSubstitution(node: Node): boolean {
  const inner = node.namedChildren;
  if (inner.length !== 1 || inner[0]!.type !== 'command') return false;
  const cmd = inner[0]!;
  return cmd.namedChildCount === 1 && cmd.namedChildren[0]!.type === 'command_name' && cmd.namedChildren[0]!.text === 'pwd';
}

/** Walks the substitutions inside an unknown expansion (iteratively: nesting can be deep). */
function walkChildren(node: Node, env: WordEnv): void {
  const stack: Node[] = node.namedChildren.reverse();
  while (stack.length) {
    const c = stack.pop()!;
    if (c.type === 'command_substitution' || c.type === 'process_substitution') env.walkNested(c);
    else if (c.namedChildCount > 0) stack.push(...c.namedChildren.reverse());
  }
}

function varValue(name: string, env: WordEnv): string | undefined {
  if (name === 'HOME') return env.home;
  if (name === 'PWD') return env.pwd();
  return env.lookupVar(name);
}

function winEnvVar(name: string, env: WordEnv): string | undefined {
  const n = name.toUpperCase();
  if (n === 'USERPROFILE' || n === 'HOME') return env.home;
  return undefined;
}

/** A variable's value: quoted values are literal; unquoted ones are subject to splitting and globbing. */
function pushVar(out: Piece[], v: string | undefined, inDouble: boolean): void {
  if (v === undefined) {
    out.push({ dyn: true });
    return;
  }
  if (inDouble) {
    pushLit(out, v, true);
    return;
  }
  // Unquoted: word splitting on whitespace cannot be modelled as one word.
  if (/\s/.test(v)) {
    out.push({ dyn: true });
    return;
  }
  pushLit(out, v, false);
}

/** Windows text: backslashes are literal; `%USERPROFILE%`-style variables are expanded. */
function pushWin(out: Piece[], t: string, q: boolean, env: WordEnv): void {
  if (!t.includes('%')) {
    pushLit(out, t, q);
    return;
  }
  const re = /%([A-Za-z_][A-Za-z0-9_()]*)%/g;
  let last = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    pushLit(out, t.slice(last, m.index), q);
    const v = winEnvVar(m[1]!, env);
    if (v === undefined) out.push({ dyn: true });
    else pushLit(out, v, true);
    last = m.index + m[0].length;
  }
  pushLit(out, t.slice(last), q);
}

/** Unquoted bash text: `\x` is a quoted `x`; backslash-newline disappears. */
function unescapeUnquoted(t: string, out: Piece[]): void {
  if (!t.includes('\\')) {
    pushLit(out, t, false);
    return;
  }
  let run = '';
  for (let i = 0; i < t.length; i++) {
    const ch = t[i]!;
    if (ch === '\\' && i + 1 < t.length) {
      pushLit(out, run, false);
      run = '';
      const nx = t[++i]!;
      if (nx !== '\n') pushLit(out, nx, true);
    } else run += ch;
  }
  pushLit(out, run, false);
}

/** Inside double quotes only `\$`, `` \` ``, `\"`, `\\` and backslash-newline are escapes. */
function unescapeDouble(t: string): string {
  if (!t.includes('\\')) return t;
  return t.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

/** Decodes the body of a `$'…'` string. */
export function decodeAnsiC(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch !== '\\' || i + 1 >= s.length) {
      out += ch;
      continue;
    }
    const c = s[++i]!;
    const simple: Record<string, string> = {
      n: '\n',
      t: '\t',
      r: '\r',
      a: '\x07',
      b: '\b',
      e: '\x1b',
      E: '\x1b',
      f: '\f',
      v: '\v',
      '\\': '\\',
      "'": "'",
      '"': '"',
      '?': '?',
    };
    if (c in simple) {
      out += simple[c];
      continue;
    }
    if (c === 'x' || c === 'u' || c === 'U') {
      const max = c === 'x' ? 2 : c === 'u' ? 4 : 8;
      let j = i + 1;
      while (j < s.length && j - (i + 1) < max && /[0-9a-fA-F]/.test(s[j]!)) j++;
      if (j === i + 1) {
        out += '\\' + c;
        continue;
      }
      const code = parseInt(s.slice(i + 1, j), 16);
      out += code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
      i = j - 1;
      continue;
    }
    if (c >= '0' && c <= '7') {
      let j = i;
      while (j < s.length && j - i < 3 && s[j]! >= '0' && s[j]! <= '7') j++;
      out += String.fromCharCode(parseInt(s.slice(i, j), 8) & 0xff);
      i = j - 1;
      continue;
    }
    if (c === 'c' && i + 1 < s.length) {
      out += String.fromCharCode(s.charCodeAt(++i) & 0x1f);
      continue;
    }
    out += '\\' + c;
  }
  return out;
}

/** Tilde expansion at the start of the word (and after `=`/`:` in assignment-like words). */
function tilde(pieces: Piece[], env: WordEnv, assignment: boolean): Piece[] {
  const first = pieces[0];
  if (!first || !('s' in first)) return pieces;
  // PowerShell resolves `~` in provider paths even when quoted.
  if (first.q && env.platform !== 'win32') return pieces;
  const s = first.s;
  const rest = pieces.slice(1);
  if (assignment) {
    // Assignment values (PATH-style too): `~` expands at the start and after every colon.
    if (!/(^|:)~/.test(s)) return pieces;
    const out: Piece[] = [];
    const segs = s.split(':');
    segs.forEach((seg, i) => {
      if (i > 0) pushLit(out, ':', false);
      const isLastSeg = i === segs.length - 1;
      if (seg.startsWith('~') && (seg === '~' || seg.startsWith('~/')) && !(seg === '~' && isLastSeg && rest.length > 0)) {
        out.push(env.home === undefined ? { dyn: true } : { s: env.home, q: true });
        pushLit(out, seg.slice(1), false);
      } else pushLit(out, seg, false);
    });
    return out.concat(rest);
  }
  let start = 0;
  if (!s.startsWith('~')) {
    // `name=~/x` arguments expand after `=` (bash does this for words that look like assignments).
    const m = /^[A-Za-z_][A-Za-z0-9_]*=(?=~)/.exec(s);
    if (!m || first.q) return pieces;
    start = m[0].length;
  }
  const sep = env.platform === 'win32' ? /[\\/\uE000]/ : /\//;
  const rel = s.slice(start).search(sep);
  const end = rel < 0 ? s.length : start + rel;
  // The tilde prefix runs to the first separator; if a quoted or expanded piece interrupts it
  // (`~"x"`, `~$u`), bash does not expand it.
  if (end === s.length && rest.length > 0) return pieces;
  const user = s.slice(start + 1, end);
  const out: Piece[] = [];
  if (start > 0) out.push({ s: s.slice(0, start), q: false });
  const pwd = env.pwd();
  // The expanded directory is never globbed or split: it is pushed as quoted text.
  if (user === '' && env.home !== undefined) out.push({ s: env.home, q: true });
  else if (user === '+' && pwd !== undefined) out.push({ s: pwd, q: true });
  else out.push({ dyn: true }); // ~user, ~-, ~+ without a known directory
  pushLit(out, s.slice(end), false);
  return out.concat(rest);
}

/**
 * On Windows the analyser replaces every backslash with this private-use character before parsing:
 * cmd and PowerShell have no backslash escapes, and bash would otherwise eat them (`C:\dir\`).
 */
export const WIN_BACKSLASH = '\uE000';
const WIN_BACKSLASH_RE = /\uE000/g;

export function winUnmap(s: string): string {
  return s.includes(WIN_BACKSLASH) ? s.replace(WIN_BACKSLASH_RE, '\\') : s;
}

function finish(pieces: Piece[], rawText: string, platform: Platform): WordValue {
  if (platform === 'win32') {
    const w = finishInner(pieces, rawText, platform);
    return { ...w, text: winUnmap(w.text), raw: winUnmap(w.raw), prefix: winUnmap(w.prefix) };
  }
  return finishInner(pieces, rawText, platform);
}

function finishInner(pieces: Piece[], raw: string, platform: Platform): WordValue {
  let text = '';
  let prefix = '';
  let stop: WordValue['stop'] = null;
  let dynamic = false;
  let glob = false;
  let pattern = '';
  // A `[` only globs when an unquoted `]` follows it.
  const unquoted = pieces.map((p) => ('s' in p && !p.q ? p.s : '')).join('\u0001');
  const hasBracketGlob = /\[[^\]\u0001]*\]/.test(unquoted) || (platform === 'win32' && /\[.*\]/.test(unquoted));
  for (const p of pieces) {
    if (!('s' in p)) {
      dynamic = true;
      if (stop === null) stop = 'dyn';
      continue;
    }
    if (!p.q) {
      const g = hasBracketGlob ? p.s.search(/[*?[]/) : p.s.search(/[*?]/);
      if (g >= 0) {
        glob = true;
        if (stop === null) {
          prefix += p.s.slice(0, g);
          stop = 'glob';
        }
      }
    }
    if (stop === null) prefix += p.s;
    text += p.s;
    pattern += p.q ? p.s.replace(/[*?[\]\\]/g, '\\$&') : p.s;
  }
  if (pieces.length === 1 && 'dyn' in pieces[0]! && pieces[0].fifo) return { text, raw, dynamic, glob, prefix, stop, fifo: true };
  return glob && !dynamic && platform !== 'win32'
    ? { text, raw, dynamic, glob, prefix, stop, pattern }
    : { text, raw, dynamic, glob, prefix, stop };
}

// ---------------------------------------------------------------------------------------------
// Brace expansion: `a{b,c}d` -> abd acd, `{1..3}`, nested forms. Quoted braces do not expand.

type Unit = { c: string; q: boolean } | { dyn: true };

function braceExpand(pieces: Piece[], env: WordEnv): Piece[][] {
  // Fast path: no unquoted `{` means nothing to expand.
  if (!pieces.some((p) => 's' in p && !p.q && p.s.includes('{'))) return [pieces];
  const units: Unit[] = [];
  for (const p of pieces) {
    if ('s' in p) for (const c of p.s) units.push({ c, q: p.q });
    else units.push({ dyn: true });
  }
  // Expansion copies the word per alternative: keep it to words of a sane size.
  if (units.length > MAX_BRACE_WORD) {
    env.note('brace expansion in a very long word');
    return [[{ dyn: true }]];
  }
  const results: Unit[][] = [];
  const ok = expandUnits(units, results);
  if (!ok) {
    env.note('brace expansion produces too many words');
    return [[{ dyn: true }]];
  }
  return results.map(unitsToPieces);
}

function unitsToPieces(units: Unit[]): Piece[] {
  const out: Piece[] = [];
  for (const u of units) {
    if ('dyn' in u) out.push({ dyn: true });
    else pushLit(out, u.c, u.q);
  }
  return out;
}

const isCh = (u: Unit | undefined, c: string): boolean => !!u && 'c' in u && !u.q && u.c === c;

/** Appends the expansions of `units` to `out`; false when the result would be too large. */
function expandUnits(units: Unit[], out: Unit[][]): boolean {
  for (let i = 0; i < units.length; i++) {
    if (!isCh(units[i], '{') || isCh(units[i - 1], '$')) continue;
    // Find the matching close brace and the top-level commas.
    let depth = 0;
    const commas: number[] = [];
    let close = -1;
    for (let j = i + 1; j < units.length; j++) {
      if (isCh(units[j], '{') && !isCh(units[j - 1], '$')) depth++;
      else if (isCh(units[j], '}')) {
        if (depth === 0) {
          close = j;
          break;
        }
        depth--;
      } else if (depth === 0 && isCh(units[j], ',')) commas.push(j);
    }
    if (close < 0) return pushResult(out, units);
    let alternatives: Unit[][] | null = null;
    if (commas.length > 0) {
      alternatives = [];
      let from = i + 1;
      for (const k of [...commas, close]) {
        alternatives.push(units.slice(from, k));
        from = k + 1;
      }
    } else {
      const inner = units.slice(i + 1, close);
      const seq = inner.every((u) => 'c' in u && !u.q) ? sequence(inner.map((u) => (u as { c: string }).c).join('')) : null;
      if (seq) alternatives = seq.map((s) => [...s].map((c) => ({ c, q: true })));
    }
    if (!alternatives) continue; // `{x}` or `{}`: literal, look for a later brace
    const head = units.slice(0, i);
    const tail = units.slice(close + 1);
    for (const alt of alternatives) {
      // Nested braces inside an alternative expand first, then the tail.
      const altResults: Unit[][] = [];
      if (!expandUnits(alt, altResults)) return false;
      for (const a of altResults) {
        if (!expandUnits([...head, ...a, ...tail], out)) return false;
        if (out.length > MAX_BRACE_RESULTS) return false;
      }
    }
    return true;
  }
  return pushResult(out, units);
}

function pushResult(out: Unit[][], units: Unit[]): boolean {
  out.push(units);
  return out.length <= MAX_BRACE_RESULTS;
}

/** `1..5`, `a..e`, `01..10..2` -> the words of the sequence, or null if not a sequence. */
function sequence(s: string): string[] | null {
  let m = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(s);
  if (m) {
    const a = parseInt(m[1]!, 10);
    const b = parseInt(m[2]!, 10);
    let step = Math.abs(m[3] ? parseInt(m[3], 10) : 1) || 1;
    const count = Math.floor(Math.abs(b - a) / step) + 1;
    if (count > MAX_BRACE_RESULTS) return Array(MAX_BRACE_RESULTS + 1).fill('');
    const pad = /^-?0\d/.test(m[1]!) || /^-?0\d/.test(m[2]!) ? Math.max(m[1]!.length, m[2]!.length) : 0;
    if (b < a) step = -step;
    const outs: string[] = [];
    for (let v = a, k = 0; k < count; v += step, k++) {
      const neg = v < 0;
      let d = String(Math.abs(v));
      if (pad) d = d.padStart(pad - (neg ? 1 : 0), '0');
      outs.push((neg ? '-' : '') + d);
    }
    return outs;
  }
  m = /^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$/.exec(s);
  if (m) {
    const a = m[1]!.charCodeAt(0);
    const b = m[2]!.charCodeAt(0);
    const step = Math.abs(m[3] ? parseInt(m[3], 10) : 1) || 1;
    const outs: string[] = [];
    for (let v = a; a <= b ? v <= b : v >= b; v += a <= b ? step : -step) outs.push(String.fromCharCode(v));
    return outs;
  }
  return null;
}
