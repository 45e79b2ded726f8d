// Command dispatch, plus the handlers for wrappers, shells, interpreters and shell builtins.
import type { Platform } from '../types';
import type { Analyzer } from './analyze';
import { has, lastValue, parseOpts, values } from './options';
import { same, cloneScope, type Io, type Outcome, type Scope } from './state';
import { literalWord, unknownWord, sliceWord, type WordValue } from './words';
import { DOT, allLiteral, clip, genericReads, proxyAddress, register, type Entry, type Inv, type Registry } from './helpers';
import { FILE_COMMANDS } from './files';
import { LOOPBACK, NET_COMMANDS } from './net';
import { PS_CMDLETS, WIN_COMMANDS, powershell, psAliasFor } from './windows';
import { dataHandler } from './data-handler';
import { OperandTableError, operandEntries } from './operands';

const CORE: Registry = new Map();

/** Runs argv[0] with the remaining words. */
export function dispatch(an: Analyzer, argv: WordValue[], scope: Scope, io: Io, opts: { noFunctions?: boolean }): Outcome {
  const w0 = argv[0]!;
  const args = argv.slice(1);
  if (w0.dynamic || w0.glob) {
    an.pushCommand(w0.raw);
    an.opaque(`command name \`${clip(w0.raw)}\` is not literal`);
    genericReads({ an, cmd: w0.raw, args, scope, io }, args);
    return same(scope);
  }
  const full = w0.text;
  // A reserved word where a command should be (`rm x; }`) is a syntax error to bash: nothing runs.
  if (RESERVED.has(w0.raw)) {
    an.error(`syntax error near unexpected \`${w0.raw}\``);
    an.opaque('the command has a syntax error');
    return same(scope);
  }
  const cmd = displayName(full, an.platform);
  if (full.includes('/') || (an.platform === 'win32' && full.includes('\\'))) an.runsFile(w0, scope, 'the command');
  if (!opts.noFunctions && scope.functions.has(full)) {
    an.pushCommand(cmd);
    return an.callFunction(full, scope, io, args) ?? same(scope);
  }
  const entry = lookup(cmd, args, an.platform, io.stdin === 'pipe');
  const inv: Inv = { an, cmd, args, scope, io };
  const named = full.includes('/') || (an.platform === 'win32' && full.includes('\\')) ? full : undefined;
  if (!entry) {
    an.pushCommand(cmd, args, named);
    genericReads(inv, args);
    return same(scope);
  }
  if (!entry.wrapper) an.pushCommand(cmd, args, named);
  else an.recordWrapper(cmd, args, named);
  return entry.fn(inv) ?? same(scope);
}

const RESERVED = new Set(['}', 'then', 'fi', 'do', 'done', 'esac', 'else', 'elif', 'in', ';;']);

/** Basename; on Windows without `.exe`/`.com`/`.bat`/`.cmd`. */
function displayName(full: string, platform: Platform): string {
  const i = platform === 'win32' ? Math.max(full.lastIndexOf('/'), full.lastIndexOf('\\')) : full.lastIndexOf('/');
  let b = full.slice(i + 1);
  if (platform === 'win32') b = b.replace(/\.(exe|com|bat|cmd)$/i, '');
  return b === '' ? full : b;
}

function lookup(cmd: string, args: readonly WordValue[], platform: Platform, piped: boolean): Entry | undefined {
  // Case-insensitive file systems (macOS, Windows) find `RM` as `rm`.
  let key = platform === 'linux' ? cmd : cmd.toLowerCase();
  if (/^[A-Za-z]+-[A-Za-z]+$/.test(cmd)) {
    const ps = PS_CMDLETS.get(cmd.toLowerCase()) ?? CORE.get(cmd.toLowerCase());
    if (ps) return ps;
  }
  if (platform === 'win32') {
    const alias = psAliasFor(key, args, piped);
    if (alias) return PS_CMDLETS.get(alias);
    const w = WIN_COMMANDS.get(key);
    if (w) return w;
  }
  key = key.replace(/^(python|pip|pypy|ruby|perl|php|lua|node)[\d.]+$/, '$1');
  return CORE.get(key) ?? FILE_COMMANDS.get(key) ?? NET_COMMANDS.get(key);
}

// ------------------------------------------------------------------------------------------
// Wrappers: they run another command with (mostly) the same arguments.

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Environment variables that make programs load or run other code. */
/** Variables that name code a program runs (preloads, editors, pagers, helpers, `*_COMMAND`). */
const DANGEROUS_ENV = /^(LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|DYLD_INSERT_LIBRARIES|DYLD_LIBRARY_PATH|BASH_ENV|ENV|PROMPT_COMMAND|PERL5OPT|PERL5LIB|RUBYOPT|PYTHONSTARTUP|GIT_SSH|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_ASKPASS|SSH_ASKPASS|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_PAGER|GIT_EXEC_PATH|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_DIR|GIT_WORK_TREE|GIT_INDEX_FILE|GIT_COMMON_DIR|GIT_OBJECT_DIRECTORY|GIT_ALTERNATE_OBJECT_DIRECTORIES|PAGER|MANPAGER|EDITOR|VISUAL|SYSTEMD_EDITOR|SUDO_EDITOR|BROWSER|LESSOPEN|LESSCLOSE|RSYNC_RSH|CVS_RSH|BORG_RSH|RIPGREP_CONFIG_PATH|AWKPATH|AWKLIBPATH|BAT_PAGER|BAT_CONFIG_PATH|BAT_CONFIG_DIR|SHELLCHECK_OPTS|ACK_OPTIONS|ACKRC|ACK_PAGER|ACK_PAGER_COLOR|RUFF_CACHE_DIR|RUFF_OUTPUT_FILE|TAR_OPTIONS|TAPE|[A-Z0-9_]*_COMMAND|[A-Z0-9_]*_CMD|[A-Z0-9_]*PASSCOMMAND)$/;

/**
 * Does assigning `value` to the environment variable `name` make programs run other code?
 * NODE_OPTIONS only when it preloads modules (`--max-old-space-size` is everyday use).
 */
export function isDangerousEnv(name: string, value: WordValue | undefined): boolean {
  if (DANGEROUS_ENV.test(name)) return true;
  if (name === 'NODE_OPTIONS') return !value || value.dynamic || /(^|\s)(-r|--require|--import|--loader|--experimental-loader)(\s|=|$)/.test(value.text);
  return false;
}

/** Variables that send a program's connections through another address (curl, wget, git, pip, npm…). */
const PROXY_ENV = /^(https?|all|ftp|rsync|socks5?|grpc)_proxy$/i;

