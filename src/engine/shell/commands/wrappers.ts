// Wrappers: commands that run another command (privileges, scheduling, sandboxes, tracing, terminals).
import type { Analyzer } from '../analyze';
import { has, lastValue, parseOpts, values } from '../options';
import type { Io, Scope } from '../state';
import { literalWord, unknownWord, sliceWord, type WordValue } from '../words';
import { DOT, allLiteral, genericReads, proxyAddress, register, type Inv, type Registry } from '../helpers';
import { ASSIGNMENT, serveFiles, shellFromStdin } from './shared';

export const WRAPPERS: Registry = new Map();

// ------------------------------------------------------------------------------------------
// Wrappers: they run another command with (mostly) the same arguments.

/** Environment variables that make programs load or run other code. */
/** Variables that name code a program runs (preloads, editors, pagers, helpers, `*_COMMAND`). */
const DANGEROUS_ENV =
  /^(LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|DYLD_INSERT_LIBRARIES|DYLD_LIBRARY_PATH|BASH_ENV|ENV|PROMPT_COMMAND|PERL5OPT|PERL5LIB|RUBYOPT|PYTHONSTARTUP|GIT_SSH|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_ASKPASS|SSH_ASKPASS|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_PAGER|GIT_EXEC_PATH|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_DIR|GIT_WORK_TREE|GIT_INDEX_FILE|GIT_COMMON_DIR|GIT_OBJECT_DIRECTORY|GIT_ALTERNATE_OBJECT_DIRECTORIES|PAGER|MANPAGER|EDITOR|VISUAL|SYSTEMD_EDITOR|SUDO_EDITOR|BROWSER|LESSOPEN|LESSCLOSE|RSYNC_RSH|CVS_RSH|BORG_RSH|RIPGREP_CONFIG_PATH|AWKPATH|AWKLIBPATH|BAT_PAGER|BAT_CONFIG_PATH|BAT_CONFIG_DIR|SHELLCHECK_OPTS|ACK_OPTIONS|ACKRC|ACK_PAGER|ACK_PAGER_COLOR|RUFF_CACHE_DIR|RUFF_OUTPUT_FILE|TAR_OPTIONS|TAPE|[A-Z0-9_]*_COMMAND|[A-Z0-9_]*_CMD|[A-Z0-9_]*PASSCOMMAND)$/;

/**
 * Does assigning `value` to the environment variable `name` make programs run other code?
 * NODE_OPTIONS only when it preloads modules (`--max-old-space-size` is everyday use).
 */
