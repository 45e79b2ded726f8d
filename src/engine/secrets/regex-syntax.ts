// A small parser for the subset of JavaScript regular-expression syntax that secret rules may use,
// and what the streaming redactor derives from it: the longest possible match, the lookaround
// reach, and a "prefix" expression that matches every string that could still grow into a match.
//
// Why: a stream must hold back exactly the tail that could still become (part of) a secret. For a
// rule R, the tail starting at position s can only turn into a match if text[s..end] is a prefix of
// some string R matches. prefixSource(R) is a regular expression for that prefix language (an
// over-approximation: an assertion that would read past the end "may hold later"), so searching
// `(?:prefix)$` finds the earliest position whose outcome the future can still change.
//
// Supported: literals, escapes (\d \w \s \D \W \S \b \B \xHH \uHHHH \cX and escaped punctuation),
// `.`, character classes, groups `( )` `(?: )`, lookarounds `(?= )` `(?! )` `(?<= )` `(?<! )`,
// alternation, quantifiers `* + ? {n} {n,} {n,m}` (greedy or lazy), and `$`.
// Rejected (the loader fails closed): `^`, back-references, named groups, inline modifiers,
// capturing groups or assertions inside lookarounds, unbounded lookarounds, unescaped `{ }`.

export class RegexSyntaxError extends Error {
  override readonly name = 'RegexSyntaxError';
}

export type RegexNode =
  | { readonly t: 'char'; readonly src: string }
  | { readonly t: 'assert'; readonly kind: 'lookahead' | 'lookbehind'; readonly src: string; readonly body: RegexNode }
  | { readonly t: 'assert'; readonly kind: 'boundary' | 'end'; readonly src: string }
  | { readonly t: 'group'; readonly capture: boolean; readonly body: RegexNode }
  | { readonly t: 'alt'; readonly items: readonly RegexNode[] }
  | { readonly t: 'seq'; readonly items: readonly RegexNode[] }
  | { readonly t: 'quant'; readonly body: RegexNode; readonly min: number; readonly max: number };

const SINGLE_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S', 't', 'n', 'r', 'f', 'v', '0']);

