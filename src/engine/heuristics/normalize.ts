// Normalisation of one text field before the heuristic rules see it.
//
// Scan window: a field is scanned in its first 256 KiB plus its last 16 KiB (UTF-16 code units);
// the middle of a longer field is not scanned and the report says `truncated`.
//
// Variants (every rule with `scan: normalized` sees all of them):
//  - normalized: zero-width, bidi, tag, variation-selector and control characters removed, Unicode
//    NFKC, whitespace runs collapsed (to one newline if the run has a line break, else one space);
//  - homoglyph: the normalised text with Latin look-alikes (Cyrillic, Greek, Armenian, IPA letters
//    that NFKC keeps) folded to ASCII Latin, in words that mix them with Latin letters or consist
//    only of look-alikes — only when there are any (never for plain ASCII text);
//  - hidden: the ASCII text carried by Unicode tag characters (ASCII smuggling), if any;
//  - base64 / hex: up to MAX_BLOBS blobs per field (base64 runs of ≥ 24 characters with both
//    cases, hex runs of ≥ 16 digits), each at most 64 KiB, decoded one level deep (UTF-8, or
//    UTF-16LE when every other byte is zero, as in PowerShell -EncodedCommand) and kept if mostly
//    printable; at most MAX_DECODE_ATTEMPTS candidates are tried per field;
//  - url: `%NN` runs decoded, in windows around the first MAX_DECODE_RUNS runs (80 characters
//    before, 200 after, merged, at most 64 KiB in all);
//  - escape: runs of two or more `\xNN`, `\NNN`, `\uNNNN` or `\u{…}` escapes decoded, same windows;
//  - shell (command fields only, when they contain in-word quotes, `${IFS}`, backslashes, carets or
//    backticks between letters): quotes, backslashes before letters, in-word carets and backticks
//    removed, `$IFS` / `${IFS}` read as a space — `c'u'rl … | s''h` reads `curl … | sh`.
// Decoded variants are themselves normalised but never decoded again. No variant contains two
// whitespace characters in a row (the literal prefilter's length bound relies on it).
import { CONFUSABLE_LATIN } from './confusables';
import { isAscii, type KeywordHits, type KeywordIndex } from './prefilter';
import type { DecodedBlob, NormalizationReport, VariantKind } from './types';

export const SCAN_HEAD = 256 * 1024;
export const SCAN_TAIL = 16 * 1024;
export const MAX_BLOBS = 3;
export const MAX_DECODE_ATTEMPTS = 16;
export const MAX_DECODE_RUNS = 8;
export const MAX_BLOB_CHARS = 64 * 1024;
const MIN_BASE64 = 24;
const MIN_HEX = 16;

export interface Variant {
  readonly kind: VariantKind;
  readonly text: string;
  /** Keyword hits, when the variant was scanned while it was built. */
  readonly hits?: KeywordHits;
}

export interface PreparedField {
  /** The capped field text before normalisation, when normalisation removed characters from it (for `scan: raw` rules). */
  readonly raw: string | null;
  readonly variants: readonly Variant[];
  readonly report: MutableReport;
}

export interface MutableReport {
  zeroWidth: number;
  bidi: number;
  tagChars: number;
  variationSelectors: number;
  controlChars: number;
  homoglyphs: number;
  hiddenText: string;
  nfkcChanged: boolean;
  decoded: DecodedBlob[];
  truncated: boolean;
}

export function emptyReport(): MutableReport {
  return {
    zeroWidth: 0,
    bidi: 0,
    tagChars: 0,
    variationSelectors: 0,
    controlChars: 0,
    homoglyphs: 0,
    hiddenText: '',
    nfkcChanged: false,
    decoded: [],
    truncated: false,
  };
}

export function mergeReport(into: MutableReport, from: MutableReport, field?: string): void {
  into.zeroWidth += from.zeroWidth;
  into.bidi += from.bidi;
  into.tagChars += from.tagChars;
  into.variationSelectors += from.variationSelectors;
  into.controlChars += from.controlChars;
  into.homoglyphs += from.homoglyphs;
  if (from.hiddenText && into.hiddenText.length < 120) into.hiddenText = (into.hiddenText ? into.hiddenText + ' ' : '') + from.hiddenText;
  into.hiddenText = into.hiddenText.slice(0, 120);
  into.nfkcChanged ||= from.nfkcChanged;
  for (const d of from.decoded) into.decoded.push(field === undefined ? d : { ...d, field });
  into.truncated ||= from.truncated;
}

/** Anything other than printable ASCII, tab, LF and CR. */
const NOT_PLAIN = /[^\x09\x0a\x0d\x20-\x7e]/;
/** The ASCII characters that are not plain (controls other than tab, LF, CR). */
const CONTROLS = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)).filter((ch) => NOT_PLAIN.test(ch));

/**
 * Only printable ASCII, tab, LF and CR (NOT_PLAIN finds nothing). For long texts, without a
 * regex walk: an ASCII check by encoding, then a search for each control character (each a
 * single-character search, which engines do many characters at a time).
 */
