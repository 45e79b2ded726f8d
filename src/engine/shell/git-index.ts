// The paths git tracks, from the repository's index file (.git/index, "DIRC"): what `git grep` and
// `git ls-files` look at, so their analysis need not assume every file below the directory (an
// untracked, ignored .env among them). Pure: the bytes come through the file-system port. Formats 2,
// 3 and 4 (prefix-compressed paths), as git's Documentation/gitformat-index.txt describes them.
// Anything unexpected gives undefined: the caller then assumes every file below, as before.

/** The tracked entries: regular files and symlinks; submodules (gitlinks) and sparse directories apart. */
export interface GitIndex {
  readonly version: 2 | 3 | 4;
  /** Paths of files and symlinks, relative to the work tree's top, `/`-separated (each once). */
  readonly files: readonly string[];
  /** Submodule directories (mode 160000): their own files are not in this index. */
  readonly gitlinks: readonly string[];
  /** Directories a sparse index keeps as one entry (mode 040000): the files below them are not listed. */
  readonly sparseDirs: readonly string[];
  /**
   * What the index recorded of each file when it last saw it (git compares this with the file to tell whether it
   * changed); null for a path in a merge conflict (several stages).
   */
  readonly stats: ReadonlyMap<string, IndexStat | null>;
}

/** An index entry's stat data: times in nanoseconds as decimal strings (as FileFacts has them), inode and size (low 32 bits). */
export interface IndexStat {
  readonly ctime: string;
  readonly mtime: string;
  readonly ino: number;
  readonly size: number;
}

/** Largest index read (bytes): beyond it the caller falls back (a huge repository). */
export const MAX_GIT_INDEX_BYTES = 32 * 1024 * 1024;
/** Most entries accepted. */
const MAX_ENTRIES = 1_000_000;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses an index; `hashBytes` is the object id size (20 for SHA-1, 32 for SHA-256 repositories).
 * Undefined when it is not a well-formed index of a known version.
 */
export function parseGitIndex(bytes: Uint8Array, hashBytes: 20 | 32 = 20): GitIndex | undefined {
  try {
    return parse(bytes, hashBytes);
  } catch {
    return undefined;
  }
}

function parse(b: Uint8Array, hashBytes: number): GitIndex | undefined {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length < 12 + hashBytes) return undefined;
  if (b[0] !== 0x44 || b[1] !== 0x49 || b[2] !== 0x52 || b[3] !== 0x43) return undefined; // "DIRC"
  const version = view.getUint32(4);
  if (version !== 2 && version !== 3 && version !== 4) return undefined;
  const count = view.getUint32(8);
  if (count > MAX_ENTRIES) return undefined;
  const end = b.length - hashBytes; // the trailing checksum
  const files: string[] = [];
  const gitlinks: string[] = [];
  const sparseDirs: string[] = [];
  const stats = new Map<string, IndexStat | null>();
  let at = 12;
  let previous: Uint8Array = new Uint8Array(0);
  const fixed = 40 + hashBytes + 2; // times, dev, ino, mode, uid, gid, size, object id, flags
  for (let n = 0; n < count; n++) {
    const start = at;
    if (at + fixed > end) return undefined;
    const ns = (o: number) => (BigInt(view.getUint32(at + o)) * 1_000_000_000n + BigInt(view.getUint32(at + o + 4))).toString();
    const stat: IndexStat = { ctime: ns(0), mtime: ns(8), ino: view.getUint32(at + 20), size: view.getUint32(at + 36) };
    const mode = view.getUint32(at + 24);
    const flags = view.getUint16(at + 40 + hashBytes);
    at += fixed;
    if (flags & 0x4000) {
      if (version < 3) return undefined; // extended flags only exist from version 3
      if (at + 2 > end) return undefined;
      at += 2;
    }
    let path: Uint8Array;
    if (version === 4) {
      // The number of bytes to drop from the previous path's end (git's offset varint), then the rest.
      let c = b[at++]!;
      let drop = c & 127;
      while (c & 128) {
        if (at >= end || drop > 1 << 24) return undefined;
        c = b[at++]!;
        drop = ((drop + 1) << 7) | (c & 127);
      }
      if (drop > previous.length) return undefined;
      const nul = b.indexOf(0, at);
      if (nul < 0 || nul >= end) return undefined;
      const keep = previous.length - drop;
      path = new Uint8Array(keep + (nul - at));
      path.set(previous.subarray(0, keep));
      path.set(b.subarray(at, nul), keep);
      at = nul + 1;
    } else {
      const nul = b.indexOf(0, at);
      if (nul < 0 || nul >= end) return undefined;
      path = b.subarray(at, nul);
      // 1 to 8 NULs pad the entry to a multiple of 8 bytes.
      at = start + ((nul - start + 8) & ~7);
      if (at > end) return undefined;
      for (let i = nul; i < at; i++) if (b[i] !== 0) return undefined;
    }
    if (path.length === 0) return undefined;
    const nameLength = flags & 0xfff;
    if (nameLength !== 0xfff && nameLength !== path.length) return undefined;
    previous = path;
    const type = mode >>> 12;
    const full = UTF8.decode(path);
    const text = type === 0o04 ? full.replace(/\/$/, '') : full;
    if (text.split('/').some((p) => p === '' || p === '.' || p === '..' || p.toLowerCase() === '.git')) return undefined;
    if (type === 0o10 || type === 0o12) {
      files.push(text); // regular file, symlink
      // Stages 1-3 are the sides of a merge conflict: the file is not in one recorded state.
      stats.set(text, stats.has(text) || (flags & 0x3000) !== 0 ? null : stat);
    } else if (type === 0o16) gitlinks.push(text);
    else if (type === 0o04) sparseDirs.push(text);
    else return undefined;
  }
  // Extensions follow (a 4-byte signature, a 4-byte size each), then the checksum.
  while (at < end) {
    if (at + 8 > end) return undefined;
    const size = view.getUint32(at + 4);
    at += 8 + size;
  }
  if (at !== end) return undefined;
  return { version: version as 2 | 3 | 4, files: [...new Set(files)], gitlinks, sparseDirs, stats };
}
