// The system calls of the file tools and the engine's file-system port, in one place: the edge
// where tests inject failures, and the one way this extension reads a regular file.
import fs from 'node:fs';

/**
 * The system calls the file tools make: the edge, so tests can inject failures (a rename that fails,
 * a file swapped between two calls). Every method throws on error like its `fs.*Sync` namesake.
 */
export interface FileOps {
  lstat(p: string): fs.Stats;
  realpath(p: string): string;
  open(p: string, flags: number, mode?: number): number;
  fstat(fd: number): fs.Stats;
  read(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number;
  write(fd: number, buf: Uint8Array, offset: number, length: number): number;
  fchmod(fd: number, mode: number): void;
  fsync(fd: number): void;
  close(fd: number): void;
  rename(from: string, to: string): void;
  unlink(p: string): void;
}

export const nodeFileOps: FileOps = {
  lstat: (p) => fs.lstatSync(p),
  realpath: (p) => fs.realpathSync.native(p),
  open: (p, flags, mode) => fs.openSync(p, flags, mode),
  fstat: (fd) => fs.fstatSync(fd),
  read: (fd, buf, offset, length, position) => fs.readSync(fd, buf, offset, length, position),
  write: (fd, buf, offset, length) => fs.writeSync(fd, buf, offset, length),
  fchmod: (fd, mode) => fs.fchmodSync(fd, mode),
  fsync: (fd) => fs.fsyncSync(fd),
  close: (fd) => fs.closeSync(fd),
  rename: (from, to) => fs.renameSync(from, to),
  unlink: (p) => fs.unlinkSync(p),
};

export const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

export interface Identity {
  readonly dev: number;
  readonly ino: number;
  readonly mode: number;
}

/**
 * Reads a regular file, at most maxBytes, without blocking on a FIFO (a named pipe would hang the
 * caller forever); without following a symlink unless `follow`. Throws when the path is not a
 * regular file or is larger.
 */
export function readRegular(ops: FileOps, p: string, maxBytes: number, follow = false): { bytes: Buffer; id: Identity } {
  const fd = ops.open(p, fs.constants.O_RDONLY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
  try {
    const st = ops.fstat(fd);
    if (!st.isFile()) throw new Error(`${p} is not a regular file`);
    if (st.size > maxBytes) throw new Error(`${p} has ${st.size} bytes, more than ${maxBytes}`);
    const bytes = Buffer.alloc(st.size);
    let off = 0;
    while (off < bytes.length) {
      const n = ops.read(fd, bytes, off, bytes.length - off, off);
      if (n === 0) break;
      off += n;
    }
    // A file that grew while read is read again by the caller's hash check; what we hold is consistent.
    return { bytes: off === bytes.length ? bytes : bytes.subarray(0, off), id: { dev: st.dev, ino: st.ino, mode: st.mode & 0o7777 } };
  } finally {
    ops.close(fd);
  }
}
