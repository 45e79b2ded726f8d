// The agent's file tools on the real file system: a read that redacts secrets (and remembers that it
// did, durably) and a patch that is planned by the engine (src/engine/patch) and written atomically.
//
// Writing one file: the path is re-checked (inside the workspace, no symlink on the way), the file is
// re-read and must still hash to what was planned, a temp file beside it is created with
// O_CREAT|O_EXCL|O_NOFOLLOW, written, given the original mode, fsync'd; just before the rename the
// target must still be the same inode (or still absent) and not a symlink; then rename over the
// target and fsync the directory. A multi-file patch is all or nothing: when a later file fails, the
// files already written are put back from their before bytes the same atomic way (created files are
// removed). Remaining race: a parent directory swapped for a symlink between the last check and the
// rename (Node has no openat/renameat); the window is a few system calls wide.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Platform } from '../engine';
import { matchKey, normalizePath } from '../engine/paths';
import { builtinTables, compileTables, matchingRules } from '../engine/protection/tables';
import { loadSecretRules, redactSecrets, redactionPlaceholder, type SecretRuleSet } from '../engine/secrets';
import { transformForPrompt, type ContentAction, type InspectOptions } from '../engine/content';
import type { StateStore } from '../engine/shield/types';
import {
  DEFAULT_PATCH_LIMITS,
  checkPathSyntax,
  decodeUtf8,
  fileStateKey,
  locateFile,
  planPatch,
  refusal,
  type EntryInfo,
  type FilePlan,
  type PatchContext,
  type PatchFsPort,
  type PatchLimits,
  type PatchProblem,
} from '../engine/patch';
import { currentPlatform } from './create-engine';
import { O_NOFOLLOW, nodeFileOps, readRegular, type FileOps, type Identity } from './file-ops';
import { errorMessage } from '../engine/error-message';

/** StateStore namespace: canonical paths (fileStateKey) whose text an agent was given redacted. */
export const REDACTED_READS_NAMESPACE = 'file_tools.redacted_read';

export { nodeFileOps, type FileOps } from './file-ops';

export interface FileToolsOptions {
  /** Absolute workspace folder roots: patches stay inside them. */
  readonly workspaceRoots: readonly string[];
  /** Durable state: which files were read redacted. */
  readonly store: StateStore;
  readonly platform?: Platform;
  readonly home?: string;
  readonly secretRules?: SecretRuleSet;
  /** Prompt-injection and content rules for reads entering a prompt; defaults to the bundled sets. */
  readonly inspection?: Omit<InspectOptions, 'secrets'>;
  readonly ops?: FileOps;
  readonly limits?: Partial<PatchLimits>;
}

export interface ReadFinding {
  readonly rule: string;
  readonly start: number;
  readonly end: number;
}

export interface ReadResult {
  readonly ok: true;
  readonly path: string;
  readonly canonical_path: string;
  /** The file's text, with every detected secret replaced by `[REDACTED:<rule-id>]`. */
  readonly text: string;
  readonly redacted: boolean;
  /** False when `text` is not the file's content (something was redacted): do not write it back. */
  readonly text_authoritative: boolean;
  /** Where each placeholder is in `text` (UTF-16 offsets, end exclusive). */
  readonly findings: readonly ReadFinding[];
  /** SHA-256 of the bytes on disk (not of `text`). */
  readonly sha256: string;
  readonly bytes: number;
}

export interface ToolRefusal {
  readonly ok: false;
  readonly rules: readonly string[];
  readonly reason: string;
  readonly problems?: readonly PatchProblem[];
}

export const sha256Hex = (bytes: Uint8Array): string => crypto.createHash('sha256').update(bytes).digest('hex');

const fail = (rule: string, reason: string, p?: string): ToolRefusal =>
  refusal([{ rule, reason, ...(p !== undefined ? { path: p } : {}) }]);
const errCode = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code;

function resolvePhysical(ops: FileOps, raw: string): string | undefined {
  try {
    return ops.realpath(raw);
  } catch {
    /* not there (yet) */
  }
  const parts = raw.split(/[\\/]+/);
  for (let cut = parts.length - 1; cut > 0; cut--) {
    const head = parts.slice(0, cut).join('/') || '/';
    try {
      return path.resolve(ops.realpath(head), ...parts.slice(cut));
    } catch {
      /* go up */
    }
  }
  return undefined;
}

