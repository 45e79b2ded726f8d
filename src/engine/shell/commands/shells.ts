// Shells and interpreters: the scripts and code they run, and the programs that open files (open, xdg-open).
import { has, lastValue, parseOpts, values } from '../options';
import type { Outcome, Scope } from '../state';
import { literalWord, sliceWord, type WordValue } from '../words';
import { DOT, allLiteral, genericReads, register, type Inv, type Registry } from '../helpers';
import { PACKAGE_COMMANDS } from './packages';
import { ASSIGNMENT, serveFiles, shellFromStdin } from './shared';
import { powershell } from './windows';

export const SHELL_COMMANDS: Registry = new Map();

// ------------------------------------------------------------------------------------------
// Shells and interpreters.

const SHELLS = ['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'rbash', 'yash', 'fish', 'csh', 'tcsh', 'posh'];

/** Script paths that are really standard input. */
const STDIN_FILES = new Set(['-', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

register(SHELL_COMMANDS, SHELLS, (inv) => {
  const args = inv.args;
  let commandString = false;
  let fromStdin = false;
  let i = 0;
  for (; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (w.dynamic) break;
    if (t === '--' || t === '-') {
      i++;
      break;
    }
    if (t.startsWith('--')) {
      if (t === '--rcfile' || t === '--init-file') inv.an.read(args[++i] ?? literalWord(''), inv.scope);
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(t)) {
      for (const c of t.slice(1)) {
        if (c === 'c') commandString = true;
        else if (c === 's') fromStdin = true;
        else if (c === 'o' || c === 'O') i++;
      }
      continue;
    }
    break;
  }
  const rest = args.slice(i);
  if (commandString) {
    const s = rest[0];
    if (!s) inv.an.error(`${inv.cmd} -c without a command string`);
    else if (s.dynamic) inv.an.opaque(`${inv.cmd} -c command string is not literal`);
    else {
      // `sh -c 'rm "$1"' _ FILE`: the words after the string become $0, $1…
      const params = rest.slice(1);
      inv.an.runScript(s.text, inv.scope, `${inv.cmd} -c`, allLiteral(params) ? params.map((w) => w.text) : undefined);
    }
    return;
  }
  if (!fromStdin && rest.length > 0) return scriptFile(inv, rest[0]!, rest.slice(1));
  // With no script and no piped input, the shell runs whatever is typed into it next
  // (`find . -exec /bin/sh \;`, `sudo env /bin/sh`: the classic escapes to a shell).
  if (inv.io.stdin === 'tty') inv.an.opaque(`${inv.cmd} with no script runs the commands typed into its terminal`);
  else shellFromStdin(inv, inv.cmd);
});

/** `interp SCRIPT ARGS…`: the script is read (and run: a non-literal one is unknown code). */
export function scriptFile(inv: Inv, script: WordValue, args: readonly WordValue[], scope: Scope = inv.scope): void {
  if (!script.dynamic && STDIN_FILES.has(script.text)) return shellFromStdin(inv, inv.cmd);
  if (script.dynamic) inv.an.opaque(`${inv.cmd} runs a script whose path is not literal`);
  else inv.an.runsFile(script, scope, inv.cmd);
  inv.an.read(script, scope);
  genericReads({ ...inv, scope }, args);
}

function inline(inv: Inv, flag: string): void {
  inv.an.opaque(`inline interpreter code: ${inv.cmd} ${flag}`);
}

function programFromStdin(inv: Inv): void {
  if (inv.io.stdin === 'pipe' || inv.io.stdin === 'heredoc') inv.an.opaque(`${inv.cmd} reads its program from stdin`);
}

register(SHELL_COMMANDS, ['python', 'pypy'], (inv) => {
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (w.dynamic && !t.startsWith('-')) return scriptFile(inv, w, args.slice(i + 1));
    if (t === '-') return programFromStdin(inv);
    if (t === '--') {
      const s = args[i + 1];
      if (s) scriptFile(inv, s, args.slice(i + 2));
      else programFromStdin(inv);
      return;
    }
    if (t.startsWith('--')) {
      if (t === '--check-hash-based-pycs') i++;
      continue;
    }
    if (t.startsWith('-') && t.length > 1) {
      for (let j = 1; j < t.length; j++) {
        const c = t[j]!;
        if (c === 'c') return inline(inv, '-c');
        if (c === 'm') {
          const mod = j + 1 < t.length ? t.slice(j + 1) : args[++i]?.text;
          return pythonModule(inv, mod ?? '', args.slice(i + 1));
        }
        if (c === 'W' || c === 'X') {
          if (j + 1 === t.length) i++;
          break;
        }
      }
      continue;
    }
    return scriptFile(inv, w, args.slice(i + 1));
  }
  programFromStdin(inv);
});

function pythonModule(inv: Inv, mod: string, rest: WordValue[]): Outcome | void {
  if (mod === 'pip') return PACKAGE_COMMANDS.get('pip')!.fn({ ...inv, cmd: 'pip', args: rest });
  if (mod === 'http.server' || mod === 'SimpleHTTPServer') {
    const p = parseOpts(rest, { short: 'bdp', long: ['bind', 'directory', 'protocol'], flags: ['cgi'] });
    const port = p.pos[0]?.text ?? '8000';
    if (has(p, '--cgi')) inv.an.opaque(`python -m ${mod} --cgi runs the scripts it serves`);
    return serveFiles(inv, `python -m ${mod}`, lastValue(p, '-d', '--directory') ?? DOT, lastValue(p, '-b', '--bind'), port);
  }
  if (mod === 'smtpd' || mod === 'ftplib') inv.an.net();
  if (mod === 'venv' || mod === 'virtualenv') {
    for (const w of parseOpts(rest, { long: ['prompt', 'upgrade-deps'] }).pos) inv.an.write(w, inv.scope);
    return;
  }
  genericReads(inv, rest);
}

register(SHELL_COMMANDS, ['node', 'nodejs'], (inv) => {
  const args = inv.args;
  const valued = new Set([
    '-r',
    '--require',
    '--import',
    '--loader',
    '--experimental-loader',
    '-C',
    '--conditions',
    '--input-type',
    '--title',
    '--stack-size',
    '--max-old-space-size',
    '--inspect-port',
    '--env-file',
    '--env-file-if-exists',
    '--redirect-warnings',
    '--watch-path',
  ]);
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (w.dynamic && !t.startsWith('-')) return scriptFile(inv, w, args.slice(i + 1));
    if (t === '-') return programFromStdin(inv);
    if (
      t === '-e' ||
      t === '--eval' ||
      t === '-p' ||
      t === '--print' ||
      t === '-pe' ||
      t === '-ep' ||
      t.startsWith('--eval=') ||
      t.startsWith('--print=')
    ) {
      return inline(inv, t.split('=')[0]!);
    }
    if (t.startsWith('-')) {
      const name = t.split('=')[0]!;
      if (name === '--env-file' || name === '--env-file-if-exists') {
        const v = t.includes('=') ? sliceWord(w, t.indexOf('=') + 1) : args[++i];
        if (v) inv.an.read(v, inv.scope);
      } else if (name === '--redirect-warnings') {
        const v = t.includes('=') ? sliceWord(w, t.indexOf('=') + 1) : args[++i];
        if (v) inv.an.write(v, inv.scope);
      } else if (valued.has(name) && !t.includes('=')) i++;
      continue;
    }
    return scriptFile(inv, w, args.slice(i + 1));
  }
  programFromStdin(inv);
});

register(SHELL_COMMANDS, ['perl', 'ruby'], (inv) => {
  const args = inv.args;
  const perl = inv.cmd.toLowerCase().startsWith('perl');
  // Letters whose value is the rest of the cluster (or, for a few, the next word).
  const attached = perl ? 'IMmFx0lCdDV' : 'IrCEFKTWx0l';
  const separable = perl ? '' : 'IrCE';
  let code = false;
  let inPlace = false;
  let i = 0;
  let scope = inv.scope;
  for (; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (w.dynamic || !t.startsWith('-') || t === '-') break;
    if (t === '--') {
      i++;
      break;
    }
    if (t.startsWith('--')) continue;
    for (let j = 1; j < t.length; j++) {
      const c = t[j]!;
      if (c === 'e' || (c === 'E' && perl)) {
        code = true;
        if (j + 1 === t.length) i++;
        break;
      }
      if (c === 'i') {
        inPlace = true;
        break;
      }
      if (attached.includes(c)) {
        if (j + 1 === t.length && separable.includes(c)) {
          const v = args[++i];
          if (c === 'C' && v) scope = inv.an.chdir(scope, v);
        } else if (c === 'C' && !perl && j + 1 < t.length) scope = inv.an.chdir(scope, sliceWord(w, j + 1));
        break;
      }
    }
  }
  const rest = args.slice(i);
  let files = rest;
  if (code) inline(inv, perl ? '-e' : '-e');
  else if (rest.length) {
    if (rest[0]!.dynamic) inv.an.opaque(`${inv.cmd} runs a script whose path is not literal`);
    inv.an.read(rest[0]!, scope);
    files = rest.slice(1);
  } else {
    programFromStdin(inv);
    files = [];
  }
  for (const f of files) {
    if (inPlace) inv.an.write(f, scope);
    inv.an.read(f, scope);
  }
});

register(SHELL_COMMANDS, 'php', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'rBRFEfcdSzt',
    long: [
      'run',
      'process-begin',
      'process-code',
      'process-file',
      'process-end',
      'file',
      'php-ini',
      'define',
      'server',
      'zend-extension',
      'docroot',
    ],
  });
  if (has(p, '-r', '--run', '-B', '-R', '-E', '--process-begin', '--process-code', '--process-end')) return inline(inv, '-r');
  const server = lastValue(p, '-S', '--server');
  if (server) {
    // `php -S HOST:PORT [-t DOCROOT]`: serves (and runs) the files below the document root.
    if (server.dynamic) inv.an.opaque('php -S address is not literal');
    const m = /^(.*):(\d+)$/.exec(server.text);
    serveFiles(
      inv,
      'php -S',
      lastValue(p, '-t', '--docroot') ?? DOT,
      server.dynamic ? server : literalWord(m ? m[1]! : server.text),
      m ? m[2]! : '',
    );
  }
  for (const f of values(p, '-f', '--file', '-F', '--process-file')) inv.an.read(f, inv.scope);
  if (p.pos[0]) scriptFile(inv, p.pos[0], p.pos.slice(1));
  else if (!has(p, '-f', '--file', '-S', '--server', '-v', '-m', '-i')) programFromStdin(inv);
});

