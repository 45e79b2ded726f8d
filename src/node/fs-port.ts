// The engine's FileSystemPort on the real file system.
import fs from 'node:fs';
import path from 'node:path';
import type { FileSystemPort } from '../engine';
import { nodeFileOps, readRegular } from './file-ops';

/**
 * realpath(3) semantics, not Node's JS `realpathSync`: that one normalises `..` lexically first,
 * so `/tmp/link/../x` would miss that `link` points elsewhere.
 */
function realpathNative(p: string): string | undefined {
  try { return fs.realpathSync.native(p); } catch { return undefined; }
}

export const nodeFileSystem: FileSystemPort = {
  resolvePhysical(raw: string): string | undefined {
    const direct = realpathNative(raw);
    if (direct !== undefined) return direct;
    // Not there yet: resolve the nearest existing parent, then append the rest.
    const parts = raw.split(/[\\/]+/);
    for (let cut = parts.length - 1; cut > 0; cut--) {
      const head = parts.slice(0, cut).join('/') || '/';
      const resolved = realpathNative(head);
      if (resolved !== undefined) return path.resolve(resolved, ...parts.slice(cut));
    }
    return undefined;
  },
  readText(p: string, maxBytes: number): string | undefined {
    // Symlinks are followed (a copy reads what they point to); a FIFO does not block.
    try { return new TextDecoder('utf-8').decode(readRegular(nodeFileOps, p, maxBytes, true).bytes); } catch { return undefined; }
  },
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
      try { items = fs.readdirSync(current, { withFileTypes: true }); } catch { return { entries, truncated: true, links }; }
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
