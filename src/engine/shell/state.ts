// Shell state carried through the walk: possible working directories, literal variables, functions.
import type { Node } from 'web-tree-sitter';
import type { WordValue } from './words';

/** A possible working directory; null when it cannot be known. */
export type Base = string | null;

/** Shell state that changes what later words mean. */
export interface Scope {
  /** Possible working directories (more than one after a `cd` that may have failed). */
  bases: Base[];
  /** `pushd` stack. */
  stack: Base[][];
  /** Variables assigned a literal value earlier in the command line. */
  vars: Map<string, string>;
  /** `$HOME`/`~`; null once it was reassigned to something unknown. */
  home: string | null;
  /** Shell functions defined so far (name -> body). */
  functions: Map<string, Node>;
}

export interface Outcome {
  /** State when the last command succeeded. */
  ok: Scope;
  /** State when it failed. */
  fail: Scope;
}

/** Where a command's standard input comes from. */
export interface Io {
  stdin: 'tty' | 'pipe' | 'heredoc' | 'file';
  /** Literal script text of a heredoc/here-string, when it has no expansions. */
  script?: string;
  /** With `stdin: 'file'`: the file redirected in (`< fix.patch`). */
  from?: WordValue;
  /** With `stdin: 'pipe'`: what the command before it writes, when that is known. */
  feed?: Feed;
}

/**
 * What a command writes to a pipe, as far as the next command can use it: its exact text (`echo a b`,
 * `printf '%s\n' …` with literal words), the entries below some directories (`find`, `git ls-files`:
 * their names are not known, only where they are), or the contents of a file (`cat fix.patch`).
 */
export type Feed =
  | { readonly kind: 'text'; readonly text: string; readonly by: string }
  | {
      readonly kind: 'below';
      readonly roots: readonly WordValue[];
      readonly names?: readonly string[];
      readonly scope: Scope;
      readonly by: string;
    }
  | { readonly kind: 'file'; readonly file: WordValue; readonly scope: Scope };

/** Beyond this many possible working directories, the directory counts as unknown. */
const MAX_BASES = 8;

export const same = (s: Scope): Outcome => ({ ok: s, fail: s });

export function cloneScope(s: Scope): Scope {
  return {
    bases: s.bases.slice(),
    stack: s.stack.map((b) => b.slice()),
    vars: new Map(s.vars),
    home: s.home,
    functions: new Map(s.functions),
  };
}

/** The state when either `a` or `b` may hold. */
export function mergeScopes(a: Scope, b: Scope): Scope {
  if (a === b) return a;
  const bases = a.bases.slice();
  for (const x of b.bases) if (!bases.includes(x)) bases.push(x);
  const vars = new Map<string, string>();
  for (const [k, v] of a.vars) if (b.vars.get(k) === v) vars.set(k, v);
  const functions = new Map(a.functions);
  for (const [k, v] of b.functions) if (!functions.has(k)) functions.set(k, v);
  return {
    bases: bases.length > MAX_BASES ? [null] : bases,
    stack: a.stack.length === b.stack.length ? a.stack : [],
    vars,
    home: a.home === b.home ? a.home : null,
    functions,
  };
}
