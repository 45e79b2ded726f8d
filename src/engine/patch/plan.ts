// planPatch: every check a patch must pass before a byte is written, and what it would write. Pure:
// the file system comes in through PatchFsPort, hashing through an injected SHA-256.
//
// Decisions (each refusal names its rule id):
// - Paths: absolute only; no control characters (newlines would forge lines in diffs, logs and the
//   confirmation dialog) and no bidirectional-override characters (they make a name display as
//   another). A leading dash or any other Unicode is fine: paths never reach a shell.
// - Containment: the physical path (`..` applied after symlinks, by the fs port) must lie inside a
//   workspace folder, and the path as given must reach it without passing through any symlink
//   below the folder root (a link inside the workspace can be re-pointed between check and write).
// - Placeholders (`[REDACTED:…]`): the agent never saw the value behind one, so writing one back
//   destroys the secret it replaced. Refused (a) in any edit to a file the agent was given redacted,
//   (b) in any edit to a secret-bearing file (a credential store by the protection tables, or a file
//   whose current text holds a detected secret), and (c) anywhere when the patch would increase the
//   number of times a placeholder occurs in the file (so a placeholder is never *introduced*, e.g.
//   by copying redacted text into a new file). Keeping placeholders a file already contains (a test
//   fixture, documentation) is allowed. `oldText` with a placeholder never matches the file (the file
//   holds the real value) and gets its own explanation.
// - JSON: `*.json` must parse as strict JSON after the patch; `*.jsonc`, tsconfig/jsconfig, VS Code's
//   `.vscode/*.json`, `*.code-workspace` (and a `.json` file that already uses comments) as JSONC.
// - Shrink guard, limits: see PatchLimits.
// - The existing file must be valid UTF-8 (a text patch would corrupt other encodings) and a regular file.
import type { Platform } from '../types';
import { isAbsolute, isWithin, normalizePath } from '../paths';
import { findSecrets } from '../secrets';
import { redactTextOrWithhold } from '../audit/redact';
import { jsonDialectOf, parseJson } from './jsonc';
import {
  DEFAULT_PATCH_LIMITS,
  isWriteOp,
  parsePatch,
  placeholdersIn,
  refusal,
  type EntryInfo,
  type PatchContext,
  type PatchLimits,
  type PatchOp,
  type PatchProblem,
  type PatchRefusal,
} from './model';
import { errorMessage } from '../error-message';

export interface FilePlan {
  /** The path as the agent gave it (first op for this file). */
  readonly path: string;
  /** The physical path the write goes to (normalised). */
  readonly canonicalPath: string;
  readonly existed: boolean;
  readonly beforeBytes?: Uint8Array;
  readonly before?: string;
  readonly after: string;
  readonly afterBytes: Uint8Array;
  /** Hex SHA-256 of the bytes on disk now; null for a file the patch creates. */
  readonly beforeSha256: string | null;
  readonly afterSha256: string;
  readonly ops: number;
  /** A unified-diff-like view of the change (truncated). */
  readonly diff: string;
}

export interface PatchPlan {
  readonly ok: true;
  readonly files: readonly FilePlan[];
  /** One line per file plus the diffs: what a confirmation shows. */
  readonly summary: string;
}

export type PlanResult = PatchPlan | PatchRefusal;

const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
const BIDI_CHARS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** Key under which per-file state (e.g. "was read redacted") is kept: the canonical path, case-folded. */
export function fileStateKey(canonicalPath: string): string {
  return canonicalPath.toLowerCase();
}