export function isPlainText(text: string): boolean {
  if (text.length < 256) return !NOT_PLAIN.test(text);
  if (!isAscii(text)) return false;
  for (const ch of CONTROLS) if (text.indexOf(ch) >= 0) return false;
  return true;
}
/** A run of non-plain characters with the printable character before it (NFKC may compose the two). */
const NOT_PLAIN_RUN = /[\x20-\x7e]?[^\x09\x0a\x0d\x20-\x7e]+/g;
// Zero-width | bidi | tag characters | variation selectors (1–16 and 17–256) | controls (not tab/LF/CR) incl. C1.
const INVISIBLE =
  /[\u200B-\u200F\u2060-\u2064\uFEFF\u00AD]|[\u202A-\u202E\u2066-\u2069]|\uDB40[\uDC00-\uDC7F]|\uDB40[\uDD00-\uDDEF]|[\uFE00-\uFE0F]|[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]/g;
const HAS_INVISIBLE =
  /[\u200B-\u200F\u2060-\u2064\uFEFF\u00AD\u202A-\u202E\u2066-\u2069\uDB40\uFE00-\uFE0F\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]/;
/** Characters NFKC leaves alone here: ASCII and the common punctuation, arrows and Latin-1 letters. */
export const NFKC_STABLE =
  /^[\x00-\x7f\u00c0-\u00ff\u2010\u2012-\u2015\u2018-\u201f\u2020-\u2022\u2030\u2190-\u21ff\u2200-\u222b\u222e\u2231-\u22ff\u2500-\u257f]*$/;

const NOT_A_TAG = -1;
const SILENT_TAG = -2;
/**
 * Counts one removed invisible character (an INVISIBLE match) in `report`. For a Unicode tag
 * character returns the printable ASCII code it carries, or SILENT_TAG; NOT_A_TAG otherwise.
 */
function countInvisible(ch: string, report: MutableReport): number {
  const c = ch.charCodeAt(0);
  if (ch.length === 2) {
    const low = ch.charCodeAt(1);
    if (low <= 0xdc7f) {
      report.tagChars++;
      const ascii = low - 0xdc00;
      return ascii >= 0x20 && ascii <= 0x7e ? ascii : SILENT_TAG;
    }
    report.variationSelectors++;
  } else if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) report.bidi++;
  else if (c >= 0xfe00 && c <= 0xfe0f) report.variationSelectors++;
  else if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) report.controlChars++;
  else report.zeroWidth++;
  return NOT_A_TAG;
}

/**
 * Removes invisible characters (counting them and decoding tag characters to ASCII) and applies
 * Unicode NFKC, in one pass over the runs of non-plain characters; plain ASCII is skipped by the
 * regex engine.
 */
function stripAndFold(text: string, report: MutableReport): { text: string; hidden: string } {
  let hidden = '';
  let lastTagEnd = -1;
  const out = text.replace(NOT_PLAIN_RUN, (run: string, runOffset: number) => {
    let r = run;
    if (HAS_INVISIBLE.test(run)) {
      r = run.replace(INVISIBLE, (ch: string, inner: number) => {
        const offset = runOffset + inner;
        const tag = countInvisible(ch, report);
        if (tag !== NOT_A_TAG) {
          if (tag !== SILENT_TAG) {
            if (lastTagEnd >= 0 && lastTagEnd !== offset && hidden) hidden += ' ';
            hidden += String.fromCharCode(tag);
          }
          lastTagEnd = offset + 2;
        }
        return '';
      });
    }
    if (NFKC_STABLE.test(r)) return r;
    const n = r.normalize('NFKC');
    if (n !== r) report.nfkcChanged = true;
    return n;
  });
  return { text: out, hidden };
}

const CONFUSABLE_CLASS = `[${Object.keys(CONFUSABLE_LATIN).join('')}]`;
const HAS_CONFUSABLE = new RegExp(CONFUSABLE_CLASS);
const CONFUSABLE_ALL = new RegExp(CONFUSABLE_CLASS, 'g');
const LETTER_RUN = /[\p{L}\p{M}]+/gu;
const ASCII_LETTER = /[A-Za-z]/;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Folds Latin look-alikes (CONFUSABLE_LATIN) to ASCII in each word that mixes them with ASCII
 * letters (`ignore` spelled with a Cyrillic U+0456) or consists only of two or more look-alikes;
 * a word with other non-Latin letters (Russian or Greek text) is left alone, so rules written for
 * those languages still match the normalised text. Length-preserving. Returns null when nothing
 * was folded (at once, without a word walk, when the text has no look-alike at all).
 */
export function foldHomoglyphs(text: string, report?: MutableReport): string | null {
  if (!HAS_CONFUSABLE.test(text)) return null;
  let count = 0;
  const out = text.replace(LETTER_RUN, (word: string) => {
    if (!HAS_CONFUSABLE.test(word)) return word;
    let n = 0;
    const folded = word.replace(CONFUSABLE_ALL, (c: string) => {
      n++;
      return CONFUSABLE_LATIN[c]!;
    });
    // Only look-alikes: a spoofed word if longer than one letter (several one-letter Russian words are look-alikes).
    if (!ASCII_LETTER.test(word) && (NON_ASCII.test(folded) || word.length < 2)) return word;
    count += n;
    return folded;
  });
  if (count === 0) return null;
  if (report) report.homoglyphs += count;
  return out;
}