/**
 * `HTTPS_PROXY=http://169.254.169.254 curl …`: the proxy is where the connection goes, so its address
 * is a network target like a URL (checked for SSRF); an unknown one makes the command opaque.
 */
export function proxyEnv(an: Analyzer, name: string, value: WordValue | undefined): void {
  if (!PROXY_ENV.test(name) || !value || (!value.dynamic && value.text === '')) return;
  an.netWord(proxyAddress(value), `proxy variable ${name}`);
}

/** Runs `rest` as a command in a child process (no shell functions, no effect on this shell). */
function runChild(inv: Inv, rest: WordValue[], scope: Scope = inv.scope, io: Io = inv.io): void {
  if (rest.length === 0) return;
  inv.an.runArgv(rest, scope, io, { noFunctions: true });
}

function skipAssignments(inv: Inv, rest: WordValue[]): WordValue[] {
  let i = 0;
  while (i < rest.length && ASSIGNMENT.test(rest[i]!.dynamic ? rest[i]!.prefix : rest[i]!.text)) {
    const w = rest[i]!;
    const name = (w.dynamic ? w.prefix : w.text).split('=')[0]!;
    if (name === 'HOME') inv.an.opaque('HOME is overridden for a command');
    else if (isDangerousEnv(name, sliceWord(w, name.length + 1))) inv.an.opaque(`environment variable ${name} changes what programs run`);
    else proxyEnv(inv.an, name, sliceWord(w, name.length + 1));
    if (name === 'PATH') inv.an.searchPathChanged();
    i++;
  }
  return rest.slice(i);
}

register(CORE, 'sudo', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'ugpCDhrtTUc',
    long: ['user', 'group', 'prompt', 'close-from', 'chdir', 'host', 'role', 'type', 'other-user', 'command-timeout', 'login-class'],
    flags: ['edit', 'login', 'shell', 'preserve-env', 'non-interactive', 'stdin', 'background', 'list', 'validate', 'reset-timestamp', 'remove-timestamp', 'set-home', 'askpass', 'bell', 'preserve-groups', 'version', 'help'],
    posix: true,
  });
  let scope = inv.scope;
  const dir = lastValue(p, '-D', '--chdir');
  if (dir) scope = inv.an.chdir(scope, dir);
  const rest = skipAssignments(inv, p.rest);
  if (has(p, '-e', '--edit')) {
    inv.an.pushCommand('sudoedit');
    for (const w of rest) inv.an.write(w, scope);
    return;
  }
  if (rest.length === 0) {
    inv.an.pushCommand('sudo');
    if (has(p, '-s', '--shell', '-i', '--login')) shellFromStdin(inv, 'sudo -s');
    return;
  }
  runChild(inv, rest, scope);
}, true);

register(CORE, 'sudoedit', (inv) => {
  const p = parseOpts(inv.args, { short: 'ugpCDhrtTUc' });
  for (const w of p.pos) inv.an.write(w, inv.scope);
});

register(CORE, 'doas', (inv) => {
  const p = parseOpts(inv.args, { short: 'uC', posix: true });
  for (const c of values(p, '-C')) inv.an.read(c, inv.scope);
  if (p.rest.length === 0) {
    inv.an.pushCommand('doas');
    if (has(p, '-s')) shellFromStdin(inv, 'doas -s');
    return;
  }
  runChild(inv, p.rest);
}, true);

register(CORE, 'env', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'uCSP',
    long: ['unset', 'chdir', 'split-string', 'argv0'],
    flags: ['ignore-environment', 'null', 'debug', 'list-signal-handling', 'block-signal', 'default-signal', 'ignore-signal', 'help', 'version'],
    posix: true,
  });
  let scope = inv.scope;
  const dir = lastValue(p, '-C', '--chdir');
  if (dir) scope = inv.an.chdir(scope, dir);
  let rest = p.rest;
  if (rest[0]?.text === '-' && !rest[0].dynamic) rest = rest.slice(1);
  rest = skipAssignments(inv, rest);
  const split = lastValue(p, '-S', '--split-string');
  if (split) {
    // `env -S 'cmd args'` splits the string into words: analyse it like a command line.
    if (split.dynamic || !allLiteral(rest)) inv.an.opaque('env -S string is not literal');
    else inv.an.runScript([split.text, ...rest.map((w) => w.raw)].join(' '), scope, 'env -S');
    return;
  }
  if (rest.length === 0) {
    inv.an.pushCommand('env');
    // With no command, env prints the environment (with -i, only the assignments given to it).
    if (!has(p, '-i', '--ignore-environment')) inv.an.readEnvironment('env');
    return;
  }
  runChild(inv, rest, scope);
}, true);

