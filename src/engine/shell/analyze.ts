// Static analysis of a shell command line: which files it reads, writes and deletes, whether it
// reaches the network, and whether its effects can be known at all. Walks the tree-sitter-bash
// syntax tree (never regexes the command line). Pure: no Node or VS Code imports.
import type { Node, Tree } from 'web-tree-sitter';
import type { Platform } from '../types';
import type { ClockPort, FileSystemPort } from '../ports';
import { isAbsolute, joinPath, normalizePath } from '../paths';
import { GlobExpander, unescapeGlob } from './expand';
import { WIN_BACKSLASH, evalSingle, evalWord, literalWord, winUnmap, type WordEnv, type WordValue } from './words';
import { dispatch } from './commands';
import { printsSecrets } from './commands/builtins';
import { isDangerousEnv, proxyEnv } from './commands/wrappers';
import { clip } from './helpers';
import { cloneScope, mergeScopes, same, type Base, type Feed, type Io, type Outcome, type Scope } from './state';

export interface ShellParser {
  parse(text: string): Tree | null;
}

export interface ShellContext {
  cwd?: string;
  home: string;
  platform: Platform;
  /**
   * The file system, for what a command names only indirectly: the entries a glob read target
   * expands to, a patch's files, a repository's configured remotes. Without it those stay unknown
   * (glob reads are reported by their literal directory, patches and pushes as before).
   */
  fs?: FileSystemPort;
  /** The time now, for tests of a file's age (`find -mtime +30 -delete`); without it they are unknown. */
  clock?: ClockPort;
}

export interface ShellAnalysis {
  /** Command names actually run, in order, after unwrapping wrappers; basename only. */
  commands: string[];
  /** Paths the command reads (deduplicated, sorted). */
  reads: string[];
  /** Paths it writes, creates, truncates, chmods/chowns or links (deduplicated, sorted). */
  writes: string[];
  /** Paths it removes (deduplicated, sorted). */
  deletes: string[];
  /**
   * Globs over one directory's entries that it writes or removes (`rm *.log`, `sed -i … src/*.md`):
   * the directory (absolute) and the pattern for the names in it. A glob anywhere else in a path
   * puts its literal directory in `writes`/`deletes` instead.
   */
  globs: GlobTarget[];
  /** Reaches the network. */
  network: boolean;
  /** Some of that network use has no target the analysis can name (`npm install`, `git fetch` of a configured remote). */
  unnamedNetwork: boolean;
  /** The command line sets PATH (a prefix assignment, `export PATH=…`, `PATH=…`): command names may name other programs. */
  searchPathChanged: boolean;
  /**
   * The command prints its own environment (`printenv`, `env`, `set`, `ps e`): read as ENVIRONMENT_PSEUDO_PATH.
   * `environmentByPath`: it also names an environ file itself (`cat /proc/1/environ`), which is another process's.
   */
  printsEnvironment: boolean;
  environmentByPath: boolean;
  /**
   * Directories read below (a subset of `reads`): `contents` when every file below is read
   * (`grep -r`, `rg`, `find … -exec`), `names` when every directory below is listed (`ls -R`,
   * `find`, `tree`, `rg --files`). Sorted by path.
   */
  searches: SearchTarget[];
  /** Literal URLs / host targets given to network commands (for the SSRF check). */
  urls: string[];
  /** The subset of `urls` that remote-login tools (ssh, scp, sftp, rsync over ssh) connect to. */
  logins: string[];
  /**
   * Ways data leaves the machine that are not an address to check for SSRF: a server listening on
   * every interface (`python -m http.server`, `nc -l`), one line each. IFC counts them as network.
   */
  sinks: string[];
  /**
   * Every command run, with its arguments as the analysis resolved them (`args` undefined when a
   * handler records only the name: `sudo`, `env`, `command -v`). What the command table
   * (security/shell/commands/*.yaml) judges. Wrappers that change nothing (`timeout`, `nice`, `xargs`)
   * do not appear; the command they run does.
   */
  invocations: Invocation[];
  /**
   * Effects that are not an attack but need a look before they run (`git clean -x` removes ignored files
   * such as .env; one plain `git config` key in a protected file): at least Tier 2, one sentence each.
   */
  reviews: string[];
  /** Effects that need a human (a new key in ~/.ssh): at least Tier 3, one sentence each. */
  approvals: string[];
  /** Effects cannot be fully known statically. */
  opaque: boolean;
  /** One short sentence per reason. */
  opaqueReasons: string[];
  errors: string[];
}

export type { Base, Scope, Outcome, Io, Feed } from './state';

/** One command as it runs: its name (basename) and arguments (expanded text; `dynamic` when some could not be). */
export interface Invocation {
  readonly name: string;
  readonly args?: readonly string[];
  readonly dynamic?: boolean;
  /** A wrapper (`timeout`, `sudo`, `nice`): the command it runs is recorded after it. */
  readonly wrapper?: boolean;
  /** The command word as written when it names a file (`./bin/ls`, `/usr/bin/ls`), not a name PATH resolves. */
  readonly path?: string;
}

/**
 * The pseudo-path that stands for the environment of the processes a command can see: `env`,
 * `printenv`, `set`, `export -p`, `ps e` print every secret it holds (the agent's API keys). The
 * protection tables and IFC treat it, like every `/proc/PID/environ`, as a credential store.
 */
/** Bound on recorded invocations (a loop body is analysed once; this is for pathological inputs). */
const MAX_INVOCATIONS = 500;

export const ENVIRONMENT_PSEUDO_PATH = '/proc/self/environ';

/** A directory a command reads below: its files' contents, or its directories' listings. */
export interface SearchTarget {
  path: string;
  mode: 'contents' | 'names';
  /** Only entries whose base name matches one of these globs are read (`grep -r --include=*.ts`, `find -name`). */
  names?: string[];
  /**
   * Entries with a hidden component below `path` (`.env`, `.git/…`) are not read (`rg`, `ag` skip
   * them by default), unless an ignore file re-includes names (the protection check looks).
   */
  skipsHidden?: true;
}

/**
 * Entries of a directory named by a pattern: its direct entries (`rm *.log`: depth `one`), or every
 * entry below it whose name matches (`find DIR -name P -delete`: depth `tree`).
 */
export interface GlobTarget {
  access: 'write' | 'delete';
  dir: string;
  pattern: string;
  depth: 'one' | 'tree';
}

export type Access = 'read' | 'write' | 'delete';

/** Longer command lines are not parsed: they are reported opaque. */
export const MAX_COMMAND_LENGTH = 256 * 1024;
const MAX_NODES = 60_000;
const MAX_DEPTH = 200;
const MAX_NESTED_SCRIPTS = 6;

/** Device files that are never interesting as reads or writes. */
const IGNORED_DEVICES = new Set([
  '/dev/null',
  '/dev/stdout',
  '/dev/stderr',
  '/dev/stdin',
  '/dev/tty',
  '/dev/zero',
  '/dev/random',
  '/dev/urandom',
  '/dev/full',
  '/dev/fd/0',
  '/dev/fd/1',
  '/dev/fd/2',
]);
const WIN_DEVICES = /^(nul|con|\$null)$/i;

