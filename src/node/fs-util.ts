// Small file-system helpers that avoid Node pitfalls on decision paths.
import crypto from 'node:crypto';
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

/**
 * Writes `text` to `file` through a temporary file beside it, fsync and rename, so a reader never sees
 * half of it. A new file gets `mode`; with `keepMode`, an existing file keeps its own.
 */
export function writeFileAtomicSync(file: string, text: string, o: { readonly mode: number; readonly keepMode?: boolean }): void {
  let mode = o.mode;
  if (o.keepMode) {
    try {
      mode = fs.statSync(file).mode & 0o7777;
    } catch {
      /* a new file */
    }
  }
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.bulwark-${process.pid}-${crypto.randomBytes(4).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, 'wx', mode);
  try {
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.chmodSync(tmp, mode); // the umask narrowed what openSync was given
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}
