// git: what each subcommand reads, writes and contacts (the index, configured remotes, settings that run commands).
import { has, lastValue, parseOpts, values } from '../options';
import { literalWord, sliceWord, type WordValue } from '../words';
import type { Scope } from '../state';
import { DOT, childOf, clip, fileUrlPath, genericReads, isPathLike, isRemoteSpec, register, type Inv, type Registry } from '../helpers';
import { applyPatch } from './files';
import { MAX_GIT_INDEX_BYTES, parseGitIndex, type GitIndex } from '../git-index';

export const GIT_COMMANDS: Registry = new Map();
const reg = (names: string | readonly string[], fn: (inv: Inv) => void) => register(GIT_COMMANDS, names, fn);

// ------------------------------------------------------------------------------------------
// git.

/**
 * git settings that make git run a command (hooks, pagers, editors, filters, diff converters,
 * helpers): setting one is judged as execution configuration. An alias runs a command only when
 * its value starts with `!` (GIT_ALIAS below).
 */
const GIT_COMMAND_KEYS =
  /^(core\.(sshcommand|pager|editor|fsmonitor|hookspath|askpass|gitproxy|worktree)|pager\..*|interactive\.difffilter|(man|browser|difftool|mergetool)\..*\.path|.*\.(command|cmd|helper|program|textconv|clean|smudge|process|driver|external|uploadpack|receivepack|proxycommand)|sequence\.editor|gpg\.program|credential\.helper|uploadpack\..*|protocol\..*\.allow|include\.path|includeif\..*|url\..*\.insteadof|url\..*\.pushinsteadof)$/i;
const GIT_ALIAS = /^alias\./i;
/** Settings whose value is where git connects: a remote's URL, a proxy. */
const GIT_ADDRESS_KEYS = /^(remote\..*\.(url|pushurl)|(https?)(\..*)?\.proxy)$/i;

/**
 * One git setting (`key=value` from `-c`, or a key and its value from `git config`). The key (literal)
 * when it can run nothing and names no address: a plain setting (`user.name`, `alias.co checkout`).
 */
function gitConfigCheck(inv: Inv, setting: WordValue, value?: WordValue): string | undefined {
  if (setting.dynamic) return void inv.an.opaque('git -c setting is not literal');
  const eq = setting.text.indexOf('=');
  const key = eq < 0 ? setting.text : setting.text.slice(0, eq);
  const val = value ?? (eq < 0 ? undefined : sliceWord(setting, eq + 1));
  if (GIT_COMMAND_KEYS.test(key)) inv.an.opaque(`git setting \`${clip(key, 40)}\` can run commands`);
  // `alias.x '!sh …'` runs a shell command; `alias.lg 'log --oneline'` only names a git command.
  else if (GIT_ALIAS.test(key) && (val === undefined || val.dynamic || val.text.trimStart().startsWith('!')))
    inv.an.opaque(`git alias \`${clip(key, 40)}\` runs a shell command`);
  else if (GIT_ADDRESS_KEYS.test(key) && val && (val.dynamic || val.text !== '')) {
    if (/proxy$/i.test(key)) inv.an.netWord(val, `git ${key}`);
    else gitRemote(inv, val);
  } else if (/^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(key) && !GIT_ADDRESS_KEYS.test(key) && (val === undefined || !val.dynamic)) return key;
  return undefined;
}

const GIT_NET = new Set(['clone', 'fetch', 'pull', 'push', 'ls-remote', 'submodule', 'fetch-pack', 'send-pack', 'request-pull']);

/** A remote argument of clone/fetch/push: URLs and `user@host:path` forms go to `urls`. */
function gitRemote(inv: Inv, w: WordValue): void {
  if (w.dynamic) return void inv.an.netWord(w, 'git');
  const t = w.text;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(t) || isRemoteSpec(t, inv.an.platform)) {
    const f = fileUrlPath(t);
    if (f !== null) inv.an.read(literalWord(f), inv.scope);
    else inv.an.net(t);
  } else if (/^[\\/.~]/.test(t) || /^[A-Za-z]:[\\/]/.test(t)) inv.an.read(w, inv.scope);
}

reg('git', (inv) => {
  const { an } = inv;
  const args = inv.args;
  let scope: Scope = inv.scope;
  let i = 0;
  for (; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (w.dynamic || !t.startsWith('-')) break;
    if (t === '-C') {
      const d = args[++i];
      if (d) scope = an.chdir(scope, d);
    } else if (t === '-c') {
      const s = args[++i];
      if (s) gitConfigCheck(inv, s);
    } else if (t.startsWith('--config-env')) {
      an.opaque('git --config-env takes settings from the environment');
      if (!t.includes('=')) i++;
    } else if (t === '--git-dir' || t === '--work-tree' || t === '--namespace' || t === '--exec-path' || t === '--super-prefix') {
      const v = args[++i];
      if (v && t === '--work-tree') scope = an.chdir(scope, v);
      if (t === '--exec-path') an.opaque('git --exec-path runs git programs from another directory');
    } else if (t.startsWith('--work-tree=')) scope = an.chdir(scope, sliceWord(w, 12));
    else if (t.startsWith('--exec-path=')) an.opaque('git --exec-path runs git programs from another directory');
  }
  const subWord = args[i];
  if (!subWord) return;
  if (subWord.dynamic) return void an.opaque('git subcommand is not literal');
  const sub = subWord.text;
  const rest = args.slice(i + 1);
  if (GIT_NET.has(sub)) an.net();
  // Any other git command on the line may change the index an earlier git grep / ls-files was judged by.
  const st = indexState(an);
  if (!GIT_KEEPS_INDEX.has(sub)) {
    st.changed = true;
    for (const fallback of st.relied.splice(0)) fallback();
    if (!agreesWithWorktree(sub, rest)) {
      st.diverged = true;
      for (const fallback of st.reliedByDiff.splice(0)) fallback();
    }
  }
  const otherRepo = args.slice(0, i).some((w) => /^--(git-dir|work-tree)(=|$)/.test(w.text));
  const g: GitCtx = { inv, scope, rest, otherRepo };
  const h = GIT_SUBCOMMANDS[sub];
  if (h) h(g);
  else genericReads({ ...inv, scope }, rest);
});

