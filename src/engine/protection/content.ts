// What a file is by its content, whatever it is called (security/protection/content.yaml): private
// key material by its first bytes (fully blocked), and public material (certificates, public keys)
// that a name rule would otherwise block from being read.
import contentTableData from '../../../security/protection/content.yaml';
import { findSecrets, loadSecretRules } from '../secrets';

/** Bytes read from the start of a file to tell what it is. */
export const HEAD_BYTES = 8192;

export type Structure = 'pkcs12' | 'der_private_key' | 'openpgp_secret_key';

export interface ContentSignature {
  readonly id: string;
  readonly reason: string;
  readonly keyword?: string;
  readonly lines?: readonly RegExp[];
  readonly prefixes?: readonly Uint8Array[];
  readonly structure?: Structure;
}

export interface CompiledContentTable {
  readonly privateKeys: readonly ContentSignature[];
  readonly publicMaxBytes: number;
  readonly publicLabels: ReadonlySet<string>;
  readonly sshPublicKeyLine: RegExp;
  readonly secretText: RegExp;
}

const STRUCTURES: readonly Structure[] = ['pkcs12', 'der_private_key', 'openpgp_secret_key'];

/** Shape check and compilation of the table: the data is compiled in, but a malformed table must stop Bulwark, not weaken it. */
export function compileContentTable(data: unknown): CompiledContentTable {
  const fail = (msg: string): never => {
    throw new Error(`content signature table: ${msg}`);
  };
  const regex = (source: unknown, flags: string, where: string): RegExp => {
    if (typeof source !== 'string' || source.length === 0) return fail(`${where}: expression missing`);
    try {
      return new RegExp(source, flags);
    } catch (e) {
      return fail(`${where}: ${(e as Error).message}`);
    }
  };
  if (typeof data !== 'object' || data === null) fail('not an object');
  const t = data as Record<string, unknown>;
  if (t.version !== 1) fail('version must be 1');
  if (!Array.isArray(t.private_keys) || t.private_keys.length === 0) fail('private_keys must be a non-empty list');
  const ids = new Set<string>();
  const privateKeys = (t.private_keys as Record<string, unknown>[]).map((s): ContentSignature => {
    const id = typeof s.id === 'string' && /^content_kind\.[a-z0-9_]+$/.test(s.id) ? s.id : fail('a signature without a valid id');
    if (ids.has(id)) fail(`duplicate id \`${id}\``);
    ids.add(id);
    if (typeof s.reason !== 'string' || s.reason.length < 10) fail(`${id}: reason missing`);
    const kinds = ['lines', 'prefixes', 'structure'].filter((k) => s[k] !== undefined);
    if (kinds.length !== 1) fail(`${id}: exactly one of lines, prefixes, structure`);
    if (s.lines !== undefined) {
      if (!Array.isArray(s.lines) || s.lines.length === 0) fail(`${id}: lines must be a non-empty list`);
      if (typeof s.keyword !== 'string' || s.keyword.length < 3) fail(`${id}: lines need a keyword`);
      return {
        id,
        reason: s.reason as string,
        keyword: s.keyword as string,
        lines: (s.lines as unknown[]).map((l, i) => regex(l, 'm', `${id} line ${i}`)),
      };
    }
    if (s.prefixes !== undefined) {
      if (!Array.isArray(s.prefixes) || s.prefixes.length === 0) fail(`${id}: prefixes must be a non-empty list`);
      return {
        id,
        reason: s.reason as string,
        prefixes: (s.prefixes as unknown[]).map((h) =>
          typeof h === 'string' && /^([0-9a-f]{2}){4,}$/.test(h) ? hexBytes(h) : fail(`${id}: bad prefix`),
        ),
      };
    }
    if (!STRUCTURES.includes(s.structure as Structure)) fail(`${id}: unknown structure`);
    return { id, reason: s.reason as string, structure: s.structure as Structure };
  });
  const p = (
    typeof t.public_material === 'object' && t.public_material !== null ? t.public_material : fail('public_material missing')
  ) as Record<string, unknown>;
  const max = p.public_max_bytes;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < HEAD_BYTES || max > 16 * 1024 * 1024)
    fail('public_max_bytes out of range');
  if (
    !Array.isArray(p.pem_labels) ||
    p.pem_labels.length === 0 ||
    !p.pem_labels.every((l) => typeof l === 'string' && /^[A-Z0-9]+( [A-Z0-9]+)*$/.test(l))
  )
    fail('pem_labels must be a list of labels');
  if ((p.pem_labels as string[]).some((l) => l.includes('PRIVATE'))) fail('a private label cannot be public');
  return {
    privateKeys,
    publicMaxBytes: max as number,
    publicLabels: new Set(p.pem_labels as string[]),
    sshPublicKeyLine: regex(p.ssh_public_key_line, '', 'ssh_public_key_line'),
    secretText: regex(p.secret_text, 'i', 'secret_text'),
  };
}

