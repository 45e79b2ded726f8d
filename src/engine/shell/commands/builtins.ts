// Shell builtins that change the shell's state or run strings, and commands with no file operands.
import type { Platform } from '../../types';
import { lastValue, parseOpts } from '../options';
import { cloneScope, type Outcome } from '../state';
import type { WordValue } from '../words';
import { allLiteral, register, type Inv, type Registry } from '../helpers';
import { scriptFile } from './shells';

export const BUILTINS: Registry = new Map();

// ------------------------------------------------------------------------------------------
// Builtins that change the shell's state or run strings.

function cdTarget(args: readonly WordValue[], platform: Platform): WordValue | undefined {
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (w.dynamic) return w;
    if (t === '--') return args[i + 1];
    if (platform === 'win32' && /^\/d$/i.test(t)) continue;
    if (/^-(Path|LiteralPath|PSPath|LP)$/i.test(t)) return args[i + 1];
    if (/^-[LPe@]+$/.test(t)) continue;
    return w;
  }
  return undefined;
}

register(BUILTINS, ['cd', 'chdir', 'set-location', 'sl'], (inv) => {
  const target = cdTarget(inv.args, inv.an.platform);
  return { ok: inv.an.chdir(inv.scope, target), fail: inv.scope };
});

register(BUILTINS, ['pushd', 'push-location'], (inv) => {
  const target = cdTarget(inv.args, inv.an.platform);
  if (!target || /^[+-]\d+$/.test(target.text)) {
    const ok = cloneScope(inv.scope);
    ok.bases = [null];
    return { ok, fail: inv.scope };
  }
  const ok = inv.an.chdir(inv.scope, target);
  ok.stack = [...inv.scope.stack, inv.scope.bases.slice()];
  return { ok, fail: inv.scope };
});

register(BUILTINS, ['popd', 'pop-location'], (inv) => {
  const ok = cloneScope(inv.scope);
  const top = ok.stack.pop();
  if (!top) return { ok: inv.scope, fail: inv.scope };
  ok.bases = top;
  return { ok, fail: inv.scope };
});

register(BUILTINS, 'eval', (inv) => {
  inv.an.opaque('eval runs a string as code');
  if (inv.args.length && allLiteral(inv.args)) inv.an.runScript(inv.args.map((w) => w.text).join(' '), inv.scope, 'eval');
  // eval may set anything.
  const after = cloneScope(inv.scope);
  after.vars.clear();
  return { ok: after, fail: after };
});

register(BUILTINS, ['source', '.'], (inv) => {
  const p = parseOpts(inv.args, { posix: true });
  if (p.rest[0]) scriptFile(inv, p.rest[0], p.rest.slice(1));
  // The sourced script may set any variable.
  const after = cloneScope(inv.scope);
  after.vars.clear();
  return { ok: after, fail: after };
});

register(BUILTINS, 'trap', (inv) => {
  const args = inv.args.filter((w) => w.text !== '--');
  if (args.length < 2 || args[0]!.text.startsWith('-')) return;
  const action = args[0]!;
  if (action.dynamic) inv.an.opaque('trap action is not literal');
  else if (action.text.trim() !== '') inv.an.defer(action.text, inv.scope, 'trap');
});

register(BUILTINS, 'alias', (inv) => {
  // Aliases can expand later (zsh, `shopt -s expand_aliases`): analyse their bodies now.
  for (const w of inv.args) {
    const eq = w.text.indexOf('=');
    if (eq <= 0) continue;
    if (w.dynamic) inv.an.opaque('alias body is not literal');
    else inv.an.runScript(w.text.slice(eq + 1), inv.scope, 'alias');
  }
});

function forgetVars(inv: Inv, names: readonly string[]): Outcome {
  const after = cloneScope(inv.scope);
  for (const n of names) {
    after.vars.delete(n);
    if (n === 'HOME') after.home = null;
  }
  return { ok: after, fail: after };
}

register(BUILTINS, 'read', (inv) => {
  const p = parseOpts(inv.args, { short: 'adinNptu' });
  const names = p.pos.map((w) => w.text);
  const arr = lastValue(p, '-a');
  if (arr) names.push(arr.text);
  if (names.length === 0) names.push('REPLY');
  return forgetVars(inv, names);
});

register(BUILTINS, ['mapfile', 'readarray'], (inv) => {
  const p = parseOpts(inv.args, { short: 'dnOsuCc' });
  return forgetVars(inv, p.pos.length ? p.pos.map((w) => w.text) : ['MAPFILE']);
});

