// Streaming verification of an audit log file against its anchor database, and the HMAC helpers.
import { createHmac, hash as oneShotHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ChainVerifier, anchorMessage, type AnchorState, type VerifyResult } from '../../engine/audit';
import { StateDb } from './state-db';

export type HmacKey = Buffer;

/** Hex SHA-256 of a string (node:crypto one-shot: no Hash object per line). */
export const sha256hex = (text: string): string => oneShotHash('sha256', text, 'hex');

export function anchorMac(key: HmacKey, kind: 'head' | 'checkpoint', seq: number, hash: string): string {
  return createHmac('sha256', key).update(anchorMessage(kind, seq, hash)).digest('hex');
}
export function macValid(key: HmacKey, kind: 'head' | 'checkpoint', seq: number, hash: string, mac: string): boolean {
  const want = Buffer.from(anchorMac(key, kind, seq, hash), 'hex');
  const got = Buffer.from(/^[0-9a-f]{64}$/.test(mac) ? mac : '', 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}

/** The anchor as the verifier sees it: every signature checked with the key. */
export function readAnchor(db: StateDb, key: HmacKey): AnchorState {
  const h = db.auditHead();
  return {
    head: h ? { seq: h.seq, hash: h.hash, valid: macValid(key, 'head', h.seq, h.hash, h.mac) } : null,
    checkpoints: db.auditCheckpoints().map((c) => ({ seq: c.seq, hash: c.hash, valid: macValid(key, 'checkpoint', c.seq, c.hash, c.mac) })),
  };
}

export interface VerifyProgress { readonly bytes: number; readonly totalBytes: number; readonly entries: number }

export interface VerifyStreamOptions {
  readonly anchor?: AnchorState;
  readonly onProgress?: (p: VerifyProgress) => void;
  /**
   * Also parse every line as JSON and require its exact RFC 8785 form and field types (slower).
   * Without it (the default) every line's hash is still checked over its exact bytes, and seq and
   * prev_hash are read from the line's canonical tail: since every byte is committed by the chain of
   * hashes up to the HMAC-signed anchor, any modification is still detected.
   */
  readonly strict?: boolean;
  readonly chunkSize?: number;
  /** Hash-checking worker threads (default: available parallelism − 1, at most 4; 0 = inline). */
  readonly workers?: number;
}

const HASH_KEY = Buffer.from(',"hash":"');
const PREV_KEY = Buffer.from(',"prev_hash":"');
const SEQ_KEY = Buffer.from('","seq":');
const SUFFIX = 75; // ,"hash":"<64 hex>"}

/**
 * The first line in `b` (lines end with \n) whose body does not hash to its recorded hash. The body is
 * the line with the `,"hash":"…"` member cut off: hashed in place by writing `}` over the comma.
 * The same source runs in the worker threads (see WORKER_SOURCE), so keep it self-contained.
 */
function firstBadHash(b: Buffer, firstLine: number, hashFn: (data: Uint8Array) => string, suffix: number): number {
  let off = 0;
  let line = firstLine;
  while (off < b.length) {
    let nl = b.indexOf(10, off);
    if (nl < 0) nl = b.length;
    if (nl - off > suffix + 1 && b[nl - 1] === 125) {
      const at = nl - suffix;
      const c = b[at]!;
      b[at] = 125;
      const h = hashFn(b.subarray(off, at + 1));
      b[at] = c;
      if (h !== b.toString('latin1', nl - 66, nl - 2)) return line;
    }
    off = nl + 1;
    line++;
  }
  return -1;
}
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { hash } = require('node:crypto');
const firstBadHash = (${firstBadHash.toString()});
parentPort.on('message', (m) => {
  parentPort.postMessage({ id: m.id, bad: firstBadHash(Buffer.from(m.buf), m.firstLine, (d) => hash('sha256', d, 'hex'), ${SUFFIX}) });
});`;

class HashPool {
  private readonly workers: Worker[] = [];
  private next = 0;
  private seq = 0;
  private readonly waiting = new Map<number, (bad: number) => void>();
  constructor(n: number) {
    for (let i = 0; i < n; i++) {
      const w = new Worker(WORKER_SOURCE, { eval: true });
      w.on('message', (m: { id: number; bad: number }) => { const r = this.waiting.get(m.id); this.waiting.delete(m.id); r?.(m.bad); });
      w.on('error', (e) => { for (const r of this.waiting.values()) r(-2); this.waiting.clear(); void e; });
      this.workers.push(w);
    }
  }
  check(chunk: Buffer, firstLine: number): Promise<number> {
    const ab = new ArrayBuffer(chunk.length);
    new Uint8Array(ab).set(chunk);
    const id = this.seq++;
    const w = this.workers[this.next++ % this.workers.length]!;
    return new Promise((resolve) => { this.waiting.set(id, resolve); w.postMessage({ id, buf: ab, firstLine }, [ab]); });
  }
  async close(): Promise<void> { await Promise.all(this.workers.map((w) => w.terminate())); }
}

/** Reads seq and prev_hash from one line's canonical tail (bytes only); undefined if it has none. */
function tailFields(b: Buffer, off: number, nl: number): { seq: number; prev: string; hash: string } | undefined {
  if (nl - off <= SUFFIX + 1 || b[nl - 1] !== 125 || b[nl - 2] !== 34 || b.compare(HASH_KEY, 0, HASH_KEY.length, nl - SUFFIX, nl - SUFFIX + HASH_KEY.length) !== 0) return undefined;
  const p = b.lastIndexOf(PREV_KEY, nl - SUFFIX - PREV_KEY.length);
  if (p < off || b.compare(SEQ_KEY, 0, SEQ_KEY.length, p + 78, p + 78 + SEQ_KEY.length) !== 0) return undefined;
  let i = p + 78 + SEQ_KEY.length;
  let seq = 0;
  const d0 = i;
  for (; i < nl && b[i]! >= 48 && b[i]! <= 57 && i - d0 < 16; i++) seq = seq * 10 + (b[i]! - 48);
  if (i === d0 || b[i] !== 44) return undefined;
  return { seq, prev: b.toString('latin1', p + 14, p + 78), hash: b.toString('latin1', nl - 66, nl - 2) };
}

/**
 * Streams the log through the chain verifier in large chunks (split on newlines as bytes, so UTF-8
 * is never cut). Hashes are checked in worker threads while this thread follows seq/prev_hash links.
 * Without an anchor only internal consistency is checked.
 */
export async function verifyLogStream(logFile: string, opts: VerifyStreamOptions = {}): Promise<VerifyResult> {
  const v = new ChainVerifier(sha256hex, { anchor: opts.anchor, strictCanonical: true });
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(logFile, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    return v.finish(); // a missing log is an empty one: truncation is judged against the anchor
  }
  const hashInline = (d: Uint8Array) => oneShotHash('sha256', d, 'hex');
  let pool: HashPool | undefined;
  const inflight: { first: number; p: Promise<number> }[] = [];
  let badHash = -1;
  try {
    const total = (await fh.stat()).size;
    const size = opts.chunkSize ?? 8 * 1024 * 1024;
    const nWorkers = opts.strict ? 0 : opts.workers ?? Math.min(4, Math.max(0, availableParallelism() - 1));
    if (nWorkers > 0 && total > size) pool = new HashPool(nWorkers);
    let buf = Buffer.allocUnsafe(size);
    let carry = 0; // bytes of an unfinished line at the start of buf
    let pos = 0;
    let lineNo = 0;
    let lastReport = 0;
    outer: while (!v.done && badHash < 0) {
      if (carry === buf.length) { const bigger = Buffer.allocUnsafe(buf.length * 2); buf.copy(bigger, 0, 0, carry); buf = bigger; }
      const { bytesRead } = await fh.read(buf, carry, buf.length - carry, pos);
      pos += bytesRead;
      const end = carry + bytesRead;
      if (bytesRead === 0) {
        if (carry > 0) v.tornTail(buf.toString('utf8', 0, carry), lineNo + 1);
        break;
      }
      const lastNl = buf.lastIndexOf(10, end - 1);
      if (lastNl < 0) { carry = end; continue; }
      const firstLine = lineNo + 1;
      if (opts.strict) {
        const text = buf.toString('utf8', 0, lastNl);
        let start = 0;
        while (start <= text.length) {
          let nl = text.indexOf('\n', start);
          if (nl < 0) nl = text.length;
          if (!v.line(text.slice(start, nl), ++lineNo)) break outer;
          start = nl + 1;
        }
      } else {
        const chunk = buf.subarray(0, lastNl + 1);
        if (pool) {
          inflight.push({ first: firstLine, p: pool.check(chunk, firstLine) });
          while (inflight.length > 2 * nWorkers) {
            const bad = await inflight.shift()!.p;
            if (bad === -2) throw new Error('a hash-checking worker failed');
            if (bad !== -1) { badHash = bad; break; }
          }
        } else {
          badHash = firstBadHash(chunk, firstLine, hashInline, SUFFIX);
        }
        let off = 0;
        while (off <= lastNl) {
          const nl = buf.indexOf(10, off);
          lineNo++;
          if (badHash >= 0 && lineNo >= badHash) break outer;
          const t = tailFields(buf, off, nl);
          if (!t) { v.malformedAt(lineNo, nl === off ? 'empty line' : 'not an audit entry line (no canonical prev_hash/seq/hash tail)'); break outer; }
          if (!v.linked(t.seq, t.prev, t.hash, lineNo)) break outer;
          off = nl + 1;
        }
      }
      carry = end - lastNl - 1;
      buf.copy(buf, 0, lastNl + 1, end);
      if (opts.onProgress && (pos - lastReport > 32 * 1024 * 1024 || pos === total)) { lastReport = pos; opts.onProgress({ bytes: pos - carry, totalBytes: total, entries: lineNo }); }
    }
    for (const f of inflight) {
      if (badHash >= 0) break;
      const bad = await f.p;
      if (bad === -2) throw new Error('a hash-checking worker failed');
      if (bad !== -1) badHash = bad;
    }
  } finally {
    await pool?.close();
    await fh.close();
  }
  const r = v.finish();
  if (badHash >= 0 && (!r.firstBroken || r.firstBroken.line === 0 || badHash <= r.firstBroken.line)) {
    return { ok: false, checked: badHash - 1, lastSeq: r.lastSeq, lastHash: r.lastHash, firstBroken: { seq: badHash, line: badHash, kind: 'hash_mismatch', message: "the entry's content does not match its hash" } };
  }
  return r;
}

/** `bulwark audit verify`: the log against its anchor database (read-only). */
export async function verifyLogFile(opts: { logFile: string; dbFile: string; hmacKey: HmacKey; onProgress?: (p: VerifyProgress) => void; strict?: boolean }): Promise<VerifyResult> {
  if (!fs.existsSync(opts.dbFile)) {
    return { ok: false, checked: 0, lastSeq: 0, lastHash: '', firstBroken: { seq: null, line: 0, kind: 'truncation', message: `the anchor database ${opts.dbFile} does not exist, so truncation and rewrites cannot be ruled out` } };
  }
  const db = new StateDb(opts.dbFile);
  let anchor: AnchorState;
  try { anchor = readAnchor(db, opts.hmacKey); } finally { db.close(); }
  return verifyLogStream(opts.logFile, { anchor, onProgress: opts.onProgress, strict: opts.strict });
}