/** Syntax checks on a path as given: absolute, printable, not absurdly long. */
export function checkPathSyntax(p: string, platform: Platform, maxLength = DEFAULT_PATCH_LIMITS.maxPathLength): PatchProblem | undefined {
  const shown = JSON.stringify(p);
  if (p.length === 0) return { rule: 'patch.path_invalid', reason: 'the path is empty' };
  if (p.length > maxLength) return { rule: 'patch.path_invalid', reason: `the path is longer than ${maxLength} characters` };
  if (CONTROL_CHARS.test(p))
    return {
      rule: 'patch.path_invalid',
      reason: `the path ${shown} contains a control character (newline, tab, NUL, …); such names are refused because they forge lines in diffs and logs`,
    };
  if (BIDI_CHARS.test(p))
    return {
      rule: 'patch.path_invalid',
      reason: `the path ${shown} contains a bidirectional-override character, which makes it display as a different name`,
    };
  if (!isAbsolute(p, platform))
    return { rule: 'patch.path_relative', reason: `relative path ${shown}: give an absolute path inside a workspace folder` };
  return undefined;
}

interface Located {
  readonly canonical: string;
  readonly parentMissing: boolean;
  readonly entry: ReturnType<PatchContext['fs']['lstat']>;
}

/**
 * Resolves a path to the file a write would really reach and checks that it is inside a workspace
 * folder without any symlink on the way (the path as given, walked component by component, and the
 * physical path). Run again by the writer just before each rename.
 */
export function locateFile(
  raw: string,
  ctx: Pick<PatchContext, 'platform' | 'workspaceRoots' | 'fs'>,
  maxPathLength?: number,
): Located | PatchProblem {
  const syntax = checkPathSyntax(raw, ctx.platform, maxPathLength);
  if (syntax) return syntax;
  const { platform, fs } = ctx;
  const fold = (s: string) => (platform === 'linux' ? s : s.toLowerCase());
  let lexical: string;
  try {
    lexical = normalizePath(raw, platform);
  } catch (e) {
    return { rule: 'patch.path_invalid', reason: errorMessage(e) };
  }
  const physicalRaw = fs.resolvePhysical(raw);
  if (physicalRaw === undefined) return { rule: 'patch.io_error', reason: 'the path cannot be resolved on this file system' };
  const canonical = normalizePath(physicalRaw, platform);
  const roots = ctx.workspaceRoots.flatMap((r) => {
    try {
      const l = normalizePath(r, platform);
      const p = fs.resolvePhysical(r);
      return [{ lexical: l, physical: p === undefined ? l : normalizePath(p, platform) }];
    } catch {
      return [];
    }
  });
  if (roots.length === 0) return { rule: 'patch.outside_workspace', reason: 'no workspace folder is open, so no file may be patched' };
  const root = roots.find((r) => isWithin(fold(canonical), fold(r.physical)));
  const via = canonical !== lexical ? ` (it resolves to ${canonical})` : '';
  if (!root) return { rule: 'patch.outside_workspace', reason: `the file is outside every workspace folder${via}` };
  if (fold(canonical) === fold(root.physical))
    return { rule: 'patch.not_regular_file', reason: 'the path is a workspace folder itself, not a file' };
  // Walk the path as given, component by component as the kernel would: any symlink below a
  // workspace root on the way (also one that a later `..` leaves again) is refused.
  const rootKeys = roots.flatMap((r) => [fold(r.lexical), fold(r.physical)]);
  const walked: string[] = [];
  const prefix = platform === 'win32' ? raw.slice(0, 2) : '';
  for (const seg of raw.slice(prefix.length).split(platform === 'win32' ? /[\\/]+/ : /\/+/)) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      walked.pop();
      continue;
    }
    walked.push(seg);
    const at = `${prefix}/${walked.join('/')}`;
    if (!rootKeys.some((k) => isWithin(fold(at), k) && fold(at) !== k)) continue;
    let info: EntryInfo | undefined;
    try {
      info = fs.lstat(at);
    } catch (e) {
      return { rule: 'patch.io_error', reason: `cannot inspect ${at} (${errorMessage(e)})` };
    }
    if (info === undefined) break;
    if (info.kind === 'symlink')
      return { rule: 'patch.symlink', reason: `${at} is a symlink; Bulwark does not write through symlinks inside the workspace` };
  }
  const rel = canonical.slice(root.physical.length).replace(/^\/+/, '');
  const lexicalRoot = [root.lexical, root.physical].find((r) => isWithin(fold(lexical), fold(r)) && fold(lexical) !== fold(r));
  const lexicalRel = lexicalRoot === undefined ? undefined : lexical.slice(lexicalRoot.length).replace(/^\/+/, '');
  if (lexicalRel === undefined || fold(lexicalRel) !== fold(rel)) {
    return { rule: 'patch.symlink', reason: `the path goes through a symlink or \`..\`${via}; give the real path of the file` };
  }
  const parts = rel.split('/');
  let at = root.physical.replace(/\/+$/, '');
  let entry: Located['entry'];
  for (let i = 0; i < parts.length; i++) {
    at = `${at}/${parts[i]}`;
    let info: Located['entry'];
    try {
      info = fs.lstat(at);
    } catch (e) {
      return { rule: 'patch.io_error', reason: `cannot inspect ${at} (${errorMessage(e)})` };
    }
    const last = i === parts.length - 1;
    if (info === undefined) return { canonical, parentMissing: !last, entry: undefined };
    if (info.kind === 'symlink')
      return { rule: 'patch.symlink', reason: `${at} is a symlink; Bulwark does not write through symlinks inside the workspace` };
    if (!last && info.kind !== 'dir') return { rule: 'patch.not_regular_file', reason: `${at} is not a directory` };
    if (last) entry = info;
  }
  return { canonical, parentMissing: false, entry };
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** Strict UTF-8 decoding (the BOM, if any, is kept in the text); undefined for invalid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