let compiled: CompiledContentTable | undefined;
/** The bundled table, compiled once; throws (and so blocks the action) if it is malformed. */
export function contentSignatures(): CompiledContentTable {
  compiled ??= compileContentTable(contentTableData);
  return compiled;
}

export function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Largest file read whole to prove that all of it is public material. */
export function publicMaxBytes(): number {
  return contentSignatures().publicMaxBytes;
}

/**
 * The private-key signature the first bytes of a file carry, or undefined. `size` (the whole
 * file's, when known) must equal the outer length of a DER structure, which a real key store or
 * DER key always does: an unrelated binary that happens to start alike is not taken for a key.
 */
export function privateKeySignature(head: Uint8Array, size?: number, table = contentSignatures()): ContentSignature | undefined {
  let text: string | undefined;
  for (const s of table.privateKeys) {
    if (s.prefixes) {
      if (s.prefixes.some((p) => startsWith(head, p))) return s;
    } else if (s.structure) {
      if (STRUCTURE_CHECKS[s.structure](head, size)) return s;
    } else if (s.lines && s.keyword) {
      text ??= decodeText(head, false) ?? '';
      if (text.includes(s.keyword) && s.lines.some((r) => r.test(text!))) return s;
    }
  }
  return undefined;
}

/**
 * True when `bytes`, the whole of a file, is public material only: PEM blocks with a public label
 * (each closed, base64 inside, armor headers allowed), SSH public key lines, and text around them
 * that holds no secret. At least one public item; no private key; valid text.
 */
export function isPublicMaterial(bytes: Uint8Array, table = contentSignatures()): boolean {
  if (bytes.length === 0 || bytes.length > table.publicMaxBytes) return false;
  if (privateKeySignature(bytes, bytes.length, table)) return false;
  const text = decodeText(bytes, true);
  if (text === undefined) return false;
  let items = 0;
  let inside: string | undefined;
  const outside: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const begin = /^(?:-----BEGIN ([A-Z0-9 ]+)-----|---- BEGIN ([A-Z0-9 ]+) ----)\s*$/.exec(line);
    const end = /^(?:-----END ([A-Z0-9 ]+)-----|---- END ([A-Z0-9 ]+) ----)\s*$/.exec(line);
    if (inside === undefined) {
      if (begin) {
        inside = begin[1] ?? begin[2]!;
        if (!table.publicLabels.has(inside)) return false;
        items++;
      } else if (end) {
        return false;
      } else if (table.sshPublicKeyLine.test(line)) {
        items++;
      } else {
        outside.push(line);
      }
      continue;
    }
    if (end) {
      if ((end[1] ?? end[2]) !== inside) return false;
      inside = undefined;
      continue;
    }
    // Inside a block: base64 lines, blank lines and armor headers (`Comment: …`, PGP and SSH2).
    if (!/^[A-Za-z0-9+/=]*\s*$/.test(line) && !/^[A-Za-z][A-Za-z0-9-]*: /.test(line)) return false;
  }
  if (inside !== undefined || items === 0) return false;
  const around = outside.join('\n');
  if (table.secretText.test(around)) return false;
  return around.trim().length === 0 || findSecrets(loadSecretRules(), around).length === 0;
}

function startsWith(b: Uint8Array, p: Uint8Array): boolean {
  if (b.length < p.length) return false;
  for (let i = 0; i < p.length; i++) if (b[i] !== p[i]) return false;
  return true;
}

/** The bytes as text: UTF-16 by its byte-order mark, otherwise UTF-8 (`strict`: invalid UTF-8 gives undefined). */
function decodeText(b: Uint8Array, strict: boolean): string | undefined {
  let encoding = 'utf-8';
  if (b[0] === 0xff && b[1] === 0xfe) encoding = 'utf-16le';
  else if (b[0] === 0xfe && b[1] === 0xff) encoding = 'utf-16be';
  try {
    return new TextDecoder(encoding, { fatal: strict }).decode(b).replace(/^\uFEFF/, '');
  } catch {
    return undefined;
  }
}

// ---- binary layouts -------------------------------------------------------------------------

interface Tlv {
  readonly tag: number;
  readonly start: number;
  readonly len?: number;
}

