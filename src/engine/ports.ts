// Effects the engine needs, injected by its host (extension, CLI, hook bridge, tests).

/** Read-only questions about the file system. Every method is synchronous and must not throw. */
export interface FileSystemPort {
  /**
   * The path the operating system would really open for `rawAbsolutePath` (an absolute path,
   * not yet normalised, so `..` after a symlink is applied physically): symlinks followed; for a
   * path that does not exist yet, the nearest existing parent resolved and the rest appended, a
   * dangling symlink followed to the path its text names (a write through it creates that file).
   * `undefined` when nothing can be resolved (a symlink loop).
   */
  resolvePhysical(rawAbsolutePath: string): string | undefined;
  /**
   * Files and directories below `dir` (absolute paths, symlinks not followed), at most `limit`,
   * breadth-first: every entry of a directory comes before any entry below it (glob expansion
   * relies on this to know a truncated listing still holds all of `dir`'s own entries).
   * `undefined` if `dir` is not a directory. `links`: the entries that are symbolic links, when
   * the port knows (without it, a search resolves every entry to find where it points).
   */
  listTree(dir: string, limit: number): { entries: string[]; truncated: boolean; links?: string[] } | undefined;
  /**
   * The text of the regular file at `absolutePath` (symlinks followed), decoded as UTF-8 (invalid
   * sequences become U+FFFD); `undefined` when it is missing, not a regular file, unreadable or
   * larger than `maxBytes`. A host without it makes every such read `undefined` (the engine then
   * refuses what it cannot check).
   */
  readText?(absolutePath: string, maxBytes: number): string | undefined;
  /**
   * What the file at `absolutePath` is (symlinks followed): its kind, identity (device, inode),
   * link count, size and modification time; `undefined` when it does not exist or cannot be
   * inspected. The identity matches hard links to protected files and, with the size and times,
   * keys the content cache.
   * A host without it leaves content and hard links unknown: names decide (LEXICAL_FS).
   */
  statFile?(absolutePath: string): FileFacts | undefined;
  /**
   * The first bytes (at most `maxBytes`) of the regular file at `absolutePath` (symlinks
   * followed), to tell what it is by its content (a private key by any name, a certificate).
   * Regular files only: a FIFO, device or socket is never opened, so nothing can make the engine
   * wait on it. `undefined` when the file is missing, not regular or unreadable.
   */
  readHead?(absolutePath: string, maxBytes: number): Uint8Array | undefined;
}

/** The identity and shape of one file, as `FileSystemPort.statFile` reports it. */
export interface FileFacts {
  readonly kind: 'file' | 'directory' | 'other';
  /** Device and inode as decimal strings (64-bit values do not fit a JavaScript number). */
  readonly dev: string;
  readonly ino: string;
  /** Number of hard links (names) of the file. */
  readonly nlink: number;
  readonly size: number;
  /** Modification and status-change times in nanoseconds, as decimal strings (with size: the content cache's version). */
  readonly mtime: string;
  readonly ctime: string;
  /** Last access time in nanoseconds, as a decimal string, when the host reports it (`find -atime`). */
  readonly atime?: string;
}

/** The time now, for what depends on it (the age of a file: `find -mtime`). */
export interface ClockPort {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The host's clock, for hosts that do not inject one. */
export const SYSTEM_CLOCK: ClockPort = { now: () => Date.now() };

/** A file system with nothing on it: paths resolve to themselves. For pure callers and tests of lexical rules. */
export const LEXICAL_FS: FileSystemPort = {
  resolvePhysical: () => undefined,
  listTree: () => undefined,
};