export const countLines = (t: string): number => (t === '' ? 0 : t.split('\n').length - (t.endsWith('\n') ? 1 : 0));

function countOccurrences(text: string, needle: string): { count: number; first: number } {
  let count = 0;
  let first = -1;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
    if (first < 0) first = i;
    count++;
  }
  return { count, first };
}

const HUNK_LINES = 12;
function hunkLines(prefix: string, text: string): string[] {
  if (text === '') return [];
  const lines = text.replace(/\n$/, '').split('\n');
  const shown = lines.slice(0, HUNK_LINES).map((l) => prefix + l);
  if (lines.length > HUNK_LINES) shown.push(`${prefix}… ${lines.length - HUNK_LINES} more line(s)`);
  return shown;
}

/** One hunk for the change between `before` and `after`: common leading and trailing lines dropped. */
function wholeFileHunk(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  const removed = a.slice(p, a.length - s).join('\n');
  const added = b.slice(p, b.length - s).join('\n');
  if (removed === '' && added === '' && before === after) return ['(no change)'];
  return [`@@ line ${p + 1} @@`, ...hunkLines('-', removed), ...hunkLines('+', added)];
}

interface Group {
  path: string;
  canonical: string;
  located: Located;
  ops: PatchOp[];
}

/**
 * Parses and checks a patch and computes what it would write. Never throws: a failing port or an
 * unexpected error is a refusal that says what failed.
 */
export function planPatch(input: unknown, ctx: PatchContext): PlanResult {
  try {
    return plan(input, ctx);
  } catch (e) {
    return refusal([{ rule: 'patch.error', reason: `the patch could not be checked (${errorMessage(e)})` }]);
  }
}

