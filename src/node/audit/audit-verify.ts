// Streaming verification of an audit log file against its anchor database, and the HMAC helpers.
import { createHmac, hash as oneShotHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ChainVerifier, anchorMessage, type AnchorState, type VerifyResult } from '../../engine/audit';
import { StateDb } from './state-db';
import { errorMessage } from '../../engine/error-message';

export type HmacKey = Buffer;

/** Hex SHA-256 of a string (node:crypto one-shot: no Hash object per line). */
export const sha256hex = (text: string): string => oneShotHash('sha256', text, 'hex');
const hashBytes = (data: Uint8Array): string => oneShotHash('sha256', data, 'hex');

export function anchorMac(key: HmacKey, kind: 'head' | 'checkpoint' | 'witness', seq: number, hash: string): string {
  return createHmac('sha256', key)
    .update(anchorMessage(kind, seq, hash))
    .digest('hex');
}
export function macValid(key: HmacKey, kind: 'head' | 'checkpoint' | 'witness', seq: number, hash: string, mac: string): boolean {
  const want = Buffer.from(anchorMac(key, kind, seq, hash), 'hex');
  const got = Buffer.from(/^[0-9a-f]{64}$/.test(mac) ? mac : '', 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}

/** A signed (seq, hash) of the chain. */
export interface WitnessMark {
  readonly seq: number;
  readonly hash: string;
  readonly mac: string;
}

/**
 * A high-water mark of the chain kept where the log and its database are not (the extension's
 * global storage): written at checkpoints and on close, so rolling the log and the database back
 * together to an older matching pair is detected.
 */
export interface AuditWitness {
  /** The last mark, undefined if none; throws if the store is unreadable or malformed. */
  read(): WitnessMark | undefined;
  /** Durably records a mark (atomic replace). */
  write(mark: WitnessMark): void;
}

/** A witness in one JSON file shared by several logs: `{ "<log path>": { seq, hash, mac } }`. */
export function fileWitness(file: string, logFile: string): AuditWitness {
  const readAll = (): Record<string, unknown> => {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw e;
    }
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${file} is not a JSON object`);
    return v as Record<string, unknown>;
  };
  return {
    read() {
      const m = readAll()[logFile] as Partial<WitnessMark> | undefined;
      if (m === undefined) return undefined;
      if (typeof m !== 'object' || m === null || !Number.isSafeInteger(m.seq) || typeof m.hash !== 'string' || typeof m.mac !== 'string')
        throw new Error(`${file}: the mark for ${logFile} is malformed`);
      return { seq: m.seq!, hash: m.hash, mac: m.mac };
    },
    write(mark) {
      const all = readAll();
      all[logFile] = { seq: mark.seq, hash: mark.hash, mac: mark.mac };
      const tmp = `${file}.${process.pid}.tmp`;
      const fd = fs.openSync(tmp, 'w', 0o600);
      try {
        fs.writeSync(fd, JSON.stringify(all, null, 1));
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, file);
    },
  };
}

/** The anchor as the verifier sees it: every signature checked with the key. */
export function readAnchor(db: StateDb, key: HmacKey, witness?: AuditWitness): AnchorState {
  const h = db.auditHead();
  const w = witness?.read();
  return {
    head: h ? { seq: h.seq, hash: h.hash, valid: macValid(key, 'head', h.seq, h.hash, h.mac) } : null,
    checkpoints: db.auditCheckpoints().map((c) => ({ seq: c.seq, hash: c.hash, valid: macValid(key, 'checkpoint', c.seq, c.hash, c.mac) })),
    ...(w ? { witness: { seq: w.seq, hash: w.hash, valid: macValid(key, 'witness', w.seq, w.hash, w.mac) } } : {}),
  };
}

export interface VerifyProgress {
  readonly bytes: number;
  readonly totalBytes: number;
  readonly entries: number;
}

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

/** What a chunk of whole lines says about itself when every line in it checked out. */
export interface ChunkSummary {
  readonly lines: number;
  readonly firstSeq: number;
  readonly firstPrev: string;
  readonly lastSeq: number;
  readonly lastHash: string;
}

/**
 * The fast path over a chunk of whole lines (each ends with \n), run in worker threads: every
 * line's hash over its exact bytes (the body is the line with the `,"hash":"…"` member cut off,
 * hashed in place by writing `}` over the comma), its canonical tail (prev_hash, seq, hash), the
 * links between consecutive lines as bytes, and the anchor points that fall inside the chunk.
 * Returns null at the first anything-unusual: the caller then replays the chunk on the precise
 * path (ChainVerifier) to name the first broken entry. Self-contained: its source runs in workers.
 */
export function scanChunk(b: Buffer, hashHex: (data: Uint8Array) => string, points: Map<number, string> | null): ChunkSummary | null {
  // Byte loops, not Buffer.compare/indexOf: the needles are a few bytes and the calls cost more than the work.
  const SUF = 75;
  const HK = ',"hash":"',
    PK = ',"prev_hash":"',
    SK = '","seq":';
  const at_ = (text: string, pos: number): boolean => {
    for (let k = 0; k < text.length; k++) if (b[pos + k] !== text.charCodeAt(k)) return false;
    return true;
  };
  let off = 0;
  let lines = 0;
  let firstSeq = 0,
    firstPrev = '',
    lastSeq = 0,
    lastHashAt = -1;
  while (off < b.length) {
    const nl = b.indexOf(10, off);
    if (nl < 0) return null;
    const at = nl - SUF; // `,"hash":"<64 hex>"}` ends the line
    if (at - off < PK.length + 64 + SK.length + 2 || b[nl - 1] !== 125 || b[nl - 2] !== 34 || !at_(HK, at)) return null;
    // `,"prev_hash":"<64 hex>","seq":<digits>,` comes before `"session"` and `"ts"` (RFC 8785 key order).
    let p = at - 40;
    for (; p >= off; p--) if (b[p] === 44 && b[p + 2] === 112 && b[p + 6] === 95 && at_(PK, p)) break;
    if (p < off || !at_(SK, p + PK.length + 64)) return null;
    const prevAt = p + PK.length;
    let i = prevAt + 64 + SK.length;
    const d0 = i;
    let seq = 0;
    for (; i < at && b[i]! >= 48 && b[i]! <= 57 && i - d0 < 16; i++) seq = seq * 10 + (b[i]! - 48);
    if (i === d0 || b[i] !== 44) return null;
    b[at] = 125;
    const h = hashHex(b.subarray(off, at + 1));
    b[at] = 44;
    for (let k = 0, q = nl - 66; k < 64; k++, q++) if (h.charCodeAt(k) !== b[q]) return null;
    if (lines === 0) {
      firstSeq = seq;
      firstPrev = b.toString('latin1', prevAt, prevAt + 64);
    } else {
      if (seq !== lastSeq + 1) return null;
      for (let k = 0; k < 64; k++) if (b[prevAt + k] !== b[lastHashAt + k]) return null;
    }
    if (points !== null) {
      const want = points.get(seq);
      if (want !== undefined && want !== h) return null;
    }
    lastSeq = seq;
    lastHashAt = nl - 66;
    lines++;
    off = nl + 1;
  }
  if (lines === 0) return null;
  return { lines, firstSeq, firstPrev, lastSeq, lastHash: b.toString('latin1', lastHashAt, lastHashAt + 64) };
}
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { hash } = require('node:crypto');
const scanChunk = (${scanChunk.toString()});
const points = workerData.points ? new Map(workerData.points) : null;
const hashHex = (d) => hash('sha256', d, 'hex');
parentPort.on('message', (m) => {
  let summary = null;
  try { summary = scanChunk(Buffer.from(m.buf, 0, m.length), hashHex, points); } catch { summary = null; }
  parentPort.postMessage({ id: m.id, summary });
});`;

