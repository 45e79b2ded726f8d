// Chain verification, fed one line at a time so the host can stream files of any size. Pure: the
// SHA-256 function and the anchor (already checked HMACs) come from the host.
import canonicalize from 'canonicalize';
import { GENESIS_HASH, isAuditEventType, splitLine, type Sha256Hex } from './types';
import { errorMessage } from '../error-message';

export const BREAK_KINDS = [
  'hash_mismatch',
  'broken_link',
  'sequence_gap',
  'reordering',
  'malformed',
  'torn_line',
  'truncation',
  'anchor_mismatch',
  'unanchored',
  'bad_checkpoint',
] as const;
export type BreakKind = (typeof BREAK_KINDS)[number];

export interface BrokenEntry {
  /** The entry's sequence number as expected at that point (null when the line has none). */
  readonly seq: number | null;
  /** 1-based line number in the log file (0: not tied to a line, e.g. a bad head signature). */
  readonly line: number;
  readonly kind: BreakKind;
  readonly message: string;
}

export interface AnchorPoint {
  readonly seq: number;
  readonly hash: string;
  /** Whether its HMAC signature checked out (done by the host, which holds the key). */
  readonly valid: boolean;
}
/** What the anchor database says about the log. */
export interface AnchorState {
  /** The last acknowledged entry; null for an empty log. */
  readonly head: AnchorPoint | null;
  readonly checkpoints: readonly AnchorPoint[];
  /**
   * A high-water mark kept away from the log and its database (the host's global storage), updated
   * at checkpoints and on close: rolling the log and the database back together to an older
   * matching pair ends the log before it.
   */
  readonly witness?: AnchorPoint;
}

export interface VerifyResult {
  readonly ok: boolean;
  /** Entries whose hash, link and sequence were checked and found intact. */
  readonly checked: number;
  readonly lastSeq: number;
  readonly lastHash: string;
  readonly firstBroken?: BrokenEntry;
}

export interface ChainVerifierOptions {
  /** Without an anchor only the chain's internal consistency is checked (truncation and rewrites go unseen). */
  readonly anchor?: AnchorState;
  /** Also require every line to be exactly its RFC 8785 form (default true). */
  readonly strictCanonical?: boolean;
}

const WITNESS = 'high-water mark kept outside the log folder';

export class ChainVerifier {
  private expectedSeq = 1;
  private prev = GENESIS_HASH;
  private checked = 0;
  private broken: BrokenEntry | undefined;
  private readonly points = new Map<number, { p: AnchorPoint; what: string }>();
  private readonly strict: boolean;

  constructor(
    private readonly sha256hex: Sha256Hex,
    private readonly opts: ChainVerifierOptions = {},
  ) {
    this.strict = opts.strictCanonical ?? true;
    for (const c of opts.anchor?.checkpoints ?? []) this.points.set(c.seq, { p: c, what: 'checkpoint' });
    const h = opts.anchor?.head;
    if (h && h.seq > 0) this.points.set(h.seq, { p: h, what: 'anchor head' });
    const w = opts.anchor?.witness;
    if (w && w.seq > 0) this.points.set(w.seq, { p: w, what: WITNESS });
    const bad = [...(opts.anchor?.checkpoints ?? []), ...(h ? [h] : []), ...(w ? [w] : [])].find((p) => !p.valid);
    if (bad)
      this.fail(
        bad.seq,
        0,
        'bad_checkpoint',
        `the ${bad === w ? WITNESS : bad === h ? "anchor's head" : `anchor's checkpoint at seq ${bad.seq}`} has an invalid HMAC signature: ${bad === w ? 'it' : 'the anchor database'} was modified or the key is wrong`,
      );
  }

  get done(): boolean {
    return this.broken !== undefined;
  }
  /** The sequence number the next line must carry. */
  get nextSeq(): number {
    return this.expectedSeq;
  }
  /** The hash the next line's prev_hash must equal. */
  get lastHash(): string {
    return this.prev;
  }
  /** seq → hash of every anchor point (head and checkpoints), for hosts that check chunks in parallel. */
  anchorPoints(): Map<number, string> {
    return new Map([...this.points].map(([seq, { p }]) => [seq, p.hash]));
  }

  /**
   * Lines the host verified on its own (hashes, consecutive seqs, links and the anchor points among
   * them) that start at nextSeq and link to lastHash: advances past them.
   */
  acceptVerified(lines: number, lastSeq: number, lastHash: string): boolean {
    if (this.broken) return false;
    if (lastSeq !== this.expectedSeq + lines - 1) throw new Error('acceptVerified: the verified lines do not continue the chain');
    this.expectedSeq = lastSeq + 1;
    this.prev = lastHash;
    this.checked += lines;
    return true;
  }

  /** A line whose content does not hash to its recorded hash (found by the host). */
  hashMismatchAt(lineNo: number, hash: string): void {
    this.fail(this.expectedSeq, lineNo, 'hash_mismatch', `the entry's content does not match its hash ${hash.slice(0, 12)}…`);
  }

  private fail(seq: number | null, line: number, kind: BreakKind, message: string): false {
    this.broken ??= { seq, line, kind, message };
    return false;
  }

