// JSON validity for patched files: strict JSON, or JSON with comments (JSONC: `//` and `/* */`
// comments and trailing commas, the dialect of tsconfig.json and VS Code's settings). Pure.

export type JsonDialect = 'json' | 'jsonc';

/** Basenames (lower-case) of `.json` files whose tools accept comments and trailing commas. */
const JSONC_BASENAMES = /^(?:tsconfig(?:\..*)?\.json|jsconfig(?:\..*)?\.json|\.eslintrc\.json|\.?devcontainer\.json|\.babelrc|\.swcrc|api-extractor\.json|[^/]*\.code-workspace)$/;
/** VS Code's own configuration files in `.vscode/` are JSONC too. */
const VSCODE_JSON = /\/\.vscode\/[^/]+\.json$/;

/**
 * The dialect a file's name implies, or undefined when it is not a JSON file. A `.json` file whose
 * current text only parses as JSONC keeps JSONC (the caller passes `beforeText`).
 */
export function jsonDialectOf(lowerPath: string, beforeText?: string): JsonDialect | undefined {
  const base = lowerPath.slice(lowerPath.lastIndexOf('/') + 1);
  if (base.endsWith('.jsonc') || JSONC_BASENAMES.test(base) || VSCODE_JSON.test(lowerPath)) return 'jsonc';
  if (!base.endsWith('.json')) return undefined;
  if (beforeText !== undefined && parseJson(beforeText, 'json') !== undefined && parseJson(beforeText, 'jsonc') === undefined) return 'jsonc';
  return 'json';
}

/** The parse error message, or undefined when `text` is valid in `dialect`. */
export function parseJson(text: string, dialect: JsonDialect): string | undefined {
  try {
    JSON.parse(dialect === 'jsonc' ? stripJsonc(text) : stripBom(text));
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

const stripBom = (s: string): string => (s.charCodeAt(0) === 0xfeff ? s.slice(1) : s);

/**
 * JSONC → JSON: comments become spaces (so offsets in error messages stay close), trailing commas
 * before `}` or `]` are dropped. Strings are copied verbatim. Throws on an unterminated comment.
 */
export function stripJsonc(input: string): string {
  const s = stripBom(input);
  let noComments = '';
  let i = 0;
  const n = s.length;
  while (i < n) {
    const c = s[i]!;
    if (c === '"') {
      const end = stringEnd(s, i);
      noComments += s.slice(i, end);
      i = end;
    } else if (c === '/' && s[i + 1] === '/') {
      while (i < n && s[i] !== '\n') i++;
    } else if (c === '/' && s[i + 1] === '*') {
      const close = s.indexOf('*/', i + 2);
      if (close < 0) throw new Error('unterminated /* comment');
      noComments += ' ';
      i = close + 2;
    } else {
      noComments += c;
      i++;
    }
  }
  let out = '';
  i = 0;
  const m = noComments.length;
  while (i < m) {
    const c = noComments[i]!;
    if (c === '"') {
      const end = stringEnd(noComments, i);
      out += noComments.slice(i, end);
      i = end;
      continue;
    }
    if (c === ',') {
      let j = i + 1;
      while (j < m && /\s/.test(noComments[j]!)) j++;
      if (noComments[j] === '}' || noComments[j] === ']') { i++; continue; }
    }
    out += c;
    i++;
  }
  return out;
}

/** Index just after the string literal starting at `start` (a `"`), or the end of the text. */
function stringEnd(s: string, start: number): number {
  let i = start + 1;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  return s.length;
}
