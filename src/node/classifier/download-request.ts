// What "Bulwark: Download Classifier Model" may be asked to do, and the download around downloadModel:
// the editor layer (src/vscode/download-model.ts) only shows the choices, the progress and the result.
//
// - parseDownloadRequest: the programmatic argument `{ baseUrl, files: [{ name, sha256, remotePath?, size? }],
//   destDir?, name? }`, validated with errors that say what to fix. Plain http only to loopback; every
//   file needs a pinned SHA-256; only the file names of a model folder may be written (the command
//   must not become a way to drop arbitrary files, e.g. `.vscode/tasks.json`, wherever a caller says).
// - knownModelRequest: a KNOWN_MODELS entry as a request (its commit, hashes and sizes), or the reason
//   it is refused (hashes or revision not pinned).
// - runModelDownload: picks the folder (default `<storage>/models/<name>`, inside Bulwark's own state),
//   refuses a caller's folder that already holds files, downloads with the SHA-256 checks, then loads
//   the model once so a folder that would make Tier 1 fail is never reported as ready. Any failure
//   or a cancel leaves no file of the request behind (and removes the folders it created).
// - afterUserConfirms: a caller's request (the command's argument) is downloaded only after the user's
//   explicit yes to downloadQuestion; on a no nothing is fetched or written.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  ModelDownloadError,
  downloadModel,
  hubBaseUrl,
  isPinned,
  type DownloadFile,
  type DownloadProgress,
  type KnownModel,
} from './model-download';
import { loadOnnxClassifier } from './onnx-classifier';
import { ensureDirSync } from '../fs-util';
import { errorMessage } from '../../engine/error-message';

/** A validated request: baseUrl ends with `/`, hashes are lower case, destDir is absolute and resolved. */
export interface ModelDownloadRequest {
  readonly baseUrl: string;
  readonly files: readonly DownloadFile[];
  readonly destDir?: string;
  /** Folder name under Bulwark's storage when destDir is not given. */
  readonly name?: string;
}

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** The files a Hugging Face sequence-classification ONNX folder may hold; nothing else is written. */
export const MODEL_FILE_NAMES: readonly string[] = [
  'model.onnx',
  'model.onnx_data',
  'model.onnx.data',
  'config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'vocab.txt',
  'vocab.json',
  'merges.txt',
  'spm.model',
  'sentencepiece.bpe.model',
];
/** What the loader needs (onnx-classifier.ts); a request without them could never become a working model. */
export const REQUIRED_MODEL_FILES: readonly string[] = ['model.onnx', 'tokenizer.json', 'config.json'];
export const MAX_REQUEST_FILES = MODEL_FILE_NAMES.length;

const SHA256_RE = /^[0-9a-f]{64}$/i;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const REQUEST_KEYS = new Set(['baseUrl', 'files', 'destDir', 'name']);
const FILE_KEYS = new Set(['name', 'sha256', 'remotePath', 'size']);
const USAGE = "expected { baseUrl: 'https://…/', files: [{ name, sha256, remotePath?, size? }], destDir?: '/absolute/folder' }";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown) =>
  typeof v === 'string' ? JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v) : v === undefined ? 'nothing' : typeof v;

