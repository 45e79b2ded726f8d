// StreamingRedactor: redacts a stream of text chunks (model tokens, terminal output, tool results)
// so that the concatenated output equals redactSecrets() of the whole text, for every chunking,
// and no part of a secret is ever emitted.
//
// After every chunk it computes a cut H: everything before H is settled (no continuation of the
// stream can create, change or extend a secret that touches it) and is emitted, redacted; the tail
// from H on is held. Per rule r:
//   - s_min(r): the earliest position from which the buffered text could still grow into a match
//     of r (the rule's prefix expression, see regex-syntax.ts). Regex attempts before s_min(r) are
//     already decided; only matches starting at s_min(r) or later can still change or appear.
//   - hold(r): where the secret of such a match could start: for a secret in a top-level group,
//     the first position where the part before the group matches and the rest can still grow into
//     the group (so `password = "` is released and only the value is held); otherwise the first
//     keyword occurrence at or after s_min(r) for `before_secret` rules (a secret never starts
//     before its keyword; a keyword cut off at the end of the buffer counts), s_min(r) itself for
//     `in_match` rules.
// H is the smallest hold, moved left until no current finding straddles it; a held PEM BEGIN line
// therefore holds everything until its END line or close(). Each rule's scan resumes where nothing
// decided can change any more, so per chunk only a short tail is scanned again.
//
// Time never makes held text safe: the flush timer (at most `flushDelayMs` after the last chunk)
// only re-evaluates the cut and can release nothing that could still become part of a secret.
// close() flushes the rest with redaction; an unterminated private-key block is redacted to the end.
import type { SecretRuleSet } from './rules';
import {
  type Candidate,
  type KeywordOccurrences,
  applyRedactions,
  indexKeywords,
  lowerAscii,
  lowerBound,
  resolveOverlaps,
  rulePositions,
  scanRule,
  knownValueCandidates,
  withKnownValues,
} from './scan';
import { KnownValues, processKnownValues } from './known-values';
import { runStart } from './start-filter';

export interface FlushScheduler {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export interface StreamingRedactorOptions {
  /** Upper bound on how long after the last chunk the flush timer runs (default 50 ms). */
  readonly flushDelayMs?: number;
  /** Timer source (default: globalThis.setTimeout / clearTimeout). */
  readonly scheduler?: FlushScheduler;
  /**
   * The session's known secret values (masked by value; the values this stream's detectors find join it).
   * Default: the host's (processKnownValues), else a registry of this stream's own, so a value found once is
   * masked for the rest of the stream.
   */
  readonly knownValues?: KnownValues;
}

const defaultScheduler: FlushScheduler = {
  set: (fn, ms) => globalThis.setTimeout(fn, ms),
  clear: (handle) => globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0]),
};

/** Buffer bytes already emitted and no longer needed are dropped once they exceed this. */
const TRIM_THRESHOLD = 4096;

export class StreamingRedactor {
  private readonly flushDelayMs: number;
  private readonly scheduler: FlushScheduler;
  private buf = '';
  private low = '';
  /** Offset in `buf` up to which output has been emitted. */
  private emitted = 0;
  /** Per rule: offset in `buf` where its scan resumes (everything before is decided and handled). */
  private readonly resume: number[];
  private timer: unknown = undefined;
  private closed = false;
  /** Keyword occurrences in `buf` (offsets in `buf`), extended as chunks arrive. */
  private readonly occurrences: KeywordOccurrences = new Map();
  /** Scratch space per rule, reused across chunks. */
  private readonly touched: Uint8Array;
  private readonly sMin: number[];
  private readonly gMin: number[];
  private readonly known: KnownValues;

  constructor(
    private readonly rules: SecretRuleSet,
    private readonly emit: (safeText: string) => void,
    opts: StreamingRedactorOptions = {},
  ) {
    const delay = opts.flushDelayMs ?? 50;
    if (!(delay >= 0 && delay <= 50)) throw new RangeError('flushDelayMs must be between 0 and 50');
    this.flushDelayMs = delay;
    this.scheduler = opts.scheduler ?? defaultScheduler;
    this.known = opts.knownValues ?? processKnownValues() ?? new KnownValues();
    this.resume = rules.rules.map(() => 0);
    this.touched = new Uint8Array(rules.rules.length);
    this.sMin = rules.rules.map(() => 0);
    this.gMin = rules.rules.map(() => 0);
  }

