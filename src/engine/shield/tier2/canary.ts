// The workspace canary: 32 random bytes as 64 hex characters, generated once per workspace and kept
// with Bulwark's FullBlock state. It is embedded only in the evaluator's system prompt; an answer
// must echo it exactly, so an answer written by injected instructions (which never saw the system
// prompt) is rejected.

export const CANARY_BYTES = 32;
const CANARY_RE = /^[0-9a-fA-F]{64}$/;

export function isValidCanary(c: string): boolean {
  return typeof c === 'string' && CANARY_RE.test(c);
}

/** A fresh canary from a cryptographic random source (the Node side passes `crypto.randomBytes`). */
export function generateCanary(randomBytes: (n: number) => Uint8Array): string {
  const bytes = randomBytes(CANARY_BYTES);
  if (!(bytes instanceof Uint8Array) || bytes.length !== CANARY_BYTES) {
    throw new Error(`generateCanary: the random source returned ${bytes?.length ?? 'no'} bytes, expected ${CANARY_BYTES}`);
  }
  let hex = '';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  return hex;
}

/**
 * Exact comparison whose running time depends only on the length. Strings of different length are
 * unequal at once (the length of a canary is public: always 64).
 */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