const STATEMENT_TYPES = new Set([
  'command',
  'list',
  'pipeline',
  'redirected_statement',
  'subshell',
  'compound_statement',
  'negated_command',
  'if_statement',
  'while_statement',
  'for_statement',
  'c_style_for_statement',
  'case_statement',
  'function_definition',
  'variable_assignment',
  'variable_assignments',
  'declaration_command',
  'unset_command',
  'test_command',
]);

/** Keeps the result small when a huge command repeats the same mistake thousands of times. */
const MAX_MESSAGES = 100;
const MAX_URLS = 500;
/** Most values a `for` loop is walked with one by one; a longer list leaves the variable unknown. */
const MAX_LOOP_VALUES = 32;
/** Largest file read through the port to learn what a command does (a patch, a repository's config). */
export const MAX_TEXT_BYTES = 1024 * 1024;

export class Analyzer {
  readonly platform: Platform;
  readonly commands: string[] = [];
  private readonly invocationList: Invocation[] = [];
  private readonly reviewList = new Set<string>();
  private readonly anonymousNet = new Set<number>();
  private pathChanged = false;
  private envPrinted = false;
  private envByPath = false;
  private readonly namedNet = new Set<number>();
  private readonly approvalList = new Set<string>();
  private readonly reads = new Set<string>();
  private readonly writes = new Set<string>();
  private readonly deletes = new Set<string>();
  private readonly globList = new Map<string, GlobTarget>();
  private readonly searchList = new Map<string, SearchTarget>();
  private readonly urlList = new Set<string>();
  private readonly loginList = new Set<string>();
  private readonly sinkList = new Set<string>();
  private readonly expander: GlobExpander | undefined;
  /** `shopt -s dotglob` (or GLOBIGNORE) seen: `*` also matches names that start with a dot. */
  dotglob = false;
  /** Remotes added earlier on this command line (`git remote add NAME URL`): their URL was reported there. */
  readonly addedRemotes = new Set<string>();
  /** What the command being walked writes to its stdout, when a handler knows it (see Feed). */
  private output: Feed | undefined;
  private readonly reasons = new Set<string>();
  private readonly errorList = new Set<string>();
  private network = false;
  private nodes = 0;
  private depth = 0;
  private nested = 0;
  private stopped = false;
  /** Functions currently being expanded (no recursion). */
  private readonly calling = new Set<string>();

  constructor(
    private readonly parser: ShellParser,
    readonly ctx: ShellContext,
  ) {
    this.platform = ctx.platform;
    this.expander = ctx.fs && ctx.platform !== 'win32' ? new GlobExpander(ctx.fs) : undefined;
  }

  // ------------------------------------------------------------------ results

