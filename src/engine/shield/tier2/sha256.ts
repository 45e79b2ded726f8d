// SHA-256 for the pure engine (the Tier 2 cache key, the prompt's version hash): @noble/hashes,
// audited, dependency-free JavaScript with no Node import. Strings are hashed as UTF-8 (lone
// surrogates become U+FFFD, as TextEncoder does).
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** SHA-256 of bytes, or of a string's UTF-8 encoding; lower-case hex. */
export function sha256Hex(input: string | Uint8Array): string {
  return bytesToHex(sha256(typeof input === 'string' ? utf8ToBytes(input) : input));
}
