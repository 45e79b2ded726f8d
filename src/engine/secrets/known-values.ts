// Secret values Bulwark already knows (the user's .env files, secret-named environment variables, its own
// SecretStorage, credential files, and every value a detector has found in this session), masked by value
// wherever they appear, whatever their shape: a detector needs context to recognise a secret, a value
// needs none once it is known. The registry never holds a value in clear: it keeps, per value, its length,
// the hash of its first WINDOW characters (to find candidates in one rolling pass over a text) and the
// SHA-256 of the whole value (to confirm one). Nothing here is logged or written anywhere.
import { sha256Hex } from '../shield/tier2/sha256';
import { shannonEntropy } from './entropy';

/** Characters hashed to find candidates: every kept value is at least this long. */
const WINDOW = 8;
const BASE = 0x01000193; // FNV prime, as the multiplier of a polynomial rolling hash mod 2^32

/** Values never masked by value: too common to be anyone's secret, or not a secret at all. */
const COMMON_VALUES = new Set([
  'localhost',
  'true',
  'false',
  'null',
  'undefined',
  'none',
  'development',
  'production',
  'staging',
  'testing',
  'changeme',
  'password',
  'example',
  'default',
  'disabled',
  'enabled',
  'postgres',
  'postgresql',
  'mysql',
  'redis',
  'mongodb',
  'admin',
]);

/**
 * Why a value is not masked by value, or undefined when it is. The documented rule: shorter than 8
 * characters (ports, flags, short names), only digits (ports, ids, timestamps), a plain lower-case word
 * shorter than 16 letters (`postgres`, `development`), fewer than 2 bits of entropy per character
 * (`aaaaaaaa`), or a common non-secret value (`localhost`, `changeme`). Masking these would hide ordinary
 * words all over the output and protect nothing.
 */
export function knownValueSkipReason(value: string): string | undefined {
  if (value.length < WINDOW) return `shorter than ${WINDOW} characters`;
  if (/^\d+$/.test(value)) return 'only digits';
  if (/^[a-z]+$/.test(value) && value.length < 16) return 'a plain lower-case word';
  if (COMMON_VALUES.has(value.toLowerCase())) return 'a common non-secret value';
  if (shannonEntropy(value) < 2) return 'too little entropy';
  if (/^\s|\s$/.test(value)) return 'leading or trailing white space';
  return undefined;
}

interface Entry {
  readonly length: number;
  readonly digest: string;
  /** The rule id the placeholder names (`known-value.env-file`, or the detector that found it). */
  readonly ruleId: string;
}

/** One known value found in a text: [start, end) and the rule id its placeholder names. */
export interface KnownValueMatch {
  readonly start: number;
  readonly end: number;
  readonly ruleId: string;
}

