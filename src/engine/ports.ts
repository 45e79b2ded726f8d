// Effects the engine needs, injected by its host (extension, CLI, hook bridge, tests).

/** Read-only questions about the file system. Every method is synchronous and must not throw. */
export interface FileSystemPort {
  /**
   * The path the operating system would really open for `rawAbsolutePath` (an absolute path,
   * not yet normalised, so `..` after a symlink is applied physically): symlinks followed; for a
   * path that does not exist yet, the nearest existing parent resolved and the rest appended.
   * `undefined` when nothing can be resolved.
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
}

/** A file system with nothing on it: paths resolve to themselves. For pure callers and tests of lexical rules. */
export const LEXICAL_FS: FileSystemPort = {
  resolvePhysical: () => undefined,
  listTree: () => undefined,
};