function entryOf(st: fs.Stats): EntryInfo {
  return { kind: st.isSymbolicLink() ? 'symlink' : st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other', size: st.size };
}

/** The engine's PatchFsPort over FileOps; remembers the identity (dev, inode, mode) of every file it read. */
class PlanPort implements PatchFsPort {
  readonly identities = new Map<string, Identity>();
  constructor(private readonly ops: FileOps) {}
  resolvePhysical(raw: string): string | undefined {
    return resolvePhysical(this.ops, raw);
  }
  lstat(p: string): EntryInfo | undefined {
    try {
      return entryOf(this.ops.lstat(p));
    } catch (e) {
      if (errCode(e) === 'ENOENT' || errCode(e) === 'ENOTDIR') return undefined;
      throw e;
    }
  }
  readFile(p: string, maxBytes: number): Uint8Array {
    const r = readRegular(this.ops, p, maxBytes);
    this.identities.set(p, r.id);
    return r.bytes;
  }
}

/** The credential-store rules of the protection tables (level full_block) that match a path. */
function credentialRuleFor(opts: FileToolsOptions, platform: Platform, home: string) {
  const rules = compileTables(builtinTables(), { platform, home, workspaceRoots: opts.workspaceRoots });
  return (canonical: string) => {
    const m = matchingRules(rules, matchKey(canonical, platform)).find((c) => c.rule.level === 'full_block');
    return m ? { id: m.rule.id, reason: m.rule.reason } : undefined;
  };
}

function contextFor(opts: FileToolsOptions, port: PlanPort): PatchContext {
  const platform = opts.platform ?? currentPlatform();
  return {
    platform,
    workspaceRoots: opts.workspaceRoots,
    fs: port,
    sha256: sha256Hex,
    secretRules: opts.secretRules ?? loadSecretRules(),
    secretBearingRule: credentialRuleFor(opts, platform, opts.home ?? os.homedir()),
    wasReadRedacted: (canonical) => opts.store.get(REDACTED_READS_NAMESPACE, fileStateKey(canonical)) !== undefined,
    limits: opts.limits,
  };
}

/**
 * Reads a file for an agent: absolute path, regular file, valid UTF-8, at most the file limit.
 * Secrets are replaced by placeholders; when anything was redacted the file is recorded in the state
 * store (so a later patch that writes a placeholder back is refused, also after a restart) before the
 * text is returned; if that record cannot be written, the text is not returned.
 */
export function readFileForAgent(p: unknown, opts: FileToolsOptions): ReadResult | ToolRefusal {
  const ops = opts.ops ?? nodeFileOps;
  const platform = opts.platform ?? currentPlatform();
  const limits = { ...DEFAULT_PATCH_LIMITS, ...opts.limits };
  if (typeof p !== 'string') return fail('read.input_invalid', 'the read needs a `path` string');
  const syntax = checkPathSyntax(p, platform, limits.maxPathLength);
  if (syntax) return fail(syntax.rule.replace(/^patch\./, 'read.'), syntax.reason, p);
  const physical = resolvePhysical(ops, p);
  if (physical === undefined) return fail('read.not_found', 'the path cannot be resolved', p);
  let canonical: string;
  try {
    canonical = normalizePath(physical, platform);
  } catch (e) {
    return fail('read.path_invalid', errorMessage(e), p);
  }
  let st: fs.Stats;
  try {
    st = ops.lstat(physical);
  } catch (e) {
    return errCode(e) === 'ENOENT'
      ? fail('read.not_found', 'the file does not exist', p)
      : fail('read.io_error', `cannot inspect the file (${errorMessage(e)})`, p);
  }
  if (!st.isFile()) return fail('read.not_regular_file', `${canonical} is ${st.isDirectory() ? 'a directory' : 'not a regular file'}`, p);
  if (st.size > limits.maxFileBytes)
    return fail('read.file_too_large', `the file has ${st.size} bytes; at most ${limits.maxFileBytes} are read`, p);
  let bytes: Buffer;
  try {
    bytes = readRegular(ops, physical, limits.maxFileBytes).bytes;
  } catch (e) {
    return fail('read.io_error', `cannot read the file (${errorMessage(e)})`, p);
  }
  const text = decodeUtf8(bytes);
  if (text === undefined) return fail('read.invalid_utf8', 'the file is not valid UTF-8 text', p);
  let red: ReturnType<typeof redactSecrets>;
  try {
    red = redactSecrets(opts.secretRules ?? loadSecretRules(), text);
  } catch (e) {
    return fail('read.redaction_failed', `the file's text could not be checked for secrets (${errorMessage(e)}), so it is not returned`, p);
  }
  const findings: ReadFinding[] = [];
  let delta = 0;
  for (const f of red.findings) {
    const start = f.start + delta;
    const len = redactionPlaceholder(f.ruleId).length;
    findings.push({ rule: f.ruleId, start, end: start + len });
    delta += len - (f.end - f.start);
  }
  const redacted = findings.length > 0;
  if (redacted) {
    try {
      opts.store.set(
        REDACTED_READS_NAMESPACE,
        fileStateKey(canonical),
        JSON.stringify({ rules: [...new Set(findings.map((f) => f.rule))], at: new Date().toISOString() }),
      );
    } catch (e) {
      return fail(
        'read.state_error',
        `the file holds secrets and Bulwark cannot record that it was shown redacted (${errorMessage(e)}), so the text is not returned`,
        p,
      );
    }
  }
  return {
    ok: true,
    path: p,
    canonical_path: canonical,
    text: red.text,
    redacted,
    text_authoritative: !redacted,
    findings,
    sha256: sha256Hex(bytes),
    bytes: bytes.length,
  };
}

/** What content inspection (PrePrompt, untrusted) found in a file's text before it goes to the model. */
export interface ContentSafety {
  readonly action: ContentAction;
  readonly findings: readonly { readonly category: string; readonly rule: string; readonly severity: string }[];
}

export interface PromptReadResult extends ReadResult {
  /**
   * `text` is the file's (redacted) text inside an untrusted-content block: a header line, a SAFETY
   * NOTICE, an optional Findings line, a `---` line, the text, and the end marker. Offsets in
   * `findings` count from the first character after the `---` line (unless look-alike markers in
   * the text were neutralised, which changes its length).
   */
  readonly text_wrapped: boolean;
  readonly content_safety: ContentSafety;
}

/**
 * The read tool's answer for a model: readFileForAgent, then the text is inspected as untrusted
 * content entering a prompt (a workspace may be someone else's repository). Text that inspection
 * blocks or holds for approval is withheld and the refusal says which rules and why; anything else
 * comes back wrapped in an untrusted-content block with look-alike markers neutralised.
 */
export function readFileForPrompt(
  p: unknown,
  opts: FileToolsOptions,
): PromptReadResult | (ToolRefusal & { readonly content_safety?: ContentSafety }) {
  const r = readFileForAgent(p, opts);
  if (!r.ok) return r;
  let t: ReturnType<typeof transformForPrompt>;
  try {
    t = transformForPrompt(r.text, `file ${r.canonical_path}`, 'untrusted', {
      ...opts.inspection,
      ...(opts.secretRules ? { secrets: opts.secretRules } : {}),
    });
  } catch (e) {
    return fail('read.inspection_failed', `the file's text could not be inspected (${errorMessage(e)}), so it is not returned`, r.path);
  }
  const content_safety: ContentSafety = {
    action: t.result.action,
    findings: t.result.findings.map((f) => ({ category: f.category, rule: f.rule, severity: f.severity })),
  };
  if (t.withheld) {
    const rules = [...new Set(t.result.findings.filter((f) => f.action === t.result.action).map((f) => f.rule))];
    return {
      ...refusal([{ rule: `read.content_${t.result.action}`, reason: t.text, path: r.path }]),
      rules: [`read.content_${t.result.action}`, ...rules],
      content_safety,
    };
  }
  return { ...r, text: t.text, text_wrapped: t.wrapped, content_safety };
}

export interface AppliedFile {
  readonly path: string;
  readonly canonical_path: string;
  readonly created: boolean;
  readonly before_sha256: string | null;
  readonly after_sha256: string;
  readonly bytes_before: number;
  readonly bytes_after: number;
}

export interface PatchResult {
  readonly ok: true;
  readonly dry_run: boolean;
  readonly files: readonly AppliedFile[];
  /** What the patch changes (diff-like, truncated): the confirmation text. */
  readonly summary: string;
}

export interface PatchFailure extends ToolRefusal {
  /** Files that were written and then restored (all-or-nothing). */
  readonly restored?: readonly string[];
  /** Files whose restore failed too: their state is reported here. */
  readonly restore_failed?: readonly string[];
}

export interface ApplyOptions extends FileToolsOptions {
  readonly dryRun: boolean;
  /**
   * The before SHA-256 each file had in the dry run (keyed by canonical path or the path as given;
   * null for a file that did not exist). When given, a file that changed since is refused.
   */
  readonly expectedSha256?: Readonly<Record<string, string | null>>;
}

const fileSummary = (f: FilePlan): AppliedFile => ({
  path: f.path,
  canonical_path: f.canonicalPath,
  created: !f.existed,
  before_sha256: f.beforeSha256,
  after_sha256: f.afterSha256,
  bytes_before: f.beforeBytes?.length ?? 0,
  bytes_after: f.afterBytes.length,
});

class WriteError extends Error {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Plans a patch (every check of src/engine/patch) and, unless `dryRun`, writes it all or nothing.
 * Never throws: every failure is a refusal with rule ids and a reason, and nothing stays changed.
 */
export function applyPatch(input: unknown, opts: ApplyOptions): PatchResult | PatchFailure {
  try {
    return apply(input, opts);
  } catch (e) {
    return fail('patch.error', `the patch failed unexpectedly (${errorMessage(e)})`);
  }
}

function apply(input: unknown, opts: ApplyOptions): PatchResult | PatchFailure {
  const ops = opts.ops ?? nodeFileOps;
  const port = new PlanPort(ops);
  const ctx = contextFor(opts, port);
  const plan = planPatch(input, ctx);
  if (!plan.ok) return plan;
  // The summary quotes file text (removed lines): secrets in it are redacted like any read.
  const summary = redactSecrets(ctx.secretRules, plan.summary).text;
  if (opts.dryRun) return { ok: true, dry_run: true, files: plan.files.map(fileSummary), summary };

  if (opts.expectedSha256) {
    const problems: PatchProblem[] = [];
    for (const f of plan.files) {
      const exp = Object.prototype.hasOwnProperty.call(opts.expectedSha256, f.canonicalPath)
        ? opts.expectedSha256[f.canonicalPath]
        : Object.prototype.hasOwnProperty.call(opts.expectedSha256, f.path)
          ? opts.expectedSha256[f.path]
          : undefined;
      if (exp === undefined)
        problems.push({ rule: 'patch.changed_since_dry_run', path: f.path, reason: 'the dry run did not include this file' });
      else if (exp !== f.beforeSha256)
        problems.push({
          rule: 'patch.changed_since_dry_run',
          path: f.path,
          reason: `the file changed since the dry run (SHA-256 ${short(exp)} then, ${short(f.beforeSha256)} now); run the dry run again`,
        });
    }
    if (problems.length) return refusal(problems);
  }

  const written: { plan: FilePlan; id?: Identity }[] = [];
  for (const f of plan.files) {
    if (f.existed && Buffer.from(f.beforeBytes!).equals(f.afterBytes)) continue; // nothing to write
    try {
      recheck(f, ctx, port, ops);
      const id = port.identities.get(f.canonicalPath);
      atomicWrite(ops, f.canonicalPath, f.afterBytes, id?.mode, () => {
        // Just before the rename: the target is still what was planned (same inode, or still absent).
        let st: fs.Stats | undefined;
        try {
          st = ops.lstat(f.canonicalPath);
        } catch (e) {
          if (errCode(e) !== 'ENOENT') throw e;
        }
        if (f.existed) {
          if (!st || st.isSymbolicLink() || !st.isFile() || !id || st.ino !== id.ino || st.dev !== id.dev) {
            throw new WriteError(
              'patch.changed_during_write',
              `${f.canonicalPath} was replaced${st?.isSymbolicLink() ? ' by a symlink' : ''} while the patch was being written`,
            );
          }
        } else if (st) {
          throw new WriteError('patch.changed_during_write', `${f.canonicalPath} appeared while the patch was being written`);
        }
        const again = locateFile(f.canonicalPath, ctx);
        if ('rule' in again || again.canonical !== f.canonicalPath)
          throw new WriteError(
            'rule' in again ? again.rule : 'patch.changed_during_write',
            'rule' in again ? again.reason : `${f.canonicalPath} now resolves elsewhere`,
          );
      });
      written.push({ plan: f, id });
    } catch (e) {
      const rule = e instanceof WriteError ? e.rule : 'patch.write_failed';
      const restore = rollback(ops, written);
      const done = written.map((w) => w.plan.canonicalPath);
      const tail =
        done.length === 0
          ? ' Nothing was changed.'
          : restore.failed.length === 0
            ? ` The ${done.length} file(s) already written were restored; nothing is changed.`
            : ` Restoring failed for ${restore.failed.join(', ')}: check these files.`;
      return {
        ...refusal([
          { rule, path: f.path, reason: errorMessage(e) },
          ...restore.failed.map((p) => ({ rule: 'patch.rollback_failed', path: p, reason: restore.errors.get(p) ?? 'restore failed' })),
        ]),
        reason: `Refused: ${f.path}: ${errorMessage(e)} [${rule}].${tail}`,
        restored: done.filter((p) => !restore.failed.includes(p)),
        ...(restore.failed.length ? { restore_failed: restore.failed } : {}),
      };
    }
  }
  return { ok: true, dry_run: false, files: plan.files.map(fileSummary), summary };
}

const short = (h: string | null | undefined): string => (h ? h.slice(0, 12) : 'no file');

/** The file is where it was planned, reached without symlinks, and still has the planned bytes. */
function recheck(f: FilePlan, ctx: PatchContext, port: PlanPort, ops: FileOps): void {
  const where = locateFile(f.canonicalPath, ctx);
  if ('rule' in where) throw new WriteError(where.rule, where.reason);
  if (where.canonical !== f.canonicalPath)
    throw new WriteError('patch.changed_during_write', `${f.canonicalPath} now resolves to ${where.canonical}`);
  if (!f.existed) {
    if (where.entry)
      throw new WriteError('patch.changed_during_write', `${f.canonicalPath} was created by someone else after the patch was planned`);
    return;
  }
  if (!where.entry || where.entry.kind !== 'file')
    throw new WriteError('patch.changed_during_write', `${f.canonicalPath} is no longer a regular file`);
  const now = readRegular(ops, f.canonicalPath, Number.MAX_SAFE_INTEGER);
  const id = port.identities.get(f.canonicalPath);
  if (sha256Hex(now.bytes) !== f.beforeSha256 || !id || now.id.ino !== id.ino || now.id.dev !== id.dev) {
    throw new WriteError('patch.changed_during_write', `${f.canonicalPath} changed after the patch was planned`);
  }
}

let tmpCounter = 0;

/**
 * Writes `bytes` to a new temp file beside `target` (O_EXCL|O_NOFOLLOW, mode `mode` or the default),
 * fsyncs it, calls `beforeRename` (which may throw to abort), renames it over `target` and fsyncs the
 * directory. The temp file never outlives a failure.
 */
function atomicWrite(ops: FileOps, target: string, bytes: Uint8Array, mode: number | undefined, beforeRename?: () => void): void {
  const dir = path.dirname(target);
  const tmp = path.join(
    dir,
    `.${path.basename(target).slice(0, 40)}.bulwark-${process.pid}-${++tmpCounter}-${crypto.randomBytes(4).toString('hex')}.tmp`,
  );
  const fd = ops.open(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | O_NOFOLLOW, 0o600);
  let renamed = false;
  try {
    try {
      let off = 0;
      while (off < bytes.length) off += ops.write(fd, bytes, off, bytes.length - off);
      ops.fchmod(fd, mode ?? 0o666 & ~process.umask());
      ops.fsync(fd);
    } finally {
      ops.close(fd);
    }
    beforeRename?.();
    ops.rename(tmp, target);
    renamed = true;
  } finally {
    if (!renamed) {
      try {
        ops.unlink(tmp);
      } catch {
        /* already gone */
      }
    }
  }
  fsyncDir(ops, dir);
}

function fsyncDir(ops: FileOps, dir: string): void {
  let fd: number;
  try {
    fd = ops.open(dir, fs.constants.O_RDONLY);
  } catch (e) {
    if (process.platform === 'win32') return; // directories cannot be opened for fsync on Windows
    throw e;
  }
  try {
    ops.fsync(fd);
  } catch (e) {
    if (process.platform !== 'win32' && errCode(e) !== 'EINVAL') throw e;
  } finally {
    ops.close(fd);
  }
}

/** Puts back every written file, newest first: before bytes and mode restored atomically, created files removed. */
function rollback(ops: FileOps, written: readonly { plan: FilePlan; id?: Identity }[]): { failed: string[]; errors: Map<string, string> } {
  const failed: string[] = [];
  const errors = new Map<string, string>();
  for (const w of [...written].reverse()) {
    const f = w.plan;
    try {
      if (f.existed) atomicWrite(ops, f.canonicalPath, f.beforeBytes!, w.id?.mode);
      else ops.unlink(f.canonicalPath);
    } catch (e) {
      failed.push(f.canonicalPath);
      errors.set(f.canonicalPath, `could not be restored (${errorMessage(e)})`);
    }
  }
  return { failed, errors };
}
