// What several command families share: assignments, loopback addresses, a shell reading its script
// from stdin, a program serving files. No imports of the family modules, so none of them forms a cycle.
import { clip, type Inv } from '../helpers';
import type { WordValue } from '../words';

/** `NAME=value` before a command (or as an argument of env-like wrappers). */
export const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Addresses only this machine can reach. */
export const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\]|ip6-localhost)$/i;

/** A shell given no script file reads it from stdin: a pipe or a heredoc is a script the analysis may know. */
export function shellFromStdin(inv: Inv, label: string): void {
  if (inv.io.stdin === 'pipe' || inv.io.stdin === 'heredoc') {
    inv.an.opaque(`${label} reads its script from stdin`);
    if (inv.io.script !== undefined) inv.an.runScript(inv.io.script, inv.scope, `${label} script from a heredoc`);
  }
}

/**
 * A program that serves the files below `dir` over HTTP (`python -m http.server`, `php -S`,
 * `npx http-server`): whoever can connect reads every one of them, so they count as read; bound to
 * anything but a loopback address (the default of most of them is every interface) it is also a
 * way data leaves the machine (a sink for IFC).
 */
export function serveFiles(inv: Inv, what: string, dir: WordValue, bind: WordValue | undefined, port: string): void {
  inv.an.readBelow(dir, inv.scope, 'contents');
  inv.an.net();
  if (bind?.dynamic) return void inv.an.opaque(`${what} binds to an address that is not literal`);
  const host = bind?.text ?? '';
  if (LOOPBACK.test(host)) return;
  inv.an.sink(`${what} serves \`${clip(dir.raw)}\` on ${host === '' ? 'every interface' : host}${port ? ` port ${port}` : ''}`);
}

/**
 * The operands from `args[from]` on, stopping at `--` or `-args`, each only where it cannot be an option's value:
 * right after the start, another operand, a known flag or an option with its value attached (`--x=y`), or after
 * an option known to take one and its value.
 */
export function operandWords(args: readonly WordValue[], from: number, flags: readonly string[], valued: readonly string[]): WordValue[] {
  const out: WordValue[] = [];
  let free = true;
  for (let i = from; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (!w.dynamic && (t === '--' || t === '-args')) break;
    if (!w.dynamic && t.startsWith('-') && t !== '-') {
      if (valued.includes(t)) {
        i++;
        free = true;
      } else free = t.includes('=') || flags.includes(t);
      continue;
    }
    if (free) out.push(w);
    free = true;
  }
  return out;
}
