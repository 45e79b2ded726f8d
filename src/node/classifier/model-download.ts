// Downloads a classifier model directory file by file, each checked against a pinned SHA-256.
//
// Every file streams into a temporary file in the destination directory (`.<name>.<random>.partial`,
// never the real name), is hashed on the way, and is renamed into place only after every file of the
// set has arrived and matched its hash. Any failure (HTTP error, dropped connection, short body,
// hash mismatch, abort, idle timeout, too many redirects) deletes the temporary files and throws, so
// an interrupted download never leaves a file under a name the loader would read.
//
// Transport: node:http / node:https by default (inside VS Code these honour the editor's proxy
// settings), or any fetch-compatible function (`fetchImpl`, called with `redirect: 'manual'`).
// Redirects are followed here, at most 5; a redirect from https to http is refused; extra request
// headers (e.g. a hub token for a gated model) go to the first origin only, never to a redirect
// target on another origin (the hub redirects large files to a CDN).
import { randomBytes, createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { ensureDirSync } from '../fs-util';
import { errorMessage } from '../../engine/error-message';

export const MAX_REDIRECTS = 5;
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_BYTES = 4 * 1024 ** 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const SHA256_RE = /^[0-9a-f]{64}$/i;

/** The minimal response a transport returns: a WHATWG `fetch` Response fits. */
export interface FetchLikeResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  readonly body: AsyncIterable<Uint8Array> | null;
}
/** A transport; it must not follow redirects itself. The global `fetch` fits. */
export type FetchLike = (
  url: string,
  init: { signal: AbortSignal; headers: Record<string, string>; redirect: 'manual' },
) => Promise<FetchLikeResponse>;

export interface DownloadFile {
  /** Local file name in destDir: a plain name (no directories). */
  readonly name: string;
  /** Expected SHA-256, 64 hex digits. Anything else (e.g. a placeholder) is refused. */
  readonly sha256: string;
  /** Path relative to baseUrl (default: `name`), e.g. `onnx/model.onnx`. */
  readonly remotePath?: string;
  /**
   * Expected size in bytes (e.g. the `size` of a Git LFS pointer). When given, a Content-Length that
   * differs is refused before any byte is read, and so is a body that runs past it or ends short.
   */
  readonly size?: number;
}

export interface DownloadProgress {
  readonly file: string;
  readonly received: number;
  readonly total?: number;
}

export interface DownloadOptions {
  /** http(s) URL the files' paths are relative to (a trailing `/` is added if missing). */
  readonly baseUrl: string;
  readonly files: readonly DownloadFile[];
  readonly destDir: string;
  readonly onProgress?: (p: DownloadProgress) => void;
  readonly signal?: AbortSignal;
  readonly fetchImpl?: FetchLike;
  /** Extra request headers, sent to the base URL's origin only. */
  readonly headers?: Record<string, string>;
  /** Abort when no data arrives for this long (default 60 s). */
  readonly idleTimeoutMs?: number;
  /** Refuse a file larger than this (default 4 GiB). */
  readonly maxBytes?: number;
}

/** Thrown for every download failure; `file` names the file concerned, when there is one. */
export class ModelDownloadError extends Error {
  override readonly name = 'ModelDownloadError';
  constructor(
    message: string,
    readonly file?: string,
    readonly code:
      'aborted' | 'hash_mismatch' | 'size_mismatch' | 'http' | 'network' | 'redirect' | 'bad_options' | 'too_large' | 'timeout' = 'network',
  ) {
    super(message);
  }
}

/** node:http(s) as a FetchLike (no redirects followed, no pooled agent). */
export const nodeFetch: FetchLike = (url, init) =>
  new Promise<FetchLikeResponse>((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(u, { method: 'GET', headers: init.headers, signal: init.signal }, (res) => {
      resolve({
        status: res.statusCode ?? 0,
        headers: {
          get: (name) => {
            const v = res.headers[name.toLowerCase()];
            return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
          },
        },
        body: res,
      });
    });
    req.on('error', reject);
    req.end();
  });

function discard(body: AsyncIterable<Uint8Array> | null): void {
  const b = body as { cancel?: () => Promise<void>; destroy?: () => void } | null;
  try {
    if (typeof b?.destroy === 'function') b.destroy();
    else if (typeof b?.cancel === 'function') b.cancel().catch(() => undefined);
  } catch {
    /* nothing to release */
  }
}

