// The keyword automaton's walk for the batch scan, in WebAssembly (keyword-scan.wat): the one
// part of scanning that reads every character. The text is copied into the module's memory as
// UTF-16 code units, in chunks, and each chunk is walked as four segments at once. Results are
// the same as the JavaScript walk in scan.ts (a unit test compares them); that walk stays for
// when WebAssembly is unavailable (node --jitless) and for the streaming redactor. The heuristic
// rules' keyword index (heuristics/prefilter.ts) walks long texts with it too.
import type { KeywordAutomaton } from './rules';
import wasmBytes from './keyword-scan.wat';

/** What the walk reads of an automaton (KeywordAutomaton's layout: `delta` entries are `t << shift`, or `~(t << shift)` where strings end). */
export type WalkTables = Pick<KeywordAutomaton, 'classOf' | 'kelvinClass' | 'shift' | 'delta'>;

/** Code units per segment; a chunk is four segments. */
const SEGMENT = 1 << 15;
const CHUNK = SEGMENT * 4;
const PAGE = 65536;

interface WalkExports {
  readonly memory: WebAssembly.Memory;
  readonly walk4: (
    text: number,
    classes: number,
    delta: number,
    hits: number,
    cap: number,
    lead: number,
    b0: number,
    b1: number,
    b2: number,
    b3: number,
    b4: number,
  ) => void;
  readonly n0: WebAssembly.Global;
  readonly n1: WebAssembly.Global;
  readonly n2: WebAssembly.Global;
  readonly n3: WebAssembly.Global;
}

/** Receives the states where strings end: `end` is the offset after the last code unit; `t` the state (not shifted). */
export type HitVisitor = (t: number, end: number) => void;

/** One automaton's tables in one WebAssembly instance. */
export class KeywordWalker {
  private readonly exports: WalkExports;
  private readonly hits: Int32Array;
  private readonly bytes: Buffer;
  private readonly classes = 0;
  private readonly delta: number;
  private readonly hitsAt: number;
  private readonly textAt: number;
  /** Code units each walk reads before its segment, so it is in the right state there. */
  private readonly lead: number;
  private readonly shift: number;

  constructor(module: WebAssembly.Module, a: WalkTables, longest: number) {
    this.exports = new WebAssembly.Instance(module, {}).exports as unknown as WalkExports;
    this.lead = longest;
    this.shift = a.shift;
    this.delta = PAGE; // after the 65536 one-byte classes
    this.hitsAt = this.delta + a.delta.length * 4;
    this.textAt = this.hitsAt + 4 * SEGMENT * 8;
    const size = this.textAt + (CHUNK + longest) * 2;
    const memory = this.exports.memory;
    memory.grow(Math.ceil(size / PAGE) - memory.buffer.byteLength / PAGE);
    const buffer = memory.buffer;
    const classes = new Uint8Array(buffer, this.classes, PAGE);
    classes.set(a.classOf); // every code unit >= 128 is class 0: back to the root
    classes[0x212a] = a.kelvinClass; // KELVIN SIGN lower-cases to `k`
    new Int32Array(buffer, this.delta, a.delta.length).set(a.delta);
    this.hits = new Int32Array(buffer, this.hitsAt, 4 * SEGMENT * 2);
    this.bytes = Buffer.from(buffer);
  }

  /**
   * Visits every state where strings end while reading `text` (as the JavaScript walk in raw
   * mode does: U+212A reads as a folded `k`; the caller handles U+0130), in order of `end`.
   */
  walk(text: string, visit: HitVisitor): void {
    const shift = this.shift;
    this.walkSegments(text, (pairs, start, stop, offset) => {
      for (let h = start; h < stop; h += 2) visit(pairs[h + 1]! >> shift, pairs[h]! + offset);
    });
  }

  /**
   * The same walk, handing over the hits a segment at a time (for callers that loop over them
   * inline): `pairs[start .. stop)` holds (end - offset, t << shift) pairs, in order of end.
   */
  walkSegments(text: string, each: (pairs: Int32Array, start: number, stop: number, offset: number) => void): void {
    const { exports: x, hits } = this;
    const n = text.length;
    for (let start = 0; start < n; start += CHUNK) {
      const from = Math.max(0, start - this.lead);
      const end = Math.min(n, start + CHUNK);
      this.bytes.write(from === 0 && end === n ? text : text.slice(from, end), this.textAt, 'utf16le');
      const len = end - from;
      const b0 = start - from;
      const q = Math.ceil((len - b0) / 4);
      const b1 = Math.min(len, b0 + q);
      const b2 = Math.min(len, b1 + q);
      const b3 = Math.min(len, b2 + q);
      x.walk4(this.textAt, this.classes, this.delta, this.hitsAt, SEGMENT, this.lead, b0, b1, b2, b3, len);
      const counts = [x.n0.value as number, x.n1.value as number, x.n2.value as number, x.n3.value as number];
      for (let j = 0; j < 4; j++) {
        const base = j * SEGMENT * 2;
        each(hits, base, base + counts[j]! * 2, from);
      }
    }
  }
}

let compiled: WebAssembly.Module | null | undefined;
const walkers = new WeakMap<WalkTables, KeywordWalker | null>();

/** The WebAssembly walker for `a` (whose strings have `lengths`), or null when WebAssembly (or Buffer) is unavailable here. */
export function keywordWalker(a: WalkTables, lengths: Uint8Array): KeywordWalker | null {
  let w = walkers.get(a);
  if (w !== undefined) return w;
  try {
    if (typeof Buffer === 'undefined' || typeof WebAssembly === 'undefined') throw new Error('no WebAssembly');
    compiled ??= new WebAssembly.Module(wasmBytes);
    w = new KeywordWalker(
      compiled,
      a,
      lengths.reduce((m, x) => Math.max(m, x), 1),
    );
  } catch {
    compiled ??= null;
    w = null;
  }
  walkers.set(a, w);
  return w;
}
