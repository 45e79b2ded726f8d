// Platform-aware path handling without Node's `path` module, so the engine stays pure and can
// reason about Windows paths on a Linux host (and the reverse) in tests.
import type { Platform } from '../types';

export class PathError extends Error {
  override readonly name = 'PathError';
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

const WIN_DRIVE = /^[A-Za-z]:[\\/]/;
const WIN_UNC = /^[\\/]{2}[^\\/]/;

export function isAbsolute(p: string, platform: Platform): boolean {
  if (platform === 'win32') return WIN_DRIVE.test(p) || WIN_UNC.test(p);
  return p.startsWith('/');
}

/** `~` or `~/…` (and `~\…` on Windows) expanded against `home`; other paths unchanged. */
export function expandHome(p: string, home: string, platform: Platform): string {
  if (p === '~') return home;
  if (p.startsWith('~/') || (platform === 'win32' && p.startsWith('~\\'))) return joinPath(home, p.slice(2), platform);
  return p;
}

/**
 * Lexical normalisation: separators unified to `/`, duplicate separators and `.` removed, `..`
 * applied (never above the root). On Windows the drive letter is upper-cased and trailing dots and
 * spaces are dropped from each component (the file system ignores them).
 * Throws PathError for a NUL byte or a relative path.
 */
export function normalizePath(p: string, platform: Platform): string {
  if (p.includes('\0')) throw new PathError('path contains a NUL byte', p);
  if (!isAbsolute(p, platform)) throw new PathError(`relative path \`${p}\`: give an absolute path`, p);
  let prefix: string;
  let rest: string;
  if (platform === 'win32') {
    const s = p.replace(/\\/g, '/');
    if (WIN_UNC.test(p)) {
      const parts = s.slice(2).split('/').filter(Boolean);
      prefix = '//' + parts.slice(0, 2).join('/');
      rest = parts.slice(2).join('/');
    } else {
      prefix = s[0]!.toUpperCase() + ':';
      rest = s.slice(2);
    }
  } else {
    prefix = '';
    rest = p;
  }
  const out: string[] = [];
  for (let seg of rest.split('/')) {
    if (platform === 'win32') seg = seg.replace(/[. ]+$/, (m) => (seg === m ? m : '')); // keep "." and ".."
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      out.pop();
      continue;
    }
    out.push(seg);
  }
  return prefix + '/' + out.join('/');
}

/** Joins `rel` onto the absolute `base` (or returns `rel` if it is already absolute), normalised. */
export function joinPath(base: string, rel: string, platform: Platform): string {
  if (isAbsolute(rel, platform)) return normalizePath(rel, platform);
  return normalizePath(base.replace(/[\\/]+$/, '') + '/' + rel, platform);
}

/**
 * Resolves a path as the action will see it: `~` expanded, relative paths joined onto `cwd`.
 * A relative path with no known working directory is an error that asks for an absolute path.
 */
export function resolveActionPath(p: string, opts: { cwd?: string; home: string; platform: Platform }): string {
  if (typeof p !== 'string' || p.length === 0) throw new PathError('empty path', String(p));
  const expanded = expandHome(p, opts.home, opts.platform);
  if (isAbsolute(expanded, opts.platform)) return normalizePath(expanded, opts.platform);
  if (!opts.cwd) throw new PathError(`relative path \`${p}\` and no known working directory: give an absolute path`, p);
  return joinPath(opts.cwd, expanded, opts.platform);
}

export function dirname(p: string): string {
  const i = p.lastIndexOf('/');
  if (i <= 0) return '/';
  const d = p.slice(0, i);
  return /^[A-Z]:$/.test(d) ? d + '/' : d;
}

export function basename(p: string): string {
  const s = p.replace(/\/+$/, '');
  return s.slice(s.lastIndexOf('/') + 1);
}

/**
 * The key rules are matched against: lower-cased (case never bypasses a rule, even on a
 * case-sensitive file system), trailing dots and spaces dropped from every component, and an
 * NTFS alternate-data-stream suffix (`file::$DATA`, `file:stream`) removed on Windows.
 */
export function matchKey(normalized: string, platform: Platform): string {
  let k = normalized;
  // ADS on the last component; the drive colon is never matched because a `/` always follows it.
  if (platform === 'win32') k = k.replace(/(?<=[^/]):[^/]*$/, '');
  k = k
    .split('/')
    .map((seg, i) => (i === 0 && platform === 'win32' ? seg : seg.replace(/[. ]+$/, (m) => (seg === m ? m : ''))))
    .join('/');
  return k.toLowerCase();
}

/** True when `child` equals `parent` or lies below it (both normalised the same way). */
export function isWithin(child: string, parent: string): boolean {
  if (child === parent) return true;
  const p = parent.endsWith('/') ? parent : parent + '/';
  return child.startsWith(p);
}