export function isDangerousEnv(name: string, value: WordValue | undefined): boolean {
  if (DANGEROUS_ENV.test(name)) return true;
  if (name === 'NODE_OPTIONS')
    return !value || value.dynamic || /(^|\s)(-r|--require|--import|--loader|--experimental-loader)(\s|=|$)/.test(value.text);
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

register(
  WRAPPERS,
  'sudo',
  (inv) => {
    const p = parseOpts(inv.args, {
      short: 'ugpCDhrtTUc',
      long: ['user', 'group', 'prompt', 'close-from', 'chdir', 'host', 'role', 'type', 'other-user', 'command-timeout', 'login-class'],
      flags: [
        'edit',
        'login',
        'shell',
        'preserve-env',
        'non-interactive',
        'stdin',
        'background',
        'list',
        'validate',
        'reset-timestamp',
        'remove-timestamp',
        'set-home',
        'askpass',
        'bell',
        'preserve-groups',
        'version',
        'help',
      ],
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
  },
  true,
);

register(
  WRAPPERS,
  'doas',
  (inv) => {
    const p = parseOpts(inv.args, { short: 'uC', posix: true });
    for (const c of values(p, '-C')) inv.an.read(c, inv.scope);
    if (p.rest.length === 0) {
      inv.an.pushCommand('doas');
      if (has(p, '-s')) shellFromStdin(inv, 'doas -s');
      return;
    }
    runChild(inv, p.rest);
  },
  true,
);

register(
  WRAPPERS,
  'env',
  (inv) => {
    const p = parseOpts(inv.args, {
      short: 'uCSP',
      long: ['unset', 'chdir', 'split-string', 'argv0'],
      flags: [
        'ignore-environment',
        'null',
        'debug',
        'list-signal-handling',
        'block-signal',
        'default-signal',
        'ignore-signal',
        'help',
        'version',
      ],
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
  },
  true,
);

register(
  WRAPPERS,
  'xargs',
  (inv) => {
    const p = parseOpts(inv.args, {
      short: 'adEILnPs',
      shortOpt: 'eil',
      long: ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
      flags: [
        'null',
        'interactive',
        'no-run-if-empty',
        'verbose',
        'exit',
        'open-tty',
        'show-limits',
        'replace',
        'eof',
        'max-lines',
        'help',
        'version',
      ],
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
    const text = fromFile
      ? undefined
      : inv.io.stdin === 'pipe' && inv.io.feed?.kind === 'text'
        ? inv.io.feed.text
        : inv.io.stdin === 'heredoc'
          ? inv.io.script
          : undefined;
    const delimiter = has(p, '-0', '--null') ? '\0' : lastValue(p, '-d', '--delimiter');
    const items =
      text === undefined
        ? undefined
        : xargsItems(text, delimiter, replace !== undefined || has(p, '-L', '--max-lines') || p.opts.some((o) => o.name === '-l'));
    if (items !== undefined) {
      if (replace === undefined) runChild(inv, [...rest, ...items.map(literalWord)], inv.scope, { stdin: 'tty' });
      else
        for (const item of items)
          runChild(
            inv,
            rest.map((w) => (!w.dynamic && w.text.includes(replace!) ? literalWord(w.text.split(replace!).join(item)) : w)),
            inv.scope,
            { stdin: 'tty' },
          );
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
        if (inv.an.effectCount() > before)
          inv.an.opaque(`xargs passes the names ${feed.by} lists to ${verb || 'a command'}, which changes files`);
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
    if (inv.an.effectCount() > before || WRITE_VERBS.has(verb))
      inv.an.opaque(`xargs passes file names from its input to ${verb || 'a command'}`);
  },
  true,
);

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
    items = text
      .split('\n')
      .map((l) => l.replace(/^[ \t]+/, ''))
      .filter((l) => l !== '');
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
  'rm',
  'rmdir',
  'unlink',
  'shred',
  'mv',
  'cp',
  'install',
  'ln',
  'tee',
  'dd',
  'truncate',
  'touch',
  'mkdir',
  'chmod',
  'chown',
  'chgrp',
  'chattr',
  'setfacl',
  'rsync',
  'scp',
  'patch',
]);

register(
  WRAPPERS,
  'nohup',
  (inv) => {
    // nohup appends output to ./nohup.out when stdout is a terminal; agents' stdout is a pipe.
    runChild(inv, inv.args[0]?.text === '--' ? inv.args.slice(1) : inv.args);
  },
  true,
);

register(
  WRAPPERS,
  'time',
  (inv) => {
    const p = parseOpts(inv.args, {
      short: 'fo',
      long: ['format', 'output'],
      flags: ['append', 'verbose', 'portability', 'quiet'],
      posix: true,
    });
    for (const o of values(p, '-o', '--output')) inv.an.write(o, inv.scope);
    if (p.rest.length === 0) return;
    // `time` is a shell keyword: the timed command runs in this shell (functions, cd).
    return inv.an.runArgv(p.rest, inv.scope, inv.io);
  },
  true,
);

register(
  WRAPPERS,
  'command',
  (inv) => {
    const p = parseOpts(inv.args, { posix: true });
    if (has(p, '-v', '-V')) {
      inv.an.pushCommand('command');
      return;
    }
    if (p.rest.length === 0) return;
    return inv.an.runArgv(p.rest, inv.scope, inv.io, { noFunctions: true });
  },
  true,
);

register(
  WRAPPERS,
  'builtin',
  (inv) => {
    if (inv.args.length === 0) return;
    return inv.an.runArgv(inv.args, inv.scope, inv.io, { noFunctions: true });
  },
  true,
);

register(
  WRAPPERS,
  'exec',
  (inv) => {
    const p = parseOpts(inv.args, { short: 'a', posix: true });
    if (p.rest.length === 0) {
      inv.an.pushCommand('exec');
      return;
    }
    return inv.an.runArgv(p.rest, inv.scope, inv.io, { noFunctions: true });
  },
  true,
);

register(
  WRAPPERS,
  'coproc',
  (inv) => {
    runChild(inv, inv.args);
  },
  true,
);

register(
  WRAPPERS,
  'watch',
  (inv) => {
    const p = parseOpts(inv.args, {
      short: 'nq',
      long: ['interval', 'equexit'],
      flags: [
        'differences',
        'no-title',
        'beep',
        'errexit',
        'chgexit',
        'color',
        'no-color',
        'exec',
        'precise',
        'no-linewrap',
        'help',
        'version',
      ],
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
  },
  true,
);

// `entr [-acdnprsz] UTILITY [ARG…] < LIST`: runs the utility each time a listed file changes; with `-s` the
// utility is a shell command line.
register(
  WRAPPERS,
  'entr',
  (inv) => {
    const p = parseOpts(inv.args, { posix: true });
    if (p.rest.length === 0) return void inv.an.pushCommand('entr');
    if (has(p, '-s')) {
      const line = p.rest[0]!;
      if (line.dynamic) inv.an.opaque('entr -s command is not literal');
      else inv.an.runScript(line.text, inv.scope, 'entr -s');
      return;
    }
    runChild(inv, p.rest);
  },
  true,
);

register(WRAPPERS, 'run-parts', (inv) => {
  if (inv.args.some((w) => w.text === '--test' || w.text === '--list')) return;
  inv.an.opaque('run-parts runs every program in a directory');
});

register(WRAPPERS, 'start-stop-daemon', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'xanpuUcgrdNPkIsR',
    long: [
      'exec',
      'startas',
      'name',
      'pidfile',
      'user',
      'chuid',
      'group',
      'chroot',
      'chdir',
      'nicelevel',
      'procsched',
      'iosched',
      'umask',
      'signal',
      'retry',
      'output',
      'notify-timeout',
    ],
    flags: [
      'start',
      'stop',
      'status',
      'test',
      'oknodo',
      'quiet',
      'verbose',
      'background',
      'make-pidfile',
      'remove-pidfile',
      'notify-await',
      'no-close',
    ],
  });
  if (!p.opts.some((o) => o.name === '-S' || o.name === '--start')) return;
  const prog = p.opts.find((o) => o.name === '-a' || o.name === '--startas' || o.name === '-x' || o.name === '--exec')?.value;
  if (!prog) return;
  if (p.opts.some((o) => o.name === '-r' || o.name === '--chroot'))
    inv.an.opaque('start-stop-daemon --chroot runs the program under another root directory');
  runChild(inv, [prog, ...p.afterDashDash]);
});

register(
  WRAPPERS,
  'perf',
  (inv) => {
    const [sub, ...args] = inv.args;
    if (!sub || sub.dynamic || !['record', 'stat', 'trace', 'c2c', 'mem', 'kvm', 'sched', 'lock'].includes(sub.text)) {
      inv.an.pushCommand('perf');
      return;
    }
    const p = parseOpts(args, {
      short: 'eocpFtCGjumIrLN',
      long: [
        'event',
        'output',
        'cgroup',
        'pid',
        'freq',
        'tid',
        'cpu',
        'call-graph',
        'mmap-pages',
        'repeat',
        'delay',
        'interval-print',
        'field-separator',
        'filter',
        'uid',
      ],
      posix: true,
    });
    if (p.opts.some((o) => ['-p', '--pid', '-t', '--tid'].includes(o.name))) {
      inv.an.pushCommand('perf');
      return;
    }
    for (const o of p.opts) if ((o.name === '-o' || o.name === '--output') && o.value) inv.an.write(o.value, inv.scope);
    runChild(inv, p.rest);
  },
  true,
);

register(
  WRAPPERS,
  'flock',
  (inv) => {
    const p = parseOpts(inv.args, { short: 'wEc', long: ['timeout', 'conflict-exit-code', 'command'], posix: true });
    const [lock, ...afterLock] = p.rest;
    let rest = afterLock;
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
  },
  true,
);

register(
  WRAPPERS,
  ['su', 'runuser'],
  (inv) => {
    const p = parseOpts(inv.args, {
      short: 'cgGsuw',
      long: ['command', 'group', 'supp-group', 'shell', 'user', 'whitelist-environment', 'session-command'],
      flags: ['login', 'preserve-environment', 'pty', 'fast'],
    });
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
  },
  true,
);

register(WRAPPERS, 'httpd', (inv) => {
  // busybox httpd: `-h DIR` (default: .), `-p [IP:]PORT` (default: every interface, port 80).
  const p = parseOpts(inv.args, { short: 'hpcruPi', flags: [] });
  if (!has(p, '-h', '-p', '-f') && p.pos.length) return void genericReads(inv, inv.args);
  const listen = lastValue(p, '-p');
  const m = listen && !listen.dynamic ? /^(?:(.*):)?(\d+)$/.exec(listen.text) : null;
  for (const c of values(p, '-c')) inv.an.read(c, inv.scope);
  serveFiles(inv, 'httpd', lastValue(p, '-h') ?? DOT, listen?.dynamic ? listen : m?.[1] ? literalWord(m[1]) : undefined, m?.[2] ?? '80');
});

register(
  WRAPPERS,
  'chroot',
  (inv) => {
    const p = parseOpts(inv.args, { long: ['userspec', 'groups'], flags: ['skip-chdir'], posix: true });
    inv.an.pushCommand('chroot');
    inv.an.opaque('chroot runs the command under another root directory');
    runChild(inv, p.rest.slice(1));
  },
  true,
);

register(
  WRAPPERS,
  ['strace', 'ltrace'],
  (inv) => {
    const p = parseOpts(inv.args, { short: 'abeEIoOpPsSuUX', long: ['output'], posix: true });
    for (const o of values(p, '-o', '--output')) {
      // strace: an output name starting with `|` or `!` is a shell command the trace is piped to.
      if (inv.cmd === 'strace' && /^[|!]/.test(o.dynamic ? o.prefix : o.text)) {
        if (o.dynamic) inv.an.opaque('strace -o pipes the trace to a command that is not literal');
        else inv.an.runScript(o.text.slice(1), inv.scope, 'strace -o');
      } else inv.an.write(o, inv.scope);
    }
    if (p.rest.length === 0) {
      inv.an.pushCommand(inv.cmd);
      return;
    }
    runChild(inv, p.rest);
  },
  true,
);

register(WRAPPERS, 'script', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'cEIOBTm',
    long: ['command', 'echo', 'log-in', 'log-out', 'log-io', 'log-timing', 'logging-format'],
    flags: ['append', 'flush', 'force', 'quiet', 'return'],
  });
  for (const f of [...values(p, '-I', '-O', '-B', '-T', '--log-in', '--log-out', '--log-io', '--log-timing'), ...p.pos.slice(0, 1)])
    inv.an.write(f, inv.scope);
  if (p.pos.length === 0) inv.an.write(literalWord('typescript'), inv.scope);
  const c = lastValue(p, '-c', '--command');
  if (c) {
    if (c.dynamic) inv.an.opaque('script -c command is not literal');
    else inv.an.runScript(c.text, inv.scope, 'script -c');
  }
});

register(WRAPPERS, ['at', 'batch'], (inv) => {
  const p = parseOpts(inv.args, { short: 'qft' });
  if (has(p, '-l', '-d', '-r', '-c')) return; // list, remove, show jobs
  inv.an.opaque(`${inv.cmd} schedules commands to run later`);
  for (const f of values(p, '-f')) inv.an.read(f, inv.scope);
  if (inv.io.script !== undefined) inv.an.runScript(inv.io.script, inv.scope, `${inv.cmd} job`);
});

register(WRAPPERS, 'tmux', (inv) => {
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

/**
 * gdb and lldb options by what their value is: debugger commands (a line, or a file of them) make the run opaque;
 * program, symbol and core files are read; the rest (a process id, a directory, a name, an architecture) name no file.
 */
const DEBUGGER_OPTIONS: Record<'gdb' | 'lldb', { commands: string[]; commandFiles: string[]; files: string[]; other: string[] }> = {
  gdb: {
    commands: ['-ex', '-iex', '-eval-command', '--eval-command', '-init-eval-command', '--init-eval-command'],
    commandFiles: ['-x', '-ix', '-command', '--command', '-init-command', '--init-command'],
    files: ['-s', '-symbols', '--symbols', '-e', '-exec', '--exec', '-se', '-c', '-core', '--core'],
    other: ['-p', '-pid', '--pid', '-d', '-directory', '--directory', '-cd', '--cd', '-tty', '--tty', '-b', '-l'],
  },
  lldb: {
    commands: ['-o', '-O', '-k', '-K', '--one-line', '--one-line-before-file', '--one-line-on-crash'],
    commandFiles: ['-s', '-S', '--source', '--source-before-file', '--source-on-crash'],
    files: ['-c', '--core', '-f', '--file'],
    other: ['-p', '--attach-pid', '-n', '--attach-name', '-a', '--arch', '-l', '--script-language'],
  },
};

register(WRAPPERS, ['gdb', 'lldb'], (inv) => {
  const spec = DEBUGGER_OPTIONS[inv.cmd as 'gdb' | 'lldb'];
  const rest: WordValue[] = [];
  let runsCommands = false;
  for (let i = 0; i < inv.args.length; i++) {
    const w = inv.args[i]!;
    // `gdb --args PROG ARG…`: the program and its own arguments, as for any program.
    if (!w.dynamic && w.text === '--args') {
      rest.push(...inv.args.slice(i + 1));
      break;
    }
    const eq = w.dynamic ? -1 : w.text.indexOf('=');
    const name = eq > 0 ? w.text.slice(0, eq) : w.text;
    const kind = spec.commands.includes(name)
      ? 'commands'
      : spec.commandFiles.includes(name)
        ? 'commandFiles'
        : spec.files.includes(name)
          ? 'files'
          : spec.other.includes(name)
            ? 'other'
            : undefined;
    if (w.dynamic || !kind) {
      rest.push(w);
      continue;
    }
    const value = eq > 0 ? sliceWord(w, eq + 1) : inv.args[++i];
    if (kind === 'commands' || kind === 'commandFiles') runsCommands = true;
    if (value && (kind === 'commandFiles' || kind === 'files')) inv.an.read(value, inv.scope);
  }
  if (runsCommands) inv.an.opaque(`${inv.cmd} runs debugger commands given on the command line`);
  genericReads(inv, rest);
});