/** Validates the command's programmatic argument. */
export function parseDownloadRequest(arg: unknown): Checked<ModelDownloadRequest> {
  const bad = (why: string): Checked<ModelDownloadRequest> => ({ ok: false, error: `invalid download request: ${why}` });
  if (!isRecord(arg)) return bad(`${USAGE}, got ${Array.isArray(arg) ? 'an array' : show(arg)}`);
  const unknown = Object.keys(arg).filter((k) => !REQUEST_KEYS.has(k));
  if (unknown.length) return bad(`unknown field ${unknown.map((k) => JSON.stringify(k)).join(', ')}; ${USAGE}`);

  // baseUrl
  if (typeof arg.baseUrl !== 'string' || !arg.baseUrl.trim()) return bad(`baseUrl must be an http(s) URL, got ${show(arg.baseUrl)}`);
  let base: URL;
  try {
    base = new URL(arg.baseUrl.trim());
  } catch {
    return bad(`baseUrl ${show(arg.baseUrl)} is not a URL`);
  }
  if (base.protocol === 'http:') {
    if (!LOOPBACK_HOSTS.has(base.hostname.toLowerCase()))
      return bad(`baseUrl ${show(arg.baseUrl)}: plain http is allowed only to 127.0.0.1 or localhost; use https`);
  } else if (base.protocol !== 'https:') {
    return bad(`baseUrl must be https (or http to 127.0.0.1/localhost), not ${base.protocol}`);
  }
  if (base.username || base.password) return bad('baseUrl must not contain a user name or password');
  if (base.search || base.hash) return bad('baseUrl must not have a query or fragment (the file paths are appended to it)');
  if (!base.pathname.endsWith('/')) base.pathname += '/';

  // files
  if (!Array.isArray(arg.files) || arg.files.length === 0)
    return bad(
      `files must be a non-empty array of { name, sha256, remotePath?, size? }, got ${Array.isArray(arg.files) ? 'an empty array' : show(arg.files)}`,
    );
  if (arg.files.length > MAX_REQUEST_FILES)
    return bad(`files lists ${arg.files.length} entries; a model folder has at most ${MAX_REQUEST_FILES}`);
  const files: DownloadFile[] = [];
  const seen = new Set<string>();
  for (const [i, f] of arg.files.entries()) {
    const at = `files[${i}]`;
    if (!isRecord(f)) return bad(`${at} must be an object { name, sha256, remotePath?, size? }, got ${show(f)}`);
    const extra = Object.keys(f).filter((k) => !FILE_KEYS.has(k));
    if (extra.length)
      return bad(`${at} has the unknown field ${extra.map((k) => JSON.stringify(k)).join(', ')} (allowed: name, sha256, remotePath, size)`);
    if (typeof f.name !== 'string' || !MODEL_FILE_NAMES.includes(f.name)) {
      return bad(`${at}.name ${show(f.name)} is not a model file name; Bulwark writes only ${MODEL_FILE_NAMES.join(', ')}`);
    }
    if (seen.has(f.name)) return bad(`${f.name} is listed twice`);
    seen.add(f.name);
    if (typeof f.sha256 !== 'string' || !SHA256_RE.test(f.sha256)) {
      return bad(
        `${at}.sha256 of ${f.name} must be its SHA-256 as 64 hex digits, got ${show(f.sha256)}; Bulwark does not download a file it cannot verify`,
      );
    }
    let remotePath: string | undefined;
    if (f.remotePath !== undefined) {
      const problem = remotePathProblem(f.remotePath);
      if (problem) return bad(`${at}.remotePath of ${f.name} ${problem}`);
      remotePath = f.remotePath as string;
    }
    if (f.size !== undefined && !(typeof f.size === 'number' && Number.isSafeInteger(f.size) && f.size >= 0)) {
      return bad(
        `${at}.size of ${f.name} must be its size in bytes (a whole number), got ${typeof f.size === 'number' ? String(f.size) : show(f.size)}`,
      );
    }
    files.push({
      name: f.name,
      sha256: f.sha256.toLowerCase(),
      ...(remotePath !== undefined ? { remotePath } : {}),
      ...(typeof f.size === 'number' ? { size: f.size } : {}),
    });
  }
  const missing = REQUIRED_MODEL_FILES.filter((n) => !seen.has(n));
  if (missing.length) return bad(`files must include ${missing.join(', ')} (a model folder needs ${REQUIRED_MODEL_FILES.join(', ')})`);

  // destDir, name
  let destDir: string | undefined;
  if (arg.destDir !== undefined) {
    if (typeof arg.destDir !== 'string' || !arg.destDir.trim())
      return bad(`destDir must be an absolute folder path, got ${show(arg.destDir)}`);
    if (arg.destDir.includes('\0')) return bad('destDir contains a NUL character');
    if (!path.isAbsolute(arg.destDir)) return bad(`destDir ${show(arg.destDir)} is not an absolute path`);
    destDir = path.resolve(arg.destDir);
  }
  if (arg.name !== undefined && (typeof arg.name !== 'string' || !NAME_RE.test(arg.name))) {
    return bad(`name ${show(arg.name)} must be a folder name of letters, digits, '.', '_' or '-' (at most 64, not starting with '.')`);
  }
  return {
    ok: true,
    value: {
      baseUrl: base.href,
      files,
      ...(destDir !== undefined ? { destDir } : {}),
      ...(typeof arg.name === 'string' ? { name: arg.name } : {}),
    },
  };
}

