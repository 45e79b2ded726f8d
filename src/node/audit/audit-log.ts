// The audit log: JSON lines, hash-chained, anchored in the state database. Appends are durable and
// group-committed: every append queued while a write+fsync is in flight goes into the next batch,
// and an append resolves only after its line is fsynced and the anchor head (HMAC-signed) covers it.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import readline from 'node:readline';
import canonicalize from 'canonicalize';
import type { CheckResult } from '../../engine/engine';
import {
  GENESIS_HASH,
  entryLine,
  eventsForDecision,
  isAuditEventType,
  redactArgs,
  splitLine,
  type AuditEntry,
  type AuditEventInput,
  type DecisionArgs,
  type UnhashedEntry,
  type VerifyResult,
} from '../../engine/audit';
import type { SecretRuleSet } from '../../engine/secrets';
import { StateDb } from './state-db';
import {
  anchorMac,
  macValid,
  readAnchor,
  sha256hex,
  verifyLogStream,
  type AuditWitness,
  type HmacKey,
  type VerifyProgress,
} from './audit-verify';

export class AuditIntegrityError extends Error {
  constructor(
    message: string,
    readonly result?: VerifyResult,
  ) {
    super(message);
    this.name = 'AuditIntegrityError';
  }
}

export interface AuditLogOptions {
  readonly logFile: string;
  readonly dbFile: string;
  /** HMAC-SHA256 key for the anchor (≥ 16 bytes), kept outside the workspace by the host. */
  readonly hmacKey: HmacKey;
  /** A signed checkpoint every N entries (default 1000). */
  readonly checkpointEvery?: number;
  /** Session recorded on RECOVERY / INTEGRITY_VIOLATION entries the log writes itself. */
  readonly session?: string;
  /** A high-water mark outside the log's folder (see AuditWitness), written at checkpoints and on close. */
  readonly witness?: AuditWitness;
  /** Reports what open() found and repaired (torn line, unanchored entries). */
  readonly onRecovery?: (message: string) => void;
  /** Secret rules every entry is redacted with before it is hashed (default: the bundled rules). */
  readonly secretRules?: SecretRuleSet;
}

export interface AuditQuery {
  readonly session?: string;
  readonly type?: string;
  /** ISO time, epoch ms, or a duration back from now: 30s, 15m, 2h, 7d. */
  readonly since?: string | number | Date;
  /** Entries whose decision is this verdict (ACTION_EVALUATED/APPROVED/BLOCKED). */
  readonly decision?: 'allow' | 'block' | 'escalate';
}

interface Pending {
  line: string;
  entry: AuditEntry;
  resolve: (e: AuditEntry) => void;
  reject: (e: Error) => void;
}

const MAX_TORN_IN_DETAILS = 64 * 1024;

export class AuditLog {
  private lastSeq: number;
  private lastHash: string;
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private failed: Error | undefined;
  private closed = false;
  private readonly listeners = new Set<(entries: readonly AuditEntry[]) => void>();
  private readonly checkpointEvery: number;

  private constructor(
    private readonly opts: AuditLogOptions,
    private readonly db: StateDb,
    private readonly fh: fs.promises.FileHandle,
    head: { seq: number; hash: string },
  ) {
    this.lastSeq = head.seq;
    this.lastHash = head.hash;
    this.checkpointEvery = Math.max(1, Math.floor(opts.checkpointEvery ?? 1000));
  }

  get logFile(): string {
    return this.opts.logFile;
  }
  get head(): { seq: number; hash: string } {
    return { seq: this.lastSeq, hash: this.lastHash };
  }

