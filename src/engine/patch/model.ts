// The patch model: what an agent may ask to change, the limits, and the refusal shape. Pure.
import type { Platform } from '../types';
import type { SecretRuleSet } from '../secrets';
import { redactTextOrWithhold } from '../audit/redact';

/** Replace the one exact occurrence of `oldText` in the file at `path` by `newText`. */
export interface EditOp {
  readonly path: string;
  readonly oldText: string;
  readonly newText: string;
}
/** Replace the whole file at `path` (or create it) with `content`. */
export interface WriteOp {
  readonly path: string;
  readonly content: string;
}
export type PatchOp = EditOp | WriteOp;
export const isWriteOp = (op: PatchOp): op is WriteOp => 'content' in op;

/**
 * Limits. Every one is a refusal, not a truncation:
 * - payload: what an agent sends in one call; 1 MiB is far above any hand-written patch and keeps
 *   one call from pinning the host (every byte is scanned for secrets and placeholders).
 * - file: the largest file read, planned or written (before and after); bigger files are data, not
 *   something an agent should patch as text.
 * - shrink: a file of at least `shrinkMinBytes` bytes or `shrinkMinLines` lines that a patch cuts to
 *   less than 1/`shrinkFactor` of its bytes (or of its lines) is refused as suspicious: that is what a
 *   patch that lost its context looks like ("// rest of file unchanged"), and what a destructive
 *   injection does. To really empty a large file, the user does it.
 */
export interface PatchLimits {
  readonly maxPayloadBytes: number;
  readonly maxOps: number;
  readonly maxFiles: number;
  readonly maxFileBytes: number;
  readonly maxPathLength: number;
  readonly shrinkMinBytes: number;
  readonly shrinkMinLines: number;
  readonly shrinkFactor: number;
}

export const MAX_PATCH_PAYLOAD_BYTES = 1024 * 1024;
export const MAX_PATCH_OPS = 200;
export const MAX_PATCH_FILES = 50;
export const MAX_PATCH_FILE_BYTES = 4 * 1024 * 1024;
export const MAX_PATH_LENGTH = 4096;
export const SHRINK_MIN_BYTES = 2048;
export const SHRINK_MIN_LINES = 50;
export const SHRINK_FACTOR = 10;

export const DEFAULT_PATCH_LIMITS: PatchLimits = {
  maxPayloadBytes: MAX_PATCH_PAYLOAD_BYTES,
  maxOps: MAX_PATCH_OPS,
  maxFiles: MAX_PATCH_FILES,
  maxFileBytes: MAX_PATCH_FILE_BYTES,
  maxPathLength: MAX_PATH_LENGTH,
  shrinkMinBytes: SHRINK_MIN_BYTES,
  shrinkMinLines: SHRINK_MIN_LINES,
  shrinkFactor: SHRINK_FACTOR,
};

/** What is at a path, without following a final symlink. */
export interface EntryInfo {
  readonly kind: 'file' | 'dir' | 'symlink' | 'other';
  readonly size: number;
}

/**
 * The file-system questions the planner asks. Implementations may throw; the planner turns a
 * throw into a refusal (`patch.io_error`).
 */
export interface PatchFsPort {
  /** As FileSystemPort.resolvePhysical: symlinks followed, missing tail appended; undefined if unresolvable. */
  resolvePhysical(rawAbsolutePath: string): string | undefined;
  /** lstat: undefined when nothing is there. */
  lstat(path: string): EntryInfo | undefined;
  /** The bytes of a regular file (at most `maxBytes`; throws if larger). */
  readFile(path: string, maxBytes: number): Uint8Array;
}

export interface PatchContext {
  readonly platform: Platform;
  /** Absolute workspace folder roots; every patched file must lie inside one of them. */
  readonly workspaceRoots: readonly string[];
  readonly fs: PatchFsPort;
  /** Hex SHA-256 of bytes. */
  readonly sha256: (bytes: Uint8Array) => string;
  readonly secretRules: SecretRuleSet;
  /** The protection rule that makes a (canonical) path a credential store, if any. */
  readonly secretBearingRule: (canonicalPath: string) => { readonly id: string; readonly reason: string } | undefined;
  /** True when an agent was given a redacted copy of this file (key: `fileStateKey`). May throw (store error). */
  readonly wasReadRedacted: (canonicalPath: string) => boolean;
  readonly limits?: Partial<PatchLimits>;
}

/** One refused check. */
export interface PatchProblem {
  readonly rule: string;
  readonly reason: string;
  readonly path?: string;
}

