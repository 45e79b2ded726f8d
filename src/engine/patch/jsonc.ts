// JSON validity for patched files: strict JSON, or JSON with comments (JSONC: `//` and `/* */`
// comments and trailing commas, the dialect of tsconfig.json and VS Code's settings). Both are
// parsed by jsonc-parser, the parser VS Code itself reads these files with (pure JavaScript).
// Its errors name a code and a position, never a piece of the text, so a refusal cannot quote
// a secret from the file.
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';

export type JsonDialect = 'json' | 'jsonc';

/** Basenames (lower-case) of `.json` files whose tools accept comments and trailing commas. */
const JSONC_BASENAMES =
  /^(?:tsconfig(?:\..*)?\.json|jsconfig(?:\..*)?\.json|\.eslintrc\.json|\.?devcontainer\.json|\.babelrc|\.swcrc|api-extractor\.json|[^/]*\.code-workspace)$/;
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
  if (beforeText !== undefined && parseJson(beforeText, 'json') !== undefined && parseJson(beforeText, 'jsonc') === undefined)
    return 'jsonc';
  return 'json';
}

/** The first parse error (code, line and column), or undefined when `text` is valid in `dialect`. A leading byte order mark is allowed. */
export function parseJson(text: string, dialect: JsonDialect): string | undefined {
  const errors: ParseError[] = [];
  // The byte order mark becomes a space, so the reported positions stay those of the file.
  const body = text.charCodeAt(0) === 0xfeff ? ` ${text.slice(1)}` : text;
  parse(body, errors, { disallowComments: dialect === 'json', allowTrailingComma: dialect === 'jsonc', allowEmptyContent: false });
  const e = errors[0];
  if (!e) return undefined;
  const lines = body.slice(0, e.offset).split('\n');
  return `${printParseErrorCode(e.error)} at line ${lines.length}, column ${lines.at(-1)!.length + 1}`;
}