function plan(input: unknown, ctx: PatchContext): PlanResult {
  const limits: PatchLimits = { ...DEFAULT_PATCH_LIMITS, ...ctx.limits };
  const parsed = parsePatch(input, limits);
  if (!parsed.ok) return parsed;
  const problems: PatchProblem[] = [];
  const groups = new Map<string, Group>();
  for (const op of parsed.ops) {
    const located = locateFile(op.path, ctx, limits.maxPathLength);
    if ('rule' in located) {
      problems.push({ ...located, path: op.path });
      continue;
    }
    const key = fileStateKey(located.canonical);
    const g = groups.get(key);
    if (g) g.ops.push(op);
    else groups.set(key, { path: op.path, canonical: located.canonical, located, ops: [op] });
  }
  if (groups.size > limits.maxFiles)
    problems.push({ rule: 'patch.too_large', reason: `the patch touches ${groups.size} files; at most ${limits.maxFiles} in one call` });
  if (problems.length) return refusal(problems);
  const files: FilePlan[] = [];
  for (const g of groups.values()) {
    const r = planFile(g, ctx, limits);
    if ('rule' in r) problems.push({ ...r, path: r.path ?? g.path });
    else files.push(r);
  }
  if (problems.length) return refusal(problems);
  const summary = files
    .map((f) => {
      const head = f.existed
        ? `${f.canonicalPath}: ${f.ops} change(s), ${f.beforeBytes!.length} → ${f.afterBytes.length} bytes`
        : `${f.canonicalPath}: new file, ${f.afterBytes.length} bytes`;
      return `${head}\n${f.diff}`;
    })
    .join('\n\n');
  return { ok: true, files, summary };
}

