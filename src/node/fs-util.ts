// Small file-system helpers that avoid Node pitfalls on decision paths.
import fs from 'node:fs';
import path from 'node:path';

/**
 * `mkdir -p` without `{ recursive: true }`: Node's recursive mkdir never returns for some paths
 * (e.g. under /proc), which would freeze the extension host on a bad setting. Walks from the
 * nearest existing ancestor and throws the first real error. Returns the first directory it
 * created (like `mkdir(…, { recursive: true })`), or undefined when it already existed.
 */
export function ensureDirSync(dir: string, mode?: number): string | undefined {
  const missing: string[] = [];
  let current = path.resolve(dir);
  for (;;) {
    try {
      if (fs.statSync(current).isDirectory()) break;
      throw new Error(`${current} exists and is not a directory`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    missing.push(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  let first: string | undefined;
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d, mode);
      first ??= d;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  return first;
}
