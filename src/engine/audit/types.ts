// The audit log's entry format and hash. Pure: the SHA-256 function is injected by the host.
// Hash = SHA-256 (hex) of the RFC 8785 (JCS) canonical JSON of the entry without its `hash` member,
// computed with the `canonicalize` package (erdtman/canonicalize, RFC 8785 reference implementation).
import canonicalize from 'canonicalize';

/** Every event Bulwark writes. Each one has a producer in src/ (a unit test checks it). */
export const AUDIT_EVENT_TYPES = [
  // An action's lifecycle: proposed, evaluated, then approved or blocked, then executed or failed.
  'ACTION_PROPOSED',
  'ACTION_EVALUATED',
  'ACTION_APPROVED',
  'ACTION_BLOCKED',
  'ACTION_EXECUTED',
  'ACTION_FAILED',
  // Derived from a decision's rules and tier trail.
  'SHIELD_ERROR',
  'CANARY_VERIFIED',
  'CANARY_MISSING',
  'RATE_LIMIT_HIT',
  'BUDGET_EXHAUSTED',
  'SELF_PROTECTION',
  'PROTECTION_BLOCKED',
  'IFC_CLASSIFIED',
  'IFC_BLOCKED',
  'IFC_WOULD_BLOCK',
  // Host events.
  'SESSION_STARTED',
  'SESSION_ENDED',
  'CONFIG_CHANGED',
  'POLICY_CHANGED',
  'SANDBOX_STATUS',
  'INTEGRITY_VIOLATION',
  'RECOVERY',
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];
export const isAuditEventType = (s: unknown): s is AuditEventType =>
  typeof s === 'string' && (AUDIT_EVENT_TYPES as readonly string[]).includes(s);

/** One line of the log. */
export interface AuditEntry {
  /** 1, 2, 3, … without gaps. */
  readonly seq: number;
  /** UUID v4. */
  readonly id: string;
  /** RFC 3339 UTC timestamp with milliseconds. */
  readonly ts: string;
  readonly session: string;
  readonly event: AuditEventType;
  readonly action_type?: string;
  readonly details: Readonly<Record<string, unknown>>;
  /** The previous entry's hash; GENESIS_HASH for seq 1. */
  readonly prev_hash: string;
  readonly hash: string;
}
export type UnhashedEntry = Omit<AuditEntry, 'hash'>;
/** What a caller supplies; the log fills in seq, id, ts, prev_hash and hash. */
export interface AuditEventInput {
  readonly event: AuditEventType;
  readonly session: string;
  readonly action_type?: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

export const GENESIS_HASH = '0'.repeat(64);

/** Hex SHA-256 of a UTF-8 string. */
export type Sha256Hex = (text: string) => string;

/** The RFC 8785 canonical JSON of an entry without its hash: the bytes that are hashed. */
export function canonicalBody(entry: UnhashedEntry): string {
  const { hash: _drop, ...rest } = entry as AuditEntry;
  void _drop;
  const c = canonicalize(rest);
  if (c === undefined) throw new Error('audit entry cannot be canonicalised');
  return c;
}

export function entryHash(entry: UnhashedEntry, sha256hex: Sha256Hex): string {
  return sha256hex(canonicalBody(entry));
}

/**
 * The line written to the log: the canonical body with `"hash"` appended as its last member, so a
 * verifier can check the hash over the exact bytes without re-serialising (and any JSON tool can
 * re-verify it by parsing, dropping `hash` and canonicalising). No trailing newline.
 */
export function entryLine(body: string, hash: string): string {
  return body === '{}' ? `{"hash":"${hash}"}` : `${body.slice(0, -1)},"hash":"${hash}"}`;
}

const HASH_SUFFIX_LEN = ',"hash":"'.length + 64 + '"}'.length;
/** Splits a line written by entryLine into body and hash; undefined if it is not in that form. */
export function splitLine(line: string): { body: string; hash: string } | undefined {
  const n = line.length;
  if (n < HASH_SUFFIX_LEN + 2 || line.charCodeAt(n - 1) !== 125 || !line.startsWith(',"hash":"', n - HASH_SUFFIX_LEN)) return undefined;
  const hash = line.slice(n - 66, n - 2);
  if (!/^[0-9a-f]{64}$/.test(hash)) return undefined;
  return { body: line.slice(0, n - HASH_SUFFIX_LEN) + '}', hash };
}

/** The message an HMAC signs for a checkpoint or the head: binds the kind, seq and hash. */
export const anchorMessage = (kind: 'head' | 'checkpoint' | 'witness', seq: number, hash: string): string =>
  `bulwark-audit-v1|${kind}|${seq}|${hash}`;