interface GitCtx {
  readonly inv: Inv;
  readonly scope: Scope;
  readonly rest: WordValue[];
  /** --git-dir / --work-tree: another repository than the one found from the working directory. */
  readonly otherRepo?: boolean;
}

/** Subcommands that leave the set of tracked paths as it is (status may refresh the index's stat data only). */
const GIT_KEEPS_INDEX = new Set([
  'status',
  'log',
  'diff',
  'show',
  'blame',
  'shortlog',
  'describe',
  'rev-parse',
  'ls-files',
  'ls-tree',
  'cat-file',
  'grep',
  'reflog',
  'whatchanged',
  'rev-list',
  'for-each-ref',
  'show-ref',
  'name-rev',
  'merge-base',
  'cherry',
  'range-diff',
  'check-ignore',
  'count-objects',
  'version',
  'help',
  'var',
  'config',
  'remote',
  'fetch',
  'ls-remote',
]);

/** Per analysis: a git command that may change the index was seen, and the conservative reads to add if one comes later. */
interface IndexState {
  /** A git command that may change the index ran (or runs) on the line. */
  changed: boolean;
  /** Fallbacks of git grep / ls-files, run when such a command comes later (a pipeline runs at once). */
  relied: (() => void)[];
  /** One of them may make the index differ from the work tree (so git diff would print other files). */
  diverged: boolean;
  /** Fallbacks of git diff, run when such a command comes later. */
  reliedByDiff: (() => void)[];
}
/** Per analysis: the index changes seen, and the conservative reads to add if one comes later. */
const indexStates = new WeakMap<object, IndexState>();
function indexState(an: object): IndexState {
  let st = indexStates.get(an);
  if (!st) indexStates.set(an, (st = { changed: false, relied: [], diverged: false, reliedByDiff: [] }));
  return st;
}

/**
 * Index changes that only make the index agree with the work tree, or drop entries: staging (not -N, whose
 * entries are empty), committing, removing, renaming, stashing (index and work tree back to HEAD). Before,
 * after or beside a `git diff`, they make it print fewer files, never another one; update-index, read-tree,
 * reset, restore --staged, apply --cached, add -N, checkout, merges and the rest may make it print any file.
 */
function agreesWithWorktree(sub: string, rest: readonly WordValue[]): boolean {
  if (rest.some((w) => w.dynamic)) return false;
  if (sub === 'add') return !rest.some((w) => w.text === '--intent-to-add' || /^-[A-Za-z]*N/.test(w.text));
  if (sub === 'stash') {
    const verb = rest.find((w) => !w.text.startsWith('-'))?.text;
    return verb === undefined || verb === 'push' || verb === 'save';
  }
  return sub === 'commit' || sub === 'rm' || sub === 'mv';
}

/** Most tracked files read one by one; a larger match is searched below its directories, as before. */
const MAX_TRACKED_READS = 4096;

/**
 * The tracked paths (relative to the work tree's top) that `pathspecs` match, read from the index of
 * the repository around the working directory: a superset (a glob or magic pathspec matches all below
 * its literal directory). Undefined when it cannot be known exactly enough: no port, another
 * repository or index (--git-dir, GIT_* variables), something earlier on the line that changed files
 * or the index, no readable well-formed index, a pathspec outside the work tree, too many files.
 */
function trackedPaths(
  g: GitCtx,
  pathspecs: readonly WordValue[],
  forDiff = false,
):
  | { top: string; gitDir: string; cwdRel: string; files: string[]; gitlinks: string[]; sparseDirs: string[]; stats: GitIndex['stats'] }
  | undefined {
  const { an } = g.inv;
  const fs = an.ctx.fs;
  const repo = repositoryOf(g, forDiff);
  if (!repo || repo === 'none' || !fs?.readHead) return undefined;
  const { top, gitDir, base } = repo;
  let bytes: Uint8Array | undefined;
  try {
    bytes = fs.readHead(`${gitDir}/index`, MAX_GIT_INDEX_BYTES + 1);
  } catch {
    return undefined;
  }
  if (!bytes || bytes.length > MAX_GIT_INDEX_BYTES) return undefined;
  const common = an.readText(`${gitDir}/commondir`)?.trim();
  const config = an.readText(`${common ? (common.startsWith('/') ? common : `${gitDir}/${common}`) : gitDir}/config`) ?? '';
  const index = parseGitIndex(bytes, /^\s*objectformat\s*=\s*sha256\s*$/im.test(config) ? 32 : 20);
  if (!index) return undefined;
  const cwdRel = base === top ? '' : base.slice(top.length + 1);
  // Each pathspec as the directory (relative to the top) whose tracked files it may match.
  const prefixes: string[] = [];
  for (const w of pathspecs.length ? pathspecs : [DOT]) {
    if (w.dynamic) return undefined;
    if (w.text.startsWith(':')) {
      prefixes.push('');
      continue;
    } // magic (`:/`, `:!x`): anything in the repository
    const glob = w.text.search(/[*?[\\]/);
    let lit = glob < 0 ? w.text : w.text.slice(0, w.text.slice(0, glob).lastIndexOf('/') + 1);
    const parts: string[] = cwdRel ? cwdRel.split('/') : [];
    for (const part of lit.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (!parts.length) return undefined;
        parts.pop();
      } else parts.push(part);
    }
    lit = parts.join('/');
    prefixes.push(lit);
  }
  const under = (f: string) => prefixes.some((p) => p === '' || f === p || f.startsWith(`${p}/`) || p.startsWith(`${f}/`));
  const files = index.files.filter(under);
  if (files.length > MAX_TRACKED_READS) return undefined;
  return {
    top,
    gitDir,
    cwdRel,
    files,
    gitlinks: index.gitlinks.filter(under),
    sparseDirs: index.sparseDirs.filter(under),
    stats: index.stats,
  };
}

