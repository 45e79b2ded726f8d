// Pathname expansion of a glob read target (`cat ~/.ss?/id_*`, `for f in ~/.ssh/*`) through the
// FileSystemPort, the way bash does it: component by component, `*`/`?`/`[…]` never match `/`, and a
// leading dot must be matched literally (unless `shopt -s dotglob`). Matching ignores case, so the
// result holds at least what bash would pass on every file system. Bounded: a directory too large to
// list, too many matches, `**` (recursive in zsh and with globstar) or extended globs make the
// expansion incomplete, and the caller treats the word as unknown.
import type { FileSystemPort } from '../ports';

export type Expansion = { complete: true; paths: string[] } | { complete: false; why: string };

/** Most paths one glob word may expand to and still be checked one by one. */
export const MAX_GLOB_MATCHES = 512;
/** Most entries of one directory listed to match a component. */
const MAX_DIR_ENTRIES = 2000;
/** Most directory listings per command line (every glob word shares them). */
const MAX_LISTINGS = 64;

/** Does this pattern component hold an active (unescaped) glob character? */
export function hasGlob(component: string): boolean {
  for (let i = 0; i < component.length; i++) {
    const c = component[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '*' || c === '?') return true;
    if (c === '[' && bracketEnd(component, i) > 0) return true;
  }
  return false;
}

/** Removes the backslash escapes of a pattern component. */
export function unescapeGlob(component: string): string {
  return component.replace(/\\(.)/g, '$1');
}

/** Index of the `]` closing the bracket expression at `start`, or -1 (then `[` is literal). */
function bracketEnd(p: string, start: number): number {
  let i = start + 1;
  if (p[i] === '!' || p[i] === '^') i++;
  if (p[i] === ']') i++;
  for (; i < p.length; i++) {
    if (p[i] === '\\') {
      i++;
      continue;
    }
    if (p[i] === '[' && p[i + 1] === ':') {
      const close = p.indexOf(':]', i + 2);
      if (close > 0) {
        i = close + 1;
        continue;
      }
    }
    if (p[i] === ']') return i;
  }
  return -1;
}

const CLASSES: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: '\\s',
  xdigit: '0-9a-fA-F',
  punct: '!-\\/:-@\\[-`{-~',
  word: '\\w',
  blank: ' \\t',
  cntrl: '\\x00-\\x1f\\x7f',
  print: '\\x20-\\x7e',
  graph: '\\x21-\\x7e',
};