class ChunkPool {
  private readonly workers: Worker[] = [];
  private next = 0;
  private seq = 0;
  private failed: Error | undefined;
  private readonly waiting = new Map<number, { resolve: (s: ChunkSummary | null) => void; reject: (e: Error) => void }>();
  constructor(n: number, points: Map<number, string> | null) {
    for (let i = 0; i < n; i++) {
      const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { points: points ? [...points] : null } });
      w.on('message', (m: { id: number; summary: ChunkSummary | null }) => {
        const r = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        r?.resolve(m.summary);
      });
      w.on('error', (e) => {
        this.failed = new Error(`a hash-checking worker failed: ${errorMessage(e)}`);
        for (const r of this.waiting.values()) r.reject(this.failed);
        this.waiting.clear();
      });
      this.workers.push(w);
    }
  }
  /** Transfers `ab` (its first `length` bytes are whole lines) to a worker: the caller must not touch it again. */
  scan(ab: ArrayBuffer, length: number): Promise<ChunkSummary | null> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.seq++;
    const w = this.workers[this.next++ % this.workers.length]!;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      w.postMessage({ id, buf: ab, length }, [ab]);
    });
  }
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** Reads seq and prev_hash from one line's canonical tail (bytes only); undefined if it has none. */
function tailFields(b: Buffer, off: number, nl: number): { seq: number; prev: string; hash: string } | undefined {
  if (
    nl - off <= SUFFIX + 1 ||
    b[nl - 1] !== 125 ||
    b[nl - 2] !== 34 ||
    b.compare(HASH_KEY, 0, HASH_KEY.length, nl - SUFFIX, nl - SUFFIX + HASH_KEY.length) !== 0
  )
    return undefined;
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
 * The precise path over a chunk of whole lines, line by line through the ChainVerifier: used when
 * the fast path declined a chunk (or does not link to what came before), to name the first broken
 * entry and what is wrong with it. Returns the number of lines, or false once the chain is broken.
 */
function replayChunk(v: ChainVerifier, b: Buffer, firstLine: number): number | false {
  let off = 0;
  let lineNo = firstLine - 1;
  while (off < b.length) {
    const nl = b.indexOf(10, off);
    lineNo++;
    const t = tailFields(b, off, nl);
    if (!t) {
      v.malformedAt(lineNo, nl === off ? 'empty line' : 'not an audit entry line (no canonical prev_hash/seq/hash tail)');
      return false;
    }
    const at = nl - SUFFIX;
    b[at] = 125;
    const h = hashBytes(b.subarray(off, at + 1));
    b[at] = 44;
    if (h !== t.hash) {
      v.hashMismatchAt(lineNo, t.hash);
      return false;
    }
    if (!v.linked(t.seq, t.prev, t.hash, lineNo)) return false;
    off = nl + 1;
  }
  return lineNo - firstLine + 1;
}

/**
 * Streams the log through the chain verifier in large chunks (split on newlines as bytes, so UTF-8
 * is never cut). Without `strict`, chunks go to worker threads that check hashes, links and anchor
 * points on their own (scanChunk); this thread only reads the file and joins the chunks' ends.
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
  const points = v.anchorPoints();
  let pool: ChunkPool | undefined;
  // Chunks handed to workers, in file order. A declined chunk is read again for the precise replay
  // (rare: only where the chain is broken), so nothing is copied on the fast path.
  const inflight: { at: number; bytes: Buffer | number; result: Promise<ChunkSummary | null> }[] = [];
  let settledLines = 0; // lines of the chunks settled so far (all intact, or we would have stopped)
  const settle = async (c: (typeof inflight)[number]): Promise<boolean> => {
    const s = await c.result;
    if (s && s.firstSeq === v.nextSeq && s.firstPrev === v.lastHash) {
      settledLines += s.lines;
      return v.acceptVerified(s.lines, s.lastSeq, s.lastHash);
    }
    let bytes = c.bytes;
    if (typeof bytes === 'number') {
      const b = Buffer.alloc(bytes);
      const { bytesRead } = await fh.read(b, 0, bytes, c.at);
      if (bytesRead !== bytes) throw new Error(`${logFile} changed while it was being verified`);
      bytes = b;
    }
    const lines = replayChunk(v, bytes, settledLines + 1);
    if (lines === false) return false;
    settledLines += lines;
    return true;
  };
  try {
    const total = (await fh.stat()).size;
    const size = opts.chunkSize ?? 8 * 1024 * 1024;
    const nWorkers = opts.strict ? 0 : (opts.workers ?? Math.min(4, Math.max(1, availableParallelism())));
    if (nWorkers > 0 && total > size) pool = new ChunkPool(nWorkers, points);
    let buf = Buffer.from(new ArrayBuffer(size));
    let carry = 0; // bytes of an unfinished line at the start of buf
    let pos = 0;
    let lastReport = 0;
    outer: while (!v.done) {
      if (carry === buf.length) {
        const bigger = Buffer.from(new ArrayBuffer(buf.length * 2));
        buf.copy(bigger, 0, 0, carry);
        buf = bigger;
      }
      const { bytesRead } = await fh.read(buf, carry, buf.length - carry, pos);
      pos += bytesRead;
      const end = carry + bytesRead;
      if (bytesRead === 0) {
        for (const c of inflight.splice(0)) if (!(await settle(c))) break outer;
        if (carry > 0) v.tornTail(buf.toString('utf8', 0, carry), settledLines + 1);
        break;
      }
      const lastNl = buf.lastIndexOf(10, end - 1);
      if (lastNl < 0) {
        carry = end;
        continue;
      }
      const chunk = buf.subarray(0, lastNl + 1);
      if (opts.strict) {
        const text = chunk.toString('utf8', 0, lastNl);
        let start = 0;
        while (start <= text.length) {
          let nl = text.indexOf('\n', start);
          if (nl < 0) nl = text.length;
          if (!v.line(text.slice(start, nl), ++settledLines)) break outer;
          start = nl + 1;
        }
        buf.copy(buf, 0, lastNl + 1, end);
      } else {
        const next = Buffer.from(new ArrayBuffer(buf.length));
        buf.copy(next, 0, lastNl + 1, end);
        if (pool) {
          // The worker gets the buffer itself (transferred, not copied).
          inflight.push({ at: pos - end, bytes: chunk.length, result: pool.scan(buf.buffer as ArrayBuffer, chunk.length) });
          while (inflight.length > 2 * nWorkers) if (!(await settle(inflight.shift()!))) break outer;
        } else if (!(await settle({ at: pos - end, bytes: chunk, result: Promise.resolve(scanChunk(chunk, hashBytes, points)) }))) {
          break;
        }
        buf = next;
      }
      carry = end - lastNl - 1;
      if (opts.onProgress && (pos - lastReport > 32 * 1024 * 1024 || pos === total)) {
        lastReport = pos;
        opts.onProgress({ bytes: pos - carry, totalBytes: total, entries: settledLines });
      }
    }
  } finally {
    await pool?.close();
    await fh.close();
  }
  return v.finish();
}

/** `bulwark audit verify`: the log against its anchor database (read-only). */
export async function verifyLogFile(opts: {
  logFile: string;
  dbFile: string;
  hmacKey: HmacKey;
  witness?: AuditWitness;
  onProgress?: (p: VerifyProgress) => void;
  strict?: boolean;
}): Promise<VerifyResult> {
  if (!fs.existsSync(opts.dbFile)) {
    return {
      ok: false,
      checked: 0,
      lastSeq: 0,
      lastHash: '',
      firstBroken: {
        seq: null,
        line: 0,
        kind: 'truncation',
        message: `the anchor database ${opts.dbFile} does not exist, so truncation and rewrites cannot be ruled out`,
      },
    };
  }
  const db = new StateDb(opts.dbFile);
  let anchor: AnchorState;
  try {
    anchor = readAnchor(db, opts.hmacKey, opts.witness);
  } finally {
    db.close();
  }
  return verifyLogStream(opts.logFile, { anchor, onProgress: opts.onProgress, strict: opts.strict });
}