/** Characters normalisation removed from a field (what `scan: raw` rules are about). */
export const removedCount = (r: MutableReport): number => r.zeroWidth + r.bidi + r.tagChars + r.variationSelectors + r.controlChars;

/**
 * Collapses whitespace (JavaScript's `\s`): a run with a line break becomes "\n", any other run of
 * two or more characters, or a single tab, CR, VT, FF or Unicode space, becomes " ". Afterwards the
 * only whitespace left is single spaces and single newlines.
 */
const WHITESPACE_TO_FIX = /\s{2,}|[^\S \n]/g;
export const collapseWhitespace = (text: string): string => text.replace(WHITESPACE_TO_FIX, (run) => (run.indexOf('\n') >= 0 ? '\n' : ' '));

// Character classes for the blob finder: every base64 character has C_B64; C_NONHEX marks those
// that cannot appear in hex.
const C_B64 = 1;
const C_NONHEX = 2;
const C_UP = 4;
const C_LO = 8;
const CLS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (!/[A-Za-z0-9+/_-]/.test(ch)) continue;
  CLS[c] = C_B64 | (/[0-9A-Fa-f]/.test(ch) ? 0 : C_NONHEX) | (/[A-Z]/.test(ch) ? C_UP : 0) | (/[a-z]/.test(ch) ? C_LO : 0);
}

export interface Blob {
  readonly kind: 'base64' | 'hex';
  readonly start: number;
  readonly end: number;
}

/** Decodes the first MAX_BLOBS blobs of `text` that decode to mostly printable text (one level deep), reporting each. */
function decodeBlobs(text: string, blobs: readonly Blob[], report: MutableReport, found: (blob: Blob, decoded: string) => void): void {
  let accepted = 0;
  for (const blob of blobs) {
    if (accepted >= MAX_BLOBS) break;
    const src = text.slice(blob.start, Math.min(blob.end, blob.start + MAX_BLOB_CHARS));
    const decoded = bytesToText(blob.kind === 'base64' ? decodeBase64(src) : decodeHex(src));
    if (!mostlyPrintable(decoded, 8)) continue;
    accepted++;
    report.decoded.push({ kind: blob.kind, length: decoded.length });
    found(blob, decoded);
  }
}

/**
 * Base64 and hex blob candidates, in order, at most MAX_DECODE_ATTEMPTS: maximal runs of base64
 * characters; at the end of a run, all hex digits and at least MIN_HEX long → a hex candidate,
 * else at least MIN_BASE64 long with both cases → a base64 candidate. Every run of MIN_HEX or more
 * characters covers an offset that is a multiple of MIN_HEX, so only the runs through those
 * offsets are measured: a fraction of the characters is read, and no candidate is missed.
 */
export function findBlobs(text: string, blobs: Blob[]): void {
  const n = text.length;
  let done = 0; // offsets below `done` belong to runs already measured (or to none)
  for (let p = 0; p < n; p += MIN_HEX) {
    if (p < done) continue;
    const c = text.charCodeAt(p);
    let flags = c < 128 ? CLS[c]! : 0;
    if (flags === 0) continue;
    let start = p;
    while (start > done) {
      const d = text.charCodeAt(start - 1);
      const k = d < 128 ? CLS[d]! : 0;
      if (k === 0) break;
      flags |= k;
      start--;
    }
    let end = p + 1;
    while (end < n) {
      const d = text.charCodeAt(end);
      const k = d < 128 ? CLS[d]! : 0;
      if (k === 0) break;
      flags |= k;
      end++;
    }
    endRun(blobs, start, end, flags);
    if (blobs.length >= MAX_DECODE_ATTEMPTS) return;
    done = end;
  }
}

function endRun(blobs: Blob[], start: number, end: number, flags: number): void {
  if (blobs.length >= MAX_DECODE_ATTEMPTS) return;
  const len = end - start;
  if (len >= MIN_HEX && !(flags & C_NONHEX)) blobs.push({ kind: 'hex', start, end: end - (len & 1) });
  else if (len >= MIN_BASE64 && flags & C_UP && flags & C_LO) blobs.push({ kind: 'base64', start, end });
}

/** Normalises one text: invisible characters out, NFKC, whitespace collapsed (and scanned, if asked). */
function normalizeText(
  text: string,
  report: MutableReport,
  index?: KeywordIndex,
  hits?: KeywordHits,
  blobs?: Blob[],
  plain = isPlainText(text),
): { text: string; hidden: string } {
  let hidden = '';
  let t = text;
  if (!plain) {
    const folded = stripAndFold(t, report);
    hidden = folded.hidden;
    t = folded.text;
  }
  t = collapseWhitespace(t);
  if (blobs) findBlobs(t, blobs);
  // A plain text stays ASCII through collapsing: the keyword scan need not look for other characters.
  if (index && hits) index.scan(t, hits, plain);
  return { text: t, hidden };
}