  /**
   * Opens (or creates) the log and its anchor. A torn final line is cut off, kept in
   * `<log>.torn-<ts>` and in the RECOVERY entry that seals it; entries written but not yet anchored
   * (crash between fsync and anchor update) are checked and sealed with RECOVERY too. A log that
   * disagrees with its anchor (truncated, rolled back, rewritten, bad signature) throws
   * AuditIntegrityError: the chain is never silently restarted.
   */
  static async open(opts: AuditLogOptions): Promise<AuditLog> {
    if (!Buffer.isBuffer(opts.hmacKey) || opts.hmacKey.length < 16) throw new Error('the audit HMAC key must be at least 16 bytes');
    const db = new StateDb(opts.dbFile);
    let fh: fs.promises.FileHandle | undefined;
    try {
      const headRow = db.auditHead();
      if (headRow && !macValid(opts.hmacKey, 'head', headRow.seq, headRow.hash, headRow.mac))
        throw new AuditIntegrityError(`${opts.dbFile}: the audit anchor's head signature is invalid (wrong key or a modified database)`);
      const anchored = headRow ? { seq: headRow.seq, hash: headRow.hash } : { seq: 0, hash: GENESIS_HASH };
      const mark = opts.witness?.read();
      if (mark && !macValid(opts.hmacKey, 'witness', mark.seq, mark.hash, mark.mac))
        throw new AuditIntegrityError(
          `the audit log's high-water mark for ${opts.logFile} has an invalid signature (wrong key or a modified mark)`,
        );
      if (mark && mark.seq > anchored.seq)
        throw new AuditIntegrityError(
          `${opts.logFile} and its anchor end at seq ${anchored.seq}, but the high-water mark kept outside the log folder records seq ${mark.seq}: the log and its database were rolled back together or replaced`,
        );
      if (!fs.existsSync(opts.logFile) && anchored.seq > 0)
        throw new AuditIntegrityError(`${opts.logFile} is missing but the anchor records ${anchored.seq} entries`);
      fh = await fs.promises.open(opts.logFile, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_APPEND, 0o600);
      const recovery: Record<string, unknown> = {};
      const notes: string[] = [];
      const tail = await readTail(fh);
      if (tail.torn.length) {
        const side = `${opts.logFile}.torn-${new Date().toISOString().replace(/[:.]/g, '-')}`;
        await fs.promises.writeFile(side, tail.torn, { mode: 0o600, flush: true });
        await fh.truncate(tail.validEnd);
        await fh.sync();
        recovery.torn_line = {
          offset: tail.validEnd,
          length: tail.torn.length,
          kept_in: side,
          ...(tail.torn.length <= MAX_TORN_IN_DETAILS ? { bytes_base64: tail.torn.toString('base64') } : {}),
        };
        notes.push(
          `the last line was torn (${tail.torn.length} bytes at offset ${tail.validEnd}, a write cut short); it was removed from the log and kept in ${side}`,
        );
      }
      let last = { seq: 0, hash: GENESIS_HASH };
      if (tail.lastLine !== undefined) {
        const parts = splitLine(tail.lastLine);
        const e = parts ? safeParse(parts.body) : undefined;
        if (!parts || !e || typeof e.seq !== 'number' || sha256hex(parts.body) !== parts.hash)
          throw new AuditIntegrityError(`${opts.logFile}: the last complete line is not a valid audit entry; run \`bulwark audit verify\``);
        last = { seq: e.seq, hash: parts.hash };
      }
      if (last.seq < anchored.seq)
        throw new AuditIntegrityError(
          `${opts.logFile} ends at seq ${last.seq} but the anchor's head is seq ${anchored.seq}: the log was truncated or rolled back`,
        );
      if (last.seq === anchored.seq && last.hash !== anchored.hash)
        throw new AuditIntegrityError(
          `${opts.logFile}: the last entry (seq ${last.seq}) differs from the anchor's head: the log was rewritten or replaced`,
        );
      if (last.seq > anchored.seq) {
        // Written and fsynced but never acknowledged: the crash hit before the anchor update. Check the
        // whole chain (internal links + every anchored point) before taking them in.
        // One hashing thread: opening runs beside the UI that waits for the log (all cores are for Verify).
        const r = await verifyLogStream(opts.logFile, { anchor: readAnchor(db, opts.hmacKey, opts.witness), workers: 1 });
        if (r.firstBroken?.kind !== 'unanchored' || r.lastSeq !== last.seq)
          throw new AuditIntegrityError(
            `${opts.logFile}: entries beyond the anchor do not continue the chain (${r.firstBroken?.kind ?? 'ok'}: ${r.firstBroken?.message ?? ''})`,
            r,
          );
        recovery.unanchored = { from_seq: anchored.seq + 1, to_seq: last.seq };
        notes.push(
          `entries ${anchored.seq + 1}–${last.seq} were written but not acknowledged before a crash; they verify and are now anchored`,
        );
      }
      const log = new AuditLog(opts, db, fh, last);
      if (notes.length) {
        opts.onRecovery?.(notes.join('; '));
        await log.append({ event: 'RECOVERY', session: opts.session ?? 'bulwark', details: { ...recovery, message: notes.join('; ') } });
      }
      return log;
    } catch (e) {
      await fh?.close().catch(() => undefined);
      db.close();
      throw e;
    }
  }

