// Shared vocabulary for the per-command handlers.
import type { Platform } from '../types';
import type { Analyzer } from './analyze';
import type { Io, Outcome, Scope } from './state';
import { literalWord, type WordValue } from './words';

/** One command invocation, as a handler sees it. */
export interface Inv {
  readonly an: Analyzer;
  /** The command's basename as reported in `commands`. */
  readonly cmd: string;
  /** Arguments after the command word. */
  readonly args: WordValue[];
  readonly scope: Scope;
  readonly io: Io;
}

export type Handler = (inv: Inv) => Outcome | void;

export interface Entry {
  readonly fn: Handler;
  /** Wrappers (sudo, env, xargs…) are not reported in `commands`; what they run is. */
  readonly wrapper?: boolean;
}

export type Registry = Map<string, Entry>;

export function register(map: Registry, names: string | readonly string[], fn: Handler, wrapper = false): void {
  for (const n of typeof names === 'string' ? [names] : names) map.set(n, { fn, wrapper });
}

export const DOT = literalWord('.');

export function clip(s: string, n = 60): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length > n ? one.slice(0, n - 1) + '…' : one;
}

const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/** `host:path` / `user@host:path` (scp, rsync, git). A Windows drive (`C:\`) is not remote. */
export function isRemoteSpec(text: string, platform: Platform): boolean {
  if (URL_SCHEME.test(text)) return false;
  const colon = text.indexOf(':');
  if (colon <= 0) return false;
  const slash = text.search(/[\\/]/);
  if (slash >= 0 && slash < colon) return false;
  if (platform === 'win32' && colon === 1 && /^[A-Za-z]:[\\/]?/.test(text)) return false;
  return true;
}

/**
 * The address a proxy setting connects to, in a form the SSRF check judges: a SOCKS proxy URL
 * (`socks5h://10.0.0.7:1080`, a scheme the check would pass over) becomes its `host:port`.
 */
export function proxyAddress(w: WordValue): WordValue {
  if (w.dynamic) return w;
  const m = /^socks[45]?[ah]?:\/\/(?:[^@/]*@)?([^/]+)/i.exec(w.text);
  return m ? literalWord(m[1]!) : w;
}

/**
 * `file:///etc/passwd` -> `/etc/passwd`; other URLs -> null. Each run of percent escapes is decoded as the
 * client does; one that is not valid (`%zz`, a broken UTF-8 sequence) is kept as written, so decoding never
 * throws inside the analysis and `file:///home/u/.ss%68%zz/../.ssh/id_rsa` still names the key.
 */