// ---- decoding ---------------------------------------------------------------------------------

const B64_VALUE = new Int8Array(128).fill(-1);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'.split('').forEach((ch, i) => {
  B64_VALUE[ch.charCodeAt(0)] = i;
});
B64_VALUE[43] = 62;
B64_VALUE[45] = 62;
B64_VALUE[47] = 63;
B64_VALUE[95] = 63; // + - / _

function decodeBase64(s: string): Uint8Array {
  let len = s.length;
  while (len > 0 && s.charCodeAt(len - 1) === 61) len--;
  if (len % 4 === 1) len--;
  const out = new Uint8Array(Math.floor((len * 3) / 4));
  let o = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < len; i++) {
    acc = ((acc << 6) | B64_VALUE[s.charCodeAt(i)]!) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out.subarray(0, o);
}

function decodeHex(s: string): Uint8Array {
  const out = new Uint8Array(s.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(i * 2, i * 2 + 2), 16);
  return out;
}

const UTF8 = new TextDecoder('utf-8');
const UTF16LE = new TextDecoder('utf-16le');

/** Bytes to text: UTF-16LE when (nearly) every odd byte is zero, UTF-8 otherwise. */
function bytesToText(bytes: Uint8Array): string {
  if (bytes.length >= 8) {
    let zeros = 0;
    for (let i = 1; i < bytes.length; i += 2) if (bytes[i] === 0) zeros++;
    if (zeros >= 0.9 * Math.floor(bytes.length / 2)) return UTF16LE.decode(bytes.subarray(0, bytes.length & ~1));
  }
  return UTF8.decode(bytes);
}

/** At least 85 % printable characters (tab, LF, CR, and no C0/C1 controls or U+FFFD otherwise). */
export function mostlyPrintable(text: string, minLength = 6): boolean {
  if (text.length < minLength) return false;
  let bad = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 13) || (c >= 0x7f && c <= 0x9f) || c === 0xfffd) bad++;
  }
  return bad <= 0.15 * text.length;
}

const URL_RUN = /(?:%[0-9a-fA-F]{2})+/g;
const ESCAPE_ONE = /(?:\\x[0-9a-fA-F]{2}|\\[0-3][0-7]{2})+|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]{1,6}\}/g;
const ESCAPE_RUN = /(?:\\x[0-9a-fA-F]{2}|\\[0-3][0-7]{2}|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]{1,6}\}){2,}/g;

/** Windows around the first MAX_DECODE_RUNS matches of `run` (80 before, 200 after, merged), each decoded, at most MAX_BLOB_CHARS in all. */
function decodeWindows(text: string, run: RegExp, decode: (window: string) => string): { start: number; end: number; text: string }[] {
  const windows: [number, number][] = [];
  run.lastIndex = 0;
  for (let m = run.exec(text), k = 0; m && k < MAX_DECODE_RUNS; m = run.exec(text), k++) {
    const a = Math.max(0, m.index - 80);
    const b = Math.min(text.length, m.index + m[0].length + 200);
    const prev = windows[windows.length - 1];
    if (prev && a <= prev[1]) prev[1] = Math.max(prev[1], b);
    else windows.push([a, b]);
  }
  let budget = MAX_BLOB_CHARS;
  const out: { start: number; end: number; text: string }[] = [];
  for (const [a, b] of windows) {
    if (budget <= 0) break;
    const end = Math.min(b, a + budget);
    const w = text.slice(a, end);
    budget -= w.length;
    out.push({ start: a, end, text: decode(w) });
  }
  return out;
}

/** Text around the first MAX_DECODE_RUNS matches of `run`, decoded and joined (null when none). */
function decodeAround(text: string, run: RegExp, decode: (window: string) => string): string | null {
  const w = decodeWindows(text, run, decode);
  return w.length === 0 ? null : w.map((x) => x.text).join('\n');
}

const urlDecodeWindow = (w: string): string => w.replace(URL_RUN, (r) => UTF8.decode(decodeHex(r.replace(/%/g, ''))));
const escapeDecodeWindow = (w: string): string =>
  w.replace(ESCAPE_ONE, (r) => {
    if (r.startsWith('\\u{')) {
      const cp = parseInt(r.slice(3, -1), 16);
      return cp <= 0x10ffff ? String.fromCodePoint(cp) : r;
    }
    if (r.startsWith('\\u')) return String.fromCharCode(parseInt(r.slice(2), 16));
    const bytes: number[] = [];
    for (const m of r.matchAll(/\\x([0-9a-fA-F]{2})|\\([0-3][0-7]{2})/g)) bytes.push(m[1] ? parseInt(m[1], 16) : parseInt(m[2]!, 8));
    return UTF8.decode(new Uint8Array(bytes));
  });