function validate(o: DownloadOptions): URL {
  let base: URL;
  try {
    base = new URL(o.baseUrl.endsWith('/') ? o.baseUrl : `${o.baseUrl}/`);
  } catch {
    throw new ModelDownloadError(`download: baseUrl ${JSON.stringify(o.baseUrl)} is not a URL`, undefined, 'bad_options');
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:')
    throw new ModelDownloadError(`download: baseUrl must be http(s), not ${base.protocol}`, undefined, 'bad_options');
  if (!o.files.length) throw new ModelDownloadError('download: no files given', undefined, 'bad_options');
  const seen = new Set<string>();
  for (const f of o.files) {
    if (!f.name || f.name !== path.basename(f.name) || f.name === '.' || f.name === '..' || /[\\/\0:]/.test(f.name))
      throw new ModelDownloadError(`download: ${JSON.stringify(f.name)} is not a plain file name`, f.name, 'bad_options');
    if (seen.has(f.name.toLowerCase())) throw new ModelDownloadError(`download: ${f.name} is listed twice`, f.name, 'bad_options');
    seen.add(f.name.toLowerCase());
    if (f.size !== undefined && !(Number.isSafeInteger(f.size) && f.size >= 0))
      throw new ModelDownloadError(
        `download: the size of ${f.name} must be a whole number of bytes, got ${String(f.size)}`,
        f.name,
        'bad_options',
      );
    if (!SHA256_RE.test(f.sha256))
      throw new ModelDownloadError(
        `download: the SHA-256 of ${f.name} is not pinned (got ${JSON.stringify(f.sha256)}, need 64 hex digits); refusing to download an unverifiable file`,
        f.name,
        'bad_options',
      );
    if (
      f.remotePath !== undefined &&
      (/^[a-z][a-z0-9+.-]*:/i.test(f.remotePath) || f.remotePath.startsWith('/') || f.remotePath.split('/').includes('..'))
    ) {
      throw new ModelDownloadError(
        `download: remotePath ${JSON.stringify(f.remotePath)} of ${f.name} must be relative to baseUrl`,
        f.name,
        'bad_options',
      );
    }
  }
  return base;
}

/**
 * Downloads every file of `o.files` into `o.destDir`, verifying each SHA-256 before any file is
 * renamed into place. Throws ModelDownloadError; on any failure no new file appears under a real name.
 */
export async function downloadModel(o: DownloadOptions): Promise<void> {
  const base = validate(o);
  const fetchImpl = o.fetchImpl ?? nodeFetch;
  if (o.signal?.aborted) throw new ModelDownloadError('download aborted', undefined, 'aborted');
  const destDir = path.resolve(o.destDir);
  ensureDirSync(destDir);
  const staged: { tmp: string; final: string }[] = [];
  try {
    for (const f of o.files) {
      const tmp = path.join(destDir, `.${f.name}.${randomBytes(8).toString('hex')}.partial`);
      staged.push({ tmp, final: path.join(destDir, f.name) });
      const url = new URL(f.remotePath ?? f.name, base);
      const actual = await fetchToFile(url, tmp, f, o, fetchImpl);
      if (actual.toLowerCase() !== f.sha256.toLowerCase()) {
        throw new ModelDownloadError(
          `download: SHA-256 mismatch for ${f.name} from ${url.href}: expected ${f.sha256.toLowerCase()}, got ${actual}`,
          f.name,
          'hash_mismatch',
        );
      }
    }
    if (o.signal?.aborted) throw new ModelDownloadError('download aborted', undefined, 'aborted');
    for (const s of staged) await fs.promises.rename(s.tmp, s.final);
  } catch (e) {
    await Promise.all(staged.map((s) => fs.promises.rm(s.tmp, { force: true }).catch(() => undefined)));
    throw e instanceof ModelDownloadError ? e : new ModelDownloadError(`download failed: ${errorMessage(e)}`);
  }
}

/** GET `start` (following redirects) into `tmp`; returns the SHA-256 (hex) of what was written. */
async function fetchToFile(start: URL, tmp: string, f: DownloadFile, o: DownloadOptions, fetchImpl: FetchLike): Promise<string> {
  const name = f.name;
  const idleMs = o.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
  const sizeMismatch = (url: URL, what: string) =>
    new ModelDownloadError(
      `download of ${name} from ${url.href}: ${what}, but the pinned size is ${f.size} bytes; refusing a file that is not the pinned one`,
      name,
      'size_mismatch',
    );
  if (o.signal?.aborted) throw new ModelDownloadError(`download of ${name} aborted`, name, 'aborted');
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, idleMs);
  };
  const onAbort = () => controller.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  const fail = (e: unknown, url: URL): ModelDownloadError => {
    if (e instanceof ModelDownloadError) return e;
    if (o.signal?.aborted) return new ModelDownloadError(`download of ${name} aborted`, name, 'aborted');
    if (timedOut) return new ModelDownloadError(`download of ${name} from ${url.href} stalled: no data for ${idleMs} ms`, name, 'timeout');
    return new ModelDownloadError(`download of ${name} from ${url.href} failed: ${errorMessage(e)}`, name, 'network');
  };

  let url = start;
  try {
    arm();
    let res: FetchLikeResponse;
    for (let hop = 0; ; hop++) {
      // The hash and the length are of the bytes as stored: ask for no content coding.
      const headers = { ...(url.origin === start.origin ? o.headers : {}), 'accept-encoding': 'identity' };
      try {
        res = await fetchImpl(url.href, { signal: controller.signal, headers, redirect: 'manual' });
      } catch (e) {
        throw fail(e, url);
      }
      if (!REDIRECT_STATUSES.has(res.status)) break;
      discard(res.body);
      const location = res.headers.get('location');
      if (!location)
        throw new ModelDownloadError(`download of ${name}: HTTP ${res.status} from ${url.href} without a Location`, name, 'redirect');
      if (hop + 1 > MAX_REDIRECTS)
        throw new ModelDownloadError(`download of ${name}: more than ${MAX_REDIRECTS} redirects (last ${url.href})`, name, 'redirect');
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new ModelDownloadError(
          `download of ${name}: bad redirect Location ${JSON.stringify(location)} from ${url.href}`,
          name,
          'redirect',
        );
      }
      if (next.protocol !== 'https:' && next.protocol !== 'http:')
        throw new ModelDownloadError(`download of ${name}: redirect to a ${next.protocol} URL refused`, name, 'redirect');
      if (url.protocol === 'https:' && next.protocol === 'http:')
        throw new ModelDownloadError(`download of ${name}: redirect from https to http (${next.href}) refused`, name, 'redirect');
      url = next;
      arm();
    }
    if (res.status < 200 || res.status > 299) {
      discard(res.body);
      throw new ModelDownloadError(`download of ${name}: HTTP ${res.status} from ${url.href}`, name, 'http');
    }
    const lengthHeader = res.headers.get('content-length');
    const coding = (res.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
    // With a content coding (a server ignoring accept-encoding), content-length counts the coded bytes.
    const total = coding === 'identity' && lengthHeader !== null && /^\d+$/.test(lengthHeader.trim()) ? Number(lengthHeader) : undefined;
    if (f.size !== undefined && total !== undefined && total !== f.size) {
      discard(res.body);
      throw sizeMismatch(url, `the server announces ${total} bytes`);
    }
    if (total !== undefined && total > maxBytes) {
      discard(res.body);
      throw new ModelDownloadError(`download of ${name}: ${total} bytes is over the ${maxBytes}-byte limit`, name, 'too_large');
    }
    if (!res.body) throw new ModelDownloadError(`download of ${name}: empty response from ${url.href}`, name, 'network');

    const hash = createHash('sha256');
    let received = 0;
    o.onProgress?.({ file: name, received, total });
    const fh = await fs.promises.open(tmp, 'wx', 0o644);
    try {
      try {
        for await (const chunk of res.body) {
          arm();
          received += chunk.byteLength;
          if (received > maxBytes)
            throw new ModelDownloadError(`download of ${name}: more than the ${maxBytes}-byte limit`, name, 'too_large');
          if (f.size !== undefined && received > f.size) throw sizeMismatch(url, `more than ${f.size} bytes arrived`);
          if (total !== undefined && received > total)
            throw new ModelDownloadError(`download of ${name}: more data than the announced ${total} bytes`, name, 'network');
          hash.update(chunk);
          await fh.write(chunk);
          o.onProgress?.({ file: name, received, total });
        }
      } catch (e) {
        discard(res.body);
        throw fail(e, url);
      }
      if (controller.signal.aborted) throw fail(new Error('aborted'), url);
      if (total !== undefined && received !== total)
        throw new ModelDownloadError(`download of ${name} from ${url.href} ended early: ${received} of ${total} bytes`, name, 'network');
      if (f.size !== undefined && received !== f.size) throw sizeMismatch(url, `${received} bytes arrived`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    return hash.digest('hex');
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
  }
}

// ---- known models -------------------------------------------------------------------------------

/** Stands in for a hash nobody has verified yet. downloadModel refuses it. */
export const PLACEHOLDER_SHA256 = 'TO-BE-PINNED';

const COMMIT_RE = /^[0-9a-f]{40}$/;

/** A file of a KNOWN_MODELS entry: where it is, what it must be, and who published that. */
export interface KnownModelFile extends DownloadFile {
  readonly remotePath: string;
  readonly size: number;
  /**
   * How the hub stores the file at the pinned revision. 'lfs': the repository holds a Git LFS pointer
   * whose `oid sha256:` and `size` are this file's SHA-256 and size. 'git': a plain git blob, for which
   * the hub publishes only a git (SHA-1) blob id, so the SHA-256 comes from the published pins in `sources`.
   */
  readonly storage: 'lfs' | 'git';
  /**
   * Where the SHA-256 and size are published. First the hub's own URL of the file at the pinned
   * revision (`raw/<revision>/…` is the LFS pointer itself; `blob/<revision>/…` the file page), then
   * the public pins, at a commit, from which the values in this table were read.
   */
  readonly sources: readonly string[];
}

export interface KnownModel {
  /** Short id used in settings and as the local directory name. */
  readonly id: string;
  /** Hugging Face repository id. */
  readonly repo: string;
  /** The commit (40 hex digits) every file is downloaded from: the hashes are of the files at that commit. */
  readonly revision: string;
  readonly description: string;
  readonly license: string;
  /** Approximate total size, for the progress notification. */
  readonly approxBytes: number;
  readonly files: readonly KnownModelFile[];
}

/** https://huggingface.co/<repo>/resolve/<revision>/ */
export const hubBaseUrl = (m: KnownModel) => `https://huggingface.co/${m.repo}/resolve/${encodeURIComponent(m.revision)}/`;

/** True when the revision is a commit and every file has a real SHA-256: the caller must refuse an entry that is not pinned. */
export const isPinned = (m: KnownModel) => COMMIT_RE.test(m.revision) && m.files.every((f) => SHA256_RE.test(f.sha256));

const total = (files: readonly KnownModelFile[]) => files.reduce((n, f) => n + f.size, 0);

// The values below were read from public pins of the same files at the same hub commit (cited in
// each file's `sources`), not fetched from the hub by whoever wrote this table: the hub was not
// reachable from there. They are checked where it matters: downloadModel refuses any byte stream
// whose length or SHA-256 differs, so a wrong value here can only make a download fail, never let a
// different file through. Only files whose SHA-256 has a published source are listed: the loader
// needs model.onnx, tokenizer.json and config.json; tokenizer_config.json is optional and is left out.
const PINS = 'https://github.com/jamjet-labs/jamjet-guardrails/blob/232f228af00f428593767719e843b2edd01c9a66/benchmarks/pins.json';

const V2 = 'protectai/deberta-v3-base-prompt-injection-v2';
const V2_REV = '90c9989b1a342275dd0d1a95aad283c04e075671';
const V2_FILES: readonly KnownModelFile[] = [
  {
    name: 'model.onnx',
    remotePath: 'onnx/model.onnx',
    storage: 'lfs',
    size: 738_563_188,
    sha256: 'f0ea7f239f765aedbde7c9e163a7cb38a79c5b8853d3f76db5152172047b228c',
    sources: [`https://huggingface.co/${V2}/raw/${V2_REV}/onnx/model.onnx`, PINS],
  },
  {
    name: 'tokenizer.json',
    remotePath: 'onnx/tokenizer.json',
    storage: 'git',
    size: 8_648_886,
    sha256: '752fe5f0d5678ad563e1bd2ecc1ddf7a3ba7e2024d0ac1dba1a72975e26dff2f',
    sources: [`https://huggingface.co/${V2}/blob/${V2_REV}/onnx/tokenizer.json`, PINS],
  },
  {
    name: 'config.json',
    remotePath: 'onnx/config.json',
    storage: 'git',
    size: 1_014,
    sha256: '3093743035223c46b1497a72e939e56fa0a50afbd7bafbf7eb8aad060b8d23f8',
    sources: [`https://huggingface.co/${V2}/blob/${V2_REV}/onnx/config.json`, PINS],
  },
];

const V1 = 'protectai/deberta-v3-base-prompt-injection';
const V1_REV = '373b6af0f8d16739cff5de28be326652246bfaa3';
const V1_FILES: readonly KnownModelFile[] = [
  {
    name: 'model.onnx',
    remotePath: 'onnx/model.onnx',
    storage: 'lfs',
    size: 738_563_189,
    sha256: 'a87edda563046d1bd30f0a600f31757ce0b4ae8c43478afd87ec14b0f7e14d65',
    sources: [`https://huggingface.co/${V1}/raw/${V1_REV}/onnx/model.onnx`, PINS],
  },
  {
    name: 'tokenizer.json',
    remotePath: 'onnx/tokenizer.json',
    storage: 'git',
    size: 8_648_886,
    sha256: '752fe5f0d5678ad563e1bd2ecc1ddf7a3ba7e2024d0ac1dba1a72975e26dff2f',
    sources: [`https://huggingface.co/${V1}/blob/${V1_REV}/onnx/tokenizer.json`, PINS],
  },
  {
    name: 'config.json',
    remotePath: 'onnx/config.json',
    storage: 'git',
    size: 1_008,
    sha256: '24f532e676a553600175949f98cc5caa2bf581851fd7fdd205ef3cf6d8302890',
    sources: [`https://huggingface.co/${V1}/blob/${V1_REV}/onnx/config.json`, PINS],
  },
];

/**
 * Models the download command offers, each pinned to a hub commit with the SHA-256 and size of every
 * file it downloads. Left out: Meta's Llama Prompt Guard 2 (Llama 4 Community License: not a
 * permissive licence, gated behind accepting it on the hub, and no ONNX export from Meta) and
 * protectai/deberta-v3-small-prompt-injection-v2 (no published SHA-256 found for its files).
 */
export const KNOWN_MODELS: readonly KnownModel[] = [
  {
    id: 'deberta-v3-base-prompt-injection-v2',
    repo: V2,
    revision: V2_REV,
    description:
      'ProtectAI DeBERTa-v3-base prompt-injection classifier v2 (labels SAFE / INJECTION; the ONNX export under onnx/, inputs input_ids and attention_mask)',
    license: 'Apache-2.0',
    approxBytes: total(V2_FILES),
    files: V2_FILES,
  },
  {
    id: 'deberta-v3-base-prompt-injection',
    repo: V1,
    revision: V1_REV,
    description:
      'ProtectAI DeBERTa-v3-base prompt-injection classifier v1, superseded by v2 (labels SAFE / INJECTION; the ONNX export under onnx/)',
    license: 'Apache-2.0',
    approxBytes: total(V1_FILES),
    files: V1_FILES,
  },
];

/** Downloads a KNOWN_MODELS entry into destDir; refuses an entry that is not pinned. */
export async function downloadKnownModel(
  m: KnownModel,
  destDir: string,
  extra: Omit<DownloadOptions, 'baseUrl' | 'files' | 'destDir'> = {},
): Promise<void> {
  if (!isPinned(m))
    throw new ModelDownloadError(
      `download: the model ${m.id} (${m.repo}) has no pinned SHA-256 hashes yet, or its revision is not a commit; refusing to download it`,
      undefined,
      'bad_options',
    );
  await downloadModel({ ...extra, baseUrl: hubBaseUrl(m), files: m.files, destDir });
}