  /** Text received but not yet emitted (for diagnostics and tests). */
  get pendingLength(): number {
    return this.buf.length - this.emitted;
  }

  write(chunk: string): void {
    if (this.closed) throw new Error('StreamingRedactor: write after close');
    if (chunk === '') return;
    const before = this.buf.length;
    this.buf += chunk;
    this.low += lowerAscii(chunk);
    indexKeywords(this.rules, this.buf, this.low, before - this.rules.maxKeywordLength, this.occurrences, before);
    this.cancelTimer();
    this.release(false);
    if (this.pendingLength > 0) {
      this.timer = this.scheduler.set(() => {
        this.timer = undefined;
        if (!this.closed) this.release(false);
      }, this.flushDelayMs);
    }
  }

  /** Flushes everything still held, with redaction. Further writes throw. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cancelTimer();
    this.release(true);
    this.buf = '';
    this.low = '';
    this.emitted = 0;
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) {
      this.scheduler.clear(this.timer);
      this.timer = undefined;
    }
  }

  private release(final: boolean): void {
    const set = this.rules;
    const rules = set.rules;
    const { buf, low } = this;
    const len = buf.length;
    const occurrences = this.occurrences;

    // Keywords cut off at the end of the buffer: keyword index → length of the part present.
    const partial = new Map<number, number>();
    if (!final && len > 0) {
      for (const l of set.prefixLengthsByLastChar.get(low.charCodeAt(len - 1)) ?? []) {
        if (l > len) break;
        for (const id of set.keywordPrefixes.get(low.slice(len - l)) ?? []) partial.set(id, l);
      }
    }

    // Rules with a keyword in the buffered tail are scanned; the others cannot have a finding there.
    const touched = this.touched;
    touched.fill(0);
    for (const [id, list] of occurrences) {
      const last = list[list.length - 1]!;
      for (const slot of set.keywordRules[id]!) if (last >= this.resume[slot]!) touched[slot] = 1;
    }
    for (const id of partial.keys()) for (const slot of set.keywordRules[id]!) touched[slot] = 1;
    const candidates: Candidate[] = [];
    const byRule = new Map<number, Candidate[]>();
    for (let r = 0; r < rules.length; r++) {
      if (touched[r] === 0) continue;
      const positions = rulePositions(set, r, occurrences, this.resume[r]!);
      if (positions.length === 0) continue;
      const found: Candidate[] = [];
      scanRule(set, rules[r]!, buf, low, this.resume[r]!, positions, found);
      if (found.length === 0) continue;
      byRule.set(r, found);
      for (const c of found) if (c.se > this.emitted) candidates.push(c);
    }

    // Known values that have arrived whole: the cut may not split one either.
    candidates.push(...knownValueCandidates(this.known, buf, this.emitted, len));

    if (final) {
      this.flush(len, candidates);
      return;
    }

    let cut = len;
    // Never end a chunk inside a surrogate pair.
    if (len > this.emitted && isHighSurrogate(buf.charCodeAt(len - 1))) cut = len - 1;
    const sMin = this.sMin;
    for (let r = 0; r < rules.length; r++) {
      const rule = rules[r]!;
      const windowStart = Math.max(this.resume[r]!, len - rule.maxLength - rule.lookahead);
      const first = touched[r] === 1 ? this.firstKeyword(r, windowStart, occurrences, partial, len) : len;
      if (first >= len && rule.anchor === 'before_secret') {
        // No keyword in reach: a match that grows out of this tail has its keyword, and so its
        // secret, in text still to come, and starts at most `reach` characters before it.
        sMin[r] = Math.max(windowStart, len - rule.reach);
        continue;
      }
      // Every match that can still change or appear starts at or after `lower`.
      const lower = Math.max(windowStart, first - rule.reach, sMin[r]!);
      if (rule.secretStart) {
        // Hold from where such a match's secret could start (its key and separator are released).
        // Like s_min, that position never moves back as text is appended.
        sMin[r] = lower;
        // A match ends at the end of the buffer and consumes only secretChars (at most secretTail
        // of them): it starts inside the run of those characters that ends the buffer.
        const from = Math.max(lower, this.gMin[r]!, len - rule.secretTail);
        rule.secretStart.lastIndex = runStart(rule.secretChars, buf, len, from);
        const m = rule.secretStart.exec(buf);
        const g = m ? m.index : len;
        this.gMin[r] = g;
        if (g < cut) cut = g;
        continue;
      }
      if (rule.anchor === 'before_secret') {
        // Fast path: the text from the first keyword on can still grow into a match: hold from there.
        rule.prefixSticky.lastIndex = first;
        if (rule.prefixSticky.test(buf)) {
          sMin[r] = lower;
          if (first < cut) cut = first;
          continue;
        }
      }
      // Appending text never makes a position viable again, so the last s_min is a lower bound.
      let s = len;
      if (lower < len) {
        // Likewise a match the text can still grow into ends at the end of the buffer.
        rule.prefix.lastIndex = Math.max(lower, len - rule.maxLength);
        const m = rule.prefix.exec(buf);
        if (m) s = m.index;
      }
      sMin[r] = s;
      const hold = rule.anchor === 'in_match' ? s : s <= first ? first : this.firstKeyword(r, s, occurrences, partial, len);
      if (hold < cut) cut = hold;
    }

    // A known value that may begin before the cut and has not arrived whole is held back too.
    cut = Math.min(cut, this.known.holdFrom(buf, this.emitted));
    // No finding may straddle the cut.
    for (let moved = true; moved;) {
      moved = false;
      for (const c of candidates)
        if (c.ss < cut && cut < c.se) {
          cut = c.ss;
          moved = true;
        }
    }
    cut = Math.max(cut, this.emitted);
    this.flush(
      cut,
      candidates.filter((c) => c.se <= cut),
    );

    // Advance each rule's scan start past what is decided and handled.
    for (let r = 0; r < rules.length; r++) {
      let at = sMin[r]!;
      const found = byRule.get(r);
      if (found) {
        for (const c of found) if (c.se > cut && c.ms < at) at = c.ms;
        for (const c of found) if (c.ms < at && at < c.me) at = c.ms;
      }
      if (at > this.resume[r]!) this.resume[r] = at;
    }
    this.trim();
  }

  /** Start of the first keyword of rule `r` at or after `from` (a keyword cut off at the end counts), or `len`. */
  private firstKeyword(
    r: number,
    from: number,
    occurrences: KeywordOccurrences,
    partial: ReadonlyMap<number, number>,
    len: number,
  ): number {
    let k = len;
    for (const id of this.rules.ruleKeywords[r]!) {
      const list = occurrences.get(id);
      if (list) {
        const i = lowerBound(list, from);
        if (i < list.length && list[i]! < k) k = list[i]!;
      }
      const l = partial.get(id);
      if (l !== undefined && len - l >= from && len - l < k) k = len - l;
    }
    return k;
  }