  result(): ShellAnalysis {
    const sort = (s: Set<string>) => [...s].sort();
    return {
      commands: this.commands.slice(),
      invocations: this.invocationList.slice(),
      reads: sort(this.reads),
      writes: sort(this.writes),
      deletes: sort(this.deletes),
      globs: [...this.globList.values()],
      searches: [...this.searchList.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.mode < b.mode ? -1 : 1)),
      network: this.network,
      unnamedNetwork: [...this.anonymousNet].some((i) => !this.namedNet.has(i)),
      searchPathChanged: this.pathChanged,
      printsEnvironment: this.envPrinted,
      environmentByPath: this.envByPath,
      urls: [...this.urlList],
      logins: [...this.loginList].filter((u) => this.urlList.has(u)),
      sinks: [...this.sinkList],
      reviews: [...this.reviewList],
      approvals: [...this.approvalList],
      opaque: this.reasons.size > 0,
      opaqueReasons: [...this.reasons],
      errors: [...this.errorList],
    };
  }

  opaque(reason: string): void {
    if (this.reasons.size < MAX_MESSAGES) this.reasons.add(reason);
  }

  /**
   * The command line sets PATH: a command name may then run a program of the project (`PATH=./bin:$PATH
   * ls`), so no invocation is what its name says. The table judges none of them.
   */
  searchPathChanged(): void {
    this.pathChanged = true;
  }

  /** An effect that needs a Tier 2 review (see ShellAnalysis.reviews). */
  review(reason: string): void {
    if (this.reviewList.size < MAX_MESSAGES) this.reviewList.add(reason);
    else this.opaque('too many effects need a review');
  }

  /** An effect that needs a human (see ShellAnalysis.approvals). */
  approval(reason: string): void {
    if (this.approvalList.size < MAX_MESSAGES) this.approvalList.add(reason);
    else this.opaque('too many effects need approval');
  }

  error(msg: string): void {
    if (this.errorList.size < MAX_MESSAGES) this.errorList.add(msg);
  }

  net(url?: string): void {
    this.network = true;
    // Per invocation: curl marks the network and then names its URL; npm only marks it.
    const at = this.invocationList.length - 1;
    if (!url) {
      this.anonymousNet.add(at);
      return;
    }
    this.namedNet.add(at);
    if (this.urlList.size < MAX_URLS) this.urlList.add(url);
    else this.opaque('the command names too many network targets to list');
  }

  /** Data leaves the machine in a way that is not an address (a server on every interface). */
  sink(what: string): void {
    this.network = true;
    if (this.sinkList.size < MAX_MESSAGES) this.sinkList.add(what);
  }

  /**
   * The command prints the environment of the processes it can see: a read of every secret in it
   * (ENVIRONMENT_PSEUDO_PATH). On Windows there is no such path: the command is opaque instead.
   */
  readEnvironment(what: string, byPath = false): void {
    if (this.platform === 'win32') this.opaque(`${what} prints the environment, which holds the agent's secrets`);
    else this.reads.add(ENVIRONMENT_PSEUDO_PATH);
    if (byPath) this.envByPath = true;
    else this.envPrinted = true;
  }

  /** The command being walked writes `feed` to its stdout (for the next command of a pipeline). */
  produce(feed: Feed): void {
    this.output = feed;
  }

  /** The text of a file through the port (bounded), or undefined when there is no port or it cannot be read. */
  readText(path: string): string | undefined {
    const fs = this.ctx.fs;
    if (!fs?.readText) return undefined;
    try {
      return fs.readText(path, MAX_TEXT_BYTES);
    } catch {
      return undefined;
    }
  }

  /** A host a remote-login tool connects to (ssh, scp, sftp, rsync over ssh). */
  login(host: string): void {
    this.net(host);
    if (this.loginList.size < MAX_URLS) this.loginList.add(host);
  }

  /** loginWord is netWord for a remote-login destination. */
  loginWord(w: WordValue, what: string): void {
    if (w.dynamic || w.text === '') this.netWord(w, what);
    else this.login(w.text);
  }

  /** A network target word: literal ones go to `urls`; an unknown one makes the command opaque. */
  netWord(w: WordValue, what: string): void {
    this.network = true;
    if (w.dynamic) this.opaque(`${what} target \`${clip(w.raw)}\` is not literal`);
    else if (w.text !== '') this.net(w.text);
  }

  /**
   * A program or script this command line runs: when an earlier part of the same line writes it
   * (`curl -o /tmp/x …; sh /tmp/x`, `echo … > a.sh && ./a.sh`), what runs is whatever was written,
   * which the analysis cannot know.
   */
  runsFile(w: WordValue, scope: Scope, what: string): void {
    if (w.dynamic || w.glob || w.text === '' || this.writes.size === 0) return;
    let paths: string[];
    try {
      paths = isAbsolute(w.text, this.platform)
        ? [normalizePath(w.text, this.platform)]
        : scope.bases.flatMap((b) => (b === null ? [] : [joinPath(b, w.text, this.platform)]));
    } catch {
      return; // an unresolvable path is reported where it is read
    }
    if (paths.some((p) => this.writes.has(p)))
      this.opaque(`${what} runs \`${clip(w.raw)}\`, which this command writes first: what it runs cannot be known`);
  }

  /** Number of distinct written and deleted paths so far (to tell whether a command added any). */
  effectCount(): number {
    return this.writes.size + this.deletes.size;
  }

  pushCommand(name: string, args?: readonly WordValue[], path?: string): void {
    this.commands.push(name);
    this.recordInvocation(name, args, false, path);
  }

  /** A wrapper that runs another command (`sudo`, `timeout`): judged on its own, not listed in `commands`. */
  recordWrapper(name: string, args: readonly WordValue[], path?: string): void {
    this.recordInvocation(name, args, true, path);
  }

  private recordInvocation(name: string, args: readonly WordValue[] | undefined, wrapper: boolean, path?: string): void {
    if (this.invocationList.length >= MAX_INVOCATIONS) {
      this.opaque('the command runs too many commands to judge each');
      return;
    }
    const base = args ? { name, args: args.map((w) => w.text), dynamic: args.some((w) => w.dynamic || w.glob) } : { name };
    this.invocationList.push({ ...base, ...(wrapper ? { wrapper: true } : {}), ...(path !== undefined ? { path } : {}) });
  }

  // ------------------------------------------------------------------ paths

  read(w: WordValue, scope: Scope): void {
    this.addPath('read', w, scope);
  }

  /**
   * A read of everything below `w` (a recursive search or listing): recorded as a read, and the
   * directory (for a glob or an expansion, the literal directory it lives in) as a search target.
   */
  readBelow(w: WordValue, scope: Scope, mode: 'contents' | 'names', names?: readonly string[], skipsHidden = false): void {
    this.read(w, scope);
    if (w.text === '' && !w.dynamic) return;
    const dir = w.dynamic || w.glob ? this.literalDir(w) : w.text;
    if (dir === null) return;
    // A glob or an expansion is searched below its literal directory: the hidden entries of the
    // part that is not known may be the very operands, so they count.
    const hiddenSkipped = skipsHidden && !w.dynamic && !w.glob;
    for (const path of this.resolveText(dir, scope)) {
      if (IGNORED_DEVICES.has(path)) continue;
      const key = `${mode}\0${path}`;
      const seen = this.searchList.get(key);
      // Two searches of one directory read what either reads: no filter wins, filters add up.
      const merged = !names || (seen && !seen.names) ? undefined : [...new Set([...(seen?.names ?? []), ...names])];
      const skips = hiddenSkipped && (!seen || seen.skipsHidden === true);
      this.searchList.set(key, { path, mode, ...(merged ? { names: merged } : {}), ...(skips ? { skipsHidden: true as const } : {}) });
    }
  }

  write(w: WordValue, scope: Scope): void {
    this.addPath('write', w, scope);
  }

  del(w: WordValue, scope: Scope): void {
    this.addPath('delete', w, scope);
  }

  addPath(kind: Access, w: WordValue, scope: Scope): void {
    if (w.dynamic || w.glob) {
      if (kind !== 'read') {
        const what = w.glob && !w.dynamic ? 'is a glob pattern' : 'is not a literal path';
        this.opaque(`${kind} target \`${clip(w.raw)}\` ${what}`);
        if (!w.dynamic && this.addGlob(kind, w.text, scope)) return;
      } else if (w.fifo) {
        return; // `<(cmd)`: the command is walked where it stands
      } else if (w.dynamic) {
        // What cannot be resolved is unknown, never "no read".
        this.opaque(`read target \`${clip(w.raw)}\` is not a literal path`);
        if (this.platform !== 'win32' && w.prefix.startsWith('/proc/') && /\/environ$/.test(w.raw.replace(/["'}]/g, '')))
          this.readEnvironment(`reading \`${clip(w.raw)}\``, true);
      } else this.readGlob(w, scope);
      // Still report the literal directory the unknown part lives in (`~/.ssh/$K` -> ~/.ssh).
      const dir = this.literalDir(w);
      if (dir !== null) this.addResolved(kind, dir, scope);
      return;
    }
    if (w.text === '') return;
    if (this.platform === 'win32' && WIN_DEVICES.test(w.text)) return;
    this.addResolved(kind, w.text, scope);
  }

  /**
   * A glob read target: expanded through the file system port like bash does (every path it names
   * on disk is read; none: the pattern itself, which bash passes on unchanged). When it cannot be
   * expanded completely it is unknown (opaque), and its literal directory is searched below.
   */
  private readGlob(w: WordValue, scope: Scope): void {
    if (!this.expander) return;
    const pattern = globPattern(w);
    for (const base of scope.bases) {
      let abs: string;
      if (pattern.startsWith('/')) abs = pattern;
      else if (base !== null && base.startsWith('/')) abs = `${base.replace(/\/+$/, '')}/${pattern}`;
      else {
        this.opaque(`read target \`${clip(w.raw)}\` is a glob with no known working directory`);
        continue;
      }
      const x = this.expander.expand(abs, this.dotglob);
      if (!x.complete) {
        this.opaque(`read target \`${clip(w.raw)}\` cannot be expanded (${x.why})`);
        const comps = pattern.split('/');
        const last = comps[comps.length - 1]!;
        const dir = this.literalDir(w);
        // Searched below its literal directory, narrowed to the last component's name where it has one.
        if (dir !== null)
          this.readBelow(
            literalWord(dir),
            scope,
            'contents',
            last !== '' && !last.includes('**') && !last.includes('\\') ? [last] : undefined,
          );
        continue;
      }
      if (x.paths.length === 0) this.addResolved('read', unescapeGlob(abs), scope);
      for (const p of x.paths) this.addResolved('read', p, scope);
    }
  }

  /**
   * The literal values a `for` loop's list stands for: words as they are, globs expanded through
   * the port; undefined when one is unknown (an expansion, a glob that cannot be expanded).
   */
  loopValues(words: readonly WordValue[], scope: Scope): string[] | undefined {
    const out: string[] = [];
    for (const w of words) {
      if (w.dynamic) return undefined;
      if (!w.glob) {
        out.push(w.text);
        continue;
      }
      if (!this.expander) return undefined;
      const pattern = globPattern(w);
      const base = scope.bases.length === 1 ? scope.bases[0] : null;
      const relative = !pattern.startsWith('/');
      if (relative && (base === null || base === undefined || !base.startsWith('/'))) return undefined;
      const root = relative ? base!.replace(/\/+$/, '') : '';
      const x = this.expander.expand(relative ? `${root}/${pattern}` : pattern, this.dotglob);
      if (!x.complete) return undefined;
      // Relative patterns expand to relative words, as bash does (`for f in *.md` gives `a.md`).
      if (x.paths.length === 0) out.push(w.text);
      else out.push(...x.paths.map((p) => (relative ? p.slice(root.length + 1) : p)));
      if (out.length > MAX_LOOP_VALUES) return undefined;
    }
    return out.length > MAX_LOOP_VALUES ? undefined : out;
  }

  /** A glob in the last component only, in a known directory: recorded for protection to expand. */
  private addGlob(kind: 'write' | 'delete', text: string, scope: Scope): boolean {
    if (this.platform === 'win32') return false;
    const sep = text.lastIndexOf('/');
    const dirText = sep < 0 ? '.' : sep === 0 ? '/' : text.slice(0, sep);
    const pattern = text.slice(sep + 1);
    if (pattern === '' || !/[*?[]/.test(pattern) || /[*?[]/.test(dirText)) return false;
    return this.recordGlob(kind, dirText, pattern, 'one', scope);
  }

  /** Records the glob under every directory `dirText` may resolve to; false when one is unknown. */
  private recordGlob(access: 'write' | 'delete', dirText: string, pattern: string, depth: 'one' | 'tree', scope: Scope): boolean {
    const dirs = this.resolveText(dirText, scope);
    if (dirs.length === 0 || dirs.some((d) => !isAbsolute(d, this.platform))) return false;
    for (const dir of dirs) this.globList.set(`${access}\0${dir}\0${pattern}\0${depth}`, { access, dir, pattern, depth });
    return true;
  }

  /**
   * `find ROOT -name PATTERN -delete`: removes the entries below ROOT whose names match. False
   * (the caller deletes ROOT as a whole) when ROOT is not a literal directory with a known base.
   */
  deleteMatchingBelow(root: WordValue, pattern: string, scope: Scope): boolean {
    if (this.platform === 'win32' || root.dynamic || root.glob || root.text === '') return false;
    return this.recordGlob('delete', root.text, pattern, 'tree', scope);
  }

  private literalDir(w: WordValue): string | null {
    const p = w.prefix;
    const sep = this.platform === 'win32' ? Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\')) : p.lastIndexOf('/');
    if (sep > 0) {
      const d = p.slice(0, sep);
      return /^[A-Za-z]:$/.test(d) ? d + '\\' : d;
    }
    if (sep === 0) return p[0]!;
    // A glob, or a literal start without a slash, stays in the working directory.
    if (w.stop === 'glob' || p !== '') return '.';
    return null;
  }

  private addResolved(kind: Access, text: string, scope: Scope): void {
    const set = kind === 'read' ? this.reads : kind === 'write' ? this.writes : this.deletes;
    for (const p of this.resolveText(text, scope)) {
      if (IGNORED_DEVICES.has(p)) continue;
      set.add(p);
    }
  }

  /** Absolute, normalised forms of `text` under every possible working directory. */
  resolveText(text: string, scope: Scope): string[] {
    try {
      if (isAbsolute(text, this.platform)) return [normalizePath(text, this.platform)];
      const out: string[] = [];
      for (const b of scope.bases) {
        if (b === null) {
          // A `cd DIR;` that may have failed leaves the old, unknown directory as a possibility.
          const hint = scope.bases.length > 1 ? ' (a `cd` before it may have failed: use `cd DIR && …`)' : '';
          this.error(`relative path \`${clip(text)}\` with no known working directory${hint}`);
          if (!out.includes(text)) out.push(text);
        } else {
          const p = joinPath(b, text, this.platform);
          if (!out.includes(p)) out.push(p);
        }
      }
      return out;
    } catch (e) {
      this.error(`invalid path \`${clip(text)}\`: ${(e as Error).message}`);
      this.opaque(`path \`${clip(text)}\` cannot be resolved`);
      return [];
    }
  }

  // ------------------------------------------------------------------ scope changes

  /** Scope after a successful `cd target` (no target: home). */
  chdir(scope: Scope, target: WordValue | undefined): Scope {
    const next = cloneScope(scope);
    if (!target) {
      next.bases = [scope.home];
      return next;
    }
    if (target.dynamic || target.glob || target.text === '-') {
      next.bases = [null];
      return next;
    }
    const t = target.text;
    try {
      if (isAbsolute(t, this.platform)) next.bases = [normalizePath(t, this.platform)];
      else next.bases = scope.bases.map((b) => (b === null ? null : joinPath(b, t, this.platform)));
    } catch {
      next.bases = [null];
    }
    next.bases = next.bases.filter((b, i) => next.bases.indexOf(b) === i);
    return next;
  }

  // ------------------------------------------------------------------ entry points

  /** Analyses a whole command line (top level or a nested `-c` string). */
  analyzeText(text: string, scope: Scope, via?: string): Scope | null {
    if (this.stopped) return null;
    if (via !== undefined) {
      if (this.nested >= MAX_NESTED_SCRIPTS) {
        this.opaque(`command strings nested too deeply (${via})`);
        return null;
      }
    }
    let tree: Tree | null;
    try {
      tree = this.parser.parse(this.platform === 'win32' ? text.replace(/\\/g, WIN_BACKSLASH) : text);
    } catch (e) {
      this.error(`parser failed: ${(e as Error).message}`);
      this.opaque('the command could not be parsed');
      return null;
    }
    if (!tree) {
      this.error('parser returned no tree (cancelled or out of time)');
      this.opaque('the command could not be parsed');
      return null;
    }
    this.nested++;
    // Each shell has its own exit traps; they run before its tree (and its functions) is freed.
    const outerDeferred = this.deferred;
    this.deferred = [];
    try {
      const root = tree.rootNode;
      if (root.hasError) this.reportParseError(root, via);
      const o = this.walk(root, scope, { stdin: 'tty' }, []);
      const final = mergeScopes(o.ok, o.fail);
      this.runDeferred(this.deferred, final);
      return final;
    } finally {
      this.deferred = outerDeferred;
      this.nested--;
      tree.delete();
    }
  }

  /** Trap handlers run when the shell exits: analysed after everything else. */
  private deferred: Array<{ text: string; scope: Scope; via: string }> = [];

  defer(text: string, scope: Scope, via: string): void {
    this.deferred.push({ text, scope: cloneScope(scope), via });
  }

  /** Runs trap handlers in the state the shell may be in when it exits. */
  private runDeferred(list: Array<{ text: string; scope: Scope; via: string }>, final: Scope): void {
    for (let i = 0; i < list.length && i < 32; i++) {
      const d = list[i]!;
      this.runScript(d.text, mergeScopes(d.scope, final), d.via);
    }
  }

  /**
   * A script given as a string (`bash -c`, `eval`, `watch`…), run in a child shell. `params` are
   * its positional parameters ($0, $1…) when they are literal.
   */
  runScript(text: string, scope: Scope, via: string, params?: readonly string[]): void {
    const child = cloneScope(scope);
    for (const k of [...child.vars.keys()]) if (/^\d+$/.test(k)) child.vars.delete(k);
    params?.forEach((p, i) => child.vars.set(String(i), p));
    this.analyzeText(text, child, via);
  }

  private reportParseError(root: Node, via?: string): void {
    let node: Node | null = root;
    let found: Node | null = null;
    // Descend along nodes that contain the error (iteratively: trees can be deep).
    for (let guard = 0; node && guard < 10_000 && !found; guard++) {
      let next: Node | null = null;
      for (const c of node.children) {
        if (c.isError || c.isMissing) {
          found = c;
          break;
        }
        if (c.hasError) {
          next = c;
          break;
        }
      }
      if (!found && !next && (node.isError || node.isMissing)) found = node;
      node = next;
    }
    const where = via ? ` in ${via}` : '';
    if (found?.isMissing) this.error(`parse error${where}: missing \`${found.type}\``);
    else this.error(`parse error${where} near \`${clip(winUnmap(found ? found.text : root.text), 40)}\``);
    this.opaque(`the command has a syntax error${where}`);
  }

  // ------------------------------------------------------------------ statements

  wordEnv(scope: Scope): WordEnv {
    return {
      platform: this.platform,
      home: scope.home ?? undefined,
      lookupVar: (n) => scope.vars.get(n),
      pwd: () => (scope.bases.length === 1 && scope.bases[0] !== null ? scope.bases[0] : undefined),
      walkNested: (n) => this.walkNested(n, scope),
      note: (r) => this.opaque(r),
    };
  }

  words(node: Node, scope: Scope): WordValue[] {
    return evalWord(node, this.wordEnv(scope));
  }

  /** `$(…)`, backticks, `<(…)`: run in a subshell; walk for effects. */
  private walkNested(node: Node, scope: Scope): void {
    const inner = cloneScope(scope);
    if (node.type === 'arithmetic_expansion') {
      this.walkSubstitutions(node, inner);
      return;
    }
    // `$(< file)` is bash's shorthand for `$(cat file)`: a read of the file.
    const redirs = node.namedChildren.filter((c) => c.type === 'file_redirect');
    if (redirs.length) this.applyRedirects(redirs, inner, { stdin: 'tty' });
    this.seq(node.children, inner, { stdin: 'tty' });
  }

  /** Finds and walks command substitutions anywhere under `node`. */
  walkSubstitutions(node: Node, scope: Scope): void {
    const stack: Node[] = [node];
    while (stack.length) {
      const n = stack.pop()!;
      if (n !== node && (n.type === 'command_substitution' || n.type === 'process_substitution')) {
        this.walkNested(n, scope);
        continue;
      }
      // Reverse order so substitutions are walked (and their commands reported) left to right.
      if (n.namedChildCount > 0) {
        const kids = n.namedChildren;
        for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
      }
    }
  }

  walk(node: Node, scope: Scope, io: Io, tail: Node[]): Outcome {
    if (this.stopped) return same(scope);
    if (++this.nodes > MAX_NODES) {
      this.stopped = true;
      this.opaque('the command is too large to analyse completely');
      this.error(`analysis stopped after ${MAX_NODES} syntax nodes`);
      return same(scope);
    }
    if (this.depth >= MAX_DEPTH) {
      this.stopped = true;
      this.opaque('the command is nested too deeply to analyse');
      this.error(`analysis stopped at nesting depth ${MAX_DEPTH}`);
      return same(scope);
    }
    this.depth++;
    try {
      return this.walkInner(node, scope, io, tail);
    } finally {
      this.depth--;
    }
  }

  private walkInner(node: Node, scope: Scope, io: Io, tail: Node[]): Outcome {
    switch (node.type) {
      case 'program':
        return this.seq(node.children, scope, io);
      case 'list':
        return this.list(node, scope, io, tail);
      case 'pipeline':
        return this.pipeline(node.children, scope, io, tail);
      case 'command':
        return this.command(node, scope, io, tail);
      case 'redirected_statement':
        return this.redirected(node, scope, io, tail);
      case 'negated_command': {
        const inner = node.namedChildren[0];
        if (!inner) return same(scope);
        const o = this.walk(inner, scope, io, tail);
        return { ok: o.fail, fail: o.ok };
      }
      case 'subshell': {
        const io2 = this.applyRedirects(tail, scope, io);
        this.seq(node.children, cloneScope(scope), io2);
        return same(scope);
      }
      case 'compound_statement': {
        if (node.child(0)?.type === '((') {
          // Arithmetic command: may assign variables and run substitutions.
          this.walkSubstitutions(node, scope);
          this.forgetArithmeticVars(node, scope);
          return same(scope);
        }
        const io2 = this.applyRedirects(tail, scope, io);
        return this.seq(node.children, scope, io2);
      }
      case 'if_statement':
      case 'while_statement':
      case 'for_statement':
      case 'c_style_for_statement':
      case 'case_statement':
        return this.control(node, scope, io, tail);
      case 'function_definition': {
        const name = node.childForFieldName('name');
        const body = node.childForFieldName('body');
        if (name && body) scope.functions.set(name.text, body);
        return same(scope);
      }
      case 'variable_assignment':
        this.assign(node, scope);
        return same(scope);
      case 'variable_assignments':
        for (const c of node.namedChildren) if (c.type === 'variable_assignment') this.assign(c, scope);
        return same(scope);
      case 'declaration_command':
        this.declaration(node, scope);
        return same(scope);
      case 'unset_command':
        for (const c of node.namedChildren) {
          if (c.type === 'word' && c.text.startsWith('-')) continue;
          scope.vars.delete(c.text);
          scope.functions.delete(c.text);
          if (c.text === 'HOME') scope.home = null;
        }
        return same(scope);
      case 'test_command':
        this.walkSubstitutions(node, scope);
        return same(scope);
      case 'comment':
        return same(scope);
      case 'ERROR':
        // Best effort inside a syntax error (already reported as opaque).
        for (const c of node.namedChildren) {
          if (STATEMENT_TYPES.has(c.type)) this.walk(c, cloneScope(scope), io, []);
          else this.walkSubstitutions(c, scope);
        }
        return same(scope);
      default:
        this.walkSubstitutions(node, scope);
        return same(scope);
    }
  }

  /** Statements one after another (`;`, newline, `&`). Returns the last statement's outcome. */
  seq(children: Node[], scope: Scope, io: Io): Outcome {
    let cur = scope;
    let last = same(scope);
    for (let i = 0; i < children.length; i++) {
      const c = children[i]!;
      if (!c.isNamed || c.type === 'comment') continue;
      if (!STATEMENT_TYPES.has(c.type) && c.type !== 'ERROR') {
        this.walkSubstitutions(c, cur);
        continue;
      }
      // cmd.exe's `&` runs commands one after another; bash's runs the left one in the background.
      if (children[i + 1]?.type === '&' && this.platform !== 'win32') {
        // Background job: runs in a subshell, does not change this shell's state.
        this.walk(c, cloneScope(cur), io, []);
        last = same(cur);
        continue;
      }
      last = this.walk(c, cur, io, []);
      cur = mergeScopes(last.ok, last.fail);
    }
    return last;
  }

  private list(node: Node, scope: Scope, io: Io, tail: Node[]): Outcome {
    const kids = node.children;
    // Left-associative binary lists: (a && b) || c.
    let acc: Outcome | null = null;
    let op = '';
    for (let i = 0; i < kids.length; i++) {
      const c = kids[i]!;
      if (!c.isNamed) {
        op = c.type;
        continue;
      }
      if (c.type === 'comment') continue;
      const isLast = !kids.slice(i + 1).some((k) => k.isNamed && k.type !== 'comment');
      const t = isLast ? tail : [];
      if (!acc) {
        acc = this.walk(c, scope, io, t);
        continue;
      }
      if (op === '||') {
        const b: Outcome = this.walk(c, cloneScope(acc.fail), io, t);
        acc = { ok: mergeScopes(acc.ok, b.ok), fail: b.fail };
      } else if (op === '&&') {
        const b: Outcome = this.walk(c, cloneScope(acc.ok), io, t);
        acc = { ok: b.ok, fail: mergeScopes(acc.fail, b.fail) };
      } else {
        acc = this.walk(c, mergeScopes(acc.ok, acc.fail), io, t);
      }
    }
    return acc ?? same(scope);
  }

  /**
   * Every element runs in its own subshell; stdin of all but the first is a pipe, carrying what the
   * element before it writes when that one command's handler knows it (`echo ~/.x | xargs cat`).
   */
  private pipeline(children: Node[], scope: Scope, io: Io, tail: Node[]): Outcome {
    const elems = children.filter((c) => c.isNamed && c.type !== 'comment');
    let feed: Feed | undefined;
    elems.forEach((c, i) => {
      this.output = undefined;
      const before = this.commands.length;
      this.walk(
        c,
        cloneScope(scope),
        i === 0 ? io : feed ? { stdin: 'pipe', feed } : { stdin: 'pipe' },
        i === elems.length - 1 ? tail : [],
      );
      feed = this.commands.length - before === 1 ? this.output : undefined;
    });
    this.output = undefined;
    return same(scope);
  }

  private redirected(node: Node, scope: Scope, io: Io, tail: Node[]): Outcome {
    let body: Node | null = null;
    const redirs: Node[] = [];
    const kids = node.children;
    for (let i = 0; i < kids.length; i++) {
      const c = kids[i]!;
      const f = node.fieldNameForChild(i);
      if (f === 'body') body = c;
      else if (c.isNamed && (f === 'redirect' || c.type.endsWith('_redirect'))) redirs.push(c);
    }
    const all = redirs.concat(tail);
    if (!body) {
      this.applyRedirects(all, scope, io);
      return same(scope);
    }
    switch (body.type) {
      case 'command':
      case 'list':
      case 'pipeline':
      case 'negated_command':
      case 'redirected_statement':
        // bash applies a trailing redirect to the last command of a list/pipeline.
        return this.walk(body, scope, io, all);
      default: {
        const io2 = this.applyRedirects(all, scope, io);
        return this.walk(body, scope, io2, []);
      }
    }
  }

  /** if/while/for/case: bodies walked in order; afterwards the state is "either". */
  private control(node: Node, scope: Scope, io: Io, tail: Node[]): Outcome {
    const io2 = this.applyRedirects(tail, scope, io);
    const end = node.type === 'for_statement' ? this.forLoop(node, cloneScope(scope), io2) : this.controlBody(node, cloneScope(scope), io2);
    return same(mergeScopes(scope, end));
  }

  /**
   * `for V in WORDS; do BODY; done`: the body runs once per value with V set to it (globs expanded
   * through the port). When the values cannot all be known (an expansion, `for V; do` over "$@",
   * too many), the body is walked once with V unknown, so what it does with V is opaque.
   */
  private forLoop(node: Node, s: Scope, io: Io): Scope {
    const varNode = node.childForFieldName('variable');
    const valueNodes: Node[] = [];
    let body: Node | null = null;
    for (let i = 0; i < node.childCount; i++) {
      const f = node.fieldNameForChild(i);
      if (f === 'value') valueNodes.push(node.child(i)!);
      else if (f === 'body') body = node.child(i);
    }
    const words = valueNodes.flatMap((v) => this.words(v, s));
    const name = varNode?.text ?? '';
    const values = valueNodes.length === 0 ? undefined : this.loopValues(words, s);
    if (!body) return s;
    if (values === undefined) {
      s.vars.delete(name);
      return this.controlBody(body, s, io);
    }
    let cur = s;
    for (const v of values) {
      cur.vars.set(name, v);
      cur = this.controlBody(body, cur, io);
      if (this.stopped) break;
    }
    return mergeScopes(s, cur);
  }

  private controlBody(node: Node, s: Scope, io: Io): Scope {
    let cur = s;
    for (const c of node.children) {
      if (!c.isNamed || c.type === 'comment') continue;
      if (STATEMENT_TYPES.has(c.type)) {
        const o = this.walk(c, cur, io, []);
        cur = mergeScopes(o.ok, o.fail);
      } else if (c.type === 'do_group' || c.type === 'else_clause' || c.type === 'elif_clause' || c.type === 'case_item') {
        cur = this.controlBody(c, cur, io);
      } else if (c.type === 'variable_name' && node.type === 'for_statement') {
        cur.vars.delete(c.text);
      } else {
        // for-loop values, case subjects and patterns, C-style for expressions.
        this.walkSubstitutions(c, cur);
        if (node.type === 'c_style_for_statement') this.forgetArithmeticVars(c, cur);
      }
    }
    return cur;
  }

  private forgetArithmeticVars(node: Node, scope: Scope): void {
    const stack: Node[] = [node];
    while (stack.length) {
      const n = stack.pop()!;
      if (n.type === 'variable_name') scope.vars.delete(n.text);
      for (const c of n.namedChildren) stack.push(c);
    }
  }

  /** A standalone assignment; returns the value (null for arrays and `x=`). */
  private assign(node: Node, scope: Scope): WordValue | null {
    const nameNode = node.childForFieldName('name');
    const valueNode = node.childForFieldName('value');
    const name = nameNode?.type === 'variable_name' ? nameNode.text : null;
    // `x+=y` appends: the result is not tracked.
    const appends = node.children.some((c) => c.type === '+=');
    let value: WordValue | null = null;
    if (valueNode) {
      if (valueNode.type === 'array') this.walkSubstitutions(valueNode, scope);
      else value = evalSingle(valueNode, this.wordEnv(scope), { assignment: true });
    }
    if (!name) return value;
    const literal = valueNode === null ? '' : value && !value.dynamic && !appends ? value.text : undefined;
    if (literal === undefined) scope.vars.delete(name);
    else scope.vars.set(name, literal);
    if (name === 'HOME') scope.home = literal !== undefined && literal !== '' ? literal : null;
    if (name === 'PATH') this.searchPathChanged();
    // bash turns dotglob on when GLOBIGNORE is set.
    if (name === 'GLOBIGNORE') this.dotglob = true;
    proxyEnv(this, name, value ?? undefined);
    return value;
  }

  private declaration(node: Node, scope: Scope): void {
    // `export`, `export -p`, `declare -x`, `typeset` with no names print variables, the environment
    // among them; `declare -p NAME` prints that one. `declare -f`/`-F` print functions only.
    const keyword = node.child(0)?.type ?? '';
    if (keyword === 'export' || keyword === 'declare' || keyword === 'typeset') {
      const kids = node.namedChildren;
      const flags = kids.filter((c) => c.type === 'word' && c.text.startsWith('-')).map((c) => c.text);
      const names = kids.filter((c) => c.type === 'variable_name').map((c) => literalWord(c.text));
      const others = kids.filter((c) => c.type !== 'variable_name' && !(c.type === 'word' && c.text.startsWith('-')));
      if (others.length === 0 && !flags.some((f) => /[fF]/.test(f)) && printsSecrets(names))
        this.readEnvironment(keyword + (flags.length ? ' ' + flags.join(' ') : ''));
    }
    for (const c of node.namedChildren) {
      if (c.type === 'variable_assignment') {
        const value = this.assign(c, scope);
        const name = c.childForFieldName('name')?.text ?? '';
        // `export LD_PRELOAD=…` affects every later command.
        if (node.child(0)?.type !== 'local' && isDangerousEnv(name, value ?? literalWord(''))) {
          this.opaque(`environment variable ${name} changes what programs run`);
        }
      } else if (c.type === 'variable_name') {
        // `local x` / `declare x` without a value: x is now empty in the function.
        if (node.child(0)?.type === 'local') scope.vars.delete(c.text);
      } else this.walkSubstitutions(c, scope);
    }
  }

  // ------------------------------------------------------------------ commands and redirects

  private command(node: Node, scope: Scope, io: Io, tail: Node[]): Outcome {
    let nameNode: Node | null = null;
    const args: Node[] = [];
    const redirs: Node[] = [];
    const assigns: Node[] = [];
    const kids = node.children;
    for (let i = 0; i < kids.length; i++) {
      const c = kids[i]!;
      const f = node.fieldNameForChild(i);
      if (f === 'name') nameNode = c;
      else if (f === 'argument') args.push(c);
      else if (f === 'redirect' || c.type === 'herestring_redirect' || c.type === 'file_redirect' || c.type === 'heredoc_redirect')
        redirs.push(c);
      else if (c.type === 'variable_assignment') assigns.push(c);
      // PowerShell `iex (iwr …)`: the grammar puts the parenthesised command inside this command.
      else if (c.type === 'subshell') this.walk(c, cloneScope(scope), { stdin: 'tty' }, []);
      else if (c.isNamed) this.walkSubstitutions(c, scope);
    }
    redirs.push(...tail);
    // `sh -i 0<&3`: the grammar reads the `0` as an argument; it is the redirect's descriptor.
    const fds = new Map<number, string>();
    if (redirs.length) {
      const starts = new Set(redirs.map((r) => r.startIndex));
      for (let i = args.length - 1; i >= 0; i--) {
        const a = args[i]!;
        if (a.type === 'number' && starts.has(a.endIndex)) {
          fds.set(a.endIndex, a.text);
          args.splice(i, 1);
        }
      }
    }
    // Prefix assignments only affect the command's environment; their values may run substitutions.
    for (const a of assigns) {
      const v = a.childForFieldName('value');
      const value = v ? evalSingle(v, this.wordEnv(scope), { assignment: true }) : undefined;
      const name = a.childForFieldName('name')?.text ?? '';
      if (name === 'HOME') this.opaque('HOME is overridden for a command');
      else if (isDangerousEnv(name, value ?? literalWord(''))) this.opaque(`environment variable ${name} changes what programs run`);
      else proxyEnv(this, name, value);
      if (name === 'PATH') this.searchPathChanged();
    }
    const io2 = this.applyRedirects(redirs, scope, io, fds);
    const argv: WordValue[] = [];
    if (nameNode) {
      const n = nameNode.namedChildren[0] ?? nameNode;
      argv.push(...this.words(n, scope));
    }
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      // `$"…"` (locale string) parses as a bare `$` followed by the string.
      if (a.type === '$' && args[i + 1] && args[i + 1]!.startIndex === a.endIndex) continue;
      argv.push(...this.words(a, scope));
    }
    if (!nameNode || argv.length === 0) return same(scope);
    const outcome = dispatch(this, argv, scope, io2, {});
    this.heredocContinuations(redirs, outcome, scope);
    return outcome;
  }

  /** Runs argv (after wrappers were peeled off, or for `find -exec`, `xargs`…). */
  runArgv(argv: WordValue[], scope: Scope, io: Io, opts: { noFunctions?: boolean } = {}): Outcome {
    if (argv.length === 0) return same(scope);
    return dispatch(this, argv, scope, io, opts);
  }

  /**
   * Calls a shell function defined earlier: its body runs in this shell (it can cd and set
   * variables); its arguments are $1, $2… inside it and the caller's come back afterwards.
   */
  callFunction(name: string, scope: Scope, io: Io, args: readonly WordValue[] = []): Outcome | null {
    const body = scope.functions.get(name);
    if (!body || this.calling.has(name)) return body ? same(scope) : null;
    const isParam = (k: string) => /^[1-9]\d*$/.test(k);
    const saved = [...scope.vars].filter(([k]) => isParam(k));
    const setParams = (s: Scope, params: ReadonlyArray<readonly [string, string]>) => {
      for (const k of [...s.vars.keys()]) if (isParam(k)) s.vars.delete(k);
      for (const [k, v] of params) s.vars.set(k, v);
    };
    const literal = args.every((a) => !a.dynamic && !a.glob);
    setParams(scope, literal ? args.map((a, i) => [String(i + 1), a.text] as const) : []);
    this.calling.add(name);
    try {
      const o = this.walk(body, scope, io, []);
      setParams(o.ok, saved);
      if (o.fail !== o.ok) setParams(o.fail, saved);
      return o;
    } finally {
      this.calling.delete(name);
      setParams(scope, saved);
    }
  }

  /**
   * Records the effects of redirects and returns the command's stdin. Heredoc pipelines and
   * lists that the grammar nests inside `heredoc_redirect` are handled by heredocContinuations.
   */
  applyRedirects(redirs: Node[], scope: Scope, io: Io, fds: Map<number, string> = new Map()): Io {
    let out = io;
    const starts = new Set(redirs.map((r) => r.startIndex));
    for (const r of redirs) {
      if (r.type === 'file_redirect') out = this.fileRedirect(r, scope, out, starts, fds);
      else if (r.type === 'heredoc_redirect') {
        for (let i = 0; i < r.childCount; i++) {
          const c = r.child(i)!;
          if (r.fieldNameForChild(i) === 'redirect' && c.type === 'file_redirect') this.fileRedirect(c, scope, out, starts, fds);
          else if (c.type === 'heredoc_body') this.walkSubstitutions(c, scope);
        }
        out = { stdin: 'heredoc', ...this.heredocScript(r) };
      } else if (r.type === 'herestring_redirect') {
        const w = r.namedChildren.filter((c) => c.type !== 'file_descriptor').map((c) => evalSingle(c, this.wordEnv(scope)));
        const lit = w.length === 1 && !w[0]!.dynamic;
        out = lit ? { stdin: 'heredoc', script: w[0]!.text } : { stdin: 'heredoc' };
      }
    }
    return out;
  }

  private heredocScript(r: Node): { script?: string } {
    let start = '';
    let body: Node | null = null;
    let dash = false;
    for (const c of r.children) {
      if (c.type === 'heredoc_start') start = c.text;
      else if (c.type === 'heredoc_body') body = c;
      else if (c.type === '<<-') dash = true;
    }
    if (!body) return { script: '' };
    const quoted = /['"\\]/.test(start);
    if (!quoted && body.namedChildren.some((c) => c.type !== 'heredoc_content')) return {};
    let text = body.text;
    if (!quoted) text = text.replace(/\\([$`\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
    if (dash) text = text.replace(/^\t+/gm, '');
    return { script: text };
  }

  /**
   * One `N>file`-style redirect. The grammar attaches a descriptor written after a space-separated
   * redirect (`>& file 0>&1`) to the previous redirect as an extra destination; `fds` carries such
   * descriptors (keyed by the start of the redirect they belong to).
   */
  private fileRedirect(r: Node, scope: Scope, io: Io, starts: Set<number>, fds: Map<number, string>): Io {
    let op = '';
    let fd = fds.get(r.startIndex) ?? '';
    const dests: Node[] = [];
    for (let i = 0; i < r.childCount; i++) {
      const c = r.child(i)!;
      const f = r.fieldNameForChild(i);
      if (f === 'destination') {
        if (dests.length > 0 && c.type === 'number' && starts.has(c.endIndex)) fds.set(c.endIndex, c.text);
        else dests.push(c);
      } else if (f === 'descriptor') fd = c.text;
      else if (!c.isNamed && c.type !== 'ERROR') op += c.type;
    }
    const toStdin = fd === '0' || (fd === '' && op.startsWith('<'));
    let out = io;
    for (const d of dests) {
      const ws = this.words(d, scope);
      // `> {a,b}.txt` expands to two words: bash reports "ambiguous redirect" and runs nothing.
      if (ws.length > 1) continue;
      for (const w of ws) {
        // fd duplication / closing: `2>&1`, `>&-`. Duplicating onto stdin (`0>&1`, `<&3`) makes
        // stdin some other stream (a socket in the classic reverse shell).
        if ((op === '>&' || op === '<&') && /^(\d+-?|-)$/.test(w.text) && !w.dynamic) {
          if (toStdin && w.text !== '-' && w.text !== '0') out = { stdin: 'pipe' };
          continue;
        }
        if (this.platform === 'win32' && WIN_DEVICES.test(w.raw)) continue;
        const m = /^\/dev\/(tcp|udp)\/([^/]+)\/([^/]+)$/.exec(w.text);
        if (m) {
          this.net(`${m[2]}:${m[3]}`);
          if (w.dynamic) this.opaque(`network target \`${clip(w.raw)}\` is not literal`);
          if (toStdin || op.includes('<')) out = { stdin: 'pipe' };
          continue;
        }
        if (w.dynamic && /^\/dev\/(tcp|udp)\//.test(w.prefix)) {
          this.netWord(w, 'network');
          continue;
        }
        if (op === '<' || op === '<&') {
          this.read(w, scope);
          out = { stdin: 'file', from: w };
        } else if (op.includes('<') && op.includes('>')) {
          this.read(w, scope);
          this.write(w, scope);
        } else this.write(w, scope);
      }
    }
    return out;
  }

  /** `cat <<EOF | cmd` and `cat <<EOF && cmd`: the grammar nests the rest inside the heredoc. */
  private heredocContinuations(redirs: Node[], first: Outcome, scope: Scope): void {
    for (const r of redirs) {
      if (r.type !== 'heredoc_redirect') continue;
      let op = '';
      for (let i = 0; i < r.childCount; i++) {
        const c = r.child(i)!;
        const f = r.fieldNameForChild(i);
        if (c.type === 'pipeline') {
          const elems = c.namedChildren.filter((k) => k.type !== 'comment');
          for (const e of elems) this.walk(e, cloneScope(scope), { stdin: 'pipe' }, []);
        } else if (f === 'operator') op = c.type;
        else if (f === 'right') {
          const from = op === '||' ? first.fail : op === '&&' ? first.ok : mergeScopes(first.ok, first.fail);
          this.walk(c, cloneScope(from), { stdin: 'tty' }, []);
        } else if (f === 'argument') {
          this.walkSubstitutions(c, scope);
        }
      }
    }
  }
}

/** The glob pattern of a word: quoted characters escaped (WordValue.pattern) when it still matches the text. */
function globPattern(w: WordValue): string {
  return w.pattern !== undefined && unescapeGlob(w.pattern) === w.text ? w.pattern : w.text;
}

export function analyzeShell(parser: ShellParser, command: string, ctx: ShellContext): ShellAnalysis {
  const an = new Analyzer(parser, ctx);
  let cwd: Base = null;
  if (ctx.cwd) {
    try {
      cwd = isAbsolute(ctx.cwd, ctx.platform) ? normalizePath(ctx.cwd, ctx.platform) : null;
    } catch {
      cwd = null;
    }
    if (cwd === null) an.error(`working directory \`${clip(ctx.cwd)}\` is not an absolute path`);
  }
  const scope: Scope = { bases: [cwd], stack: [], vars: new Map(), home: ctx.home, functions: new Map() };
  let text = command;
  if (typeof text !== 'string') {
    an.error('command is not a string');
    an.opaque('the command could not be parsed');
    return an.result();
  }
  if (text.length > MAX_COMMAND_LENGTH) {
    an.error(`command is too long to analyse (${text.length} characters, limit ${MAX_COMMAND_LENGTH})`);
    an.opaque('the command is too long to analyse');
    return an.result();
  }
  const nul = text.indexOf('\0');
  if (nul >= 0) {
    // A program's argv cannot hold NUL: what runs is at most the part before it.
    an.error('command contains a NUL byte');
    an.opaque('the command contains a NUL byte');
    text = text.slice(0, nul);
  }
  try {
    an.analyzeText(text, scope);
  } catch (e) {
    // Fail closed on anything unexpected (stack exhaustion on pathological input, wasm errors).
    an.error(`analysis failed: ${(e as Error)?.message ?? String(e)}`);
    an.opaque('the command could not be analysed');
  }
  return an.result();
}