function planFile(g: Group, ctx: PatchContext, limits: PatchLimits): FilePlan | PatchProblem {
  const { located } = g;
  let beforeBytes: Uint8Array | undefined;
  let before: string | undefined;
  if (located.entry) {
    if (located.entry.kind !== 'file')
      return {
        rule: 'patch.not_regular_file',
        reason: `${g.canonical} is a ${located.entry.kind === 'dir' ? 'directory' : 'special file'}, not a regular file`,
      };
    if (located.entry.size > limits.maxFileBytes)
      return {
        rule: 'patch.file_too_large',
        reason: `the file has ${located.entry.size} bytes; files over ${limits.maxFileBytes} bytes are not patched`,
      };
    try {
      beforeBytes = ctx.fs.readFile(g.canonical, limits.maxFileBytes);
    } catch (e) {
      return { rule: 'patch.io_error', reason: `cannot read the file (${errorMessage(e)})` };
    }
    before = decodeUtf8(beforeBytes);
    if (before === undefined) return { rule: 'patch.invalid_utf8', reason: 'the file is not valid UTF-8; a text patch would corrupt it' };
  } else if (located.parentMissing) {
    return {
      rule: 'patch.parent_missing',
      reason: 'its directory does not exist; Bulwark patches only create files in existing directories',
    };
  }

  let wasRedacted: boolean;
  try {
    wasRedacted = ctx.wasReadRedacted(g.canonical);
  } catch (e) {
    return {
      rule: 'patch.state_error',
      reason: `Bulwark's state cannot be read to tell whether this file was shown redacted (${errorMessage(e)})`,
    };
  }
  const credentialRule = ctx.secretBearingRule(g.canonical);
  let secretsInFile: string | undefined;
  const secretBearing = (): string | undefined => {
    if (credentialRule) return `it is a credential store (rule ${credentialRule.id}: ${credentialRule.reason})`;
    if (secretsInFile === undefined) {
      const found = before === undefined ? [] : findSecrets(ctx.secretRules, before);
      secretsInFile = found.length
        ? `it holds ${found.length} detected secret(s) (${[...new Set(found.map((f) => f.ruleId))].join(', ')})`
        : '';
    }
    return secretsInFile || undefined;
  };

  let text = before;
  const hunks: string[] = [];
  for (const op of g.ops) {
    const incoming = isWriteOp(op) ? op.content : op.newText;
    if (placeholdersIn(incoming).size > 0) {
      if (wasRedacted)
        return {
          rule: 'patch.placeholder_redacted_file',
          reason:
            'the new text contains a redaction placeholder ([REDACTED:…]) and this file was shown to the agent redacted; writing the placeholder would replace the real secret. Edit around the redacted value instead',
        };
      const why = secretBearing();
      if (why)
        return { rule: 'patch.placeholder_secret_file', reason: `the new text contains a redaction placeholder ([REDACTED:…]) and ${why}` };
    }
    if (isWriteOp(op)) {
      hunks.push(...wholeFileHunk(text ?? '', op.content));
      text = op.content;
      continue;
    }
    if (text === undefined) return { rule: 'patch.file_missing', reason: 'the file does not exist; use `content` to create it' };
    const { count, first } = countOccurrences(text, op.oldText);
    if (count === 0) {
      if (placeholdersIn(op.oldText).size > 0)
        return {
          rule: 'patch.placeholder_in_old_text',
          reason:
            'oldText contains a redaction placeholder ([REDACTED:…]); the file holds the real value, which was not shown. Choose oldText that does not include the redacted part',
        };
      return { rule: 'patch.edit_not_found', reason: `oldText was not found in the file (${JSON.stringify(preview(op.oldText))})` };
    }
    if (count > 1)
      return {
        rule: 'patch.edit_ambiguous',
        reason: `oldText matches ${count} times; include more surrounding text so it matches exactly once (${JSON.stringify(preview(op.oldText))})`,
      };
    const line = countLines(text.slice(0, first) + 'x');
    hunks.push(`@@ line ${line} @@`, ...hunkLines('-', op.oldText), ...hunkLines('+', op.newText));
    text = text.slice(0, first) + op.newText + text.slice(first + op.oldText.length);
  }
  const after = text ?? '';

  const beforeCounts = placeholdersIn(before ?? '');
  for (const [ph, n] of placeholdersIn(after)) {
    if (n > (beforeCounts.get(ph) ?? 0))
      return {
        rule: 'patch.placeholder_introduced',
        reason: `the patch adds the redaction placeholder ${ph}, which stands for a secret the agent was not shown; write the real value yourself or leave it out`,
      };
  }

  const afterBytes = encoder.encode(after);
  if (afterBytes.length > limits.maxFileBytes)
    return { rule: 'patch.file_too_large', reason: `the file would have ${afterBytes.length} bytes; at most ${limits.maxFileBytes}` };

  const dialect = jsonDialectOf(g.canonical.toLowerCase(), before);
  if (dialect) {
    const err = parseJson(after, dialect);
    if (err)
      return {
        rule: 'patch.json_invalid',
        reason: `after the patch the file is not valid ${dialect === 'jsonc' ? 'JSON with comments' : 'JSON'} (${err})`,
      };
  }

  if (beforeBytes && before !== undefined) {
    const bLines = countLines(before);
    const large = beforeBytes.length >= limits.shrinkMinBytes || bLines >= limits.shrinkMinLines;
    const aLines = countLines(after);
    if (
      large &&
      (afterBytes.length * limits.shrinkFactor < beforeBytes.length ||
        (bLines >= limits.shrinkMinLines && aLines * limits.shrinkFactor < bLines))
    ) {
      return {
        rule: 'patch.shrink_suspicious',
        reason: `the patch shrinks the file from ${beforeBytes.length} bytes / ${bLines} lines to ${afterBytes.length} bytes / ${aLines} lines, less than 1/${limits.shrinkFactor}; that looks like lost context or a destructive edit. Use targeted edits, or ask the user to do it`,
      };
    }
  }

  return {
    path: g.path,
    canonicalPath: g.canonical,
    existed: beforeBytes !== undefined,
    ...(beforeBytes ? { beforeBytes, before } : {}),
    after,
    afterBytes,
    beforeSha256: beforeBytes ? ctx.sha256(beforeBytes) : null,
    afterSha256: ctx.sha256(afterBytes),
    ops: g.ops.length,
    diff: hunks.join('\n'),
  };
}

/** The head of an agent's text for a refusal: secrets redacted before the cut, so no piece of one is left at it. */
function preview(text: string): string {
  const s = redactTextOrWithhold(text.slice(0, 400));
  return s.length > 80 || text.length > 400 ? `${s.slice(0, 77)}…` : s;
}
