// Value shapes: what a candidate secret value looks like, beyond its character frequencies. Rules name
// them in their data (`entropy_exempt_shapes`, `allow_shapes`, security/secrets/schema.json); the analyses
// live here because a regular expression cannot say them (split a name into words, check each word).
//
// Why the entropy floor needs exemptions: the Shannon entropy of an n-character string is at most log2 n
// (3.58 bits for 12 characters), and one repeated character takes a random 12-character password below
// 3.0. A password policy's signal is its composition instead: upper and lower case, a digit, and (short
// ones) a symbol. A passphrase repeats letters by nature (orbit-harbor-orbit-walnut36 is 3.2 bits).
//
// Why names are not secrets: a secret-named key in code often holds another name (`REFRESH_TOKEN:
// "RefreshToken"`, `password: URLPatternComponentResult;`, `apiKey: initialAuthUsedAPIKey`, `$token =
// Get-AzAccessToken`). A name is made of words; a random token is not (its "words" are one or two
// letters long, or unpronounceable runs like `Cqyln`), so the words decide, not the entropy.

import wordBigrams from '../../../security/secrets/word-bigrams.json';

export type ValueShape = 'password' | 'passphrase' | 'code_identifier';

const isUpper = (c: number): boolean => c >= 65 && c <= 90;
const isLower = (c: number): boolean => c >= 97 && c <= 122;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isLetter = (c: number): boolean => isUpper(c) || isLower(c);

// Which characters a value has, without clearing a table per value: a character is seen when its stamp is the value's.
const seenStamp = new Uint32Array(128);
let stamp = 0;

/**
 * A password by composition: 8-128 characters without blanks, upper and lower case and a digit, a symbol
 * unless it has 12+ characters, at least half of its characters distinct, and not a code name.
 */
export function isPasswordShaped(v: string): boolean {
  if (v.length < 8 || v.length > 128) return false;
  let lower = false;
  let upper = false;
  let digit = false;
  let symbol = false;
  let distinct = 0;
  if (++stamp === 0xffffffff) {
    seenStamp.fill(0);
    stamp = 1;
  }
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c <= 32 || c >= 127) return false; // blanks, and text that is not a typed password
    if (isLower(c)) lower = true;
    else if (isUpper(c)) upper = true;
    else if (isDigit(c)) digit = true;
    else symbol = true;
    if (seenStamp[c] !== stamp) {
      seenStamp[c] = stamp;
      distinct++;
    }
  }
  if (!lower || !upper || !digit || (v.length < 12 && !symbol) || distinct * 2 < v.length) return false;
  return !isCodeIdentifier(v);
}

/** Four or more words of 3+ letters joined by one of - _ . and ending in a 1-4 digit number (maple-orbit-canyon-velvet42). */
const PASSPHRASE = /^[A-Za-z][a-z]{2,}([-_.])[A-Za-z][a-z]{2,}(?:\1[A-Za-z][a-z]{2,}){2,}[0-9]{1,4}$/;
export const isPassphraseShaped = (v: string): boolean => v.length <= 128 && isDigit(v.charCodeAt(v.length - 1)) && PASSPHRASE.test(v);

/** Mean log2 probability of the letter transitions inside the words (3+ letters), from security/secrets/word-bigrams.json. */
const LOG_P: readonly (readonly number[])[] = wordBigrams.counts.map((row) => {
  const total = row.reduce((a, b) => a + b, 0);
  return row.map((n) => Math.log2(n / total));
});
const BOUNDARY = 26;
/**
 * The floor of a name's mean transition score (names of code average -3.6). With the other tests of
 * isCodeIdentifier it takes 9 in 10 names of @types/node (10+ characters) for names, and random tokens of
 * letters and digits about 3 times in 10,000 at 12 characters and once in 100,000 at 20 (measured; the tests
 * hold it to 1 in 1,000 and 1 in 20,000).
 */
const WORD_SCORE_FLOOR = -4.2;

// Word spans of the name being checked (a name has at most 128 characters, so at most 128 words); reused,
// because the check runs on every candidate a generic rule accepts and must not allocate.
const wordStart = new Int32Array(128);
const wordEnd = new Int32Array(128);
const VOWEL = new Uint8Array(26);
for (const c of 'aeiouy') VOWEL[c.charCodeAt(0) - 97] = 1;

/**
 * Splits a name into words, into wordStart/wordEnd: runs of letters, split at case changes as
 * /[A-Z]+(?![a-z])|[A-Z]?[a-z]+/ does (URLPattern: URL, Pattern); a run without lower case is one word.
 * Returns the number of words, or -1 for more than 2 acronyms inside camel case or one of 7+ letters.
 */
function splitWords(v: string): number {
  let n = 0;
  let acronyms = 0;
  for (let i = 0; i < v.length;) {
    while (i < v.length && !isLetter(v.charCodeAt(i))) i++;
    let j = i;
    let hasLower = false;
    for (; j < v.length; j++) {
      const c = v.charCodeAt(j);
      if (isLower(c)) hasLower = true;
      else if (!isUpper(c)) break;
    }
    if (j === i) break;
    if (!hasLower) {
      wordStart[n] = i;
      wordEnd[n++] = j;
    }
    for (let k = i; hasLower && k < j;) {
      let e = k;
      while (e < j && isUpper(v.charCodeAt(e))) e++;
      if (e - k > 1) {
        // A capital run: an acronym, whose last capital starts the next word when lower case follows.
        const end = e < j ? e - 1 : e;
        if (end - k > 1 && (++acronyms > 2 || end - k > 6)) return -1;
        wordStart[n] = k;
        wordEnd[n++] = end;
        k = end;
        if (e === j) continue;
      }
      e = k + 1;
      while (e < j && isLower(v.charCodeAt(e))) e++;
      wordStart[n] = k;
      wordEnd[n++] = e;
      k = e;
    }
    i = j;
  }
  return n;
}

