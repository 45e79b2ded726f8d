// find and fd: the names below their starting points, and what -delete/-exec/-x do with them.
import { has, lastValue, parseOpts, values } from '../options';
import { literalWord, type WordValue } from '../words';
import { DOT, register, type Inv, type Registry } from '../helpers';
import {
  MAX_FIND_SELECTED,
  evaluateFind,
  parseFindExpression,
  removesEachEntry,
  type FindEnv,
  type FindRun,
  type PrintedName,
} from '../find-expr';
import { isAbsolute } from '../../paths';

export const FIND_COMMANDS: Registry = new Map();
const reg = (names: string | readonly string[], fn: (inv: Inv) => void) => register(FIND_COMMANDS, names, fn);

// ------------------------------------------------------------------------------------------
// find: lists its starting points; -delete removes, -exec runs a command on files under them.

/** Operators that make the files reaching an action more than "the entries that pass every test". */
const FIND_OR = new Set(['-o', '-or', ',', '(', ')']);

/**
 * The pattern of the only -name/-iname test before the action at `end`, when everything before it
 * is a plain conjunction; else undefined. The other tests (-type, -path, -mtime, `! -path X`…)
 * only narrow the set further, so ignoring them gives a superset; tests after the action do not
 * filter what it acts on (`find . -delete -name x` deletes everything).
 */
function nameTestBefore(expr: readonly WordValue[], end: number): string | undefined {
  let name: string | undefined;
  for (let k = 0; k < end; k++) {
    const w = expr[k]!;
    if (w.dynamic || FIND_OR.has(w.text)) return undefined;
    if (w.text === '!' || w.text === '-not') {
      // A negated name test selects everything but that name.
      const next = expr[k + 1];
      if (!next || next.dynamic || next.text === '-name' || next.text === '-iname' || FIND_OR.has(next.text)) return undefined;
      continue;
    }
    if (w.text === '-name' || w.text === '-iname') {
      const v = expr[k + 1];
      if (name !== undefined || !v || v.dynamic || v.text === '' || v.text.includes('/')) return undefined;
      name = v.text;
      k++;
    } else if (w.text === '-exec' || w.text === '-execdir' || w.text === '-ok' || w.text === '-okdir') {
      // An earlier -exec is a test on its command's exit status: it narrows too. Its words are not tests.
      while (k + 1 < end && expr[k + 1]!.text !== ';' && expr[k + 1]!.text !== '+') k++;
      k++;
    } else if (FIND_VALUED.has(w.text)) k++;
  }
  return name;
}

/** find actions that run a command on each entry, and those that print entry names (to stdout or a file). */
const FIND_RUNS = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const FIND_PRINTS = new Set(['-print', '-print0', '-printf', '-ls', '-fprint', '-fprint0', '-fprintf', '-fls']);

const FIND_VALUED = new Set([
  '-name',
  '-iname',
  '-path',
  '-ipath',
  '-wholename',
  '-iwholename',
  '-regex',
  '-iregex',
  '-lname',
  '-ilname',
  '-type',
  '-xtype',
  '-size',
  '-perm',
  '-user',
  '-group',
  '-uid',
  '-gid',
  '-mtime',
  '-mmin',
  '-atime',
  '-amin',
  '-ctime',
  '-cmin',
  '-used',
  '-samefile',
  '-inum',
  '-links',
  '-maxdepth',
  '-mindepth',
  '-printf',
  '-fstype',
  '-context',
  '-regextype',
  '-anewer',
  '-cnewer',
]);