  /** Appends one event; resolves with the entry once it is on disk and anchored. */
  append(input: AuditEventInput): Promise<AuditEntry> {
    if (this.closed) return Promise.reject(new Error('the audit log is closed'));
    if (this.failed) return Promise.reject(new Error(`the audit log failed earlier and accepts no more entries: ${this.failed.message}`));
    let pending: Pending;
    try {
      pending = this.prepare(input);
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    const p = new Promise<AuditEntry>((resolve, reject) => {
      pending.resolve = resolve;
      pending.reject = reject;
    });
    this.queue.push(pending);
    this.flushing ??= this.flushLoop();
    return p;
  }

  /** The events of one engine decision, appended in order (one batch). */
  appendDecision(result: CheckResult, args: DecisionArgs): Promise<AuditEntry[]> {
    return Promise.all(eventsForDecision(result, args).map((e) => this.append(e)));
  }

  onAppend(listener: (entries: readonly AuditEntry[]) => void): { dispose(): void } {
    this.listeners.add(listener);
    return {
      dispose: () => {
        this.listeners.delete(listener);
      },
    };
  }

  private prepare(input: AuditEventInput): Pending {
    if (!isAuditEventType(input.event)) throw new Error(`unknown audit event type \`${String(input.event)}\``);
    if (typeof input.session !== 'string') throw new Error('an audit event needs a session string');
    const raw = (JSON.parse(JSON.stringify(input.details ?? {})) ?? {}) as Record<string, unknown>;
    if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error('audit details must be an object');
    // Every string of every entry (keys too), whatever event carries it: a secret written into the
    // hash chain could never be removed again. A redaction that fails refuses the entry.
    const details = redactArgs(raw, this.opts.secretRules) as Record<string, unknown>;
    const unhashed: UnhashedEntry = {
      seq: this.lastSeq + 1,
      id: randomUUID(),
      ts: new Date().toISOString(),
      session: input.session,
      event: input.event,
      ...(input.action_type === undefined ? {} : { action_type: redactArgs(input.action_type, this.opts.secretRules) as string }),
      details,
      prev_hash: this.lastHash,
    };
    const body = canonicalize(unhashed);
    if (body === undefined) throw new Error('audit entry cannot be canonicalised');
    const hash = sha256hex(body);
    this.lastSeq = unhashed.seq;
    this.lastHash = hash;
    return { line: entryLine(body, hash), entry: { ...unhashed, hash }, resolve: () => undefined, reject: () => undefined };
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue;
        this.queue = [];
        try {
          if (this.failed) throw this.failed;
          const buf = Buffer.from(batch.map((p) => p.line + '\n').join(''), 'utf8');
          let off = 0;
          while (off < buf.length) off += (await this.fh.write(buf, off, buf.length - off)).bytesWritten;
          await this.fh.datasync();
          const k = this.opts.hmacKey;
          const cps = batch
            .filter((p) => p.entry.seq % this.checkpointEvery === 0)
            .map((p) => ({ seq: p.entry.seq, hash: p.entry.hash, mac: anchorMac(k, 'checkpoint', p.entry.seq, p.entry.hash) }));
          const h = batch[batch.length - 1]!.entry;
          this.db.commitAnchor({ seq: h.seq, hash: h.hash, mac: anchorMac(k, 'head', h.seq, h.hash) }, cps);
          const cp = cps[cps.length - 1];
          if (cp && this.opts.witness)
            this.opts.witness.write({ seq: cp.seq, hash: cp.hash, mac: anchorMac(k, 'witness', cp.seq, cp.hash) });
        } catch (e) {
          // The in-memory chain is now ahead of the disk: stop accepting entries (fail closed).
          this.failed ??= e instanceof Error ? e : new Error(String(e));
          for (const p of [...batch, ...this.queue.splice(0)]) p.reject(this.failed);
          continue;
        }
        for (const p of batch) p.resolve(p.entry);
        const entries = batch.map((p) => p.entry);
        for (const l of this.listeners) {
          try {
            l(entries);
          } catch {
            /* a listener cannot break the log */
          }
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Waits until every append so far is durable (or failed). */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  async *entries(): AsyncGenerator<AuditEntry> {
    yield* readEntries(this.opts.logFile);
  }

  async *query(q: AuditQuery): AsyncGenerator<AuditEntry> {
    await this.drain();
    yield* queryEntries(readEntries(this.opts.logFile), q);
  }

  async *export(format: 'jsonl' | 'csv'): AsyncGenerator<string> {
    await this.drain();
    yield* exportEntries(readEntries(this.opts.logFile), format);
  }

  /**
   * Verifies the file against the anchor. A broken chain is itself recorded as INTEGRITY_VIOLATION
   * (the break stays in the file, so later verifications still report it).
   */
  async verify(onProgress?: (p: VerifyProgress) => void, opts: { record?: boolean } = {}): Promise<VerifyResult> {
    await this.drain();
    const r = await verifyLogStream(this.opts.logFile, { anchor: readAnchor(this.db, this.opts.hmacKey, this.opts.witness), onProgress });
    if (!r.ok && (opts.record ?? true) && !this.failed && !this.closed) {
      await this.append({
        event: 'INTEGRITY_VIOLATION',
        session: this.opts.session ?? 'bulwark',
        details: { ...r.firstBroken, checked: r.checked },
      }).catch(() => undefined);
    }
    return r;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.drain();
    this.closed = true;
    try {
      // The exact end of the chain, so any later rollback of both files is detected.
      if (this.opts.witness && !this.failed && this.lastSeq > 0)
        this.opts.witness.write({
          seq: this.lastSeq,
          hash: this.lastHash,
          mac: anchorMac(this.opts.hmacKey, 'witness', this.lastSeq, this.lastHash),
        });
    } finally {
      await this.fh.close();
      this.db.close();
    }
  }
}

function safeParse(s: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The last complete line and any bytes after the last newline. */
async function readTail(fh: fs.promises.FileHandle): Promise<{ lastLine?: string; torn: Buffer; validEnd: number }> {
  const size = (await fh.stat()).size;
  if (size === 0) return { torn: Buffer.alloc(0), validEnd: 0 };
  let want = Math.min(size, 64 * 1024);
  for (;;) {
    const buf = Buffer.alloc(want);
    await fh.read(buf, 0, want, size - want);
    const lastNl = buf.lastIndexOf(10);
    if (lastNl < 0 && want < size) {
      want = Math.min(size, want * 4);
      continue;
    }
    const validEnd = lastNl < 0 ? 0 : size - want + lastNl + 1;
    const torn = Buffer.from(buf.subarray(lastNl + 1));
    if (lastNl < 0) return { torn, validEnd };
    const prevNl = lastNl === 0 ? -1 : buf.lastIndexOf(10, lastNl - 1);
    if (prevNl < 0 && want < size) {
      want = Math.min(size, want * 4);
      continue;
    }
    return { lastLine: buf.toString('utf8', prevNl + 1, lastNl), torn, validEnd };
  }
}

/** Every parseable entry of a log file, in order (unparseable lines are skipped: use verify). */
export async function* readEntries(logFile: string): AsyncGenerator<AuditEntry> {
  if (!fs.existsSync(logFile)) return;
  const rl = readline.createInterface({ input: fs.createReadStream(logFile, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of rl) {
    const e = line ? safeParse(line) : undefined;
    if (e && typeof e.seq === 'number') yield e as unknown as AuditEntry;
  }
}

export function parseSince(since: string | number | Date, now = Date.now()): number {
  if (since instanceof Date) return since.getTime();
  if (typeof since === 'number') return since;
  const rel = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/.exec(since.trim());
  if (rel) return now - Number(rel[1]) * { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 }[rel[2] as 's' | 'm' | 'h' | 'd'];
  if (/^\d+$/.test(since.trim())) return Number(since);
  const t = Date.parse(since);
  if (Number.isNaN(t)) throw new Error(`cannot read the time \`${since}\` (use ISO 8601, epoch ms, or 30s/15m/2h/7d)`);
  return t;
}

export const entryDecision = (e: AuditEntry): string | undefined => {
  const d = (e.details as { decision?: { decision?: unknown } }).decision;
  if (d && typeof d.decision === 'string') return d.decision;
  if (e.event === 'ACTION_BLOCKED') return 'block';
  if (e.event === 'ACTION_APPROVED') return 'allow';
  return undefined;
};

export async function* queryEntries(source: AsyncIterable<AuditEntry>, q: AuditQuery): AsyncGenerator<AuditEntry> {
  const since = q.since === undefined ? undefined : parseSince(q.since);
  for await (const e of source) {
    if (q.session !== undefined && e.session !== q.session) continue;
    if (q.type !== undefined && e.event !== q.type) continue;
    if (since !== undefined && !(Date.parse(e.ts) >= since)) continue;
    if (q.decision !== undefined && entryDecision(e) !== q.decision) continue;
    yield e;
  }
}

const CSV_COLUMNS = [
  'seq',
  'id',
  'ts',
  'session',
  'event',
  'action_type',
  'decision',
  'rules',
  'reason',
  'details',
  'prev_hash',
  'hash',
] as const;
function csvField(v: unknown): string {
  const s = v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  // Quote always; a leading = + - @ is prefixed with ' so spreadsheets do not run it as a formula.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return `"${safe.replace(/"/g, '""')}"`;
}
export async function* exportEntries(source: AsyncIterable<AuditEntry>, format: 'jsonl' | 'csv'): AsyncGenerator<string> {
  if (format === 'csv') yield CSV_COLUMNS.join(',') + '\r\n';
  for await (const e of source) {
    if (format === 'jsonl') {
      yield JSON.stringify(e) + '\n';
      continue;
    }
    const d = e.details as { decision?: { rules?: unknown; reason?: unknown }; rules?: unknown; reason?: unknown };
    const row: Record<(typeof CSV_COLUMNS)[number], unknown> = {
      seq: String(e.seq),
      id: e.id,
      ts: e.ts,
      session: e.session,
      event: e.event,
      action_type: e.action_type,
      decision: entryDecision(e),
      rules: (d.decision?.rules ?? d.rules) as unknown,
      reason: d.decision?.reason ?? d.reason,
      details: e.details,
      prev_hash: e.prev_hash,
      hash: e.hash,
    };
    yield CSV_COLUMNS.map((c) => csvField(row[c])).join(',') + '\r\n';
  }
}