/**
 * The repository around the working directory, found through the port as git finds it (`.git` a directory, or a
 * file naming the git directory); 'none' when there is none up to `/`; undefined when it cannot be known: no port,
 * another repository or index (--git-dir, GIT_* variables), or something earlier on the line that changed files.
 */
function repositoryOf(g: GitCtx, forDiff = false): { top: string; gitDir: string; base: string } | 'none' | undefined {
  const { an } = g.inv;
  const fs = an.ctx.fs;
  const base = g.scope.bases.length === 1 ? g.scope.bases[0] : null;
  if (!fs?.statFile || g.otherRepo || base === null || base === undefined || !base.startsWith('/')) return undefined;
  // git diff: an earlier index change that only staged or committed what is in the work tree leaves its answer a superset.
  if ((forDiff ? indexState(an).diverged : indexState(an).changed) || an.effectCount() > 0) return undefined;
  if ([...g.scope.vars.keys()].some((k) => k.startsWith('GIT_'))) return undefined;
  let dir = base.replace(/\/+$/, '') || '/';
  for (let guard = 0; guard < 64; guard++) {
    const at = dir === '/' ? '' : dir;
    let facts;
    try {
      facts = fs.statFile(`${at}/.git`);
    } catch {
      return undefined;
    }
    if (facts?.kind === 'directory') return { top: dir, gitDir: `${at}/.git`, base };
    if (facts?.kind === 'file') {
      // A worktree or submodule: `.git` names its git directory (which has its own index).
      const link = /^gitdir:\s*(.+?)\s*$/m.exec(an.readText(`${at}/.git`) ?? '')?.[1];
      if (!link) return undefined;
      return { top: dir, gitDir: link.startsWith('/') ? link : `${at}/${link}`, base };
    }
    if (dir === '/') return 'none';
    dir = dir.slice(0, dir.lastIndexOf('/')) || '/';
  }
  return undefined;
}

/**
 * What `git diff` (and `git status -vv`) print from the work tree: the changes of tracked files below `pathspecs`
 * (the top of the work tree when there are none), so their content. From the index when it can be read: the tracked
 * files git would see as changed (below); none outside a repository or in one with no index yet (nothing is
 * tracked); else everything below.
 */
function worktreeContentReads(g: GitCtx, pathspecs: readonly WordValue[]): void {
  const { an } = g.inv;
  const repo = repositoryOf(g, true);
  if (repo === 'none') return;
  const roots = pathspecs.length ? pathspecs : [repo ? literalWord(repo.top) : DOT];
  const conservative = () => {
    for (const r of roots) an.readBelow(r, g.scope, 'contents');
  };
  if (repo) {
    let index;
    try {
      index = an.ctx.fs?.statFile?.(`${repo.gitDir}/index`);
    } catch {
      return conservative();
    }
    if (index === undefined) return;
  }
  const tracked = trackedPaths(g, pathspecs.length ? pathspecs : [literalWord(':/')], true);
  if (!tracked) return conservative();
  let indexTime: bigint | undefined;
  try {
    const m = an.ctx.fs?.statFile?.(`${tracked.gitDir}/index`)?.mtime;
    indexTime = m === undefined ? undefined : BigInt(m);
  } catch {
    indexTime = undefined;
  }
  for (const f of tracked.files) {
    const file = `${tracked.top}/${f}`;
    if (indexTime !== undefined && unchangedSinceIndexed(an, file, tracked.stats.get(f), indexTime)) continue;
    an.read(literalWord(file), g.scope);
  }
  for (const d of tracked.sparseDirs) an.readBelow(literalWord(`${tracked.top}/${d}`), g.scope, 'contents');
  indexState(an).reliedByDiff.push(conservative);
}

/**
 * Does git take this tracked file as unchanged without looking at its content: its size, inode, change and
 * modification times (to the nanosecond) all as the index recorded them, and the entry not racily clean (recorded
 * in the same instant as the index was written or later, which git re-checks by content). A write changes the
 * change time, which no one can set back, so a file that passes has not been written since git indexed it.
 */
function unchangedSinceIndexed(an: Inv['an'], file: string, recorded: IndexStatOrNull, indexTime: bigint): boolean {
  if (!recorded) return false;
  let facts;
  try {
    facts = an.ctx.fs?.statFile?.(file);
  } catch {
    return false;
  }
  if (!facts || facts.kind !== 'file') return false;
  if (BigInt(recorded.mtime) >= indexTime) return false;
  return (
    facts.mtime === recorded.mtime &&
    facts.ctime === recorded.ctime &&
    facts.size % 2 ** 32 === recorded.size &&
    BigInt(facts.ino) % 2n ** 32n === BigInt(recorded.ino)
  );
}
type IndexStatOrNull = GitIndex['stats'] extends ReadonlyMap<string, infer V> ? V | undefined : never;