export function parseRegex(source: string): RegexNode {
  let i = 0;
  const n = source.length;
  const fail = (why: string): never => {
    throw new RegexSyntaxError(`${why} at offset ${i} of /${source}/`);
  };

  function parseAlt(): RegexNode {
    const items = [parseSeq()];
    while (i < n && source[i] === '|') {
      i++;
      items.push(parseSeq());
    }
    return items.length === 1 ? items[0]! : { t: 'alt', items };
  }

  function parseSeq(): RegexNode {
    const items: RegexNode[] = [];
    while (i < n && source[i] !== '|' && source[i] !== ')') {
      const atom = parseAtom();
      items.push(parseQuantifier(atom));
    }
    return items.length === 1 ? items[0]! : { t: 'seq', items };
  }

  function parseQuantifier(atom: RegexNode): RegexNode {
    if (i >= n) return atom;
    let min: number;
    let max: number;
    const c = source[i];
    if (c === '*') {
      min = 0;
      max = Infinity;
      i++;
    } else if (c === '+') {
      min = 1;
      max = Infinity;
      i++;
    } else if (c === '?') {
      min = 0;
      max = 1;
      i++;
    } else if (c === '{') {
      const m = /^\{(\d{1,5})(?:(,)(\d{1,5})?)?\}/.exec(source.slice(i));
      if (!m) return fail('`{` that is not a quantifier (escape it)');
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === undefined ? Infinity : Number(m[3]);
      if (max < min) fail('quantifier {n,m} with m < n');
      i += m[0].length;
    } else return atom;
    if (atom.t === 'assert') fail('quantified assertion');
    if (i < n && source[i] === '?') i++; // lazy: the same language
    if (i < n && /[*+?{]/.test(source[i]!)) fail('nested quantifier');
    return { t: 'quant', body: atom, min, max };
  }

  function parseAtom(): RegexNode {
    const start = i;
    const c = source[i]!;
    if (c === '(') {
      i++;
      let kind: 'capture' | 'plain' | 'lookahead' | 'lookbehind' = 'capture';
      if (source.startsWith('?:', i)) {
        kind = 'plain';
        i += 2;
      } else if (source.startsWith('?=', i) || source.startsWith('?!', i)) {
        kind = 'lookahead';
        i += 2;
      } else if (source.startsWith('?<=', i) || source.startsWith('?<!', i)) {
        kind = 'lookbehind';
        i += 3;
      } else if (source[i] === '?') fail('named groups and inline modifiers are not supported');
      const body = parseAlt();
      if (source[i] !== ')') fail('unclosed group');
      i++;
      if (kind === 'lookahead' || kind === 'lookbehind') return { t: 'assert', kind, src: source.slice(start, i), body };
      return { t: 'group', capture: kind === 'capture', body };
    }
    if (c === '[') {
      let j = i + 1;
      if (source[j] === '^') j++;
      while (j < n && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      if (j >= n) fail('unclosed character class');
      i = j + 1;
      return { t: 'char', src: source.slice(start, i) };
    }
    if (c === '\\') {
      const d = source[i + 1];
      if (d === undefined) fail('trailing backslash');
      if (d === 'b' || d === 'B') {
        i += 2;
        return { t: 'assert', kind: 'boundary', src: source.slice(start, i) };
      }
      if (/[1-9k]/.test(d!)) fail('back-references are not supported');
      if (d === 'x') {
        if (!/^[0-9a-fA-F]{2}$/.test(source.slice(i + 2, i + 4))) fail('bad \\x escape');
        i += 4;
      } else if (d === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(source.slice(i + 2, i + 6))) fail('bad \\u escape');
        i += 6;
      } else if (d === 'c') {
        if (!/^[A-Za-z]$/.test(source[i + 2] ?? '')) fail('bad \\c escape');
        i += 3;
      } else if (SINGLE_ESCAPES.has(d!) || /[^A-Za-z0-9]/.test(d!)) {
        i += 2;
      } else fail(`unknown escape \\${d}`);
      return { t: 'char', src: source.slice(start, i) };
    }
    if (c === '^') fail('`^` is not supported (use a lookbehind such as (?<![A-Za-z0-9]))');
    if (c === '$') {
      i++;
      return { t: 'assert', kind: 'end', src: '$' };
    }
    if (c === '*' || c === '+' || c === '?') fail('nothing to repeat');
    if (c === '{' || c === '}' || c === ']') fail(`unescaped \`${c}\``);
    i++;
    return { t: 'char', src: c };
  }

  const root = parseAlt();
  if (i !== n) fail('unbalanced `)`');
  return root;
}

/** Longest string the node can consume (Infinity when unbounded). */
export function maxLength(node: RegexNode): number {
  switch (node.t) {
    case 'char':
      return 1;
    case 'assert':
      return 0;
    case 'group':
      return maxLength(node.body);
    case 'alt':
      return Math.max(...node.items.map(maxLength));
    case 'seq':
      return node.items.reduce((sum, item) => sum + maxLength(item), 0);
    case 'quant': {
      const body = maxLength(node.body);
      if (body === 0 || node.max === 0) return 0;
      return node.max === Infinity || body === Infinity ? Infinity : body * node.max;
    }
  }
}

/** Shortest string the node can consume. */
export function minLength(node: RegexNode): number {
  switch (node.t) {
    case 'char':
      return 1;
    case 'assert':
      return 0;
    case 'group':
      return minLength(node.body);
    case 'alt':
      return Math.min(...node.items.map(minLength));
    case 'seq':
      return node.items.reduce((sum, item) => sum + minLength(item), 0);
    case 'quant':
      return minLength(node.body) * node.min;
  }
}

function children(node: RegexNode): readonly RegexNode[] {
  switch (node.t) {
    case 'char':
      return [];
    case 'assert':
      return node.kind === 'lookahead' || node.kind === 'lookbehind' ? [node.body] : [];
    case 'group':
      return [node.body];
    case 'alt':
    case 'seq':
      return node.items;
    case 'quant':
      return [node.body];
  }
}

export interface RegexFacts {
  /** Number of capturing groups. */
  readonly groups: number;
  /** Longest lookbehind body (how far before a match start the regex may look). */
  readonly lookbehind: number;
  /** Longest lookahead body (how far past a position the regex may look without consuming). */
  readonly lookahead: number;
  /** Whether a capturing group sits inside a lookaround. */
  readonly captureInLookaround: boolean;
  /** Whether an assertion (`$`, `\\b`, a lookaround) sits inside a lookaround. */
  readonly assertionInLookaround: boolean;
}

export function regexFacts(root: RegexNode): RegexFacts {
  let groups = 0;
  let lookbehind = 0;
  let lookahead = 0;
  let captureInLookaround = false;
  let assertionInLookaround = false;
  const walk = (node: RegexNode, inLookaround: boolean): void => {
    if (node.t === 'group' && node.capture) {
      groups++;
      if (inLookaround) captureInLookaround = true;
    }
    if (node.t === 'assert' && inLookaround) assertionInLookaround = true;
    if (node.t === 'assert') {
      if (node.kind === 'lookbehind') lookbehind = Math.max(lookbehind, maxLength(node.body));
      else if (node.kind === 'lookahead') lookahead = Math.max(lookahead, maxLength(node.body));
      else if (node.kind === 'boundary') {
        lookbehind = Math.max(lookbehind, 1);
        lookahead = Math.max(lookahead, 1);
      }
    }
    const nowInside = inLookaround || (node.t === 'assert' && (node.kind === 'lookahead' || node.kind === 'lookbehind'));
    for (const child of children(node)) walk(child, nowInside);
  };
  walk(root, false);
  return { groups, lookbehind, lookahead, captureInLookaround, assertionInLookaround };
}

/**
 * The longest text a match can have before its first capturing group starts, when that group is
 * an item of the top-level sequence (the common "key = (value)" shape); otherwise the regex's
 * longest match. 0 when there is no capturing group (the whole match is the secret).
 */
export function maxOffsetOfFirstGroup(root: RegexNode): number {
  const facts = regexFacts(root);
  if (facts.groups === 0) return 0;
  const items = root.t === 'seq' ? root.items : [root];
  let offset = 0;
  for (const item of items) {
    if (item.t === 'group' && item.capture) return offset;
    if (regexFacts(item).groups > 0) break; // the first group is nested deeper
    offset += maxLength(item);
  }
  return maxLength(root);
}

const quantifierText = (min: number, max: number): string =>
  max === Infinity ? (min === 0 ? '*' : min === 1 ? '+' : `{${min},}`) : min === max ? `{${min}}` : `{${min},${max}}`;

/**
 * Source matching the node's language, with every assertion that could read past the end of the
 * buffered text relaxed to "or the end is near": `\b` and `\B` hold or we are at the end, a lookahead
 * holds or fewer characters remain than it may read. Lookbehinds read only the past: kept as they are.
 * So a string is rejected only when the current text alone already rules it out.
 */
function full(node: RegexNode): string {
  switch (node.t) {
    case 'char':
      return node.src;
    case 'assert':
      switch (node.kind) {
        case 'lookbehind':
          return node.src;
        case 'end':
          return '$';
        case 'boundary':
          return `(?:${node.src}|$)`;
        case 'lookahead': {
          const reach = maxLength(node.body);
          return reach === 0 ? node.src : `(?:${node.src}|(?=[\\s\\S]{0,${reach - 1}}$))`;
        }
      }
      return '';
    case 'group':
      return `(?:${full(node.body)})`;
    case 'alt':
      return `(?:${node.items.map(full).join('|')})`;
    case 'seq':
      return node.items.map(full).join('');
    case 'quant': {
      if (node.max === 0) return '';
      const body = node.body.t === 'char' ? node.body.src : `(?:${full(node.body)})`;
      return body + quantifierText(node.min, node.max);
    }
  }
}

/** Source matching every prefix (including the empty string) of a string the node can match. */
function prefix(node: RegexNode): string {
  switch (node.t) {
    case 'char':
      return `${node.src}?`;
    case 'assert': {
      // The text ends at this assertion, or a lookahead here still reads past the end.
      if (node.kind !== 'lookahead') return '';
      const reach = maxLength(node.body);
      return reach <= 1 ? '' : `[\\s\\S]{0,${reach - 1}}`;
    }
    case 'group':
      return `(?:${prefix(node.body)})`;
    case 'alt':
      return `(?:${node.items.map(prefix).join('|')})`;
    case 'seq':
      return prefixOfSequence(node.items);
    case 'quant': {
      if (node.max === 0) return '';
      // A single character: any run of up to max copies.
      if (node.body.t === 'char') return `${node.body.src}${quantifierText(0, node.max)}`;
      // k complete copies (k < max) followed by a prefix of one more.
      const reps = node.max === Infinity ? '*' : node.max - 1 === 0 ? '' : quantifierText(0, node.max - 1);
      const head = reps === '' ? '' : `(?:${full(node.body)})${reps}`;
      return `(?:${head}(?:${prefix(node.body)}))`;
    }
  }
}

/** P(A1 A2 … An) = P(A1) | F(A1) P(A2 … An) */
function prefixOfSequence(items: readonly RegexNode[]): string {
  if (items.length === 0) return '';
  let acc = prefix(items[items.length - 1]!);
  for (let k = items.length - 2; k >= 0; k--) {
    const item = items[k]!;
    const f = full(item);
    acc = f === '' ? acc : `(?:${prefix(item)}|${f}${acc})`;
  }
  return acc;
}

export function prefixSource(root: RegexNode): string {
  return prefix(root);
}

/**
 * For a regex whose first capturing group is an item of its top-level sequence (`key = (value)`):
 * an expression matching at every position where that group could start in a match the text so
 * far can still grow into: what comes before the group matches up to here (a lookbehind), and the
 * text from here to its end is a prefix of the group and what follows. Undefined otherwise.
 */
export function secretStartSource(root: RegexNode): string | undefined {
  const at = secretItemIndex(root);
  if (at < 0) return undefined;
  const items = topItems(root);
  return `(?<=${items.slice(0, at).map(full).join('')})(?:${prefixOfSequence(items.slice(at))})$`;
}

/**
 * The most characters a secretStartSource match consumes (the group and what follows it; the
 * lookbehind consumes nothing): such a match, which ends at the end of the text, starts at most
 * this far before it. Infinity when unbounded or when there is no such source.
 */
export function secretTailLength(root: RegexNode): number {
  const at = secretItemIndex(root);
  return at < 0 ? Infinity : secretTail(root).reduce((n, item) => n + maxLength(item), 0);
}

/** The items of the top-level sequence from the first capturing group on (none when secretStartSource is undefined). */
export function secretTail(root: RegexNode): readonly RegexNode[] {
  const at = secretItemIndex(root);
  return at < 0 ? [] : topItems(root).slice(at);
}

const topItems = (root: RegexNode): readonly RegexNode[] => (root.t === 'seq' ? root.items : [root]);

/** Index of the first capturing group in the top-level sequence when no group comes before it; -1 otherwise. */
function secretItemIndex(root: RegexNode): number {
  const items = topItems(root);
  const at = items.findIndex((item) => item.t === 'group' && item.capture);
  return at < 0 || items.slice(0, at).some((item) => regexFacts(item).groups > 0) ? -1 : at;
}