/** A matcher for one component, or null for patterns it cannot model (extended globs). */
export function componentMatcher(component: string, dotglob: boolean): ((name: string) => boolean) | null {
  // `@(…)`, `!(…)`, `+(…)`, `*(…)`, `?(…)`: extended globs (bash extglob, zsh): not modelled.
  if (/(^|[^\\])[@!+*?]\(/.test(component)) return null;
  let re = '';
  for (let i = 0; i < component.length; i++) {
    const c = component[i]!;
    if (c === '\\' && i + 1 < component.length) {
      re += escapeRe(component[++i]!);
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = bracketEnd(component, i);
      if (end < 0) {
        re += '\\[';
        continue;
      }
      let body = component.slice(i + 1, end);
      let negate = false;
      if (body[0] === '!' || body[0] === '^') {
        negate = true;
        body = body.slice(1);
      }
      let set = '';
      for (let j = 0; j < body.length; j++) {
        const b = body[j]!;
        if (b === '[' && body[j + 1] === ':') {
          const close = body.indexOf(':]', j + 2);
          if (close > 0) {
            set += CLASSES[body.slice(j + 2, close)] ?? '';
            j = close + 1;
            continue;
          }
        }
        if (b === '\\' && j + 1 < body.length) {
          set += escapeClass(body[++j]!);
          continue;
        }
        set += b === '-' && j > 0 && j < body.length - 1 ? '-' : escapeClass(b);
      }
      re += set === '' ? (negate ? '[^/]' : '(?!)') : `[${negate ? '^/' : ''}${set}]`;
      i = end;
    } else re += escapeRe(c);
  }
  const rx = new RegExp(`^${re}$`, 'is');
  // A leading dot is only matched by a literal dot (or by anything with dotglob, but never `.`/`..`).
  const literalDot = component.startsWith('.') || component.startsWith('\\.');
  return (name) => {
    if (name.startsWith('.') && !literalDot && (!dotglob || name === '.' || name === '..')) return false;
    return rx.test(name);
  };
}

function escapeRe(c: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(c) ? '\\' + c : c;
}

function escapeClass(c: string): string {
  return /[\\\]^[-]/.test(c) ? '\\' + c : c;
}

/** Expands absolute glob patterns through a FileSystemPort, sharing listings within one command line. */
export class GlobExpander {
  private listings = 0;
  private readonly children = new Map<string, string[] | null | 'unknown'>();

  constructor(private readonly fs: FileSystemPort) {}

  /**
   * Expands an absolute pattern (`/home/u/.ss?/id_*`, with quoted characters backslash-escaped).
   * The paths it names on disk, or incomplete when they cannot all be known.
   */
  expand(absPattern: string, dotglob: boolean): Expansion {
    if (!absPattern.startsWith('/')) return { complete: false, why: 'it is not an absolute path' };
    let cur = ['/'];
    const comps = absPattern.split('/').filter((c) => c !== '' && c !== '.');
    for (const comp of comps) {
      if (!hasGlob(comp)) {
        const name = unescapeGlob(comp);
        cur = cur.map((d) => join(d, name));
        continue;
      }
      if (comp.includes('**')) return { complete: false, why: '`**` may match any depth (zsh, bash globstar)' };
      const match = componentMatcher(comp, dotglob);
      if (!match) return { complete: false, why: 'extended glob patterns are not expanded' };
      const next: string[] = [];
      for (const dir of cur) {
        const names = this.list(dir);
        if (names === 'unknown') return { complete: false, why: `\`${dir}\` cannot be listed completely` };
        if (names === null) continue;
        // `.*` also names `.` and `..` in bash before 5.2 (no globskipdots).
        const all = comp.startsWith('.') ? ['.', '..', ...names] : names;
        for (const n of all) if (match(n)) next.push(join(dir, n));
        if (next.length > MAX_GLOB_MATCHES) return { complete: false, why: `it matches more than ${MAX_GLOB_MATCHES} paths` };
      }
      cur = next;
      if (cur.length === 0) break;
    }
    return { complete: true, paths: cur };
  }

  /** Names directly in `dir`; null when it is not a directory; 'unknown' when not all can be listed. */
  private list(dir: string): string[] | null | 'unknown' {
    const cached = this.children.get(dir);
    if (cached !== undefined) return cached;
    let out: string[] | null | 'unknown';
    if (this.listings >= MAX_LISTINGS) out = 'unknown';
    else {
      this.listings++;
      out = this.listOnce(dir, 256);
      if (out === 'unknown') out = this.listOnce(dir, MAX_DIR_ENTRIES);
    }
    this.children.set(dir, out);
    return out;
  }

  private listOnce(dir: string, limit: number): string[] | null | 'unknown' {
    let tree: ReturnType<FileSystemPort['listTree']>;
    try {
      tree = this.fs.listTree(dir, limit);
    } catch {
      return 'unknown';
    }
    if (!tree) return null;
    const base = dir === '/' ? '' : dir.replace(/\/+$/, '');
    const names: string[] = [];
    for (const e of tree.entries) {
      const p = e.replace(/\\/g, '/');
      if (!p.startsWith(base + '/')) continue;
      const rest = p.slice(base.length + 1);
      if (rest !== '' && !rest.includes('/')) names.push(rest);
    }
    // The listing is breadth-first: an entry below a child means every child was listed.
    if (tree.truncated && names.length === tree.entries.length) return 'unknown';
    return names;
  }
}

function join(dir: string, name: string): string {
  if (name === '.') return dir;
  if (name === '..') return dir === '/' ? '/' : dir.slice(0, dir.lastIndexOf('/')) || '/';
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}