function windowHash(s: string, from: number): number {
  let h = 0;
  for (let i = from; i < from + WINDOW; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
  return h;
}

/** The hash of text[from, from + k), k < WINDOW, mixed with k. */
function headHash(s: string, from: number, k: number): number {
  let h = k;
  for (let i = from; i < from + k; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
  return h;
}

/** BASE^(WINDOW-1) mod 2^32: what the leaving character weighs in the rolling hash. */
const TOP = (() => {
  let p = 1;
  for (let i = 1; i < WINDOW; i++) p = Math.imul(p, BASE);
  return p;
})();

/** The window hash at i + 1 from the one at i (text[i] leaves, text[i + WINDOW] enters). */
function roll(h: number, text: string, i: number): number {
  return (Math.imul(h - Math.imul(text.charCodeAt(i), TOP), BASE) + text.charCodeAt(i + WINDOW)) | 0;
}

export class KnownValues {
  private readonly byWindow = new Map<number, Entry[]>();
  /** One bit per value of the window hash's top 16 bits: most positions of a text are ruled out here. */
  private readonly bloom = new Uint32Array(2048);
  /**
   * Hashes of each value's first 1..WINDOW-1 characters (with the length): a stream holds its last few
   * characters only when they could begin a known value, so a prompt without a newline still shows.
   */
  private readonly heads = new Set<number>();
  private count = 0;
  private longest = 0;
  private readonly limit: number;

  constructor(opts: { maxValues?: number } = {}) {
    this.limit = opts.maxValues ?? 10_000;
  }

  get size(): number {
    return this.count;
  }
  /** Length of the longest known value (a stream holds at most this minus one character for it). */
  get maxLength(): number {
    return this.longest;
  }

  /**
   * Remembers `value` (masked as `[REDACTED:ruleId]` from now on). Returns false, with nothing kept, for a
   * value the skip rule leaves out, one already known, or when the registry is full.
   */
  add(value: string, ruleId: string): boolean {
    if (knownValueSkipReason(value) !== undefined) return false;
    const h = windowHash(value, 0);
    const digest = sha256Hex(value);
    const list = this.byWindow.get(h);
    if (list?.some((e) => e.digest === digest)) return false;
    if (this.count >= this.limit) return false;
    const entry: Entry = { length: value.length, digest, ruleId };
    this.bloom[h >>> 21]! |= 1 << ((h >>> 16) & 31);
    for (let k = 1; k < WINDOW; k++) this.heads.add(headHash(value, 0, k));
    if (list) list.push(entry);
    else this.byWindow.set(h, [entry]);
    this.count++;
    this.longest = Math.max(this.longest, value.length);
    return true;
  }

  /** Every occurrence of a known value lying inside text[from, to) (the longest one where several start together), sorted. */
  find(text: string, from = 0, to = text.length): KnownValueMatch[] {
    const out: KnownValueMatch[] = [];
    if (this.count === 0 || to - from < WINDOW) return out;
    const bloom = this.bloom;
    let h = windowHash(text, from);
    for (let i = from; ; i++) {
      const list = (bloom[h >>> 21]! & (1 << ((h >>> 16) & 31))) === 0 ? undefined : this.byWindow.get(h);
      if (list) {
        let best: Entry | undefined;
        for (const e of list) {
          if (i + e.length > to || (best && best.length >= e.length)) continue;
          if (sha256Hex(text.slice(i, i + e.length)) === e.digest) best = e;
        }
        if (best) out.push({ start: i, end: i + best.length, ruleId: best.ruleId });
      }
      if (i + WINDOW >= to) break;
      h = roll(h, text, i);
    }
    return out;
  }

  /**
   * For a stream: the earliest position at or after `from` where a known value may begin that has not
   * arrived whole yet, or `text.length`. A position whose first WINDOW characters are there is checked
   * against the values' first windows (so a stream holds only where a known value really starts); one of
   * the last WINDOW - 1 positions, against the values' first characters.
   */
  holdFrom(text: string, from: number): number {
    const n = text.length;
    if (this.count === 0) return n;
    const start = Math.max(from, n - this.longest + 1);
    const lastChecked = n - WINDOW;
    if (start <= lastChecked) {
      let h = windowHash(text, start);
      for (let i = start; ; i++) {
        if (this.byWindow.get(h)?.some((e) => i + e.length > n)) return i;
        if (i >= lastChecked) break;
        h = roll(h, text, i);
      }
    }
    for (let i = Math.max(from, lastChecked + 1, 0); i < n; i++) if (this.heads.has(headHash(text, i, n - i))) return i;
    return n;
  }
}

let installed: KnownValues | undefined;

/**
 * The host's registry (the extension host, a CLI command, the sandbox helper): installed once at start,
 * it is what every redaction in the process masks by value when the caller passes no registry of its own,
 * and it learns every value any output's detectors find. Unit tests of the engine install none.
 */
export function installProcessKnownValues(known: KnownValues | undefined): void {
  installed = known;
}

export function processKnownValues(): KnownValues | undefined {
  return installed;
}