export function fileUrlPath(url: string): string | null {
  const m = /^file:\/\/(?:localhost)?(\/.*)$/i.exec(url);
  if (!m) return null;
  return m[1]!.replace(/[?#].*$/, '').replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** A URL operand: a `file://` URL names a file on this machine (a read), anything else is a network target. */
export function urlOperand(inv: Inv, w: WordValue, what: string): void {
  const file = w.dynamic ? null : fileUrlPath(w.text);
  if (file !== null) inv.an.read(literalWord(file), inv.scope);
  else inv.an.netWord(w, what);
}

/** Host part of `user@host:path`. */
export function remoteHost(text: string): string {
  return text.slice(0, text.indexOf(':'));
}

/**
 * Heuristic used for commands the analyser does not know: does this argument look like a file
 * path? (`/x`, `~/x`, `./x`, `../x`, `.env`, `.`, `a/b`; on Windows also `C:\x` and `a\b`.)
 */
export function isPathLike(w: WordValue, platform: Platform): boolean {
  const t = w.dynamic ? w.prefix : w.text;
  if (t === '') return false;
  if (URL_SCHEME.test(t)) return false;
  if (/^[\w.-]+@[\w.-]+:/.test(t)) return false;
  if (t === '.' || t === '..') return true;
  if (/^(\/|~|\.\/|\.\.\/|\.[\w-])/.test(t)) return true;
  if (platform === 'win32' && (/^[A-Za-z]:[\\/]/.test(t) || /^\\\\/.test(t) || t.includes('\\') || /^\.\\/.test(t))) return true;
  return t.includes('/');
}

/** Last component of a path (trailing separators ignored). */
export function baseName(text: string, platform: Platform): string {
  const s = platform === 'win32' ? text.replace(/[\\/]+$/, '') : text.replace(/\/+$/, '');
  const i = platform === 'win32' ? Math.max(s.lastIndexOf('/'), s.lastIndexOf('\\')) : s.lastIndexOf('/');
  return s.slice(i + 1);
}

/** The word for `dir/name` (dir may be dynamic: the result then is too). */
export function joinWord(dir: WordValue, name: string, platform: Platform): WordValue {
  const sep = platform === 'win32' && dir.text.includes('\\') ? '\\' : '/';
  const text = dir.text.replace(platform === 'win32' ? /[\\/]+$/ : /\/+$/, '') + sep + name;
  return {
    text,
    raw: dir.raw + sep + name,
    dynamic: dir.dynamic,
    glob: dir.glob,
    prefix: dir.stop ? dir.prefix : text,
    stop: dir.stop,
  };
}

/** `DST/basename(SRC)` for copy-like commands whose DST may be a directory; null if SRC is unknown. */
export function childOf(dst: WordValue, src: WordValue, platform: Platform): WordValue | null {
  if (src.dynamic || src.glob) return null;
  const b = baseName(src.text, platform);
  if (b === '' || b === '.' || b === '..') return null;
  return joinWord(dst, b, platform);
}

/** Directory part of a word (`.` when it has none). */
export function dirWord(w: WordValue, platform: Platform): WordValue {
  const t = w.text;
  const i = platform === 'win32' ? Math.max(t.lastIndexOf('/'), t.lastIndexOf('\\')) : t.lastIndexOf('/');
  if (i < 0) return DOT;
  const d = i === 0 ? t[0]! : t.slice(0, i);
  return { ...w, text: d, prefix: w.stop ? w.prefix.slice(0, Math.min(w.prefix.length, i)) : d };
}

/** Reads of every argument that looks like a path (the default for unknown commands). */
/** Options that name where a program writes its output, in most programs (`gcc -o`, `--output=`). */
const OUTPUT_OPTIONS = new Set([
  '-o',
  '--output',
  '--out',
  '--outfile',
  '--output-file',
  '--out-file',
  '--outdir',
  '--out-dir',
  '--output-dir',
  '--output-path',
]);

export function genericReads(inv: Inv, args: readonly WordValue[]): void {
  const { an, scope } = inv;
  let dd = false;
  let output = false;
  for (const w of args) {
    if (output) {
      // An unknown program's output option: its value is written (`gcc -o ~/.bashrc x.c`).
      output = false;
      an.write(w, scope);
      continue;
    }
    if (!dd && w.text === '--' && !w.dynamic) {
      dd = true;
      continue;
    }
    if (!dd && w.text.startsWith('-') && !(w.dynamic && w.stop === 'dyn' && w.prefix === '')) {
      if (OUTPUT_OPTIONS.has(w.text)) {
        output = true;
        continue;
      }
      // `--config=~/.aws/credentials`: the value after `=` may be a path.
      const eq = w.text.indexOf('=');
      if (eq > 0) {
        let v: WordValue = { ...w, text: w.text.slice(eq + 1), prefix: w.prefix.length > eq ? w.prefix.slice(eq + 1) : '' };
        // Bash leaves `~` after `--opt=` alone, but most programs expand it themselves.
        if (scope.home !== null && /^~(\/|$)/.test(v.text) && !v.dynamic) v = literalWord(scope.home + v.text.slice(1));
        if (OUTPUT_OPTIONS.has(w.text.slice(0, eq))) an.write(v, scope);
        else if (isPathLike(v, an.platform)) an.read(v, scope);
      }
      continue;
    }
    if (isPathLike(w, an.platform)) an.read(w, scope);
  }
}

export function allLiteral(ws: readonly WordValue[]): boolean {
  return ws.every((w) => !w.dynamic);
}
