// Glob patterns of the protection tables, compiled to anchored regular expressions.
// Hand-written (not minimatch) because the semantics here are narrow and must be exact:
// `**/` at the start = any directory prefix, `/**` at the end = the directory itself and
// everything below, `*` and `?` never cross `/`. Matching is against lower-cased keys.

const REGEX_SPECIAL = /[.+^${}()|[\]\\]/g;

export function globToRegexSource(glob: string): string {
  let src = '';
  let i = 0;
  if (glob.startsWith('**/')) {
    src += '(?:.*/)?';
    i = 3;
  }
  while (i < glob.length) {
    if (glob.startsWith('/**', i) && i + 3 === glob.length) {
      src += '(?:/.*)?';
      i += 3;
      continue;
    }
    if (glob.startsWith('/**/', i)) {
      src += '/(?:.*/)?';
      i += 4;
      continue;
    }
    const c = glob[i]!;
    if (c === '*') src += '[^/]*';
    else if (c === '?') src += '[^/]';
    else src += c.replace(REGEX_SPECIAL, '\\$&');
    i++;
  }
  return src;
}

/** Escapes a literal (a home or workspace path) for use inside a regular expression. */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The literal directory part of a rooted glob before its first wildcard (`/a/b/**` → `/a/b`). */
export function staticPrefix(glob: string): string | undefined {
  if (glob.startsWith('**/')) return undefined;
  const m = /[*?]/.exec(glob);
  if (!m) return glob;
  const upTo = glob.slice(0, m.index);
  const cut = upTo.lastIndexOf('/');
  return cut <= 0 ? undefined : upTo.slice(0, cut);
}