register(BUILTINS, 'printf', (inv) => {
  const p = parseOpts(inv.args, { short: 'v', posix: true });
  const v = lastValue(p, '-v');
  if (v) return forgetVars(inv, [v.text.replace(/\[.*$/, '')]);
  const [format, ...args] = p.rest;
  const text =
    format && !format.dynamic && allLiteral(args)
      ? printfText(
          format.text,
          args.map((w) => w.text),
        )
      : undefined;
  if (text !== undefined) inv.an.produce({ kind: 'text', text, by: 'printf' });
  return undefined;
});

/**
 * What `printf FORMAT ARGS…` prints, for formats of `%s` and the escapes `\n`, `\t`, `\0`, `\\`
 * only (the format is reused until the arguments run out); undefined for anything else.
 */
function printfText(format: string, args: readonly string[]): string | undefined {
  if (/%[^s%]/.test(format.replace(/%%/g, '')) || /\\[^nt0\\]/.test(format)) return undefined;
  const specs = (format.replace(/%%/g, '').match(/%s/g) ?? []).length;
  const one = (vals: readonly string[]) => {
    let k = 0;
    return format.replace(/%%|%s|\\[nt0\\]/g, (m) => {
      if (m === '%%') return '%';
      if (m === '%s') return vals[k++] ?? '';
      return ({ '\\n': '\n', '\\t': '\t', '\\0': '\0', '\\\\': '\\' } as Record<string, string>)[m]!;
    });
  };
  if (specs === 0 || args.length === 0) return one([]);
  let out = '';
  for (let i = 0; i < args.length; i += specs) out += one(args.slice(i, i + specs));
  return out;
}

register(BUILTINS, 'echo', (inv) => {
  // bash's echo: `-n` drops the newline; escapes (`-e`, or always in sh/zsh) make the text unknown.
  let args = inv.args;
  let newline = true;
  while (args[0] && !args[0].dynamic && /^-[neE]+$/.test(args[0].text)) {
    if (args[0].text.includes('e')) return;
    if (args[0].text.includes('n')) newline = false;
    args = args.slice(1);
  }
  if (!allLiteral(args) || args.some((w) => w.text.includes('\\'))) return;
  inv.an.produce({ kind: 'text', text: args.map((w) => w.text).join(' ') + (newline ? '\n' : ''), by: 'echo' });
});

/** Variables whose value is not a secret: `printenv PATH` prints nothing worth protecting. */
const PLAIN_VARIABLES =
  /^(PATH|HOME|USER|LOGNAME|USERNAME|SHELL|PWD|OLDPWD|LANG|LANGUAGE|LC_[A-Z]+|TERM|COLORTERM|TZ|TMPDIR|TEMP|TMP|HOSTNAME|SHLVL|DISPLAY|EDITOR|VISUAL|PAGER|XDG_[A-Z_]+|NODE_ENV|VIRTUAL_ENV|CONDA_DEFAULT_ENV|CONDA_PREFIX|JAVA_HOME|GOPATH|GOROOT|GOBIN|CARGO_HOME|RUSTUP_HOME|PYTHONPATH|NODE_PATH|NVM_DIR|CI|MANPATH|INFOPATH|PKG_CONFIG_PATH|LD_LIBRARY_PATH)$/;

/** `printenv NAME…`, `declare -p NAME…`: a dump of the environment unless every name is a plain one. */
export function printsSecrets(names: readonly WordValue[]): boolean {
  return names.length === 0 || names.some((w) => w.dynamic || !PLAIN_VARIABLES.test(w.text));
}

register(BUILTINS, 'printenv', (inv) => {
  const p = parseOpts(inv.args, { flags: ['null', 'help', 'version'] });
  if (printsSecrets(p.pos)) inv.an.readEnvironment(p.pos.length ? `printenv ${p.pos.map((w) => w.raw).join(' ')}` : 'printenv');
});

register(BUILTINS, 'set', (inv) => {
  // `set` alone prints every variable (the environment among them); `set -o`/`+o` print options.
  if (inv.args.length === 0) inv.an.readEnvironment('set');
});

/** ps options whose value is the next word (procps and BSD): a user list, a sort key, a format. */
const PS_VALUED_SHORT = new Set(['-C', '-G', '-g', '-p', '-q', '-s', '-t', '-U', '-u', '-o', '-O', '-k']);
const PS_VALUED_LONG = new Set([
  '--sort',
  '--cols',
  '--columns',
  '--width',
  '--rows',
  '--lines',
  '--pid',
  '--ppid',
  '--sid',
  '--tty',
  '--user',
  '--User',
  '--group',
  '--Group',
  '--format',
  '--quick-pid',
]);

register(BUILTINS, ['ps'], (inv) => {
  // BSD-style letters (`ps eww`, `ps auxe`) with `e`, and macOS `ps -e`/`-E`, print each process's environment.
  // The word after an option that takes a value (`-u $(id -u)`, `--sort size`, BSD `o pid,comm`) is its value, not letters.
  let bsd = false;
  let unknown = false;
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (w.dynamic) {
      unknown = true;
      continue;
    }
    const t = w.text;
    if (PS_VALUED_SHORT.has(t) || PS_VALUED_LONG.has(t)) {
      i++;
      continue;
    }
    if (/^[a-zA-Z]+$/.test(t)) {
      if (t.includes('e')) bsd = true;
      if (/[oOkptUg]$/.test(t)) i++;
    }
  }
  const mac = inv.an.platform === 'darwin' && args.some((w) => !w.dynamic && /^-[a-zA-Z]*[eE]/.test(w.text));
  if (bsd || mac || unknown) inv.an.readEnvironment(`ps ${args.map((w) => w.raw).join(' ')}`);
});

register(BUILTINS, ['shopt', 'setopt'], (inv) => {
  // `shopt -s dotglob` (zsh: `setopt globdots`) lets `*` match names that start with a dot.
  if (
    inv.args.some((w) => w.dynamic || /^(dotglob|glob_?dots)$/i.test(w.text)) &&
    (inv.cmd === 'setopt' || inv.args.some((w) => w.text === '-s'))
  )
    inv.an.dotglob = true;
});

register(BUILTINS, 'let', (inv) => forgetVars(inv, inv.args.map((w) => /^[A-Za-z_]\w*/.exec(w.text)?.[0] ?? '').filter(Boolean)));

register(BUILTINS, 'getopts', (inv) =>
  forgetVars(
    inv,
    inv.args.slice(1, 2).map((w) => w.text),
  ),
);