function remotePathProblem(p: unknown): string | undefined {
  if (typeof p !== 'string' || !p) return `must be a non-empty path relative to baseUrl, got ${show(p)}`;
  if (p.length > 1024) return 'is longer than 1024 characters';
  if (/^[a-z][a-z0-9+.-]*:/i.test(p)) return `${show(p)} must be relative to baseUrl, not a URL`;
  if (p.startsWith('/')) return `${show(p)} must be relative to baseUrl (no leading /)`;
  if (/[\\?#\u0000-\u001f\u007f]/.test(p)) return `${show(p)} must not contain a backslash, '?', '#' or control characters`;
  for (const segment of p.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return `${show(p)} has a malformed %-escape`;
    }
    if (segment === '' || decoded === '.' || decoded === '..') return `${show(p)} must not contain empty, '.' or '..' segments`;
  }
  return undefined;
}

/** Folder name under `<storage>/models/` for a request without destDir: its name, else one derived from its hashes. */
export function modelFolderName(r: ModelDownloadRequest): string {
  if (r.name) return r.name;
  const manifest = [...r.files]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((f) => `${f.name}:${f.sha256}`)
    .join('\n');
  return `custom-${createHash('sha256').update(manifest).digest('hex').slice(0, 12)}`;
}

// ---- known models ------------------------------------------------------------------------------

/** Label suffix of a KNOWN_MODELS entry whose hashes are not pinned. */
export const UNPINNED_LABEL = '(hashes not pinned — cannot be verified)';

export interface KnownModelChoice {
  readonly id: string;
  readonly label: string;
  readonly description: string;
  readonly detail: string;
  readonly pinned: boolean;
}

const mb = (n: number) => `${Math.round(n / 1024 ** 2)} MB`;

export function knownModelChoice(m: KnownModel): KnownModelChoice {
  const pinned = isPinned(m);
  return {
    id: m.id,
    label: pinned ? m.id : `${m.id} ${UNPINNED_LABEL}`,
    description: `${m.repo}@${m.revision.slice(0, 12)} · ${m.license} · about ${mb(m.approxBytes)}`,
    detail: m.description,
    pinned,
  };
}

/** Why Bulwark will not download an entry whose hashes are not pinned, and what to do instead. */
export function unpinnedRefusal(m: KnownModel): string {
  const names = m.files.map((f) => f.remotePath ?? f.name).join(', ');
  return (
    `Bulwark refuses to download ${m.id}: the SHA-256 hashes of its files (or the commit they are of) are not pinned in this version of Bulwark, ` +
    'so the downloaded weights could not be verified, and unverifiable weights could be anything. ' +
    `To use this model, download ${names} from https://huggingface.co/${m.repo} yourself, verify them, ` +
    `put ${m.files.map((f) => f.name).join(', ')} in one folder, and set bulwark.classifier.modelDir (user settings) to that folder's absolute path.`
  );
}

/** A KNOWN_MODELS entry as a download request (into `<storage>/models/<id>`), or why it is refused. */
export function knownModelRequest(m: KnownModel): Checked<ModelDownloadRequest> {
  if (!isPinned(m)) return { ok: false, error: unpinnedRefusal(m) };
  // Only what the download checks: the sources stay in the table, for people.
  return parseDownloadRequest({
    baseUrl: hubBaseUrl(m),
    files: m.files.map((f) => ({ name: f.name, sha256: f.sha256, remotePath: f.remotePath, size: f.size })),
    name: m.id,
  });
}

// ---- the download ------------------------------------------------------------------------------

export interface RequestProgress extends DownloadProgress {
  /** 0-based position of `file` in the request. */
  readonly index: number;
  readonly count: number;
  /** Overall 0…1, counting every file as an equal share. */
  readonly fraction: number;
}

export interface RunOptions {
  /** `<globalStorage>/models`: where a request without destDir goes (undefined: such a request is refused). */
  readonly modelsRoot?: string;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: RequestProgress) => void;
  /** Loads the folder once to prove it works (default: the ONNX loader, then released). */
  readonly verify?: (dir: string) => Promise<void>;
  /** Passed to downloadModel (tests). */
  readonly idleTimeoutMs?: number;
}

export type RunResult =
  { readonly ok: true; readonly dir: string } | { readonly ok: false; readonly error: string; readonly cancelled: boolean };

const running = new Set<string>();
const dirKey = (dir: string) => (process.platform === 'win32' || process.platform === 'darwin' ? dir.toLowerCase() : dir);