const SHELL_TRICK =
  /[A-Za-z0-9](?:''|"")|(?:''|"")[A-Za-z0-9]|[A-Za-z]['"][A-Za-z]{1,16}['"]|\$\{?IFS\b|[A-Za-z]\\[A-Za-z]|\\[ ._~/@:=+,-]|[A-Za-z][\^`][A-Za-z]/;

/** The shell's view of a command after quote removal, for splitting tricks. */
export function dequoteShell(text: string): string {
  return collapseWhitespace(
    text
      .replace(/\$\{IFS(?:[^}]{0,8})\}|\$IFS(?![A-Za-z0-9_])/g, ' ')
      .replace(/['"]/g, '')
      // An unquoted backslash escapes the next character: `c\at`, `Login\ Data`, `\.env`.
      .replace(/\\([A-Za-z ._~/@:=+,-])/g, '$1')
      .replace(/(?<=[A-Za-z])[\^`](?=[A-Za-z])/g, ''),
  );
}

/**
 * Letter-spaced runs (`I g n o r e   a l l`, `i.g.n.o.r.e`): at least six single letters, each
 * followed by one separator, joined; two to four spaces (or a slash) between letters mark a word
 * gap. Yields the joined text with the run's offsets in `text`.
 */
const SPACED_RUN = /(?<![\p{L}\p{N}])\p{L}(?:(?:[ ._*-]|[ ]{2,4}|[ ]?\/[ ]?)\p{L}){5,600}(?![\p{L}\p{N}])/gu;
/**
 * What every letter-spaced run contains, as a plain (non-Unicode) pattern that is much cheaper to
 * search: four single characters (code points) between separators (each separator one to four of
 * ` ._*-/`). A text without it has no run, so the Unicode pattern above need not walk it.
 */
const GATE_CHAR = String.raw`(?:[\uD800-\uDBFF][\uDC00-\uDFFF]|[^ ._*\/-])`; // one code point: a letter outside the BMP is two code units
const GATE_SEP = String.raw`[ ._*\/-]`;
const SPACED_RUN_GATE = new RegExp(
  `${GATE_SEP}${GATE_CHAR}${GATE_SEP}{1,4}${GATE_CHAR}${GATE_SEP}{1,4}${GATE_CHAR}${GATE_SEP}{1,4}${GATE_CHAR}${GATE_SEP}`,
);
export function* letterSpacedRuns(text: string): Generator<{ text: string; start: number; end: number }> {
  if (text.length < 11 || !SPACED_RUN_GATE.test(text)) return;
  for (const m of text.matchAll(SPACED_RUN)) {
    const run = m[0];
    // Ordinary text has letters separated this way only by accident ("a b c"): skip short ones
    // and runs that are mostly multi-space gaps.
    // Letters joined by marks (`i.g.n.o.r.e a.l.l`): a space is a word gap; joined by spaces: two are.
    const joined = /\p{L}[._*-]\p{L}/u.test(run)
      ? run.replace(/[ ]{1,4}|[ ]?\/[ ]?/g, ' ').replace(/[._*-]/g, '')
      : run
          .replace(/[ ]{2,4}|[ ]?\/[ ]?/g, '\u0000')
          .replace(/ /g, '')
          .replace(/\u0000/g, ' ');
    if (joined.replace(/ /g, '').length < 6) continue;
    yield { text: joined, start: m.index!, end: m.index! + run.length };
  }
}

/** A cue in the text that it is written in ROT13 or backwards, for the bounded decodings below. */
const ROT13_CUE = /\brot[-_ ]?13\b/i;
/** Characters decoded after a ROT13 or reversal cue (a quarter of it before the cue too). */
const CUE_WINDOW = 2000;
const REVERSED_CUE =
  /\bbackwards?\b(?![\s-]{0,3}compat)|\b(?:read|written|spelled|typed|write|spell)\s{1,3}(?:it\s{1,3}|this\s{1,3})?in\s{1,3}reverse\b|\breversed?\s{1,3}(?:text|string|letters|characters|order|message|sentence)\b|\breverse\s{1,3}(?:the|this)\s{1,3}(?:text|string|letters|characters|message|sentence)\b|r[üu]ckw[äa]rts|(?:à|a) l'envers|al rev[ée]s/i;

export function rot13(text: string): string {
  return text.replace(/[A-Za-z]/g, (c) => {
    const b = c <= 'Z' ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - b + 13) % 26) + b);
  });
}

/** The cues, by name: the rule set's keyword index also holds their required literals (rules.ts). */
export const CUES = { rot13: ROT13_CUE, reversed: REVERSED_CUE } as const;
export type CueName = keyof typeof CUES;
/** Per cue, the keyword ids of its required literal sets (see analyzePattern). */
export type CuePrefilter = Readonly<Record<CueName, readonly (readonly number[])[]>>;

/**
 * The obfuscation views of `text`: letter-spaced runs joined, and ROT13 or reversed text when the
 * text says so. `mayHold(cue)` false: the caller knows the cue does not occur in the text.
 */
export function obfuscationViews(
  text: string,
  mayHold: (cue: CueName) => boolean = () => true,
): { kind: 'spaced' | 'rot13' | 'reversed'; text: string; start: number; end: number }[] {
  const out: { kind: 'spaced' | 'rot13' | 'reversed'; text: string; start: number; end: number }[] = [];
  for (const r of letterSpacedRuns(text)) {
    out.push({ kind: 'spaced', ...r });
    if (out.length >= MAX_BLOBS) break;
  }
  // Only a window around the cue is decoded, so a long file that mentions ROT13 costs no more.
  const around = (re: RegExp): { start: number; end: number } | undefined => {
    const m = re.exec(text);
    if (!m) return undefined;
    return { start: Math.max(0, m.index - CUE_WINDOW / 4), end: Math.min(text.length, m.index + m[0].length + CUE_WINDOW) };
  };
  const r = mayHold('rot13') ? around(ROT13_CUE) : undefined;
  if (r) out.push({ kind: 'rot13', text: rot13(text.slice(r.start, r.end)), ...r });
  const b = mayHold('reversed') ? around(REVERSED_CUE) : undefined;
  if (b)
    out.push({
      kind: 'reversed',
      text: [...text.slice(Math.max(0, b.start - CUE_WINDOW / 2), b.end)].reverse().join(''),
      start: Math.max(0, b.start - CUE_WINDOW / 2),
      end: b.end,
    });
  return out;
}

/** Caps a field to the scan window. */
export function capText(text: string): { text: string; truncated: boolean } {
  if (text.length <= SCAN_HEAD + SCAN_TAIL) return { text, truncated: false };
  return { text: text.slice(0, SCAN_HEAD) + '\n' + text.slice(text.length - SCAN_TAIL), truncated: true };
}

/**
 * All variants of one field, with the report of what normalisation found. With an index, the
 * normalised variant is scanned for keywords while it is built (its hits go into `hits`); `cues`
 * (the cues' literal sets in that index) lets a plain text skip the cue searches it cannot match.
 */
export function prepareField(input: string, shell: boolean, index?: KeywordIndex, hits?: KeywordHits, cues?: CuePrefilter): PreparedField {
  const report = emptyReport();
  const capped = capText(input);
  report.truncated = capped.truncated;
  const text = capped.text;
  const plain = isPlainText(text);
  const blobs: Blob[] = [];
  const norm = normalizeText(text, report, index, hits, blobs, plain);
  const removed = removedCount(report);
  const variants: Variant[] = [{ kind: 'normalized', text: norm.text, ...(hits ? { hits } : {}) }];
  if (!plain) {
    const folded = foldHomoglyphs(norm.text, report);
    if (folded !== null) variants.push({ kind: 'homoglyph', text: folded });
  }
  const extra = (kind: VariantKind, t: string) => {
    const n = normalizeText(t, report);
    variants.push({ kind, text: n.text });
    const folded = NOT_PLAIN.test(n.text) ? foldHomoglyphs(n.text, report) : null;
    if (folded !== null) variants.push({ kind: 'homoglyph', text: folded });
    if (n.hidden) variants.push({ kind: 'hidden', text: normalizeText(n.hidden, report).text });
  };
  if (norm.hidden) {
    report.hiddenText = norm.hidden.slice(0, 120);
    extra('hidden', norm.hidden);
  }
  // Bounded decoding, one level deep.
  const base = norm.text;
  if (base.indexOf('%') >= 0) {
    const u = decodeAround(base, URL_RUN, urlDecodeWindow);
    if (u !== null && mostlyPrintable(u)) {
      report.decoded.push({ kind: 'url', length: u.length });
      extra('url', u);
    }
  }
  if (base.indexOf('\\') >= 0) {
    const e = decodeAround(base, ESCAPE_RUN, escapeDecodeWindow);
    if (e !== null && mostlyPrintable(e)) {
      report.decoded.push({ kind: 'escape', length: e.length });
      extra('escape', e);
    }
  }
  decodeBlobs(base, blobs, report, (blob, decoded) => extra(blob.kind, decoded));
  // Letter-spacing, ROT13 and reversal (read off the input: normalisation collapses the spacing).
  // A plain text differs from its normalised variant only in whitespace runs, which the literal
  // analysis reads as one space: a cue whose required literals are not among the variant's
  // keywords cannot match the text.
  const mayHold = plain && cues && hits ? (cue: CueName) => cues[cue].every((set) => set.some((k) => hits.found[k] === 1)) : undefined;
  for (const v of obfuscationViews(text, mayHold)) extra(v.kind, v.text);
  if (shell && SHELL_TRICK.test(base)) {
    const d = dequoteShell(base);
    if (d !== base) variants.push({ kind: 'shell', text: d });
  }
  return { raw: !plain && removed > 0 ? text : null, variants, report };
}

/**
 * The normalised variants of a text and what normalisation found (the first variant is the
 * normalised text itself). `shell: true` adds the de-quoted shell view as command fields get it.
 */
export function normalizeForScan(text: string, opts: { shell?: boolean } = {}): { variants: string[]; report: NormalizationReport } {
  const p = prepareField(text, opts.shell ?? false);
  return { variants: p.variants.map((v) => v.text), report: p.report };
}

// ---- normalisation with an offset map (content inspection) ------------------------------------

/** A scanned text and where each of its code units came from in the original input. */
export interface MappedVariant {
  readonly kind: VariantKind;
  readonly text: string;
  /** The span [start, end) of the original input (UTF-16 offsets) that produced text[a, b). */
  span(a: number, b: number): [number, number];
}

/** Text built piece by piece, with the original span of every code unit (typed arrays, grown as needed). */
class MapBuilder {
  private parts: string[] = [];
  length = 0;
  starts: Int32Array;
  ends: Int32Array;
  constructor(capacity: number) {
    this.starts = new Int32Array(Math.max(16, capacity));
    this.ends = new Int32Array(Math.max(16, capacity));
  }
  private reserve(n: number): void {
    if (this.length + n <= this.starts.length) return;
    const size = Math.max(this.length + n, this.starts.length * 2);
    const s = new Int32Array(size);
    s.set(this.starts.subarray(0, this.length));
    this.starts = s;
    const e = new Int32Array(size);
    e.set(this.ends.subarray(0, this.length));
    this.ends = e;
  }
  /** Code units [from, to) of `source`, each mapping to its own offset + `base`. */
  copy(source: string, from: number, to: number, base = 0): void {
    if (to <= from) return;
    this.reserve(to - from);
    this.parts.push(source.slice(from, to));
    for (let i = from; i < to; i++) {
      this.starts[this.length] = base + i;
      this.ends[this.length] = base + i + 1;
      this.length++;
    }
  }
  /** `s`, every code unit of it mapping to [start, end). */
  add(s: string, start: number, end: number): void {
    this.reserve(s.length);
    this.parts.push(s);
    for (let i = 0; i < s.length; i++) {
      this.starts[this.length] = start;
      this.ends[this.length] = end;
      this.length++;
    }
  }
  text(): string {
    const t = this.parts.join('');
    this.parts = [t];
    return t;
  }
}
const COMBINING = /^\p{M}/u;

/**
 * The same steps as the `normalized` variant of prepareField — invisible characters removed (tag
 * characters decoded to the hidden text), NFKC on the non-plain runs, whitespace collapsed — but
 * with the origin of every output code unit. NFKC is applied per base character with its combining
 * marks, so a fullwidth or composed letter maps to exactly its own span; when composition crosses
 * those clusters (Hangul jamo) the whole run maps to the run's span.
 */
function normalizeWithMap(input: string, report: MutableReport): { main: MapBuilder; hidden: MapBuilder } {
  const main = new MapBuilder(input.length);
  const hidden = new MapBuilder(0);
  let lastTagEnd = -1;
  let pos = 0;
  NOT_PLAIN_RUN.lastIndex = 0;
  for (let m = NOT_PLAIN_RUN.exec(input); m; m = NOT_PLAIN_RUN.exec(input)) {
    main.copy(input, pos, m.index);
    const run = m[0];
    const base = m.index;
    // Kept code units of the run with their offsets; invisible ones removed (and counted).
    let kept = '';
    const keptAt: number[] = [];
    INVISIBLE.lastIndex = 0;
    let from = 0;
    const keep = (to: number) => {
      for (let i = from; i < to; i++) {
        kept += run[i];
        keptAt.push(base + i);
      }
    };
    for (let v = INVISIBLE.exec(run); v; v = INVISIBLE.exec(run)) {
      keep(v.index);
      from = v.index + v[0].length;
      const ch = v[0];
      const offset = base + v.index;
      const tag = countInvisible(ch, report);
      if (tag !== NOT_A_TAG) {
        if (tag !== SILENT_TAG) {
          if (lastTagEnd >= 0 && lastTagEnd !== offset && hidden.length) hidden.add(' ', offset, offset);
          hidden.add(String.fromCharCode(tag), offset, offset + 2);
        }
        lastTagEnd = offset + 2;
      }
    }
    keep(run.length);
    pos = base + run.length;
    if (kept.length === 0) continue;
    if (NFKC_STABLE.test(kept)) {
      for (let i = 0; i < kept.length; i++) main.add(kept[i]!, keptAt[i]!, keptAt[i]! + 1);
      continue;
    }
    const whole = kept.normalize('NFKC');
    if (whole !== kept) report.nfkcChanged = true;
    // Clusters: one code point and the combining marks after it.
    const pieces: { text: string; start: number; end: number }[] = [];
    for (let i = 0; i < kept.length;) {
      let j = i + (kept.charCodeAt(i) >= 0xd800 && kept.charCodeAt(i) <= 0xdbff && i + 1 < kept.length ? 2 : 1);
      while (j < kept.length && COMBINING.test(kept.slice(j, j + 2)))
        j += kept.charCodeAt(j) >= 0xd800 && kept.charCodeAt(j) <= 0xdbff ? 2 : 1;
      pieces.push({ text: kept.slice(i, j).normalize('NFKC'), start: keptAt[i]!, end: keptAt[j - 1]! + 1 });
      i = j;
    }
    if (pieces.map((p) => p.text).join('') === whole) for (const p of pieces) main.add(p.text, p.start, p.end);
    else main.add(whole, keptAt[0]!, keptAt[kept.length - 1]! + 1);
  }
  main.copy(input, pos, input.length);
  return { main: collapseMapped(main), hidden: collapseMapped(hidden) };
}

/** collapseWhitespace with the map carried along: a collapsed run maps to the whole run. */
function collapseMapped(b: MapBuilder): MapBuilder {
  const text = b.text();
  if (!/\s{2,}|[^\S \n]/.test(text)) return b;
  const r = new MapBuilder(b.length);
  let i = 0;
  WHITESPACE_TO_FIX.lastIndex = 0;
  const copy = (to: number) => {
    if (to <= i) return;
    r.add(text.slice(i, to), 0, 0);
    r.starts.set(b.starts.subarray(i, to), r.length - (to - i));
    r.ends.set(b.ends.subarray(i, to), r.length - (to - i));
  };
  for (let m = WHITESPACE_TO_FIX.exec(text); m; m = WHITESPACE_TO_FIX.exec(text)) {
    copy(m.index);
    const end = m.index + m[0].length;
    r.add(m[0].indexOf('\n') >= 0 ? '\n' : ' ', b.starts[m.index]!, b.ends[end - 1]!);
    i = end;
  }
  copy(text.length);
  return r;
}

function mapped(kind: VariantKind, text: string, starts: Int32Array, ends: Int32Array): MappedVariant {
  return {
    kind,
    text,
    span: (a, b) => {
      if (text.length === 0) return [0, 0];
      const s = starts[Math.min(a, text.length - 1)]!;
      return [s, Math.max(s, ends[Math.max(a, Math.min(b, text.length) - 1)]!)];
    },
  };
}
const fixed = (kind: VariantKind, text: string, start: number, end: number): MappedVariant => ({ kind, text, span: () => [start, end] });

/**
 * The variants prepareField scans (normalised, homoglyph-folded, hidden tag text, decoded base64,
 * hex, URL and escape runs), each with a map back to the input: a match in the normalised or
 * folded text maps to exactly the characters it came from (zero-width characters inside it
 * included); a match in hidden tag text maps to the tag characters; a match in decoded text maps
 * to the encoded blob (or the decoded window, for URL and escape runs). The whole input is
 * scanned (callers bound its length); the shell view is not built (content is not a command).
 */
export function prepareMapped(input: string): { variants: MappedVariant[]; report: NormalizationReport } {
  const report = emptyReport();
  const { main, hidden } = normalizeWithMap(input, report);
  const text = main.text();
  const variants: MappedVariant[] = [mapped('normalized', text, main.starts, main.ends)];
  const plain = !NOT_PLAIN.test(input);
  if (!plain) {
    const folded = foldHomoglyphs(text, report);
    if (folded !== null) variants.push(mapped('homoglyph', folded, main.starts, main.ends));
  }
  if (hidden.length) {
    const h = hidden.text();
    report.hiddenText = h.slice(0, 120);
    variants.push(mapped('hidden', h, hidden.starts, hidden.ends));
    const folded = NOT_PLAIN.test(h) ? foldHomoglyphs(h, report) : null;
    if (folded !== null) variants.push(mapped('homoglyph', folded, hidden.starts, hidden.ends));
  }
  const span = (a: number, b: number): [number, number] => variants[0]!.span(a, b);
  const extra = (kind: VariantKind, decoded: string, at: [number, number]) => {
    const n = normalizeText(decoded, report);
    variants.push(fixed(kind, n.text, at[0], at[1]));
    const folded = NOT_PLAIN.test(n.text) ? foldHomoglyphs(n.text, report) : null;
    if (folded !== null) variants.push(fixed('homoglyph', folded, at[0], at[1]));
    if (n.hidden) variants.push(fixed('hidden', normalizeText(n.hidden, report).text, at[0], at[1]));
  };
  if (text.indexOf('%') >= 0) {
    for (const w of decodeWindows(text, URL_RUN, urlDecodeWindow)) {
      if (mostlyPrintable(w.text)) {
        report.decoded.push({ kind: 'url', length: w.text.length });
        extra('url', w.text, span(w.start, w.end));
      }
    }
  }
  if (text.indexOf('\\') >= 0) {
    for (const w of decodeWindows(text, ESCAPE_RUN, escapeDecodeWindow)) {
      if (mostlyPrintable(w.text)) {
        report.decoded.push({ kind: 'escape', length: w.text.length });
        extra('escape', w.text, span(w.start, w.end));
      }
    }
  }
  const blobs: Blob[] = [];
  findBlobs(text, blobs);
  decodeBlobs(text, blobs, report, (blob, decoded) => extra(blob.kind, decoded, span(blob.start, blob.end)));
  for (const v of obfuscationViews(input)) extra(v.kind, v.text, [v.start, v.end]);
  return { variants, report };
}