reg('find', (inv) => {
  const { an, scope } = inv;
  const args = inv.args;
  let i = 0;
  while (i < args.length) {
    const t = args[i]!.text;
    if (t === '-H' || t === '-L' || t === '-P' || /^-O\d*$/.test(t)) i++;
    else if (t === '-D') i += 2;
    else break;
  }
  const roots: WordValue[] = [];
  for (; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (!w.dynamic && ((t.startsWith('-') && t.length > 1) || t === '(' || t === '!' || t === ')' || t === ',')) break;
    roots.push(w);
  }
  if (roots.length === 0) roots.push(DOT);
  // Following symbolic links (-L, -H, -follow) reaches entries a listing of the roots does not show.
  const follows = args.slice(0, i).some((w) => w.text === '-L' || w.text === '-H') || args.slice(i).some((w) => w.text === '-follow');
  const exprStart = i;
  const nameAt = (at: number) => (follows ? undefined : nameTestBefore(args.slice(exprStart), at - exprStart));
  const walk = follows ? undefined : findWalk(inv, roots, exprStart);
  // What find reveals below its roots: a command run on each entry reads its contents; a printing
  // action (or none, which means -print) lists the names that pass the tests; -delete and
  // `-exec rm {} +` alone show nothing. A lone -name test before the action narrows the entries.
  const runsAt = args.findIndex((w, j) => j >= i && FIND_RUNS.has(w.text) && !removesEachEntry(args, j + 1));
  const printsAt = args.findIndex((w, j) => j >= i && FIND_PRINTS.has(w.text));
  const anyAction = args.some((w, j) => j >= i && (FIND_PRINTS.has(w.text) || FIND_RUNS.has(w.text) || w.text === '-delete'));
  const filter = (at: number) => {
    const n = nameAt(at);
    return n === undefined ? undefined : [n];
  };
  for (const r of roots) {
    if (runsAt >= 0) an.readBelow(r, scope, 'contents', filter(runsAt));
    if (printsAt >= 0 || !anyAction) {
      // The names it prints, when tests beyond a name select them and the walk knows them all: only those are listed.
      const printed = walk?.expression.beyondNames ? walk.printedNames(r) : undefined;
      if (printed === undefined) an.readBelow(r, scope, 'names', filter(printsAt >= 0 ? printsAt : args.length));
      else if (printed.length) an.readBelow(r, scope, 'names', printed.map(escapeGlob));
      else an.read(r, scope);
    }
    if (runsAt < 0 && printsAt < 0 && anyAction) an.read(r, scope);
  }
  // What it prints are names below its roots (for `find … | xargs CMD`): their exact text when
  // the walk knows it, else only where they are.
  if (runsAt < 0 && (printsAt >= 0 || !anyAction)) {
    const text = walk?.printedText();
    an.produce(
      text !== undefined
        ? { kind: 'text', text, by: 'find' }
        : { kind: 'below', roots, names: filter(printsAt >= 0 ? printsAt : args.length), scope, by: 'find' },
    );
  }
  // What -delete or `-exec rm {} +` removes: the entries the expression selects on disk (find-expr.ts);
  // with one -name test that decides alone, the entries with that name below each root, including
  // protected names not on disk yet; otherwise the whole root.
  const removeAt = (at: number) => {
    const name = nameAt(at);
    for (const r of roots) {
      const exact = name !== undefined && !walk?.expression.beyondNames ? undefined : walk?.actedOn(r, at);
      if (exact) for (const p of exact) an.del(literalWord(p), scope);
      else if (name === undefined || !an.deleteMatchingBelow(r, name, scope)) an.del(r, scope);
    }
  };
  for (; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === '-delete') {
      removeAt(i);
    } else if ((t === '-exec' || t === '-execdir' || t === '-ok' || t === '-okdir') && removesEachEntry(args, i + 1)) {
      // `-exec rm -rf {} +`: as -delete, and everything below each match goes with it.
      an.pushCommand(args[i + 1]!.text.replace(/^.*\//, ''));
      removeAt(i);
      while (i + 1 < args.length && args[i + 1]!.text !== ';' && args[i + 1]!.text !== '+') i++;
      i++;
    } else if (t === '-exec' || t === '-execdir' || t === '-ok' || t === '-okdir') {
      const cmd: WordValue[] = [];
      let j = i + 1;
      for (; j < args.length; j++) {
        const a = args[j]!;
        if (!a.dynamic && (a.text === ';' || (a.text === '+' && j > i + 1 && args[j - 1]!.text.includes('{}')))) break;
        cmd.push(a);
      }
      i = j;
      const inDir = t === '-execdir' || t === '-okdir';
      // `{}` stands for files under each starting point; -execdir runs inside their directories.
      for (const r of roots) {
        const s = inDir ? an.chdir(scope, r) : scope;
        const argv = cmd.map((w) => (!w.dynamic && w.text.includes('{}') ? (inDir ? DOT : r) : w));
        if (argv.length) an.runArgv(argv, s, { stdin: 'tty' }, { noFunctions: true });
      }
    } else if (t === '-fprint' || t === '-fprint0' || t === '-fls') {
      const f = args[++i];
      if (f) an.write(f, scope);
    } else if (t === '-fprintf') {
      const f = args[++i];
      if (f) an.write(f, scope);
      i++;
    } else if (t === '-files0-from' || t === '-newer') {
      const f = args[++i];
      if (f) an.read(f, scope);
    } else if (FIND_VALUED.has(t) || /^-newer[amctB]{2}$/.test(t)) i++;
  }
});

/** A name as a glob that matches only itself. */
const escapeGlob = (name: string): string => name.replace(/[\\*?[\]{}()!+@,]/g, '\\$&');

/** Most names find's exact output is passed on with (xargs models up to 256 items: commands.ts). */
const MAX_PRINTED_FEED = 200;

/**
 * find's expression evaluated on the trees below its roots (find-expr.ts), each root walked once
 * when first asked: what an action acts on below a root, and the exact text it prints. Undefined
 * when the expression cannot be modelled; the questions answer undefined for a root that cannot be walked.
 */
function findWalk(inv: Inv, roots: readonly WordValue[], exprStart: number) {
  const { an, scope } = inv;
  const fs = an.ctx.fs;
  if (!fs || an.platform === 'win32') return undefined;
  const env: FindEnv = {
    fs,
    clock: an.ctx.clock,
    resolve: (text) => an.resolveText(text, scope).filter((p) => isAbsolute(p, an.platform)),
  };
  const expression = parseFindExpression(inv.args, exprStart, env);
  if (!expression) return undefined;
  const runs = new Map<WordValue, FindRun[] | undefined>();
  const runsOf = (r: WordValue): FindRun[] | undefined => {
    if (!runs.has(r)) {
      let out: FindRun[] | undefined;
      if (!r.dynamic && !r.glob && r.text !== '') {
        const paths = an.resolveText(r.text, scope);
        if (paths.length > 0 && paths.every((p) => isAbsolute(p, an.platform))) {
          out = [];
          for (const p of paths) {
            const run = evaluateFind(expression, r.text, p, env);
            if (!run) {
              out = undefined;
              break;
            }
            out.push(run);
          }
        }
      }
      runs.set(r, out);
    }
    return runs.get(r);
  };
  /** Every name find writes to standard output below `root`, when -print and -print0 are all that write names there. */
  const printedBelow = (root: WordValue): PrintedName[] | undefined => {
    if ([...expression.actions.values()].some((k) => k === 'other')) return undefined;
    const rs = runsOf(root);
    if (!rs || rs.some((run) => run.printed.length > MAX_FIND_SELECTED)) return undefined;
    return rs.flatMap((run) => run.printed);
  };
  return {
    expression,
    /** The base names find prints below `root` (possibly, whatever the clock says), or undefined when they are not all known. */
    printedNames(root: WordValue): string[] | undefined {
      const printed = printedBelow(root);
      return printed && [...new Set(printed.map((p) => p.shown.replace(/\/+$/, '').replace(/^.*\//, '')))];
    },
    /** The entries below `root` the action at args[at] acts on (absolute), or undefined when they are not all known. */
    actedOn(root: WordValue, at: number): string[] | undefined {
      const acted = runsOf(root)?.map((run) => run.actedOn.get(at));
      if (!acted || acted.some((a) => !a || a.truncated)) return undefined;
      return acted.flatMap((a) => a!.paths);
    },
    /**
     * What find writes to standard output, when nothing else than -print or -print0 writes there, each
     * root has one known directory, and every name is printed whatever the clock says and splits as
     * xargs would split it (-print: no blanks, quotes or backslashes in it).
     */
    printedText(): string | undefined {
      if ([...expression.actions.values()].some((k) => k === 'other' || k === 'remove')) return undefined;
      const printed: PrintedName[] = [];
      for (const r of roots) {
        if (runsOf(r)?.length !== 1) return undefined;
        const names = printedBelow(r);
        if (!names) return undefined;
        printed.push(...names);
      }
      // A start directory printed as `.` would reach `xargs rm` as the whole directory (which rm refuses to remove).
      if (
        printed.length > MAX_PRINTED_FEED ||
        printed.some((p) => !p.certain || /(^|\/)\.\.?\/*$/.test(p.shown) || (p.terminator === '\n' && /[\s'"\\]/.test(p.shown)))
      )
        return undefined;
      return printed.map((p) => p.shown + p.terminator).join('');
    },
  };
}

// ------------------------------------------------------------------------------------------
// fd: lists the names below its search paths, skipping hidden entries unless -H/-u (or an ignore
// file given with --ignore-file, whose `!` lines may re-include some). -x/-X run a command per match
// (opaque: the command table leaves them unjudged). --base-directory changes the directory.

reg(['fd', 'fdfind'], (inv) => {
  const { an } = inv;
  const p = parseOpts(inv.args, {
    short: 'edtESjcoxX',
    long: [
      'extension',
      'max-depth',
      'min-depth',
      'exact-depth',
      'type',
      'exclude',
      'size',
      'changed-within',
      'changed-before',
      'newer',
      'older',
      'owner',
      'threads',
      'color',
      'max-results',
      'base-directory',
      'path-separator',
      'search-path',
      'ignore-file',
      'format',
      'batch-size',
      'max-buffer-time',
      'and',
      'exec',
      'exec-batch',
      'hyperlink',
      'strip-cwd-prefix',
    ],
    flags: [
      'hidden',
      'no-hidden',
      'no-ignore',
      'no-ignore-vcs',
      'no-ignore-parent',
      'unrestricted',
      'case-sensitive',
      'ignore-case',
      'glob',
      'regex',
      'fixed-strings',
      'absolute-path',
      'list-details',
      'follow',
      'full-path',
      'print0',
      'prune',
      'one-file-system',
      'quiet',
      'show-errors',
      'help',
      'version',
    ],
  });
  if (has(p, '-x', '--exec', '-X', '--exec-batch')) an.opaque(`${inv.cmd} -x/-X runs a command on what it finds`);
  let scope = inv.scope;
  const base = lastValue(p, '--base-directory');
  if (base) scope = an.chdir(scope, base);
  for (const f of values(p, '--ignore-file')) an.read(f, scope);
  // The pattern comes first (unless it follows --and only); the rest are the directories searched.
  const roots = [...p.pos.slice(1), ...values(p, '--search-path')];
  const skipsHidden = !has(p, '-H', '--hidden', '-u', '--unrestricted', '--ignore-file');
  for (const r of roots.length ? roots : [DOT]) an.readBelow(r, scope, 'names', undefined, skipsHidden);
});