export async function verifyModelDir(dir: string): Promise<void> {
  const c = await loadOnnxClassifier(dir);
  await c.dispose();
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

/** e.g. "model.onnx (1/3): 12.0 MB of 704.3 MB". */
export function progressMessage(p: RequestProgress): string {
  return `${p.file} (${p.index + 1}/${p.count}): ${formatBytes(p.received)}${p.total !== undefined ? ` of ${formatBytes(p.total)}` : ''}`;
}

/**
 * Downloads a validated request. Never throws: the result says what happened. On failure or cancel
 * no file of the request is left in the folder (downloadModel keeps them under temporary names
 * until all hashes match) and the folders this call created are removed again.
 */
export async function runModelDownload(r: ModelDownloadRequest, o: RunOptions = {}): Promise<RunResult> {
  let dir: string;
  if (r.destDir) {
    dir = r.destDir;
  } else if (o.modelsRoot) {
    dir = path.join(o.modelsRoot, modelFolderName(r));
  } else {
    return {
      ok: false,
      error: 'no destDir was given and Bulwark has no local storage folder to put the model in; pass destDir (an absolute path)',
      cancelled: false,
    };
  }
  const key = dirKey(dir);
  if (running.has(key)) return { ok: false, error: `a download into ${dir} is already running`, cancelled: false };
  running.add(key);
  let created: string | undefined;
  const removeCreated = async () => {
    if (!created) return;
    // Only empty folders go, innermost first, up to the first one this call created.
    for (let d = dir; ; d = path.dirname(d)) {
      try {
        await fs.promises.rmdir(d);
      } catch {
        break;
      }
      if (d === created || path.dirname(d) === d) break;
    }
  };
  const fail = async (error: string, cancelled = false): Promise<RunResult> => {
    await removeCreated();
    return { ok: false, error, cancelled };
  };
  try {
    // The folder: Bulwark's own (may hold an earlier download of the same model) or a new or empty one.
    let st: fs.Stats | undefined;
    try {
      st = await fs.promises.stat(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return await fail(`cannot use ${dir}: ${errorMessage(e)}`);
    }
    if (st && !st.isDirectory()) return await fail(`${dir} exists and is not a folder`);
    if (st && r.destDir) {
      const entries = await fs.promises.readdir(dir);
      if (entries.length)
        return await fail(
          `destDir ${dir} is not empty (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}); Bulwark downloads only into a new or empty folder, so it never replaces files it did not write`,
        );
    }
    if (!st) {
      try {
        created = ensureDirSync(dir) ?? dir;
      } catch (e) {
        return await fail(`cannot create ${dir}: ${errorMessage(e)}`);
      }
    }

    const count = r.files.length;
    const index = new Map(r.files.map((f, i) => [f.name, i]));
    try {
      await downloadModel({
        baseUrl: r.baseUrl,
        files: r.files,
        destDir: dir,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.idleTimeoutMs !== undefined ? { idleTimeoutMs: o.idleTimeoutMs } : {}),
        onProgress: (p) => {
          const i = index.get(p.file) ?? 0;
          const part = p.total ? Math.min(p.received / p.total, 1) : 0;
          o.onProgress?.({ ...p, index: i, count, fraction: (i + part) / count });
        },
      });
    } catch (e) {
      const aborted = (e instanceof ModelDownloadError && e.code === 'aborted') || o.signal?.aborted === true;
      return await fail(aborted ? 'the download was cancelled' : errorMessage(e), aborted);
    }

    // Every hash matched. Now prove the folder loads, so "ready" means Tier 1 will work with it.
    const discard = async (error: string, cancelled = false) => {
      await Promise.all(r.files.map((f) => fs.promises.rm(path.join(dir, f.name), { force: true }).catch(() => undefined)));
      return fail(error, cancelled);
    };
    try {
      await (o.verify ?? verifyModelDir)(dir);
    } catch (e) {
      return await discard(
        `the files were downloaded and their SHA-256 hashes match, but they are not a model Bulwark can load, so they were removed: ${errorMessage(e)}`,
      );
    }
    if (o.signal?.aborted) return await discard('the download was cancelled', true);
    return { ok: true, dir };
  } finally {
    running.delete(key);
  }
}

// ---- a caller's request: the user's yes first ------------------------------------------------------

/** The question put to the user before a caller's request replaces Tier 1's model (a modal in the editor). */
export interface DownloadQuestion {
  readonly message: string;
  readonly detail: string;
  /** The one answer that starts the download; anything else (another button, dismissing) is a no. */
  readonly yes: string;
}

export function downloadQuestion(r: ModelDownloadRequest): DownloadQuestion {
  return {
    message: 'Bulwark: replace the Tier 1 classifier model?',
    detail: `A caller asked Bulwark to download ${r.files.map((f) => f.name).join(', ')} from ${r.baseUrl} and use it to judge every action. Only continue if you started this and trust the source.`,
    yes: 'Download and Use',
  };
}

export const DOWNLOAD_NOT_CONFIRMED = 'the download was not confirmed by the user';

export type Confirmed<T> = { readonly confirmed: true; readonly result: T } | { readonly confirmed: false; readonly error: string };

/**
 * A command call can come from anything that runs commands (an agent tool too): the hashes only prove
 * the files match the caller's own list, so replacing Tier 1's model needs the user's yes. `ask`
 * resolves true only on an explicit yes; on a no nothing is fetched or written and `run` is not called.
 */
export async function afterUserConfirms<T>(
  r: ModelDownloadRequest,
  ask: (q: DownloadQuestion) => Promise<boolean>,
  run: (r: ModelDownloadRequest) => Promise<T>,
): Promise<Confirmed<T>> {
  if ((await ask(downloadQuestion(r))) !== true) return { confirmed: false, error: DOWNLOAD_NOT_CONFIRMED };
  return { confirmed: true, result: await run(r) };
}