  /** Emits buf[emitted, to) with the given findings (all ending at or before `to`) redacted. */
  private flush(to: number, candidates: readonly Candidate[]): void {
    const from = this.emitted;
    if (to <= from) return;
    // INVARIANT: no finding starts before `emitted` and ends after it (the cut never splits one).
    // Should one anyway, the part not yet emitted is redacted rather than released.
    // Values found here are masked by value from now on; known values here (and one that began in text
    // already released, when it became known only later) are masked too.
    const found = withKnownValues(this.known, this.buf, Math.max(0, from - this.known.maxLength + 1), to, resolveOverlaps(candidates));
    const clipped = found.filter((c) => c.se > from).map((c) => (c.ss < from ? { ...c, ss: from, ms: Math.min(c.ms, from) } : c));
    const text = applyRedactions(this.buf, from, to, resolveOverlaps(clipped));
    this.emitted = to;
    if (text !== '') this.emit(text);
  }

  private trim(): void {
    const keepFrom = Math.min(this.emitted, ...this.resume) - this.rules.contextChars;
    if (keepFrom < TRIM_THRESHOLD || keepFrom < this.buf.length / 2) return;
    this.buf = this.buf.slice(keepFrom);
    this.low = this.low.slice(keepFrom);
    for (const [id, list] of this.occurrences) {
      const kept = list.slice(lowerBound(list, keepFrom)).map((p) => p - keepFrom);
      if (kept.length === 0) this.occurrences.delete(id);
      else this.occurrences.set(id, kept);
    }
    this.emitted -= keepFrom;
    for (let r = 0; r < this.resume.length; r++) {
      this.resume[r] = this.resume[r]! - keepFrom;
      this.sMin[r] = Math.max(0, this.sMin[r]! - keepFrom);
      this.gMin[r] = Math.max(0, this.gMin[r]! - keepFrom);
    }
  }
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