/** The DER/BER tag and length at `at` (`len` undefined: BER indefinite length). */
function tlv(b: Uint8Array, at: number): Tlv | undefined {
  if (at + 2 > b.length) return undefined;
  const tag = b[at]!;
  const first = b[at + 1]!;
  if (first < 0x80) return { tag, start: at + 2, len: first };
  if (first === 0x80) return { tag, start: at + 2 };
  const n = first & 0x7f;
  if (n > 4 || at + 2 + n > b.length) return undefined;
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + b[at + 2 + i]!;
  return { tag, start: at + 2 + n, len };
}

const after = (t: Tlv): number | undefined => (t.len === undefined ? undefined : t.start + t.len);

/** The outer SEQUENCE of a DER file: it spans the whole file when the size is known. */
function outerSequence(b: Uint8Array, size: number | undefined): Tlv | undefined {
  const s = tlv(b, 0);
  if (!s || s.tag !== 0x30) return undefined;
  if (size !== undefined && s.len !== undefined && s.start + s.len !== size) return undefined;
  return s;
}

function oidIs(b: Uint8Array, t: Tlv | undefined, prefixHex: string): boolean {
  if (!t || t.tag !== 0x06 || t.len === undefined) return false;
  const p = hexBytes(prefixHex);
  return t.len >= p.length && startsWith(b.subarray(t.start), p);
}

const PKCS7_DATA = '2a864886f70d010701';
const PKCS7_SIGNED = '2a864886f70d010702';

const STRUCTURE_CHECKS: Record<Structure, (b: Uint8Array, size?: number) => boolean> = {
  /** PFX ::= SEQUENCE { version INTEGER (3), authSafe ContentInfo { OID data | signedData, … } } (RFC 7292). */
  pkcs12(b, size) {
    const s = outerSequence(b, size);
    if (!s) return false;
    const v = tlv(b, s.start);
    if (!v || v.tag !== 0x02 || v.len !== 1 || b[v.start] !== 3) return false;
    const c = tlv(b, after(v)!);
    if (!c || c.tag !== 0x30) return false;
    const oid = tlv(b, c.start);
    return oid?.len === 9 && (oidIs(b, oid, PKCS7_DATA) || oidIs(b, oid, PKCS7_SIGNED));
  },
  /**
   * PKCS#8 PrivateKeyInfo { INTEGER 0|1, AlgorithmIdentifier { OID … }, … }; EncryptedPrivateKeyInfo
   * { { OID of PKCS#5 or PKCS#12 password-based encryption }, … }; PKCS#1 RSA and OpenSSL DSA
   * { INTEGER 0, INTEGER (a modulus of 64 bytes or more), … }; SEC 1 EC { INTEGER 1, OCTET STRING (key), … }.
   */
  der_private_key(b, size) {
    const s = outerSequence(b, size);
    if (!s) return false;
    const first = tlv(b, s.start);
    if (!first) return false;
    if (first.tag === 0x30) {
      const oid = tlv(b, first.start);
      return oidIs(b, oid, '2a864886f70d0105') || oidIs(b, oid, '2a864886f70d010c01');
    }
    if (first.tag !== 0x02 || first.len !== 1) return false;
    const version = b[first.start];
    const second = tlv(b, after(first)!);
    if (!second || second.len === undefined) return false;
    if ((version === 0 || version === 1) && second.tag === 0x30) return tlv(b, second.start)?.tag === 0x06;
    if (version === 0 && second.tag === 0x02) return second.len >= 64;
    if (version === 1 && second.tag === 0x04) return second.len >= 16 && second.len <= 72;
    return false;
  },
  /** An OpenPGP secret-key packet (tag 5, RFC 4880/9580): version 3–6, a creation time, a known public-key algorithm. */
  openpgp_secret_key(b) {
    const t = b[0];
    if (t === undefined) return false;
    let header: number;
    if ((t & 0xc0) === 0xc0) {
      if ((t & 0x3f) !== 5 || b.length < 2) return false;
      const l = b[1]!;
      header = l < 192 ? 2 : l < 224 ? 3 : l === 255 ? 6 : 0;
    } else if ((t & 0xc0) === 0x80) {
      if (((t >> 2) & 0x0f) !== 5) return false;
      header = [2, 3, 5, 0][t & 3]!;
    } else {
      return false;
    }
    if (header === 0) return false;
    const version = b[header];
    if (version === undefined || version < 3 || version > 6) return false;
    const algorithm = b[header + 1 + 4 + (version === 3 ? 2 : 0)];
    return algorithm !== undefined && OPENPGP_ALGORITHMS.has(algorithm);
  },
};

const OPENPGP_ALGORITHMS = new Set([1, 2, 3, 16, 17, 18, 19, 20, 22, 25, 26, 27, 28]);