  /** One complete line (without its newline). Returns false once the chain is broken. */
  line(text: string, lineNo: number): boolean {
    if (this.broken) return false;
    const seq = this.expectedSeq;
    const parts = splitLine(text);
    if (!parts)
      return this.fail(seq, lineNo, 'malformed', text.length === 0 ? 'empty line' : 'not an audit entry line (no trailing "hash" member)');
    if (this.sha256hex(parts.body) !== parts.hash)
      return this.fail(seq, lineNo, 'hash_mismatch', `the entry's content does not match its hash ${parts.hash.slice(0, 12)}…`);
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(parts.body) as Record<string, unknown>;
    } catch (err) {
      return this.fail(seq, lineNo, 'malformed', `not valid JSON (${errorMessage(err)})`);
    }
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return this.fail(seq, lineNo, 'malformed', 'not a JSON object');
    if (this.strict && canonicalize(e) !== parts.body)
      return this.fail(seq, lineNo, 'malformed', 'the entry is not in RFC 8785 canonical form');
    if (typeof e.seq !== 'number' || !Number.isSafeInteger(e.seq)) return this.fail(seq, lineNo, 'malformed', '`seq` is not an integer');
    if (
      typeof e.prev_hash !== 'string' ||
      typeof e.id !== 'string' ||
      typeof e.ts !== 'string' ||
      typeof e.session !== 'string' ||
      !isAuditEventType(e.event) ||
      typeof e.details !== 'object' ||
      e.details === null
    )
      return this.fail(seq, lineNo, 'malformed', 'a required field is missing or has the wrong type');
    return this.linked(e.seq, e.prev_hash, parts.hash, lineNo);
  }

  /**
   * One line whose hash the host has already checked (or will check in parallel, see the node
   * verifier): only sequence, link and anchor points are judged here.
   */
  linked(found: number, prevHash: string, hash: string, lineNo: number): boolean {
    if (this.broken) return false;
    const seq = this.expectedSeq;
    const e = { seq: found, prev_hash: prevHash };
    if (e.seq > seq)
      return this.fail(
        seq,
        lineNo,
        'sequence_gap',
        `expected seq ${seq}, found ${e.seq}: ${e.seq - seq} entr${e.seq - seq === 1 ? 'y is' : 'ies are'} missing`,
      );
    if (e.seq < seq)
      return this.fail(seq, lineNo, 'reordering', `expected seq ${seq}, found ${e.seq}: entries are out of order or duplicated`);
    if (e.prev_hash !== this.prev)
      return this.fail(
        seq,
        lineNo,
        'broken_link',
        `prev_hash ${String(e.prev_hash).slice(0, 12)}… does not match the previous entry's hash ${this.prev.slice(0, 12)}…`,
      );
    const point = this.points.get(seq);
    if (point && point.p.hash !== hash)
      return this.fail(
        seq,
        lineNo,
        'anchor_mismatch',
        `the entry's hash differs from the ${point.what} recorded for seq ${seq}: the log was rewritten or replaced`,
      );
    this.prev = hash;
    this.expectedSeq = seq + 1;
    this.checked++;
    return true;
  }

  /** Records a break found outside the line-by-line pass (e.g. a parallel hash check). */
  malformedAt(lineNo: number, message: string): void {
    this.fail(this.expectedSeq, lineNo, 'malformed', message);
  }

  /** The file's last bytes when they do not end with a newline (a write cut short). */
  tornTail(text: string, lineNo: number): void {
    this.fail(
      this.expectedSeq,
      lineNo,
      'torn_line',
      `the last line is incomplete (${text.length} characters without a newline): a write was cut short`,
    );
  }

  finish(): VerifyResult {
    const lastSeq = this.expectedSeq - 1;
    if (!this.broken && this.opts.anchor) {
      const h = this.opts.anchor.head;
      const headSeq = h?.seq ?? 0;
      const w = this.opts.anchor.witness;
      if (w && w.seq > lastSeq)
        this.fail(
          lastSeq + 1,
          0,
          'truncation',
          `the log ends at seq ${lastSeq} but the ${WITNESS} records seq ${w.seq}: the log${w.seq > headSeq ? ' and its anchor database were rolled back together' : ' was truncated or rolled back'}`,
        );
      else if (lastSeq < headSeq)
        this.fail(
          lastSeq + 1,
          0,
          'truncation',
          `the log ends at seq ${lastSeq} but the anchor's head is seq ${headSeq}: ${headSeq - lastSeq} acknowledged entr${headSeq - lastSeq === 1 ? 'y was' : 'ies were'} removed or the file was rolled back`,
        );
      else if (lastSeq > headSeq)
        this.fail(
          headSeq + 1,
          headSeq + 1,
          'unanchored',
          `entries after seq ${headSeq} are not covered by the anchor: they were appended outside Bulwark (or a crash hit before the anchor update and the log was not reopened)`,
        );
      else {
        const lastCp = Math.max(0, ...[...this.points.keys()]);
        if (lastCp > lastSeq)
          this.fail(lastSeq + 1, 0, 'truncation', `the anchor has a checkpoint at seq ${lastCp} beyond the log's end (seq ${lastSeq})`);
      }
    }
    return { ok: !this.broken, checked: this.checked, lastSeq, lastHash: this.prev, ...(this.broken ? { firstBroken: this.broken } : {}) };
  }
}

/** Verifies an in-memory log text (tests, small logs). */
export function verifyEntries(text: string, sha256hex: Sha256Hex, opts: ChainVerifierOptions = {}): VerifyResult {
  const v = new ChainVerifier(sha256hex, opts);
  const lines = text.split('\n');
  const tail = lines.pop()!;
  for (let i = 0; i < lines.length && !v.done; i++) v.line(lines[i]!, i + 1);
  if (tail.length && !v.done) v.tornTail(tail, lines.length + 1);
  return v.finish();
}