export interface PatchRefusal {
  readonly ok: false;
  /** Rule ids, most important first (one per problem, de-duplicated). */
  readonly rules: readonly string[];
  readonly reason: string;
  readonly problems: readonly PatchProblem[];
}

/** The refusal of a patch. Its texts go to the agent, the chat view and the audit log: secrets redacted here. */
export function refusal(problems: readonly PatchProblem[]): PatchRefusal {
  const rules = [...new Set(problems.map((p) => p.rule))];
  const shown = problems.map((p) => ({ ...p, reason: redactTextOrWithhold(p.reason) }));
  const reason = `Refused: ${shown.map((p) => `${p.path ? `${p.path}: ` : ''}${p.reason} [${p.rule}]`).join('; ')}.`;
  return { ok: false, rules, reason: redactTextOrWithhold(reason), problems: shown };
}

/** `[REDACTED:<rule-id>]` as written by redactSecrets (any rule id, so a forged one is caught too). */
export const PLACEHOLDER_PATTERN = /\[REDACTED:[^\]\s]{1,128}\]/g;

export function placeholdersIn(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(PLACEHOLDER_PATTERN)) out.set(m[0], (out.get(m[0]) ?? 0) + 1);
  return out;
}

/** UTF-8 length of a string, or -1 when it holds a lone surrogate (not encodable: invalid Unicode). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return -1;
      n += 4;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return -1;
    else n += 3;
  }
  return n;
}

const OP_KEYS = new Set(['path', 'oldText', 'newText', 'content']);

/**
 * Validates an untrusted patch: `{ edits: [...] }` or a bare list, each entry `{ path, oldText, newText }`
 * or `{ path, content }`. Unknown fields, wrong types, lone surrogates and oversized payloads are refused.
 */
export function parsePatch(input: unknown, limits: PatchLimits = DEFAULT_PATCH_LIMITS): { ok: true; ops: PatchOp[] } | PatchRefusal {
  const bad = (reason: string, rule = 'patch.input_invalid', path?: string) =>
    refusal([{ rule, reason, ...(path !== undefined ? { path } : {}) }]);
  const list = Array.isArray(input)
    ? input
    : typeof input === 'object' && input !== null && Array.isArray((input as { edits?: unknown }).edits)
      ? (input as { edits: unknown[] }).edits
      : undefined;
  if (!list) return bad('the patch must be { "edits": [ { "path", "oldText", "newText" } | { "path", "content" }, … ] }');
  if (list.length === 0) return bad('the patch has no edits');
  if (list.length > limits.maxOps)
    return bad(`the patch has ${list.length} edits; at most ${limits.maxOps} are accepted in one call`, 'patch.too_large');
  const ops: PatchOp[] = [];
  let total = 0;
  for (const [i, raw] of list.entries()) {
    const where = `edit ${i + 1}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad(`${where} must be an object`);
    const o = raw as Record<string, unknown>;
    const unknown = Object.keys(o).filter((k) => !OP_KEYS.has(k));
    if (unknown.length) return bad(`${where} has unknown field(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')}`);
    if (typeof o.path !== 'string') return bad(`${where} needs a \`path\` string`);
    const hasContent = o.content !== undefined;
    const hasEdit = o.oldText !== undefined || o.newText !== undefined;
    if (hasContent === hasEdit)
      return bad(
        `${where} needs either \`content\` (whole file) or \`oldText\` and \`newText\` (one replacement), not both`,
        undefined,
        o.path,
      );
    const strings = hasContent ? { content: o.content } : { oldText: o.oldText, newText: o.newText };
    for (const [k, v] of Object.entries(strings)) {
      if (typeof v !== 'string') return bad(`${where}: \`${k}\` must be a string`, undefined, o.path);
      const len = utf8Length(v);
      if (len < 0) return bad(`${where}: \`${k}\` is not valid Unicode (a lone surrogate cannot be written as UTF-8)`, undefined, o.path);
      total += len;
    }
    const pathLen = utf8Length(o.path);
    if (pathLen < 0) return bad(`${where}: the path is not valid Unicode (lone surrogate)`, 'patch.path_invalid', o.path);
    total += pathLen;
    if (total > limits.maxPayloadBytes)
      return bad(`the patch is larger than ${limits.maxPayloadBytes} bytes; split it into smaller patches`, 'patch.too_large');
    if (!hasContent && o.oldText === '')
      return bad(
        `${where}: \`oldText\` is empty; give the exact text to replace, or use \`content\` to write the whole file`,
        'patch.edit_empty',
        o.path,
      );
    ops.push(
      hasContent
        ? { path: o.path, content: o.content as string }
        : { path: o.path, oldText: o.oldText as string, newText: o.newText as string },
    );
  }
  return { ok: true, ops };
}