register(CORE, 'xargs', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'adEILnPs',
    shortOpt: 'eil',
    long: ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
    flags: ['null', 'interactive', 'no-run-if-empty', 'verbose', 'exit', 'open-tty', 'show-limits', 'replace', 'eof', 'max-lines', 'help', 'version'],
    posix: true,
  });
  for (const f of values(p, '-a', '--arg-file')) inv.an.read(f, inv.scope);
  let rest = p.rest.length ? p.rest : [literalWord('echo')];
  let replace: string | undefined;
  const big = lastValue(p, '-I');
  if (big) replace = big.text;
  else if (p.opts.some((o) => o.name === '-i' || o.name === '--replace')) {
    const o = p.opts.find((x) => x.name === '-i' || x.name === '--replace')!;
    replace = o.value && o.value.text !== '' ? o.value.text : '{}';
  }
  const verb = rest[0] && !rest[0].dynamic ? rest[0].text.replace(/^.*\//, '') : '';
  const fromFile = values(p, '-a', '--arg-file').length > 0;
  // Input it can see: the exact text of the command before it (`echo ~/.ssh/id_rsa | xargs cat`),
  // or a here-string/heredoc. Each item then is a known argument.
  const text = fromFile ? undefined : inv.io.stdin === 'pipe' && inv.io.feed?.kind === 'text' ? inv.io.feed.text : inv.io.stdin === 'heredoc' ? inv.io.script : undefined;
  const delimiter = has(p, '-0', '--null') ? '\0' : lastValue(p, '-d', '--delimiter');
  const items = text === undefined ? undefined : xargsItems(text, delimiter, replace !== undefined || has(p, '-L', '--max-lines') || p.opts.some((o) => o.name === '-l'));
  if (items !== undefined) {
    if (replace === undefined) runChild(inv, [...rest, ...items.map(literalWord)], inv.scope, { stdin: 'tty' });
    else for (const item of items) runChild(inv, rest.map((w) => (!w.dynamic && w.text.includes(replace!) ? literalWord(w.text.split(replace!).join(item)) : w)), inv.scope, { stdin: 'tty' });
    // Known names are checked as such; a command that changes files stays a review (as with unknown input),
    // except for names `find` printed itself and the analysis evaluated exactly (no blanks, quotes or
    // backslashes that xargs would split differently): `find . -mtime +30 | xargs rm` is the -exec form.
    const exact = inv.io.feed?.kind === 'text' && inv.io.feed.by === 'find';
    if (WRITE_VERBS.has(verb) && !exact) inv.an.opaque(`xargs passes file names from its input to ${verb}`);
    return;
  }
  // Names listed by `find ROOT …`, `git ls-files`, `rg --files` come from below known directories:
  // a command that reads its arguments reads every file there, as `find … -exec CMD {} +` does.
  const feed = !fromFile && inv.io.stdin === 'pipe' ? inv.io.feed : undefined;
  if (feed?.kind === 'below' && !WRITE_VERBS.has(verb)) {
    for (const root of feed.roots) {
      const argv = replace === undefined ? [...rest, root] : rest.map((w) => (!w.dynamic && w.text.includes(replace!) ? root : w));
      const before = inv.an.effectCount();
      runChild(inv, argv, feed.scope, { stdin: 'tty' });
      inv.an.readBelow(root, feed.scope, 'contents', feed.names);
      if (inv.an.effectCount() > before) inv.an.opaque(`xargs passes the names ${feed.by} lists to ${verb || 'a command'}, which changes files`);
    }
    return;
  }
  // Otherwise the words xargs adds come from its input: unknown paths. With -I the literal text
  // around the replacement string stays (`-I{} cat ~/.ssh/{}` reads somewhere in ~/.ssh).
  const input = unknownWord('{xargs input}');
  if (replace !== undefined) {
    const r = replace;
    rest = rest.map((w) => (w.text.includes(r) ? (w.dynamic ? input : withUnknownPart(w, r)) : w));
  } else rest = [...rest, input];
  const before = inv.an.effectCount();
  runChild(inv, rest, inv.scope, { stdin: 'tty' });
  if (inv.an.effectCount() > before || WRITE_VERBS.has(verb)) inv.an.opaque(`xargs passes file names from its input to ${verb || 'a command'}`);
}, true);

/** `w` with every `r` in it standing for an unknown value: a dynamic word whose literal prefix is what precedes the first one. */
function withUnknownPart(w: WordValue, r: string): WordValue {
  const at = w.text.indexOf(r);
  return { text: w.text.split(r).join(''), raw: w.raw, dynamic: true, glob: false, prefix: w.text.slice(0, at), stop: 'dyn' };
}

/** Most items of known input xargs is modelled with; more are treated as unknown. */
const MAX_XARGS_ITEMS = 256;

/**
 * The arguments xargs makes of `text`: split at `delimiter` (-0, -d), by lines (-I, -L), or at
 * blanks. Undefined when its quoting rules would matter (quotes or backslashes in blank-split
 * input, a multi-character -d) or there are too many.
 */
