// The engine's FileSystemPort on the real file system.
import fs from 'node:fs';
import path from 'node:path';
import type { FileFacts, FileSystemPort } from '../engine';
import { nodeFileOps, readRegular } from './file-ops';

/**
 * realpath(3) semantics, not Node's JS `realpathSync`: that one normalises `..` lexically first,
 * so `/tmp/link/../x` would miss that `link` points elsewhere.
 */
function realpathNative(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

/** Most symbolic links followed for one path, as the kernel's ELOOP limit. */
const MAX_LINK_HOPS = 40;

/**
 * The path a write to `raw` would create when part of it does not exist yet: the components after
 * the deepest existing ancestor are walked as the kernel does, so a symbolic link whose target is
 * missing (a dangling link, `notes.txt → ~/.bash_login`) is followed to where its text points, not
 * taken as the file itself. `..` after a link applies to where the link led. A loop gives `undefined`.
 */
function resolveMissing(raw: string): string | undefined {
  const parts = raw.split(/[\\/]+/);
  // The deepest ancestor realpath(3) resolves is physical; the component after it is missing, a
  // dangling link or a loop, and the walk goes on from there.
  for (let cut = parts.length - 1; cut > 0; cut--) {
    const resolved = realpathNative(parts.slice(0, cut).join('/') || '/');
    if (resolved !== undefined) return walkFrom(resolved, parts.slice(cut));
  }
  return undefined;
}

function walkFrom(start: string, rest: string[]): string | undefined {
  let current = start;
  const pending = rest.filter((c) => c !== '' && c !== '.');
  let hops = 0;
  while (pending.length) {
    const name = pending.shift()!;
    if (name === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(next);
    } catch {
      // Missing from here on: nothing below can be a link, so the rest is appended as written.
      return path.resolve(next, ...pending);
    }
    if (!st.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (++hops > MAX_LINK_HOPS) return undefined;
    let text: string;
    try {
      text = fs.readlinkSync(next);
    } catch {
      return undefined;
    }
    const targetRoot = path.parse(text).root;
    if (targetRoot) current = targetRoot;
    pending.unshift(
      ...text
        .slice(targetRoot.length)
        .split(/[\\/]+/)
        .filter((c) => c !== '' && c !== '.'),
    );
  }
  return current;
}

function factsOf(st: fs.BigIntStats): FileFacts {
  return {
    kind: st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other',
    dev: String(st.dev),
    ino: String(st.ino),
    nlink: Number(st.nlink),
    size: Number(st.size),
    mtime: String(st.mtimeNs),
    ctime: String(st.ctimeNs),
    atime: String(st.atimeNs),
  };
}

const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;
const O_NOCTTY = fs.constants.O_NOCTTY ?? 0;

/**
 * At most `maxBytes` from the start of a regular file. The path is stat'ed first and only a regular
 * file is opened (a FIFO, device or socket never is: opening some devices has effects, reading a
 * FIFO waits for a writer); the open is non-blocking and the descriptor is checked again, so a
 * file swapped for a FIFO between the two calls is not read either.
 */
function readHeadOf(p: string, maxBytes: number): Uint8Array | undefined {
  // Only an absolute path of this host: a path of another platform (a Windows path checked on
  // Linux in tests) must not be read relative to the working directory.
  if (!path.isAbsolute(p)) return undefined;
  let before: fs.BigIntStats | undefined;
  try {
    before = fs.statSync(p, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (!before?.isFile()) return undefined;
  let fd: number;
  try {
    fd = fs.openSync(p, fs.constants.O_RDONLY | O_NONBLOCK | O_NOCTTY);
  } catch {
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile() || st.dev !== before.dev || st.ino !== before.ino) return undefined;
    const want = Math.max(0, Math.min(maxBytes, Number(st.size)));
    const bytes = new Uint8Array(want);
    let off = 0;
    while (off < want) {
      const n = fs.readSync(fd, bytes, off, want - off, off);
      if (n === 0) break;
      off += n;
    }
    return off === want ? bytes : bytes.subarray(0, off);
  } catch {
    return undefined;
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      /* nothing more to release */
    }
  }
}

export const nodeFileSystem: FileSystemPort = {
  resolvePhysical(raw: string): string | undefined {
    return realpathNative(raw) ?? resolveMissing(raw);
  },
  readText(p: string, maxBytes: number): string | undefined {
    // Symlinks are followed (a copy reads what they point to); a FIFO does not block.
    try {
      return new TextDecoder('utf-8').decode(readRegular(nodeFileOps, p, maxBytes, true).bytes);
    } catch {
      return undefined;
    }
  },
  statFile(p: string): FileFacts | undefined {
    if (!path.isAbsolute(p)) return undefined;
    try {
      const st = fs.statSync(p, { bigint: true, throwIfNoEntry: false });
      return st ? factsOf(st) : undefined;
    } catch {
      return undefined;
    }
  },
  readHead: readHeadOf,
  listTree(dir: string, limit: number) {
    try {
      if (!fs.lstatSync(dir).isDirectory()) return undefined;
    } catch {
      return undefined;
    }
    const entries: string[] = [];
    const links: string[] = [];
    const queue = [dir];
    while (queue.length) {
      const current = queue.shift()!;
      let items: fs.Dirent[];
      // An unreadable directory cannot be vouched for: report the listing as incomplete.
      try {
        items = fs.readdirSync(current, { withFileTypes: true });
      } catch {
        return { entries, truncated: true, links };
      }
      for (const item of items) {
        if (entries.length >= limit) return { entries, truncated: true, links };
        const full = path.join(current, item.name);
        entries.push(full);
        if (item.isDirectory()) queue.push(full);
        else if (item.isSymbolicLink()) links.push(full);
      }
    }
    return { entries, truncated: false, links };
  },
};