const writeBase = (g: GitCtx) => g.inv.an.write(DOT, g.scope);

const GIT_SUBCOMMANDS: Record<string, (g: GitCtx) => void> = {
  clone(g) {
    const p = parseOpts(g.rest, {
      short: 'bocju',
      long: [
        'branch',
        'origin',
        'config',
        'depth',
        'reference',
        'reference-if-able',
        'template',
        'upload-pack',
        'separate-git-dir',
        'jobs',
        'filter',
        'shallow-since',
        'shallow-exclude',
        'server-option',
        'bundle-uri',
        'ref-format',
        'revision',
      ],
      flags: ['recurse-submodules', 'recursive', 'bare', 'mirror', 'single-branch', 'no-checkout', 'quiet', 'verbose'],
    });
    for (const c of values(p, '-c', '--config')) gitConfigCheck(g.inv, c);
    if (has(p, '-u', '--upload-pack')) g.inv.an.opaque('git clone --upload-pack runs a command');
    for (const t of values(p, '--template', '--reference', '--reference-if-able')) g.inv.an.read(t, g.scope);
    const [repo, dir] = p.pos;
    if (!repo) return;
    gitRemote(g.inv, repo);
    if (dir) return void g.inv.an.write(dir, g.scope);
    if (repo.dynamic) return void g.inv.an.opaque('git clone destination comes from a non-literal URL');
    // The "humanish" part of the repository: last path component without `.git`.
    const human =
      repo.text
        .replace(/[\\/]+$/, '')
        .replace(/\.git$/, '')
        .replace(/[\\/]+$/, '')
        .split(/[\\/:]/)
        .pop() ?? '';
    g.inv.an.write(human ? literalWord(human + (has(p, '--bare', '--mirror') ? '.git' : '')) : DOT, g.scope);
  },
  fetch(g) {
    const p = parseOpts(g.rest, {
      long: [
        'upload-pack',
        'depth',
        'deepen',
        'shallow-since',
        'shallow-exclude',
        'jobs',
        'recurse-submodules-default',
        'refmap',
        'server-option',
        'negotiation-tip',
        'filter',
      ],
      short: 'j',
    });
    if (has(p, '--upload-pack')) g.inv.an.opaque('git fetch --upload-pack runs a command');
    if (p.pos[0]) gitRemote(g.inv, p.pos[0]);
  },
  pull(g) {
    const p = parseOpts(g.rest, { short: 'sXj', long: ['strategy', 'strategy-option', 'upload-pack', 'depth', 'jobs', 'rebase'] });
    if (has(p, '--upload-pack')) g.inv.an.opaque('git pull --upload-pack runs a command');
    if (p.pos[0]) gitRemote(g.inv, p.pos[0]);
    writeBase(g);
  },
  push(g) {
    const p = parseOpts(g.rest, { short: 'o', long: ['receive-pack', 'exec', 'repo', 'push-option', 'force-with-lease'] });
    if (has(p, '--receive-pack', '--exec')) g.inv.an.opaque('git push --receive-pack runs a command');
    const dest = lastValue(p, '--repo') ?? p.pos[0];
    if (!dest) return; // the branch's upstream: a configured remote
    gitRemote(g.inv, dest);
    if (dest.dynamic || !/^[\w.-]+$/.test(dest.text) || g.inv.an.addedRemotes.has(dest.text)) return;
    // A bare name is a remote: pushing to one the repository does not have configured sends it
    // wherever that name leads (a path, a rewritten URL): not known here.
    const remotes = configuredRemotes(g.inv, g.scope);
    if (remotes === undefined) {
      if (g.inv.an.ctx.fs) g.inv.an.opaque(`git push to \`${clip(dest.raw)}\`: the repository's configured remotes cannot be read`);
    } else if (!remotes.has(dest.text))
      g.inv.an.opaque(
        `git push to \`${clip(dest.raw)}\`, which is not a remote configured in this repository: where it sends the code cannot be known`,
      );
  },
  'ls-remote'(g) {
    const p = parseOpts(g.rest, { long: ['upload-pack', 'sort', 'server-option'] });
    if (has(p, '--upload-pack')) g.inv.an.opaque('git ls-remote --upload-pack runs a command');
    if (p.pos[0]) gitRemote(g.inv, p.pos[0]);
  },
  remote(g) {
    const sub = g.rest.find((w) => !w.text.startsWith('-'))?.text;
    if (sub === 'update' || sub === 'prune' || (sub === 'show' && !g.rest.some((w) => w.text === '-n'))) g.inv.an.net();
    if (sub === 'add' || sub === 'set-url') {
      // `git remote add NAME URL`: where later pushes and fetches go, reported (and checked) here.
      const p = parseOpts(g.rest, { short: 'tm', long: ['track', 'master', 'mirror'] });
      const ops = p.pos;
      const url = ops[ops.length - 1];
      if (url && ops.length >= 3) {
        if (url.dynamic || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url.text) || isRemoteSpec(url.text, g.inv.an.platform))
          gitRemote(g.inv, url);
        if (sub === 'add' && !ops[1]!.dynamic) g.inv.an.addedRemotes.add(ops[1]!.text);
      }
    }
  },
  submodule(g) {
    writeBase(g);
  },
  checkout(g) {
    const p = parseOpts(g.rest, {
      short: 'bBU',
      long: ['orphan', 'track', 'conflict', 'pathspec-from-file', 'unified', 'inter-hunk-context'],
    });
    for (const f of values(p, '--pathspec-from-file')) g.inv.an.read(f, g.scope);
    const { an } = g.inv;
    if (p.afterDashDash.length) {
      for (const f of p.afterDashDash) an.write(f, g.scope);
      return;
    }
    const ops = p.pos;
    if (ops.length === 0) return;
    if (ops.length >= 2) {
      // git checkout TREE-ISH FILE…
      for (const f of ops.slice(1)) an.write(f, g.scope);
      return;
    }
    const only = ops[0]!;
    // One operand: a branch (whole work tree changes) or a path.
    if (only.dynamic || (/[\\/.]/.test(only.text) && !has(p, '-b', '-B', '--orphan'))) an.write(only, g.scope);
    else if (!has(p, '-b', '-B', '--orphan') || ops.length) writeBase(g);
  },
  switch(g) {
    writeBase(g);
  },
  restore(g) {
    const p = parseOpts(g.rest, { short: 's', long: ['source', 'conflict', 'pathspec-from-file', 'unified', 'inter-hunk-context'] });
    for (const f of values(p, '--pathspec-from-file')) g.inv.an.read(f, g.scope);
    if (has(p, '-S', '--staged') && !has(p, '-W', '--worktree')) return;
    for (const f of p.pos) g.inv.an.write(f, g.scope);
  },
  reset(g) {
    const p = parseOpts(g.rest, { long: ['pathspec-from-file'] });
    if (has(p, '--hard', '--merge', '--keep')) writeBase(g);
  },
  clean(g) {
    const p = parseOpts(g.rest, { short: 'e', long: ['exclude'] });
    if (has(p, '-n', '--dry-run')) return;
    // It removes only what git does not track; which files those are, the analysis cannot know. Not an
    // attack, but with -x it also removes ignored files such as .env and local settings: a review.
    const where = p.pos.length ? p.pos.map((w) => `\`${clip(w.raw, 40)}\``).join(', ') : 'the working tree';
    g.inv.an.review(
      `git clean removes every untracked file below ${where}${has(p, '-x', '-X') ? ', ignored ones too (such as .env, build outputs and local settings)' : ''}; which files those are cannot be known before it runs`,
    );
  },
  stash(g) {
    const sub = g.rest.find((w) => !w.text.startsWith('-'))?.text;
    if (!sub || ['push', 'save', 'pop', 'apply', 'branch'].includes(sub)) writeBase(g);
  },
  apply(g) {
    const p = parseOpts(g.rest, { short: 'pC', long: ['exclude', 'include', 'directory', 'whitespace', 'build-fake-ancestor'] });
    for (const f of p.pos) if (f.text !== '-') g.inv.an.read(f, g.scope);
    if (has(p, '--check', '--stat', '--numstat', '--summary', '--cached')) return;
    // The files the patch names (after -p, default 1), below --directory.
    const strip = lastValue(p, '-p');
    const n = strip === undefined ? 1 : /^\d+$/.test(strip.text) ? Number(strip.text) : NaN;
    applyPatch(g.inv, p.pos, g.scope, n, 'git apply', lastValue(p, '--directory'));
  },
  am(g) {
    const p = parseOpts(g.rest, {
      short: 'pC',
      long: ['exclude', 'include', 'directory', 'whitespace', 'patch-format', 'resolvemsg', 'quoted-cr', 'empty'],
    });
    for (const f of p.pos) g.inv.an.read(f, g.scope);
    writeBase(g);
  },
  merge: writeBase,
  'cherry-pick': writeBase,
  revert: writeBase,
  rebase(g) {
    const p = parseOpts(g.rest, { short: 'sXx', long: ['onto', 'strategy', 'strategy-option', 'exec', 'gpg-sign', 'whitespace', 'empty'] });
    if (has(p, '-x', '--exec')) g.inv.an.opaque('git rebase --exec runs commands');
    writeBase(g);
  },
  rm(g) {
    const p = parseOpts(g.rest, { long: ['pathspec-from-file'] });
    if (has(p, '--cached', '-n', '--dry-run')) return;
    for (const f of p.pos) g.inv.an.del(f, g.scope);
  },
  mv(g) {
    const p = parseOpts(g.rest, {});
    if (p.pos.length < 2 || has(p, '-n', '--dry-run')) return;
    const dst = p.pos[p.pos.length - 1]!;
    g.inv.an.write(dst, g.scope);
    for (const s of p.pos.slice(0, -1)) {
      g.inv.an.del(s, g.scope);
      const c = childOf(dst, s, g.inv.an.platform);
      if (c) g.inv.an.write(c, g.scope);
    }
  },
  config(g) {
    const { an } = g.inv;
    const p = parseOpts(g.rest, { short: 'f', long: ['file', 'blob', 'type', 'default', 'comment', 'value'] });
    const readOnly =
      has(
        p,
        '--get',
        '--get-all',
        '--get-regexp',
        '--get-urlmatch',
        '-l',
        '--list',
        '--get-color',
        '--get-colorbool',
        '--show-origin',
        '--show-scope',
        '-e',
        '--edit',
      ) && !has(p, '-e', '--edit');
    let ops = p.pos;
    let sub = '';
    if (ops[0] && ['get', 'set', 'unset', 'list', 'edit', 'rename-section', 'remove-section'].includes(ops[0].text)) {
      sub = ops[0].text;
      ops = ops.slice(1);
    }
    const writes =
      !readOnly &&
      (sub === 'set' ||
        sub === 'unset' ||
        sub === 'edit' ||
        sub === 'rename-section' ||
        sub === 'remove-section' ||
        has(p, '-e', '--edit', '--unset', '--unset-all', '--add', '--replace-all', '--rename-section', '--remove-section') ||
        (sub === '' && ops.length >= 2));
    if (!writes) return;
    // Judged by the key and value it sets, and by the file it writes (the tables protect them).
    const plain = ops[0]
      ? gitConfigCheck(
          g.inv,
          ops[0],
          sub === 'unset' || has(p, '--unset', '--unset-all') ? literalWord('') : (ops[1] ?? lastValue(p, '--value')),
        )
      : undefined;
    const file = lastValue(p, '-f', '--file');
    const home = g.scope.home;
    // One plain setting in the user's or the repository's git configuration: the file is protected because
    // other keys in it run commands; this one cannot, so it is a review, not a refusal.
    const simple =
      plain !== undefined &&
      !has(p, '-e', '--edit', '--rename-section', '--remove-section', '--add', '--replace-all') &&
      sub !== 'edit' &&
      sub !== 'rename-section' &&
      sub !== 'remove-section';
    if (simple && !file && !has(p, '--system', '--worktree')) {
      an.review(
        `git config sets \`${clip(plain, 40)}\`, a setting that runs no command, in ${has(p, '--global') ? '~/.gitconfig' : '.git/config'}`,
      );
      return;
    }
    if (file) an.write(file, g.scope);
    else if (has(p, '--global')) an.write(literalWord(home !== null ? `${home}/.gitconfig` : '~/.gitconfig'), g.scope);
    else if (has(p, '--system')) an.write(literalWord('/etc/gitconfig'), g.scope);
    else if (has(p, '--worktree')) an.write(literalWord('.git/config.worktree'), g.scope);
    else an.write(literalWord('.git/config'), g.scope);
  },
  init(g) {
    const p = parseOpts(g.rest, {
      long: ['template', 'separate-git-dir', 'object-format', 'ref-format', 'initial-branch', 'shared'],
      short: 'b',
    });
    for (const t of values(p, '--template')) g.inv.an.read(t, g.scope);
    if (p.pos[0]) g.inv.an.write(p.pos[0], g.scope);
    else g.inv.an.write(literalWord('.git'), g.scope);
  },
  worktree(g) {
    const p = parseOpts(g.rest, { short: 'bB', long: ['reason', 'expire'] });
    const [sub, path] = p.pos;
    if (!sub || !path) return;
    if (sub.text === 'add') g.inv.an.write(path, g.scope);
    else if (sub.text === 'remove') g.inv.an.del(path, g.scope);
    else if (sub.text === 'move') {
      g.inv.an.del(path, g.scope);
      if (p.pos[2]) g.inv.an.write(p.pos[2], g.scope);
    }
  },
  archive(g) {
    const p = parseOpts(g.rest, {
      short: 'o',
      long: ['output', 'format', 'prefix', 'remote', 'exec', 'add-file', 'add-virtual-file', 'mtime'],
    });
    for (const o of values(p, '-o', '--output')) g.inv.an.write(o, g.scope);
    const remote = values(p, '--remote');
    for (const r of remote) {
      g.inv.an.net();
      gitRemote(g.inv, r);
    }
    for (const f of values(p, '--add-file')) g.inv.an.read(f, g.scope);
    if (has(p, '--exec')) g.inv.an.opaque('git archive --exec runs a command');
    if (remote.length) return;
    // `git archive HEAD .env secrets/`: the named paths (and everything below them) are read; so is
    // a tree named by path (`HEAD:secrets`).
    const [tree, ...paths] = p.pos;
    const inTree = tree && !tree.dynamic ? revPath(tree.text) : undefined;
    if (inTree) g.inv.an.readBelow(literalWord(inTree), g.scope, 'contents');
    for (const f of paths) g.inv.an.readBelow(inTree && !f.dynamic ? literalWord(`${inTree}/${f.text}`) : f, g.scope, 'contents');
  },
  bundle(g) {
    const [sub, file] = g.rest.filter((w) => !w.text.startsWith('-'));
    if (!sub || !file) return;
    if (sub.text === 'create') g.inv.an.write(file, g.scope);
    else g.inv.an.read(file, g.scope);
  },
  'format-patch'(g) {
    const p = parseOpts(g.rest, {
      short: 'ov',
      long: ['output-directory', 'subject-prefix', 'start-number', 'suffix', 'in-reply-to', 'to', 'cc', 'from', 'add-header'],
    });
    g.inv.an.write(lastValue(p, '-o', '--output-directory') ?? DOT, g.scope);
  },
  add(g) {
    const p = parseOpts(g.rest, { long: ['chmod', 'pathspec-from-file'] });
    for (const f of values(p, '--pathspec-from-file')) g.inv.an.read(f, g.scope);
    for (const f of p.pos) g.inv.an.read(f, g.scope);
  },
  commit(g) {
    const p = parseOpts(g.rest, {
      short: 'mFcCt',
      long: [
        'message',
        'file',
        'reedit-message',
        'reuse-message',
        'fixup',
        'squash',
        'author',
        'date',
        'template',
        'cleanup',
        'trailer',
        'pathspec-from-file',
        'gpg-sign',
      ],
    });
    for (const f of values(p, '-F', '--file', '-t', '--template', '--pathspec-from-file')) if (f.text !== '-') g.inv.an.read(f, g.scope);
  },
  status(g) {
    // Names only, unless given -v twice: then also the changes in the work tree, as `git diff` prints them.
    const p = parseOpts(g.rest, {});
    genericReads({ ...g.inv, scope: g.scope }, g.rest);
    if (p.opts.filter((o) => o.name === '-v' || o.name === '--verbose').length >= 2) worktreeContentReads(g, p.pos);
  },
  diff: gitShowsFiles('diff'),
  show: gitShowsFiles('show'),
  log: gitShowsFiles('log'),
  whatchanged: gitShowsFiles('log'),
  'cat-file'(g) {
    const p = parseOpts(g.rest, { long: ['path', 'batch', 'batch-check', 'batch-command', 'filters', 'textconv'] });
    const content = !has(p, '-t', '-s', '-e', '--batch-check');
    if (has(p, '--batch', '--batch-command') || p.opts.some((o) => o.name === '--batch' && o.value)) {
      return void g.inv.an.opaque('git cat-file --batch prints the objects its input names');
    }
    const object = p.pos[p.pos.length - 1];
    if (!object || !content) return;
    const path = object.dynamic ? undefined : revPath(object.text);
    if (path !== undefined) g.inv.an.read(literalWord(path), g.scope);
    else if (object.dynamic || p.pos.length > 1 || has(p, '-p')) {
      // A blob by its id can hold any file the history ever had.
      g.inv.an.opaque(`git cat-file prints object \`${clip(object.raw)}\`, whose file cannot be known`);
    }
    for (const f of values(p, '--path')) g.inv.an.read(f, g.scope);
  },
  blame(g) {
    const p = parseOpts(g.rest, { short: 'LSC', long: ['contents', 'ignore-rev', 'ignore-revs-file', 'date', 'abbrev'] });
    for (const f of values(p, '--contents', '--ignore-revs-file', '-S')) g.inv.an.read(f, g.scope);
    for (const f of p.afterDashDash.length ? p.afterDashDash : p.pos.slice(-1)) g.inv.an.read(f, g.scope);
  },
  grep(g) {
    // git grep searches the tracked files below the working directory (or its pathspecs); with
    // --untracked or --no-index (or outside a repository) every file there, ignored ones too.
    const { an } = g.inv;
    const p = parseOpts(g.rest, {
      short: 'efABCm',
      long: ['regexp', 'file', 'after-context', 'before-context', 'context', 'max-count', 'threads', 'max-depth', 'open-files-in-pager'],
    });
    if (has(p, '-O', '--open-files-in-pager')) an.opaque('git grep -O runs a pager');
    for (const f of values(p, '-f', '--file')) if (f.text !== '-') an.read(f, g.scope);
    const operands = p.pos.filter((w) => !p.afterDashDash.includes(w));
    // The pattern comes first unless -e / -f give it; then revisions and paths (before `--`).
    const words = has(p, '-e', '--regexp', '-f', '--file') ? operands : operands.slice(1);
    const worktree = !has(p, '--untracked', '--no-index', '--recurse-submodules');
    const revs = worktree && !has(p, '--cached') ? words.filter((w) => !w.dynamic && REV_LIKE.test(w.text)) : [];
    const paths = [...words.filter((w) => !revs.includes(w)), ...p.afterDashDash];
    if (revs.length) {
      // A revision's tree is the repository's history (as `git show REV`): only the paths it names.
      for (const f of paths) an.read(f, g.scope);
      return;
    }
    const roots = paths.length ? paths : [DOT];
    const conservative = () => {
      for (const r of roots) an.readBelow(r, g.scope, 'contents');
    };
    const tracked = worktree ? trackedPaths(g, paths) : undefined;
    if (!tracked) return conservative();
    for (const r of roots) an.read(r, g.scope);
    for (const f of tracked.files) an.read(literalWord(`${tracked.top}/${f}`), g.scope);
    for (const d of tracked.sparseDirs) an.readBelow(literalWord(`${tracked.top}/${d}`), g.scope, 'contents');
    indexState(an).relied.push(conservative);
  },
  'ls-files'(g) {
    const p = parseOpts(g.rest, {
      short: 'xX',
      long: ['exclude', 'exclude-from', 'exclude-per-directory', 'with-tree', 'abbrev', 'format'],
    });
    for (const f of values(p, '-X', '--exclude-from')) g.inv.an.read(f, g.scope);
    const roots = p.pos.length ? p.pos : [DOT];
    for (const r of roots) g.inv.an.read(r, g.scope);
    // It prints the names of tracked files below its paths (for `git ls-files | xargs CMD`): from the
    // index when it can be read and the output is plain names, else any name below them.
    const below = () => g.inv.an.produce({ kind: 'below', roots, scope: g.scope, by: 'git ls-files' });
    const plain = p.opts.every((o) => ['-c', '--cached', '-z', '--full-name'].includes(o.name));
    const tracked = plain ? trackedPaths(g, p.pos) : undefined;
    if (!tracked || tracked.sparseDirs.length) return below();
    const full = has(p, '--full-name');
    const names: string[] = [];
    for (const f of [...tracked.files, ...tracked.gitlinks].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      const under = tracked.cwdRel === '' || f.startsWith(`${tracked.cwdRel}/`);
      if (!full && !under) return below(); // printed as ../x: relative to where git ran
      // git quotes names with control characters, quotes, backslashes or non-ASCII (core.quotePath): not plain.
      if (!has(p, '-z') && /[\x00-\x1f"\\\x7f-\uffff]/.test(f)) return below();
      names.push(full || tracked.cwdRel === '' ? f : f.slice(tracked.cwdRel.length + 1));
    }
    const sep = has(p, '-z') ? '\0' : '\n';
    g.inv.an.produce({ kind: 'text', text: names.map((n) => n + sep).join(''), by: 'git ls-files' });
    // A later git command on the line may change the index first (a pipeline runs at once).
    indexState(g.inv.an).relied.push(() => {
      for (const r of roots) g.inv.an.readBelow(r, g.scope, 'contents');
    });
  },
  hook(g) {
    g.inv.an.opaque('git hook runs repository hooks');
  },
};

/** The path of `REV:path` (`HEAD:.env`, `:0:.env`, `main:./x`); undefined for a bare revision or a URL. */
function revPath(t: string): string | undefined {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(t)) return undefined;
  const m = /^(?::[0-3]:|[^:]*:)(.+)$/.exec(t);
  if (!m) return undefined;
  return m[1]!.replace(/^\.\//, '') || undefined;
}

/** A revision, not a file: `HEAD~2`, `a..b`, `v1^{}`, `@{u}`, a commit id, `--`-less range operands. */
const REV_LIKE = /^(HEAD|FETCH_HEAD|ORIG_HEAD|MERGE_HEAD|@)([~^@].*)?$|\.\.|[~^]\d*$|@\{|^[0-9a-f]{7,64}$/;

/**
 * git diff/show/log print file contents (log with -p): a path named as `REV:path`, after `--`, or
 * as an operand that looks like a file (`.env`, `src/x`, `credentials.json`) is read.
 */
function gitShowsFiles(sub: 'diff' | 'show' | 'log'): (g: GitCtx) => void {
  return (g) => {
    // --relative, --stat, --word-diff, --color-moved, --pretty take a value only after `=`; --ext-diff none: listed
    // as taking one, they swallowed the next word (`git diff --word-diff .env` read no file).
    const p = parseOpts(g.rest, {
      long: [
        'output',
        'src-prefix',
        'dst-prefix',
        'diff-filter',
        'anchored',
        'ignore-matching-lines',
        'format',
        'author',
        'since',
        'until',
        'grep',
        'max-count',
        'skip',
        'date',
      ],
      flags: ['relative', 'stat', 'word-diff', 'color-moved', 'ext-diff', 'pretty', 'cached', 'staged', 'no-index', 'patch'],
      short: 'UOSGn',
    });
    const { an } = g.inv;
    for (const o of values(p, '--output')) an.write(o, g.scope);
    if (has(p, '--ext-diff')) an.opaque(`git ${sub} --ext-diff runs the configured diff program`);
    if (has(p, '--no-index')) return void p.pos.forEach((f) => an.read(f, g.scope));
    const patch =
      sub !== 'log' ||
      p.opts.some((o) => /^(-p|-u|-U|--patch|--patch-with-stat|--patch-with-raw|--unified|--word-diff|--cc|-c|--full-diff)$/.test(o.name));
    if (!patch) return;
    const pathspecs: WordValue[] = [];
    let revs = 0;
    for (const w of p.pos) {
      if (w.dynamic) continue;
      const inRev = revPath(w.text);
      if (inRev !== undefined) an.read(literalWord(inRev), g.scope);
      else if (p.afterDashDash.includes(w) || (!REV_LIKE.test(w.text) && (isPathLike(w, an.platform) || /\w\.\w/.test(w.text)))) {
        an.read(w, g.scope);
        pathspecs.push(w);
      } else revs += w.text.includes('..') ? 2 : 1;
    }
    // git diff [REV] compares the work tree (with the index or REV) and prints what changed in its files; two
    // revisions, a range or --cached compare history and the index only (their content is read where named).
    const printsContent =
      !has(
        p,
        '--stat',
        '--numstat',
        '--shortstat',
        '--name-only',
        '--name-status',
        '--summary',
        '--dirstat',
        '--raw',
        '--compact-summary',
        '--quiet',
        '-s',
        '--no-patch',
      ) || has(p, '-p', '-u', '--patch', '-U', '--unified', '--patch-with-stat', '--patch-with-raw');
    if (sub === 'diff' && printsContent && revs < 2 && !has(p, '--cached', '--staged')) worktreeContentReads(g, pathspecs);
  };
}

/**
 * The remotes a repository has configured (its `.git/config`, found from the working directory
 * upwards, and the user's ~/.gitconfig), read through the port; undefined when they cannot be read.
 */
function configuredRemotes(inv: Inv, scope: Scope): Set<string> | undefined {
  const { an } = inv;
  const base = scope.bases.length === 1 ? scope.bases[0] : null;
  if (!an.ctx.fs?.readText || base === null || base === undefined || !base.startsWith('/')) return undefined;
  let config: string | undefined;
  let dir = base.replace(/\/+$/, '') || '/';
  for (let guard = 0; guard < 64 && config === undefined; guard++) {
    const at = dir === '/' ? '' : dir;
    config = an.readText(`${at}/.git/config`);
    if (config === undefined) {
      // A worktree or submodule: `.git` is a file naming the git directory.
      const link = /^gitdir:\s*(.+?)\s*$/m.exec(an.readText(`${at}/.git`) ?? '')?.[1];
      if (link) {
        const gitDir = link.startsWith('/') ? link : `${at}/${link}`;
        const common = an.readText(`${gitDir}/commondir`)?.trim();
        config = an.readText(`${common ? (common.startsWith('/') ? common : `${gitDir}/${common}`) : gitDir}/config`);
      }
    }
    if (dir === '/') break;
    dir = dir.slice(0, dir.lastIndexOf('/')) || '/';
  }
  if (config === undefined) return undefined;
  const remotes = new Set<string>();
  const home = scope.home;
  for (const text of [config, home ? (an.readText(`${home}/.gitconfig`) ?? '') : '']) {
    for (const m of text.matchAll(/^\s*\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]/gm)) remotes.add(m[1]!.replace(/\\(.)/g, '$1'));
  }
  return remotes;
}