function xargsItems(text: string, delimiter: WordValue | string | undefined, byLine: boolean): string[] | undefined {
  let items: string[];
  if (delimiter !== undefined) {
    const d = typeof delimiter === 'string' ? delimiter : delimiter.dynamic ? undefined : decodeDelimiter(delimiter.text);
    if (d === undefined) return undefined;
    items = text.split(d);
    if (items[items.length - 1] === '') items.pop();
  } else if (byLine) {
    if (/["'\\]/.test(text)) return undefined;
    items = text.split('\n').map((l) => l.replace(/^[ \t]+/, '')).filter((l) => l !== '');
  } else {
    if (/["'\\]/.test(text)) return undefined;
    items = text.split(/[ \t\n]+/).filter((t) => t !== '');
  }
  return items.length > MAX_XARGS_ITEMS ? undefined : items;
}

/** xargs -d takes one character, or an escape (`\n`, `\t`, `\0`, `\x2c`). */
function decodeDelimiter(t: string): string | undefined {
  if (t.length === 1) return t;
  const simple: Record<string, string> = { '\\n': '\n', '\\t': '\t', '\\0': '\0', '\\\\': '\\' };
  if (simple[t] !== undefined) return simple[t];
  const m = /^\\x([0-9a-fA-F]{2})$/.exec(t);
  return m ? String.fromCharCode(parseInt(m[1]!, 16)) : undefined;
}

/** Commands that write or delete the files named in their arguments. */
const WRITE_VERBS = new Set([
  'rm', 'rmdir', 'unlink', 'shred', 'mv', 'cp', 'install', 'ln', 'tee', 'dd', 'truncate', 'touch', 'mkdir', 'chmod', 'chown',
  'chgrp', 'chattr', 'setfacl', 'rsync', 'scp', 'patch',
]);

register(CORE, 'nohup', (inv) => {
  // nohup appends output to ./nohup.out when stdout is a terminal; agents' stdout is a pipe.
  runChild(inv, inv.args[0]?.text === '--' ? inv.args.slice(1) : inv.args);
}, true);

register(CORE, 'timeout', (inv) => {
  const p = parseOpts(inv.args, { short: 'sk', long: ['signal', 'kill-after'], flags: ['foreground', 'preserve-status', 'verbose'], posix: true });
  runChild(inv, p.rest.slice(1));
}, true);

register(CORE, 'nice', (inv) => {
  let args = inv.args;
  if (args[0] && /^-\d+$/.test(args[0].text)) args = args.slice(1);
  const p = parseOpts(args, { short: 'n', long: ['adjustment'], posix: true });
  runChild(inv, p.rest);
}, true);

register(CORE, 'ionice', (inv) => {
  if (inv.args.some((w) => w.text === '-p' || w.text === '-P' || w.text === '-u' || w.text.startsWith('--pid'))) {
    inv.an.pushCommand('ionice');
    return;
  }
  const p = parseOpts(inv.args, { short: 'cn', long: ['class', 'classdata'], posix: true });
  runChild(inv, p.rest);
}, true);

register(CORE, 'stdbuf', (inv) => {
  const p = parseOpts(inv.args, { short: 'ioe', long: ['input', 'output', 'error'], posix: true });
  runChild(inv, p.rest);
}, true);

register(CORE, 'time', (inv) => {
  const p = parseOpts(inv.args, { short: 'fo', long: ['format', 'output'], flags: ['append', 'verbose', 'portability', 'quiet'], posix: true });
  for (const o of values(p, '-o', '--output')) inv.an.write(o, inv.scope);
  if (p.rest.length === 0) return;
  // `time` is a shell keyword: the timed command runs in this shell (functions, cd).
  return inv.an.runArgv(p.rest, inv.scope, inv.io);
}, true);

register(CORE, 'command', (inv) => {
  const p = parseOpts(inv.args, { posix: true });
  if (has(p, '-v', '-V')) {
    inv.an.pushCommand('command');
    return;
  }
  if (p.rest.length === 0) return;
  return inv.an.runArgv(p.rest, inv.scope, inv.io, { noFunctions: true });
}, true);

register(CORE, 'builtin', (inv) => {
  if (inv.args.length === 0) return;
  return inv.an.runArgv(inv.args, inv.scope, inv.io, { noFunctions: true });
}, true);

register(CORE, 'exec', (inv) => {
  const p = parseOpts(inv.args, { short: 'a', posix: true });
  if (p.rest.length === 0) {
    inv.an.pushCommand('exec');
    return;
  }
  return inv.an.runArgv(p.rest, inv.scope, inv.io, { noFunctions: true });
}, true);

register(CORE, 'coproc', (inv) => {
  runChild(inv, inv.args);
}, true);

register(CORE, 'watch', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'nq',
    long: ['interval', 'equexit'],
    flags: ['differences', 'no-title', 'beep', 'errexit', 'chgexit', 'color', 'no-color', 'exec', 'precise', 'no-linewrap', 'help', 'version'],
    posix: true,
  });
  if (p.rest.length === 0) {
    inv.an.pushCommand('watch');
    return;
  }
  if (has(p, '-x', '--exec')) return void runChild(inv, p.rest);
  // Without -x, watch joins its arguments and runs them with `sh -c`.
  if (!allLiteral(p.rest)) inv.an.opaque('watch command is not literal');
  else inv.an.runScript(p.rest.map((w) => w.text).join(' '), inv.scope, 'watch');
}, true);

register(CORE, ['setsid', 'unbuffer', 'catchsegv', 'pkexec', 'faketime'], (inv) => {
  let args = inv.args;
  if (inv.cmd === 'faketime') args = args.filter((w) => !w.text.startsWith('-')).slice(1);
  const p = parseOpts(args, { long: ['user'], posix: true });
  runChild(inv, p.rest);
}, true);

/**
 * Programs that run the command in their arguments after their own options (`valgrind CMD`,
 * `cpulimit -l 50 -- CMD`): `short`/`long` are their options that take a value. `opaque`: the
 * command runs with another root, namespace or sandbox mapping, so the paths the analysis finds
 * may name other files. `attach`: options that attach to a running process instead (no command).
 */
const EXEC_WRAPPERS: Record<string, { short?: string; long?: string[]; opaque?: string; attach?: string[] }> = {
  valgrind: {},
  cpulimit: { short: 'lpe', long: ['limit', 'pid', 'exe', 'cpu'], attach: ['-p', '-e', '--pid', '--exe'] },
  firejail: { opaque: 'firejail runs the command in a sandbox whose mounts may map paths elsewhere' },
  unshare: { short: 'RwSG', long: ['root', 'wd', 'setuid', 'setgid', 'propagation', 'setgroups', 'map-user', 'map-group', 'map-users', 'map-groups', 'kill-child'], opaque: 'unshare runs the command in new namespaces' },
  nsenter: { short: 'tSGrw', long: ['target', 'setuid', 'setgid', 'root', 'wd'], opaque: "nsenter runs the command in another process's namespaces, where paths name that process's files" },
  proot: { short: 'rbwkq', long: ['rootfs', 'bind', 'cwd', 'kernel-release', 'qemu'], opaque: 'proot runs the command under another root directory' },
  fakeroot: { short: 'lsib', long: ['lib', 'faked'] },
  eatmydata: {},
  'xvfb-run': { short: 'efnpsw', long: ['error-file', 'auth-file', 'server-num', 'xauth-protocol', 'server-args', 'wait'] },
  'dbus-launch': { long: ['config-file', 'autolaunch'] },
  'dbus-run-session': { long: ['config-file', 'dbus-daemon'] },
  caffeinate: { short: 'tw', attach: ['-w'] },
  arch: { short: 'ed', long: ['arch'] },
  entr: {},
};

for (const [name, spec] of Object.entries(EXEC_WRAPPERS)) {
  register(CORE, name, (inv) => {
    const p = parseOpts(inv.args, { short: spec.short, long: spec.long, posix: true });
    if (spec.attach && p.opts.some((o) => spec.attach!.includes(o.name))) {
      inv.an.pushCommand(inv.cmd);
      return;
    }
    if (spec.opaque) inv.an.opaque(spec.opaque);
    if (p.rest.length === 0) {
      // unshare, nsenter, firejail with no command start a shell.
      if (spec.opaque) inv.an.opaque(`${inv.cmd} with no command starts an interactive shell`);
      else inv.an.pushCommand(inv.cmd);
      return;
    }
    // `entr -s 'make test'`: the utility is a shell command line.
    if (inv.cmd === 'entr' && p.opts.some((o) => o.name === '-s')) {
      const line = p.rest[0]!;
      if (line.dynamic) inv.an.opaque('entr -s command is not literal');
      else inv.an.runScript(line.text, inv.scope, 'entr -s');
      return;
    }
    runChild(inv, p.rest);
  }, true);
}

register(CORE, ['bwrap', 'bubblewrap'], (inv) => {
  // Its options take one to three values each; the command is what follows them.
  inv.an.opaque(`${inv.cmd} runs a command in a sandbox whose mounts map paths elsewhere`);
});

register(CORE, 'run-parts', (inv) => {
  if (inv.args.some((w) => w.text === '--test' || w.text === '--list')) return;
  inv.an.opaque('run-parts runs every program in a directory');
});

register(CORE, 'parallel', (inv) => {
  inv.an.opaque('parallel runs commands built from its arguments or input');
});

register(CORE, 'start-stop-daemon', (inv) => {
  const p = parseOpts(inv.args, { short: 'xanpuUcgrdNPkIsR', long: ['exec', 'startas', 'name', 'pidfile', 'user', 'chuid', 'group', 'chroot', 'chdir', 'nicelevel', 'procsched', 'iosched', 'umask', 'signal', 'retry', 'output', 'notify-timeout'], flags: ['start', 'stop', 'status', 'test', 'oknodo', 'quiet', 'verbose', 'background', 'make-pidfile', 'remove-pidfile', 'notify-await', 'no-close'] });
  if (!p.opts.some((o) => o.name === '-S' || o.name === '--start')) return;
  const prog = p.opts.find((o) => o.name === '-a' || o.name === '--startas' || o.name === '-x' || o.name === '--exec')?.value;
  if (!prog) return;
  if (p.opts.some((o) => o.name === '-r' || o.name === '--chroot')) inv.an.opaque('start-stop-daemon --chroot runs the program under another root directory');
  runChild(inv, [prog, ...p.afterDashDash]);
});

register(CORE, 'perf', (inv) => {
  const [sub, ...args] = inv.args;
  if (!sub || sub.dynamic || !['record', 'stat', 'trace', 'c2c', 'mem', 'kvm', 'sched', 'lock'].includes(sub.text)) {
    inv.an.pushCommand('perf');
    return;
  }
  const p = parseOpts(args, { short: 'eocpFtCGjumIrLN', long: ['event', 'output', 'cgroup', 'pid', 'freq', 'tid', 'cpu', 'call-graph', 'mmap-pages', 'repeat', 'delay', 'interval-print', 'field-separator', 'filter', 'uid'], posix: true });
  if (p.opts.some((o) => ['-p', '--pid', '-t', '--tid'].includes(o.name))) {
    inv.an.pushCommand('perf');
    return;
  }
  for (const o of p.opts) if ((o.name === '-o' || o.name === '--output') && o.value) inv.an.write(o.value, inv.scope);
  runChild(inv, p.rest);
}, true);

register(CORE, ['torsocks', 'proxychains', 'proxychains4', 'tsocks'], (inv) => {
  inv.an.net();
  const p = parseOpts(inv.args, { short: 'fuaP', posix: true });
  for (const f of values(p, '-f')) inv.an.read(f, inv.scope);
  runChild(inv, p.rest);
}, true);

register(CORE, ['chrt', 'taskset'], (inv) => {
  if (inv.args.some((w) => w.text === '-p' || w.text === '--pid')) {
    inv.an.pushCommand(inv.cmd);
    return;
  }
  const p = parseOpts(inv.args, { posix: true });
  runChild(inv, p.rest.slice(1));
}, true);

register(CORE, 'flock', (inv) => {
  const p = parseOpts(inv.args, { short: 'wEc', long: ['timeout', 'conflict-exit-code', 'command'], posix: true });
  let [lock, ...rest] = p.rest;
  if (lock && !/^\d+$/.test(lock.text)) inv.an.write(lock, inv.scope);
  let c = lastValue(p, '-c', '--command');
  // `flock FILE -c 'command'`: -c comes after the lock file.
  if (!c && (rest[0]?.text === '-c' || rest[0]?.text === '--command')) {
    c = rest[1];
    rest = [];
  }
  if (c) {
    if (c.dynamic) inv.an.opaque('flock -c command is not literal');
    else inv.an.runScript(c.text, inv.scope, 'flock -c');
  } else if (rest.length) runChild(inv, rest);
  else inv.an.pushCommand('flock');
}, true);

register(CORE, ['su', 'runuser'], (inv) => {
  const p = parseOpts(inv.args, { short: 'cgGsuw', long: ['command', 'group', 'supp-group', 'shell', 'user', 'whitelist-environment', 'session-command'], flags: ['login', 'preserve-environment', 'pty', 'fast'] });
  const c = lastValue(p, '-c', '--command', '--session-command');
  inv.an.pushCommand(inv.cmd);
  if (c) {
    if (c.dynamic) inv.an.opaque(`${inv.cmd} -c command is not literal`);
    else inv.an.runScript(c.text, inv.scope, `${inv.cmd} -c`);
    return;
  }
  // runuser -u USER -- cmd …
  if (inv.cmd === 'runuser' && lastValue(p, '-u', '--user') && p.afterDashDash.length) return void runChild(inv, p.afterDashDash);
  shellFromStdin(inv, inv.cmd);
}, true);

register(CORE, 'httpd', (inv) => {
  // busybox httpd: `-h DIR` (default: .), `-p [IP:]PORT` (default: every interface, port 80).
  const p = parseOpts(inv.args, { short: 'hpcruPi', flags: [] });
  if (!has(p, '-h', '-p', '-f') && p.pos.length) return void genericReads(inv, inv.args);
  const listen = lastValue(p, '-p');
  const m = listen && !listen.dynamic ? /^(?:(.*):)?(\d+)$/.exec(listen.text) : null;
  for (const c of values(p, '-c')) inv.an.read(c, inv.scope);
  serveFiles(inv, 'httpd', lastValue(p, '-h') ?? DOT, listen?.dynamic ? listen : m?.[1] ? literalWord(m[1]) : undefined, m?.[2] ?? '80');
});

register(CORE, ['busybox', 'toybox'], (inv) => {
  if (inv.args.length === 0 || inv.args[0]!.text.startsWith('-')) {
    inv.an.pushCommand(inv.cmd);
    return;
  }
  runChild(inv, inv.args);
}, true);

register(CORE, 'chroot', (inv) => {
  const p = parseOpts(inv.args, { long: ['userspec', 'groups'], flags: ['skip-chdir'], posix: true });
  inv.an.pushCommand('chroot');
  inv.an.opaque('chroot runs the command under another root directory');
  runChild(inv, p.rest.slice(1));
}, true);

register(CORE, ['strace', 'ltrace'], (inv) => {
  const p = parseOpts(inv.args, { short: 'abeEIoOpPsSuUX', long: ['output'], posix: true });
  for (const o of values(p, '-o', '--output')) inv.an.write(o, inv.scope);
  if (p.rest.length === 0) {
    inv.an.pushCommand(inv.cmd);
    return;
  }
  runChild(inv, p.rest);
}, true);

register(CORE, 'script', (inv) => {
  const p = parseOpts(inv.args, { short: 'cEIOBTm', long: ['command', 'echo', 'log-in', 'log-out', 'log-io', 'log-timing', 'logging-format'], flags: ['append', 'flush', 'force', 'quiet', 'return'] });
  for (const f of [...values(p, '-I', '-O', '-B', '-T', '--log-in', '--log-out', '--log-io', '--log-timing'), ...p.pos.slice(0, 1)]) inv.an.write(f, inv.scope);
  if (p.pos.length === 0) inv.an.write(literalWord('typescript'), inv.scope);
  const c = lastValue(p, '-c', '--command');
  if (c) {
    if (c.dynamic) inv.an.opaque('script -c command is not literal');
    else inv.an.runScript(c.text, inv.scope, 'script -c');
  }
});

register(CORE, ['at', 'batch'], (inv) => {
  const p = parseOpts(inv.args, { short: 'qft' });
  if (has(p, '-l', '-d', '-r', '-c')) return; // list, remove, show jobs
  inv.an.opaque(`${inv.cmd} schedules commands to run later`);
  for (const f of values(p, '-f')) inv.an.read(f, inv.scope);
  if (inv.io.script !== undefined) inv.an.runScript(inv.io.script, inv.scope, `${inv.cmd} job`);
});

register(CORE, 'screen', (inv) => {
  const p = parseOpts(inv.args, { short: 'cehpsStTX', posix: true });
  if (has(p, '-X')) inv.an.opaque('screen -X sends commands to a session');
  if (p.rest.length) runChild(inv, p.rest);
  else inv.an.pushCommand('screen');
}, true);

register(CORE, 'tmux', (inv) => {
  const words = inv.args;
  const sub = words.find((w) => !w.text.startsWith('-'));
  if (!sub) return;
  if (/^(send-keys|send|run-shell|run|source-file|source|pipe-pane|pipep|if-shell|if|command-prompt|confirm-before)$/.test(sub.text)) {
    inv.an.opaque(`tmux ${sub.text} runs or types commands`);
    return;
  }
  if (/^(new-session|new|new-window|neww|split-window|splitw|respawn-pane|respawnp|respawn-window|respawnw)$/.test(sub.text)) {
    // The last operand, if any, is a shell command.
    const rest = words.slice(words.indexOf(sub) + 1);
    const p = parseOpts(rest, { short: 'ceFnstxyfl' });
    const last = p.pos[p.pos.length - 1];
    if (last && last.dynamic) inv.an.opaque('tmux command is not literal');
    else if (last) inv.an.runScript(p.pos.map((w) => w.text).join(' '), inv.scope, 'tmux');
  }
});

register(CORE, ['gdb', 'lldb'], (inv) => {
  if (inv.args.some((w) => /^(-ex|-iex|-x|-ix|--eval-command|--init-eval-command|--command|-o|-O|-s|--one-line|--source)/.test(w.text))) {
    inv.an.opaque(`${inv.cmd} runs debugger commands given on the command line`);
  }
  genericReads(inv, inv.args);
});

register(CORE, 'systemd-run', (inv) => {
  inv.an.opaque('systemd-run starts the command as a separate service');
  const p = parseOpts(inv.args, { short: 'HMpEu', long: ['unit', 'property', 'setenv', 'description', 'slice', 'on-calendar', 'on-active', 'on-boot', 'uid', 'gid', 'nice', 'working-directory', 'machine', 'host'], posix: true });
  runChild(inv, p.rest);
}, true);

// ------------------------------------------------------------------------------------------
// Shells and interpreters.

const SHELLS = ['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'rbash', 'yash', 'fish', 'csh', 'tcsh', 'posh'];

/** Script paths that are really standard input. */
const STDIN_FILES = new Set(['-', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

function shellFromStdin(inv: Inv, label: string): void {
  if (inv.io.stdin === 'pipe' || inv.io.stdin === 'heredoc') {
    inv.an.opaque(`${label} reads its script from stdin`);
    if (inv.io.script !== undefined) inv.an.runScript(inv.io.script, inv.scope, `${label} script from a heredoc`);
  }
}

register(CORE, SHELLS, (inv) => {
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
function scriptFile(inv: Inv, script: WordValue, args: readonly WordValue[], scope: Scope = inv.scope): void {
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

register(CORE, ['python', 'pypy'], (inv) => {
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
  if (mod === 'pip') return NET_COMMANDS.get('pip')!.fn({ ...inv, cmd: 'pip', args: rest });
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

register(CORE, ['node', 'nodejs'], (inv) => {
  const args = inv.args;
  const valued = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions', '--input-type', '--title', '--stack-size', '--max-old-space-size', '--inspect-port', '--env-file', '--env-file-if-exists', '--redirect-warnings', '--watch-path']);
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (w.dynamic && !t.startsWith('-')) return scriptFile(inv, w, args.slice(i + 1));
    if (t === '-') return programFromStdin(inv);
    if (t === '-e' || t === '--eval' || t === '-p' || t === '--print' || t === '-pe' || t === '-ep' || t.startsWith('--eval=') || t.startsWith('--print=')) {
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

register(CORE, ['perl', 'ruby'], (inv) => {
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

register(CORE, 'php', (inv) => {
  const p = parseOpts(inv.args, { short: 'rBRFEfcdSzt', long: ['run', 'process-begin', 'process-code', 'process-file', 'process-end', 'file', 'php-ini', 'define', 'server', 'zend-extension', 'docroot'] });
  if (has(p, '-r', '--run', '-B', '-R', '-E', '--process-begin', '--process-code', '--process-end')) return inline(inv, '-r');
  const server = lastValue(p, '-S', '--server');
  if (server) {
    // `php -S HOST:PORT [-t DOCROOT]`: serves (and runs) the files below the document root.
    if (server.dynamic) inv.an.opaque('php -S address is not literal');
    const m = /^(.*):(\d+)$/.exec(server.text);
    serveFiles(inv, 'php -S', lastValue(p, '-t', '--docroot') ?? DOT, server.dynamic ? server : literalWord(m ? m[1]! : server.text), m ? m[2]! : '');
  }
  for (const f of values(p, '-f', '--file', '-F', '--process-file')) inv.an.read(f, inv.scope);
  if (p.pos[0]) scriptFile(inv, p.pos[0], p.pos.slice(1));
  else if (!has(p, '-f', '--file', '-S', '--server', '-v', '-m', '-i')) programFromStdin(inv);
});

register(CORE, ['lua', 'luajit', 'osascript', 'Rscript', 'rscript', 'julia', 'jrunscript', 'groovy', 'scala'], (inv) => {
  const p = parseOpts(inv.args, { short: 'elsEp', long: ['eval', 'print', 'load'], posix: true });
  if (has(p, '-e', '-E', '--eval', '--print')) return inline(inv, '-e');
  if (p.rest[0]) scriptFile(inv, p.rest[0], p.rest.slice(1));
  else programFromStdin(inv);
});

register(CORE, ['tclsh', 'wish', 'expect', 'jshell', 'irb', 'ghci', 'guile', 'racket', 'sbcl'], (inv) => {
  const p = parseOpts(inv.args, { short: 'ec', posix: true });
  if (has(p, '-e', '-c')) return inline(inv, has(p, '-e') ? '-e' : '-c');
  if (p.rest[0]) scriptFile(inv, p.rest[0], p.rest.slice(1));
  else programFromStdin(inv);
});

register(CORE, 'deno', (inv) => {
  const [sub, ...rest] = inv.args;
  if (!sub) return;
  if (sub.text === 'eval' || sub.text === 'repl') return inline(inv, sub.text);
  if (['install', 'add', 'cache', 'upgrade', 'outdated', 'publish'].includes(sub.text)) inv.an.net();
  const p = parseOpts(rest, { posix: true, long: ['config', 'import-map', 'lock', 'cert', 'location', 'env-file', 'allow-read', 'allow-write'] });
  const target = p.rest[0] ?? (sub.text.startsWith('-') || ['run', 'test', 'bench', 'compile', 'check', 'fmt', 'lint', 'install'].includes(sub.text) ? undefined : sub);
  if (target) {
    if (/^https?:\/\//.test(target.text)) inv.an.netWord(target, 'deno');
    else inv.an.read(target, inv.scope);
  }
});

register(CORE, 'awk', awk);
register(CORE, ['gawk', 'mawk', 'nawk'], awk);

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
  const p = parseOpts(inv.args, { short: 'fvFiElLeW', shortOpt: 'odp', long: ['file', 'assign', 'field-separator', 'include', 'load', 'source', 'exec'], flags: ['pretty-print', 'dump-variables', 'profile', 'sandbox', 'posix', 'traditional', 'lint', 'characters-as-bytes', 'bignum', 'optimize', 'no-optimize', 're-interval', 'copyright', 'version', 'help', 'usage'] });
  const progFiles = values(p, '-f', '--file', '-E', '--exec');
  const sources = values(p, '-e', '--source');
  // A program file is read like any script file (the command table leaves `-f` unjudged: what
  // the program does is not seen); a library it includes (found on AWKPATH) or an extension it
  // loads (native code) is not known here.
  for (const f of progFiles) an.read(f, scope);
  const includes = values(p, '-i', '--include');
  const inPlace = includes.some((w) => w.text === 'inplace' || w.text === 'inplace.awk');
  if (includes.some((w) => w.text !== 'inplace' && w.text !== 'inplace.awk') || has(p, '-l', '--load')) an.opaque(`${inv.cmd} loads an awk library or extension`);
  let files = p.pos;
  let programs = sources;
  if (progFiles.length === 0 && sources.length === 0) {
    programs = p.pos.slice(0, 1);
    files = p.pos.slice(1);
  }
  for (const prog of programs) {
    if (prog.dynamic) { an.opaque(`${inv.cmd} program is not literal`); continue; }
    const beyond = awkReachesBeyond(prog.text);
    if (beyond) an.opaque(`${inv.cmd} program ${beyond}`);
    // ENVIRON is the environment: `awk 'BEGIN{for (k in ENVIRON) print k, ENVIRON[k]}'` prints it.
    if (/\bENVIRON\b/.test(prog.text)) an.readEnvironment(`${inv.cmd} ENVIRON`);
  }
  // gawk's profile, pretty-print and variable dump go to a file (awkprof.out, awkvars.out by default).
  for (const o of p.opts) {
    const dflt = o.name === '-d' || o.name === '--dump-variables' ? 'awkvars.out' : ['-o', '-p', '--pretty-print', '--profile'].includes(o.name) ? 'awkprof.out' : undefined;
    if (dflt) an.write(o.value && o.value.text ? o.value : literalWord(dflt), scope);
  }
  for (const f of files) {
    if (!f.dynamic && ASSIGNMENT.test(f.text)) continue; // var=value operands
    if (f.text === '-' && !f.dynamic) continue;
    an.read(f, scope);
    if (inPlace) an.write(f, scope);
  }
}

register(CORE, ['open', 'xdg-open', 'gio', 'sensible-browser', 'x-www-browser'], (inv) => {
  for (const w of inv.args) {
    if (!w.dynamic && /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(w.text) && !/^file:/i.test(w.text)) inv.an.netWord(w, inv.cmd);
    else if (!w.text.startsWith('-') && w.text !== 'open') inv.an.read(w, inv.scope);
  }
});

// PowerShell Core runs on every platform.
register(CORE, ['pwsh', 'powershell'], powershell);

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

register(CORE, ['cd', 'chdir', 'set-location', 'sl'], (inv) => {
  const target = cdTarget(inv.args, inv.an.platform);
  return { ok: inv.an.chdir(inv.scope, target), fail: inv.scope };
});

register(CORE, ['pushd', 'push-location'], (inv) => {
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

register(CORE, ['popd', 'pop-location'], (inv) => {
  const ok = cloneScope(inv.scope);
  const top = ok.stack.pop();
  if (!top) return { ok: inv.scope, fail: inv.scope };
  ok.bases = top;
  return { ok, fail: inv.scope };
});

register(CORE, 'eval', (inv) => {
  inv.an.opaque('eval runs a string as code');
  if (inv.args.length && allLiteral(inv.args)) inv.an.runScript(inv.args.map((w) => w.text).join(' '), inv.scope, 'eval');
  // eval may set anything.
  const after = cloneScope(inv.scope);
  after.vars.clear();
  return { ok: after, fail: after };
});

register(CORE, ['source', '.'], (inv) => {
  const p = parseOpts(inv.args, { posix: true });
  if (p.rest[0]) scriptFile(inv, p.rest[0], p.rest.slice(1));
  // The sourced script may set any variable.
  const after = cloneScope(inv.scope);
  after.vars.clear();
  return { ok: after, fail: after };
});

register(CORE, 'trap', (inv) => {
  const args = inv.args.filter((w) => w.text !== '--');
  if (args.length < 2 || args[0]!.text.startsWith('-')) return;
  const action = args[0]!;
  if (action.dynamic) inv.an.opaque('trap action is not literal');
  else if (action.text.trim() !== '') inv.an.defer(action.text, inv.scope, 'trap');
});

register(CORE, 'alias', (inv) => {
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

register(CORE, 'read', (inv) => {
  const p = parseOpts(inv.args, { short: 'adinNptu' });
  const names = p.pos.map((w) => w.text);
  const arr = lastValue(p, '-a');
  if (arr) names.push(arr.text);
  if (names.length === 0) names.push('REPLY');
  return forgetVars(inv, names);
});

register(CORE, ['mapfile', 'readarray'], (inv) => {
  const p = parseOpts(inv.args, { short: 'dnOsuCc' });
  return forgetVars(inv, p.pos.length ? p.pos.map((w) => w.text) : ['MAPFILE']);
});

register(CORE, 'printf', (inv) => {
  const p = parseOpts(inv.args, { short: 'v', posix: true });
  const v = lastValue(p, '-v');
  if (v) return forgetVars(inv, [v.text.replace(/\[.*$/, '')]);
  const [format, ...args] = p.rest;
  const text = format && !format.dynamic && allLiteral(args) ? printfText(format.text, args.map((w) => w.text)) : undefined;
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

register(CORE, 'echo', (inv) => {
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
const PLAIN_VARIABLES = /^(PATH|HOME|USER|LOGNAME|USERNAME|SHELL|PWD|OLDPWD|LANG|LANGUAGE|LC_[A-Z]+|TERM|COLORTERM|TZ|TMPDIR|TEMP|TMP|HOSTNAME|SHLVL|DISPLAY|EDITOR|VISUAL|PAGER|XDG_[A-Z_]+|NODE_ENV|VIRTUAL_ENV|CONDA_DEFAULT_ENV|CONDA_PREFIX|JAVA_HOME|GOPATH|GOROOT|GOBIN|CARGO_HOME|RUSTUP_HOME|PYTHONPATH|NODE_PATH|NVM_DIR|CI|MANPATH|INFOPATH|PKG_CONFIG_PATH|LD_LIBRARY_PATH)$/;

/** `printenv NAME…`, `declare -p NAME…`: a dump of the environment unless every name is a plain one. */
export function printsSecrets(names: readonly WordValue[]): boolean {
  return names.length === 0 || names.some((w) => w.dynamic || !PLAIN_VARIABLES.test(w.text));
}

register(CORE, 'printenv', (inv) => {
  const p = parseOpts(inv.args, { flags: ['null', 'help', 'version'] });
  if (printsSecrets(p.pos)) inv.an.readEnvironment(p.pos.length ? `printenv ${p.pos.map((w) => w.raw).join(' ')}` : 'printenv');
});

register(CORE, 'set', (inv) => {
  // `set` alone prints every variable (the environment among them); `set -o`/`+o` print options.
  if (inv.args.length === 0) inv.an.readEnvironment('set');
});

/** ps options whose value is the next word (procps and BSD): a user list, a sort key, a format. */
const PS_VALUED_SHORT = new Set(['-C', '-G', '-g', '-p', '-q', '-s', '-t', '-U', '-u', '-o', '-O', '-k']);
const PS_VALUED_LONG = new Set(['--sort', '--cols', '--columns', '--width', '--rows', '--lines', '--pid', '--ppid', '--sid', '--tty', '--user', '--User', '--group', '--Group', '--format', '--quick-pid']);

register(CORE, ['ps'], (inv) => {
  // BSD-style letters (`ps eww`, `ps auxe`) with `e`, and macOS `ps -e`/`-E`, print each process's environment.
  // The word after an option that takes a value (`-u $(id -u)`, `--sort size`, BSD `o pid,comm`) is its value, not letters.
  let bsd = false;
  let unknown = false;
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (w.dynamic) { unknown = true; continue; }
    const t = w.text;
    if (PS_VALUED_SHORT.has(t) || PS_VALUED_LONG.has(t)) { i++; continue; }
    if (/^[a-zA-Z]+$/.test(t)) {
      if (t.includes('e')) bsd = true;
      if (/[oOkptUg]$/.test(t)) i++;
    }
  }
  const mac = inv.an.platform === 'darwin' && args.some((w) => !w.dynamic && /^-[a-zA-Z]*[eE]/.test(w.text));
  if (bsd || mac || unknown) inv.an.readEnvironment(`ps ${args.map((w) => w.raw).join(' ')}`);
});

register(CORE, ['shopt', 'setopt'], (inv) => {
  // `shopt -s dotglob` (zsh: `setopt globdots`) lets `*` match names that start with a dot.
  if (inv.args.some((w) => w.dynamic || /^(dotglob|glob_?dots)$/i.test(w.text)) && (inv.cmd === 'setopt' || inv.args.some((w) => w.text === '-s'))) inv.an.dotglob = true;
});

register(CORE, 'let', (inv) => forgetVars(inv, inv.args.map((w) => /^[A-Za-z_]\w*/.exec(w.text)?.[0] ?? '').filter(Boolean)));

register(CORE, 'getopts', (inv) => forgetVars(inv, inv.args.slice(1, 2).map((w) => w.text)));

/** Commands that take no file arguments: nothing to report beyond their name. */
const NO_FILE_ARGS = [
  'true', 'false', ':', 'pwd', 'whoami', 'date', 'export', 'sleep', 'kill', 'pkill', 'killall', 'exit',
  'return', 'shift', 'unset', 'unalias', 'type', 'which', 'whereis', 'hash', 'test', '[', '[[', 'basename',
  'dirname', 'seq', 'yes', 'expr', 'id', 'groups', 'uname', 'hostname', 'uptime', 'clear', 'reset', 'history', 'jobs',
  'fg', 'bg', 'wait', 'disown', 'ulimit', 'umask', 'tput', 'stty', 'nproc', 'logname', 'tty', 'users',
  'who', 'w', 'getconf', 'locale', 'sync', 'local', 'declare', 'typeset', 'readonly', 'caller',
  'compgen', 'complete', 'dirs', 'enable', 'help', 'logout', 'suspend', 'times', 'break', 'continue', 'free', 'top',
  'htop', 'lsof', 'cal', 'bc', 'dc', 'factor', 'numfmt', 'tr', 'usleep', 'wall', 'hostnamectl', 'timedatectl',
  'df', 'lsblk', 'lscpu', 'lsusb', 'lspci', 'vmstat', 'iostat', 'renice', 'write-output', 'write-host', 'clear-host',
];
register(CORE, NO_FILE_ARGS.filter((n) => !CORE.has(n)), () => undefined);

// Commands whose knowledge is data only (security/shell/operands/, `handler: data`). A name with code
// too would be two answers to one question: refused at load.
for (const entry of new Set(operandEntries().values())) {
  if (entry.handler !== 'data') continue;
  for (const n of entry.names) if (CORE.has(n) || FILE_COMMANDS.has(n) || NET_COMMANDS.has(n)) throw new OperandTableError(`operand table: \`${n}\` has a data entry and a code handler`);
  register(CORE, entry.names, dataHandler(entry));
}

/** Which registry a command name is looked up in: the POSIX one, cmd.exe's (Windows only), or PowerShell's cmdlets. */
export type CommandRegistry = 'posix' | 'cmd' | 'powershell';

/** Every registered command name per registry (the architecture test checks each has data and examples). */
export function registeredCommandNames(): ReadonlyMap<CommandRegistry, readonly string[]> {
  const posix = new Set([...CORE.keys(), ...FILE_COMMANDS.keys(), ...NET_COMMANDS.keys()]);
  return new Map<CommandRegistry, readonly string[]>([
    ['posix', [...posix].sort()],
    ['cmd', [...WIN_COMMANDS.keys()].sort()],
    ['powershell', [...PS_CMDLETS.keys()].sort()],
  ]);
}