register(SHELL_COMMANDS, ['lua', 'luajit', 'osascript', 'Rscript', 'rscript', 'julia', 'jrunscript', 'groovy', 'scala'], (inv) => {
  const p = parseOpts(inv.args, { short: 'elsEp', long: ['eval', 'print', 'load'], posix: true });
  if (has(p, '-e', '-E', '--eval', '--print')) return inline(inv, '-e');
  if (p.rest[0]) scriptFile(inv, p.rest[0], p.rest.slice(1));
  else programFromStdin(inv);
});

register(SHELL_COMMANDS, ['tclsh', 'wish', 'expect', 'jshell', 'irb', 'ghci', 'guile', 'racket', 'sbcl'], (inv) => {
  const p = parseOpts(inv.args, { short: 'ec', posix: true });
  if (has(p, '-e', '-c')) return inline(inv, has(p, '-e') ? '-e' : '-c');
  if (p.rest[0]) scriptFile(inv, p.rest[0], p.rest.slice(1));
  else programFromStdin(inv);
});

register(SHELL_COMMANDS, 'deno', (inv) => {
  const [sub, ...rest] = inv.args;
  if (!sub) return;
  if (sub.text === 'eval' || sub.text === 'repl') return inline(inv, sub.text);
  if (['install', 'add', 'cache', 'upgrade', 'outdated', 'publish'].includes(sub.text)) inv.an.net();
  const p = parseOpts(rest, {
    posix: true,
    long: ['config', 'import-map', 'lock', 'cert', 'location', 'env-file', 'allow-read', 'allow-write'],
  });
  const target =
    p.rest[0] ??
    (sub.text.startsWith('-') || ['run', 'test', 'bench', 'compile', 'check', 'fmt', 'lint', 'install'].includes(sub.text)
      ? undefined
      : sub);
  if (target) {
    if (/^https?:\/\//.test(target.text)) inv.an.netWord(target, 'deno');
    else inv.an.read(target, inv.scope);
  }
});

register(SHELL_COMMANDS, 'awk', awk);
register(SHELL_COMMANDS, ['gawk', 'mawk', 'nawk'], awk);

/**
 * What in an awk program reaches beyond its input files and standard output: loading code or
 * calling a function by name (gawk's `@include`, `@load`, `@f()`), any `getline` (its forms reading
 * other files or command output are told apart only by the words around it), `system()`,
 * `close`/`fflush`, ARGV/ARGC (which change the files it reads), PROCINFO, and output redirection
 * (`print > FILE`, `print | CMD`, `|&`): a `>` (not `>=`) or `|` (not `||`) anywhere after the first
 * print or printf counts (a statement may go on over lines, strings may hold `;` or `}`), and before
 * it is a comparison or a regex. Checked on the raw text: a name inside a string also counts.
 */
function awkReachesBeyond(program: string): string | undefined {
  if (program.includes('@')) return 'loads code or calls a function by name (@include, @load, @f())';
  if (/\bgetline\b/.test(program)) return 'reads with getline';
  if (/\bsystem\b/.test(program)) return 'runs commands (system)';
  if (/\b(close|fflush)\b/.test(program)) return 'closes or flushes files or commands';
  if (/\b(ARGV|ARGC|PROCINFO)\b/.test(program)) return 'changes which files it reads or reads PROCINFO';
  const print = /\bprintf?\b/.exec(program);
  if (print) {
    const after = program.slice(print.index);
    if (/>(?!=)/.test(after) || after.replace(/\|\|/g, '').includes('|')) return 'writes to a file or a command (print >, print |)';
  }
  return undefined;
}

function awk(inv: Inv): void {
  const { an, scope } = inv;
  const p = parseOpts(inv.args, {
    short: 'fvFiElLeW',
    shortOpt: 'odp',
    long: ['file', 'assign', 'field-separator', 'include', 'load', 'source', 'exec'],
    flags: [
      'pretty-print',
      'dump-variables',
      'profile',
      'sandbox',
      'posix',
      'traditional',
      'lint',
      'characters-as-bytes',
      'bignum',
      'optimize',
      'no-optimize',
      're-interval',
      'copyright',
      'version',
      'help',
      'usage',
    ],
  });
  const progFiles = values(p, '-f', '--file', '-E', '--exec');
  const sources = values(p, '-e', '--source');
  // A program file is read like any script file (the command table leaves `-f` unjudged: what
  // the program does is not seen); a library it includes (found on AWKPATH) or an extension it
  // loads (native code) is not known here.
  for (const f of progFiles) an.read(f, scope);
  const includes = values(p, '-i', '--include');
  const inPlace = includes.some((w) => w.text === 'inplace' || w.text === 'inplace.awk');
  if (includes.some((w) => w.text !== 'inplace' && w.text !== 'inplace.awk') || has(p, '-l', '--load'))
    an.opaque(`${inv.cmd} loads an awk library or extension`);
  let files = p.pos;
  let programs = sources;
  if (progFiles.length === 0 && sources.length === 0) {
    programs = p.pos.slice(0, 1);
    files = p.pos.slice(1);
  }
  for (const prog of programs) {
    if (prog.dynamic) {
      an.opaque(`${inv.cmd} program is not literal`);
      continue;
    }
    const beyond = awkReachesBeyond(prog.text);
    if (beyond) an.opaque(`${inv.cmd} program ${beyond}`);
    // ENVIRON is the environment: `awk 'BEGIN{for (k in ENVIRON) print k, ENVIRON[k]}'` prints it.
    if (/\bENVIRON\b/.test(prog.text)) an.readEnvironment(`${inv.cmd} ENVIRON`);
  }
  // gawk's profile, pretty-print and variable dump go to a file (awkprof.out, awkvars.out by default).
  for (const o of p.opts) {
    const dflt =
      o.name === '-d' || o.name === '--dump-variables'
        ? 'awkvars.out'
        : ['-o', '-p', '--pretty-print', '--profile'].includes(o.name)
          ? 'awkprof.out'
          : undefined;
    if (dflt) an.write(o.value && o.value.text ? o.value : literalWord(dflt), scope);
  }
  for (const f of files) {
    if (!f.dynamic && ASSIGNMENT.test(f.text)) continue; // var=value operands
    if (f.text === '-' && !f.dynamic) continue;
    an.read(f, scope);
    if (inPlace) an.write(f, scope);
  }
}

register(SHELL_COMMANDS, ['open', 'xdg-open', 'gio', 'sensible-browser', 'x-www-browser'], (inv) => {
  for (const w of inv.args) {
    if (!w.dynamic && /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(w.text) && !/^file:/i.test(w.text)) inv.an.netWord(w, inv.cmd);
    else if (!w.text.startsWith('-') && w.text !== 'open') inv.an.read(w, inv.scope);
  }
});

// PowerShell Core runs on every platform.
register(SHELL_COMMANDS, ['pwsh', 'powershell'], powershell);