/** An identifier character: a letter, a digit, `_` or `$`. */
const isNameChar = (c: number): boolean => isLetter(c) || isDigit(c) || c === 95 || c === 36;
/** A separator between the words of a name: - _ . : */
const isWordSeparator = (c: number): boolean => c === 45 || c === 95 || c === 46 || c === 58;

/** /^!?[A-Za-z_$][\w$]*(?:(?:\?\.|\.|::)[A-Za-z_$][\w$]*)*(?:\(\))?$/, without a regular expression (this runs on every accepted candidate). */
function isMemberChain(v: string): boolean {
  let i = v.charCodeAt(0) === 33 ? 1 : 0; // !
  const end = v.endsWith('()') ? v.length - 2 : v.length;
  let segmentStart = true;
  for (; i < end; i++) {
    const c = v.charCodeAt(i);
    if (isNameChar(c)) {
      if (segmentStart && isDigit(c)) return false;
      segmentStart = false;
      continue;
    }
    if (segmentStart) return false;
    if (c === 63 || c === 58) {
      // ?.  ::
      if (v.charCodeAt(i + 1) !== (c === 63 ? 46 : 58) || i + 1 >= end) return false;
      i++;
    } else if (c !== 46) return false;
    segmentStart = true;
  }
  return !segmentStart;
}

/** A case change or a separator between words: /[a-z][A-Z]|[A-Z]{2}[a-z]|[A-Za-z0-9][-_.:]+[A-Za-z]|\?\./ (a digit alone is not one). */
function hasWordBoundary(v: string): boolean {
  for (let i = 0; i + 1 < v.length; i++) {
    const c = v.charCodeAt(i);
    const d = v.charCodeAt(i + 1);
    if (isLower(c) && isUpper(d)) return true;
    if (isUpper(c) && isUpper(d) && isLower(v.charCodeAt(i + 2))) return true;
    if (c === 63 && d === 46) return true;
    if (isLetter(c) || isDigit(c)) {
      let j = i + 1;
      while (j < v.length && isWordSeparator(v.charCodeAt(j))) j++;
      if (j > i + 1 && isLetter(v.charCodeAt(j))) return true;
    }
  }
  return false;
}

/**
 * An identifier or member chain of code (`initialAuthUsedAPIKey`, `cacheRecord?.idToken?.secret`, `exports.x509Credential`,
 * `Get-AzAccessToken`, `URLPatternComponentResult`) whose words read like words: 10-128 characters with a
 * case change or a separator between words, at most a fifth digits in at most two runs, an acronym inside camel case of at most
 * 6 letters, at least 70 % of the letters in words of 3+ letters, every word of 5+ letters with a vowel and
 * no run of 5 consonants, and the letter transitions of its words as likely as those of real names
 * (WORD_SCORE_FLOOR). A passphrase (raven_kettle_otter_maple45) is not a name.
 */
export function isCodeIdentifier(v: string): boolean {
  if (v.length < 10 || v.length > 128) return false;
  let digits = 0;
  let digitRuns = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (isDigit(c)) {
      if (digits++ === 0 || !isDigit(v.charCodeAt(i - 1))) digitRuns++;
    } else if (c === 43 || c === 47 || c === 61 || c <= 32 || c >= 127) return false; // + / = blanks: not a name
  }
  // Names have few digits, in one or two places (X509, k8s, HTTP2_…_MD5); a random token scatters them.
  if (digits * 5 > v.length || digitRuns > 2) return false;
  if (!isMemberChain(v) && !/^[A-Z][a-z]+-[A-Z][A-Za-z0-9]+$/.test(v)) return false; // or a PowerShell Verb-Noun
  if (!hasWordBoundary(v) || isPassphraseShaped(v)) return false;
  const n = splitWords(v);
  if (n < 2) return false;
  let letters = 0;
  let inWords = 0;
  let short = 0;
  let logP = 0;
  for (let w = 0; w < n; w++) {
    const start = wordStart[w]!;
    const length = wordEnd[w]! - start;
    letters += length;
    if (length < 3) {
      short++;
      continue;
    }
    inWords += length;
    let vowels = 0;
    let consonantRun = 0;
    let prev = BOUNDARY;
    for (let i = start; i < start + length; i++) {
      const letter = (v.charCodeAt(i) | 32) - 97;
      logP += LOG_P[prev]![letter]!;
      prev = letter;
      if (VOWEL[letter]) {
        vowels++;
        consonantRun = 0;
      } else if (++consonantRun >= 5 && length >= 5) return false;
    }
    logP += LOG_P[prev]![BOUNDARY]!;
    if (length >= 5 && vowels === 0) return false;
  }
  if (short > Math.max(1, Math.ceil(n / 4))) return false;
  // Each word of 3+ letters has one transition per letter and one into the boundary after it.
  const transitions = inWords + (n - short);
  return inWords * 10 >= letters * 7 && logP / transitions >= WORD_SCORE_FLOOR;
}

export const SHAPE_TESTS: Readonly<Record<ValueShape, (v: string) => boolean>> = {
  password: isPasswordShaped,
  passphrase: isPassphraseShaped,
  code_identifier: isCodeIdentifier,
};
