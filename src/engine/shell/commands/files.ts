// Handlers for commands that read, write or delete files: coreutils, editors, searchers, checksums, binary
// inspectors, developer tools (archives: archives.ts; find and fd: find.ts; simple readers: the operand table).
import { has, lastValue, parseOpts, values, type OptSpec, type Parsed } from '../options';
import { literalWord, sliceWord, type WordValue } from '../words';
import { DOT, baseName, childOf, clip, dirWord, genericReads, joinWord, register, type Inv, type Registry } from '../helpers';
import type { Scope } from '../state';
import { filesOfPatch, stripped } from '../patch-text';

export const FILE_COMMANDS: Registry = new Map();
const reg = (names: string | readonly string[], fn: (inv: Inv) => void) => register(FILE_COMMANDS, names, fn);

// ------------------------------------------------------------------------------------------
// Deleting.

reg('rmdir', (inv) => {
  const p = parseOpts(inv.args, { flags: ['ignore-fail-on-non-empty', 'parents', 'verbose'] });
  const parents = has(p, '-p', '--parents');
  for (const w of p.pos) {
    inv.an.del(w, inv.scope);
    if (!parents || w.dynamic || w.glob) continue;
    // rmdir -p a/b/c also removes a/b and a.
    let t = w.text.replace(/\/+$/, '');
    for (let i = t.lastIndexOf('/'); i > 0; i = t.lastIndexOf('/')) {
      t = t.slice(0, i);
      inv.an.del(literalWord(t), inv.scope);
    }
  }
});

reg('shred', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'ns',
    long: ['iterations', 'size', 'random-source'],
    flags: ['exact', 'force', 'verbose', 'zero', 'remove'],
  });
  for (const r of values(p, '--random-source')) inv.an.read(r, inv.scope);
  const remove = has(p, '-u', '--remove');
  for (const w of p.pos) {
    if (w.text === '-') continue;
    inv.an.write(w, inv.scope);
    if (remove) inv.an.del(w, inv.scope);
  }
});

// ------------------------------------------------------------------------------------------
// Copying, moving, linking.

const COPY_FLAGS = [
  'archive',
  'attributes-only',
  'backup',
  'copy-contents',
  'no-dereference',
  'force',
  'interactive',
  'link',
  'dereference',
  'no-clobber',
  'no-target-directory',
  'one-file-system',
  'parents',
  'recursive',
  'remove-destination',
  'strip-trailing-slashes',
  'symbolic-link',
  'update',
  'verbose',
  'preserve',
  'no-preserve',
  'reflink',
  'sparse',
  'context',
  'debug',
  'keep-directory-symlink',
  'exchange',
  'no-copy',
  'help',
  'version',
];

/** cp/mv/install: SOURCES… DEST, or -t DIR SOURCES…. */
function copyLike(inv: Inv, spec: OptSpec, mode: 'copy' | 'move'): void {
  const { an, scope } = inv;
  const p = parseOpts(inv.args, spec);
  const targetDir = lastValue(p, '-t', '--target-directory');
  let sources: WordValue[];
  let dest: WordValue;
  if (targetDir) {
    sources = p.pos;
    dest = targetDir;
  } else {
    if (p.pos.length < 2) {
      if (p.pos.length === 1) an.error(`${inv.cmd}: missing destination operand`);
      return;
    }
    sources = p.pos.slice(0, -1);
    dest = p.pos[p.pos.length - 1]!;
  }
  const noTargetDir = !targetDir && has(p, '-T', '--no-target-directory');
  const parents = has(p, '--parents');
  // A recursive copy reads everything below a directory it copies (`cp -r ~ ./copy`).
  const recursive = mode === 'copy' && has(p, '-r', '-R', '-a', '--recursive', '--archive');
  an.write(dest, scope);
  for (const s of sources) {
    if (mode === 'move') an.del(s, scope);
    else if (recursive) an.readBelow(s, scope, 'contents');
    else an.read(s, scope);
    if (noTargetDir) continue;
    if (parents && !s.dynamic && !s.glob && !/^[\\/]/.test(s.text)) {
      an.write(joinWord(dest, s.text, an.platform), scope);
      continue;
    }
    const child = childOf(dest, s, an.platform);
    if (child) an.write(child, scope);
  }
}

reg('cp', (inv) => copyLike(inv, { short: 'tS', long: ['target-directory', 'suffix'], flags: COPY_FLAGS }, 'copy'));
reg('mv', (inv) => copyLike(inv, { short: 'tS', long: ['target-directory', 'suffix'], flags: COPY_FLAGS }, 'move'));

reg('install', (inv) => {
  const spec: OptSpec = {
    short: 'mogtS',
    long: ['mode', 'owner', 'group', 'target-directory', 'suffix', 'strip-program'],
    flags: [
      'backup',
      'compare',
      'directory',
      'preserve-timestamps',
      'strip',
      'no-target-directory',
      'verbose',
      'context',
      'debug',
      'preserve-context',
    ],
  };
  const p = parseOpts(inv.args, spec);
  if (has(p, '--strip-program')) inv.an.opaque('install --strip-program runs another program');
  if (has(p, '-d', '--directory')) {
    for (const w of p.pos) inv.an.write(w, inv.scope);
    return;
  }
  copyLike(inv, spec, 'copy');
});

reg('ln', (inv) => {
  const { an, scope } = inv;
  const p = parseOpts(inv.args, {
    short: 'tS',
    long: ['target-directory', 'suffix'],
    flags: [
      'backup',
      'directory',
      'force',
      'interactive',
      'logical',
      'no-dereference',
      'physical',
      'relative',
      'symbolic',
      'no-target-directory',
      'verbose',
      'help',
      'version',
    ],
  });
  const symbolic = has(p, '-s', '--symbolic');
  const relative = has(p, '-r', '--relative');
  /**
   * A relative symlink target is resolved from the link's directory, not the working directory.
   * A symbolic link is also a write of its target: what is written through it lands there.
   */
  const readTarget = (target: WordValue, link: WordValue) => {
    let word = target;
    if (
      symbolic &&
      !relative &&
      !target.dynamic &&
      !target.glob &&
      !link.dynamic &&
      !/^[\\/~]/.test(target.text) &&
      !/^[A-Za-z]:/.test(target.text)
    ) {
      const d = dirWord(link, an.platform);
      if (d !== DOT) word = joinWord(d, target.text, an.platform);
    }
    an.read(word, scope);
    if (symbolic) an.write(word, scope);
  };
  const targetDir = lastValue(p, '-t', '--target-directory');
  if (targetDir) {
    for (const t of p.pos) {
      const link = childOf(targetDir, t, an.platform) ?? targetDir;
      an.write(link, scope);
      readTarget(t, link);
    }
    return;
  }
  if (p.pos.length === 1) {
    const t = p.pos[0]!;
    const link = t.dynamic || t.glob ? t : literalWord(baseName(t.text, an.platform));
    an.write(link, scope);
    readTarget(t, link);
    return;
  }
  const link = p.pos[p.pos.length - 1];
  if (!link) return;
  const noTargetDir = has(p, '-T', '--no-target-directory');
  for (const t of p.pos.slice(0, -1)) {
    an.write(link, scope);
    readTarget(t, link);
    if (noTargetDir) continue;
    const child = childOf(link, t, an.platform);
    if (child) {
      an.write(child, scope);
      readTarget(t, child);
    }
  }
});

// ------------------------------------------------------------------------------------------
// Creating and changing files.

/** chmod/chown/chgrp: the first operand is the mode/owner (unless --reference), the rest are files. */
function modeThenFiles(inv: Inv, options: RegExp, modeLike: RegExp | null): void {
  let dd = false;
  let haveMode = false;
  for (const w of inv.args) {
    const t = w.text;
    if (!dd && !w.dynamic) {
      if (t === '--') {
        dd = true;
        continue;
      }
      if (t.startsWith('--')) {
        if (t.startsWith('--reference=')) {
          inv.an.read(sliceWord(w, 12), inv.scope);
          haveMode = true;
        }
        continue;
      }
      if (options.test(t)) continue;
      if (modeLike && modeLike.test(t) && !haveMode) {
        haveMode = true;
        continue;
      }
    }
    if (!haveMode) {
      haveMode = true;
      continue;
    }
    inv.an.write(w, inv.scope);
  }
}

reg('chmod', (inv) => modeThenFiles(inv, /^-[cfvR]+$/, /^-[rwxXstugoa0-7,+=-]+$/));
reg(['chown', 'chgrp'], (inv) => modeThenFiles(inv, /^-[cfvRhHLP]+$/, null));

reg('chattr', (inv) => {
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === '-R' || t === '-V' || t === '-f') continue;
    if (t === '-v' || t === '-p') {
      i++;
      continue;
    }
    if (/^[-+=][aAcCdDeFijmPsStTux]+$/.test(t)) continue;
    inv.an.write(args[i]!, inv.scope);
  }
});

reg('setfacl', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'mMxX',
    long: ['modify', 'modify-file', 'remove', 'remove-file', 'set', 'set-file', 'restore'],
    flags: ['remove-all', 'remove-default', 'default', 'no-mask', 'mask', 'recursive', 'logical', 'physical', 'test', 'physical'],
  });
  for (const f of values(p, '-M', '-X', '--modify-file', '--remove-file', '--set-file')) if (f.text !== '-') inv.an.read(f, inv.scope);
  for (const f of values(p, '--restore')) {
    inv.an.read(f, inv.scope);
    inv.an.opaque('setfacl --restore changes the files listed in its input');
  }
  for (const w of p.pos) inv.an.write(w, inv.scope);
});

reg('dd', (inv) => {
  for (const w of inv.args) {
    if (w.text.startsWith('if=')) inv.an.read(sliceWord(w, 3), inv.scope);
    else if (w.text.startsWith('of=')) inv.an.write(sliceWord(w, 3), inv.scope);
  }
});

reg(['mkfs', 'mkswap', 'wipefs', 'fdisk', 'sfdisk', 'parted', 'blkdiscard', 'mke2fs'], (inv) => {
  for (const w of inv.args) if (!w.text.startsWith('-') && (w.text.includes('/') || w.dynamic)) inv.an.write(w, inv.scope);
});

reg('split', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'abClnt',
    long: ['suffix-length', 'bytes', 'line-bytes', 'lines', 'number', 'additional-suffix', 'separator', 'filter'],
    flags: ['numeric-suffixes', 'hex-suffixes', 'elide-empty-files', 'unbuffered', 'verbose'],
  });
  if (has(p, '--filter')) inv.an.opaque('split --filter runs a shell command');
  const [input, prefix] = p.pos;
  if (input && input.text !== '-') inv.an.read(input, inv.scope);
  // Output files are PREFIXaa, PREFIXab…: their directory is what gets written.
  inv.an.write(prefix ? dirWord(prefix, inv.an.platform) : DOT, inv.scope);
});

reg('sed', (inv) => {
  const { an, scope } = inv;
  let args = inv.args;
  let bsdSuffix = false;
  if (an.platform === 'darwin') {
    // BSD sed: `-i EXT` always takes the next word as the backup suffix (often '').
    const k = args.findIndex((w) => w.text === '-i' && !w.dynamic);
    if (k >= 0 && k + 1 < args.length) {
      args = [...args.slice(0, k), ...args.slice(k + 2)];
      bsdSuffix = true;
    }
  }
  const p = parseOpts(args, {
    short: 'efl',
    shortOpt: 'i',
    long: ['expression', 'file', 'line-length'],
    flags: [
      'in-place',
      'quiet',
      'silent',
      'regexp-extended',
      'separate',
      'null-data',
      'zero-terminated',
      'posix',
      'debug',
      'sandbox',
      'follow-symlinks',
      'unbuffered',
      'binary',
      'help',
      'version',
    ],
  });
  const inPlace = bsdSuffix || has(p, '-i', '--in-place');
  let scripts = values(p, '-e', '--expression');
  const scriptFiles = values(p, '-f', '--file');
  for (const f of scriptFiles) inv.an.read(f, scope);
  let files = p.pos;
  if (scripts.length === 0 && scriptFiles.length === 0) {
    scripts = p.pos.slice(0, 1);
    files = p.pos.slice(1);
  }
  for (const s of scripts)
    if (!s.dynamic && sedHasSideEffects(s.text)) an.opaque('sed script reads or writes other files or runs commands');
  for (const f of files) {
    if (f.text === '-' && !f.dynamic) continue;
    an.read(f, scope);
    if (inPlace) an.write(f, scope);
  }
});

/** sed `w FILE`, `r FILE`, `e CMD` commands and the `w`/`e` flags of `s///`. */
function sedHasSideEffects(script: string): boolean {
  const addr = String.raw`(?:\d+|\$|\/(?:[^/\\]|\\.)*\/)(?:\s*[,~]\s*(?:\d+|\$|\/(?:[^/\\]|\\.)*\/))?`;
  const command = new RegExp(String.raw`(?:^|[;\n{}])\s*(?:${addr})?\s*!?\s*[wWrReF]?[wWrRe](?:\s|$)`);
  if (command.test(script)) return true;
  // s<d>…<d>…<d>flags with w or e among the flags.
  const subst = /s(.)(?:(?!\1)[^\\\n]|\\.)*\1(?:(?!\1)[^\\\n]|\\.)*\1([gpiImMe0-9w]*)/g;
  for (let m = subst.exec(script); m; m = subst.exec(script)) if (/[we]/.test(m[2]!)) return true;
  return false;
}

reg('patch', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'iodprBDFVYzg',
    long: [
      'input',
      'output',
      'directory',
      'strip',
      'reject-file',
      'prefix',
      'ifdef',
      'fuzz',
      'version-control',
      'basename-prefix',
      'suffix',
      'get',
      'quoting-style',
      'reject-format',
      'read-only',
    ],
    flags: [
      'dry-run',
      'reverse',
      'forward',
      'batch',
      'force',
      'silent',
      'quiet',
      'verbose',
      'backup',
      'binary',
      'posix',
      'context',
      'normal',
      'unified',
      'ed',
      'merge',
      'ignore-whitespace',
      'remove-empty-files',
      'set-time',
      'set-utc',
    ],
  });
  let scope = inv.scope;
  const d = lastValue(p, '-d', '--directory');
  if (d) scope = inv.an.chdir(scope, d);
  for (const f of values(p, '-i', '--input')) inv.an.read(f, scope);
  const [original, patchFile] = p.pos;
  if (patchFile) inv.an.read(patchFile, scope);
  if (has(p, '--dry-run')) return;
  for (const r of values(p, '-r', '--reject-file')) inv.an.write(r, scope);
  const out = lastValue(p, '-o', '--output');
  if (out) {
    inv.an.write(out, scope);
    if (original) inv.an.read(original, scope);
  } else if (original) inv.an.write(original, scope);
  else {
    // Without a file operand, patch edits whatever files the patch names, under the working directory.
    const strip = lastValue(p, '-p', '--strip');
    const n = strip === undefined ? undefined : /^\d+$/.test(strip.text) ? Number(strip.text) : NaN;
    applyPatch(inv, [...values(p, '-i', '--input'), ...(patchFile ? [patchFile] : [])], scope, n, 'patch');
  }
});

/**
 * A patch applied below the working directory (`patch -p1 < fix.patch`, `git apply fix.patch`):
 * its text is read (the files given, else its stdin: a redirected file, `cat FILE |`, a heredoc)
 * and every file it names is written or removed, after `-pN`. A patch that cannot be read leaves
 * the command opaque, writing somewhere below the directory.
 */
export function applyPatch(
  inv: Inv,
  files: readonly WordValue[],
  scope: Scope,
  strip: number | undefined,
  what: string,
  under?: WordValue,
): void {
  const { an } = inv;
  const texts: Array<{ text: string; scope: Scope }> = [];
  const unknown = (why: string) => {
    an.opaque(`${what}: ${why}, so the files it changes are unknown`);
    an.write(under ?? DOT, scope);
  };
  const readOne = (w: WordValue, s: Scope): boolean => {
    if (w.dynamic || w.glob) return false;
    const paths = an.resolveText(w.text, s);
    if (paths.length !== 1 || !paths[0]!.startsWith('/')) return false;
    const text = an.readText(paths[0]!);
    if (text === undefined) return false;
    texts.push({ text, scope: s });
    return true;
  };
  const given = files.filter((f) => f.dynamic || f.text !== '-');
  if (Number.isNaN(strip)) return unknown('the -p strip count is not a number');
  if (given.length) {
    for (const f of given) if (!readOne(f, scope)) return unknown(`the patch \`${clip(f.raw)}\` cannot be read`);
  } else {
    const io = inv.io;
    if (io.stdin === 'file' && io.from) {
      if (!readOne(io.from, scope)) return unknown(`the patch \`${clip(io.from.raw)}\` cannot be read`);
    } else if (io.stdin === 'heredoc' && io.script !== undefined) texts.push({ text: io.script, scope });
    else if (io.stdin === 'pipe' && io.feed?.kind === 'file') {
      if (!readOne(io.feed.file, io.feed.scope)) return unknown(`the patch \`${clip(io.feed.file.raw)}\` cannot be read`);
    } else if (io.stdin === 'pipe' && io.feed?.kind === 'text') texts.push({ text: io.feed.text, scope });
    else return unknown('the patch comes from its input, which cannot be read');
  }
  for (const t of texts) {
    const files = filesOfPatch(t.text);
    if (!files) return unknown('the patch names too many files');
    const at = (name: string) =>
      stripped(name, strip).map((n) => (under && !n.startsWith('/') ? joinWord(under, n, an.platform) : literalWord(n)));
    const removed = new Set(files.deletes.flatMap((n) => at(n).map((w) => w.text)));
    for (const n of files.writes) for (const w of at(n)) if (!removed.has(w.text)) an.write(w, scope);
    for (const n of files.deletes) for (const w of at(n)) an.del(w, scope);
  }
}

// ------------------------------------------------------------------------------------------
// Editors open files for writing.

reg(
  [
    'vi',
    'vim',
    'nvim',
    'nano',
    'pico',
    'emacs',
    'ed',
    'ex',
    'micro',
    'joe',
    'mcedit',
    'hx',
    'helix',
    'kak',
    'red',
    'view',
    'vimdiff',
    'rvim',
  ],
  (inv) => {
    const readOnly = ['view', 'rvim'].includes(inv.cmd) || inv.args.some((w) => w.text === '-R');
    for (let i = 0; i < inv.args.length; i++) {
      const w = inv.args[i]!;
      const t = w.text;
      if (
        t === '-c' ||
        t === '--cmd' ||
        t === '-S' ||
        t === '--eval' ||
        t === '-l' ||
        t === '--load' ||
        t === '-x' ||
        t.startsWith('--eval=')
      ) {
        inv.an.opaque(`${inv.cmd} runs editor commands given on the command line`);
        if (t !== '--eval' && !t.startsWith('--eval=')) i++;
        continue;
      }
      if (/^\+./.test(t) && !/^\+\d+$/.test(t)) {
        inv.an.opaque(`${inv.cmd} runs editor commands given on the command line`);
        continue;
      }
      if (t.startsWith('-') || /^\+\d*$/.test(t)) continue;
      inv.an.read(w, inv.scope);
      if (!readOnly) inv.an.write(w, inv.scope);
    }
  },
);

// ------------------------------------------------------------------------------------------
// Readers: every file operand is read.

/** A reader whose operands (after options with the given values) are all files. */
function reader(
  names: string | readonly string[],
  spec: OptSpec,
  opts: {
    defaultDir?: boolean;
    writeOpts?: string[];
    readOpts?: string[];
    plusOpts?: boolean;
    below?: (p: Parsed) => 'contents' | 'names' | undefined;
  } = {},
): void {
  reg(names, (inv) => {
    const p = parseOpts(inv.args, spec);
    for (const w of values(p, ...(opts.writeOpts ?? []))) inv.an.write(w, inv.scope);
    for (const w of values(p, ...(opts.readOpts ?? []))) if (w.text !== '-') inv.an.read(w, inv.scope);
    // `less +G`, `tail +5`: a leading `+` is a command/offset, not a file.
    let files = p.pos.filter((w) => w.dynamic || (w.text !== '-' && !(opts.plusOpts && w.text.startsWith('+'))));
    if (files.length === 0 && opts.defaultDir) files = [DOT];
    const below = opts.below?.(p);
    for (const f of files) {
      if (below) inv.an.readBelow(f, inv.scope, below);
      else inv.an.read(f, inv.scope);
    }
  });
}

reg('cat', (inv) => {
  const p = parseOpts(inv.args, {
    flags: ['show-all', 'number-nonblank', 'show-ends', 'number', 'squeeze-blank', 'show-tabs', 'show-nonprinting', 'help', 'version'],
  });
  for (const f of p.pos) if (f.dynamic || f.text !== '-') inv.an.read(f, inv.scope);
  // `cat fix.patch | git apply`: the next command reads this file's text.
  if (p.pos.length === 1 && p.opts.length === 0 && !p.pos[0]!.dynamic && !p.pos[0]!.glob && p.pos[0]!.text !== '-')
    inv.an.produce({ kind: 'file', file: p.pos[0]!, scope: inv.scope });
});
// look STRING [FILE…]: the first operand is the prefix it looks for, not a file. It opens `-` as a file name.
reg('look', (inv) => {
  const p = parseOpts(inv.args, {
    short: 't',
    long: ['terminate'],
    flags: ['alternative', 'dictionary', 'ignore-case', 'help', 'version'],
  });
  for (const f of p.pos.slice(1)) inv.an.read(f, inv.scope);
});
// ptx [INPUT…]; with -G (traditional) ptx INPUT [OUTPUT]: the second operand is the file it writes.
// -b, -i and -o name word lists it reads; -F, -M, -S, -W take strings and expressions, -g and -w numbers.
reg('ptx', (inv) => {
  const p = parseOpts(inv.args, {
    short: 'FMSWbgiow',
    long: [
      'flag-truncation',
      'macro-name',
      'sentence-regexp',
      'word-regexp',
      'break-file',
      'gap-size',
      'ignore-file',
      'only-file',
      'width',
      'format',
    ],
    flags: ['auto-reference', 'traditional', 'ignore-case', 'right-side-refs', 'references', 'typeset-mode', 'help', 'version'],
  });
  for (const f of values(p, '-b', '-i', '-o', '--break-file', '--ignore-file', '--only-file'))
    if (f.dynamic || f.text !== '-') inv.an.read(f, inv.scope);
  const traditional = has(p, '-G', '--traditional');
  for (const [i, f] of p.pos.entries()) {
    if (traditional && i === 1) inv.an.write(f, inv.scope);
    else if (f.dynamic || f.text !== '-') inv.an.read(f, inv.scope);
  }
});
reader(
  'tree',
  { short: 'LPIoH', long: ['filelimit', 'charset', 'timefmt', 'sort', 'fromfile'] },
  { defaultDir: true, writeOpts: ['-o'], below: (p) => (lastValue(p, '-L')?.text === '1' ? undefined : 'names') },
);
reader(
  'du',
  { short: 'BdtX', long: ['block-size', 'max-depth', 'threshold', 'exclude', 'exclude-from', 'time', 'time-style', 'files0-from'] },
  {
    defaultDir: true,
    readOpts: ['-X', '--exclude-from', '--files0-from'],
    below: (p) => (has(p, '-a', '--all') && !has(p, '-s', '--summarize') ? 'names' : undefined),
  },
);
/** grep family: the first operand is the pattern unless -e/-f gave one. */
function grepLike(
  names: readonly string[],
  spec: OptSpec,
  opts: { recursiveByDefault?: boolean; filesMode?: string[]; globs?: string[]; skipsHidden?: (p: Parsed, inv: Inv) => boolean } = {},
): void {
  reg(names, (inv) => {
    const p = parseOpts(inv.args, spec);
    const patternFiles = values(p, '-f', '--file');
    for (const f of patternFiles) if (f.text !== '-') inv.an.read(f, inv.scope);
    for (const f of values(p, '--exclude-from', '--ignore-file', '-p', '--path-to-ignore')) inv.an.read(f, inv.scope);
    if (has(p, '--pre')) inv.an.opaque(`${inv.cmd} --pre runs a preprocessor command`);
    const filesOnly = opts.filesMode && has(p, ...opts.filesMode);
    const givenPattern = values(p, '-e', '--regexp').length > 0 || patternFiles.length > 0;
    let files = filesOnly || givenPattern ? p.pos : p.pos.slice(1);
    files = files.filter((w) => w.dynamic || w.text !== '-');
    const recursive = opts.recursiveByDefault || has(p, '-r', '-R', '--recursive', '--dereference-recursive');
    if (files.length === 0 && recursive) files = [DOT];
    // A recursive search reads every file below a directory it is given (`rg --files` only lists
    // them), or only those whose names an include filter admits (`--include=*.ts`, `rg -g '*.ts'`).
    // ag's and ack's -g/-G take a regular expression over paths, not a glob: no filter.
    const names = includeFilter(values(p, ...(opts.globs ?? [])));
    const skipsHidden = opts.skipsHidden?.(p, inv) ?? false;
    for (const f of files) {
      if (recursive) inv.an.readBelow(f, inv.scope, filesOnly ? 'names' : 'contents', names, skipsHidden);
      else inv.an.read(f, inv.scope);
    }
    // `rg --files` and `grep -rl` print names of files below what they search (for `… | xargs CMD`).
    if (recursive && (filesOnly || has(p, '-l', '--files-with-matches')))
      inv.an.produce({ kind: 'below', roots: files, names, scope: inv.scope, by: inv.cmd });
  });
}

/**
 * Base-name globs that every file a recursive search reads must match, or undefined when the
 * filter is absent or cannot be read as one (an exclusion `!x`, a path glob `src/**`, an expansion).
 */
function includeFilter(words: readonly WordValue[]): string[] | undefined {
  if (words.length === 0) return undefined;
  const out: string[] = [];
  for (const w of words) {
    const g = w.text.replace(/^(\*\*\/)+/, '');
    if (w.dynamic || g === '' || g.startsWith('!') || g.includes('/')) return undefined;
    out.push(g);
  }
  return out;
}

grepLike(
  ['grep', 'egrep', 'fgrep', 'zgrep', 'rgrep'],
  {
    short: 'efmABCDd',
    long: [
      'regexp',
      'file',
      'max-count',
      'after-context',
      'before-context',
      'context',
      'devices',
      'directories',
      'include',
      'exclude',
      'exclude-dir',
      'exclude-from',
      'label',
      'binary-files',
      'group-separator',
    ],
    flags: [
      'recursive',
      'dereference-recursive',
      'color',
      'colour',
      'ignore-case',
      'invert-match',
      'word-regexp',
      'line-regexp',
      'count',
      'files-with-matches',
      'files-without-match',
      'only-matching',
      'quiet',
      'silent',
      'no-messages',
      'byte-offset',
      'with-filename',
      'no-filename',
      'line-number',
      'null',
      'text',
      'extended-regexp',
      'fixed-strings',
      'basic-regexp',
      'perl-regexp',
    ],
  },
  { globs: ['--include'] },
);
grepLike(
  ['rg'],
  {
    short: 'ABCeEfgjMmrtTd',
    long: [
      'regexp',
      'file',
      'after-context',
      'before-context',
      'context',
      'encoding',
      'glob',
      'iglob',
      'threads',
      'max-columns',
      'max-count',
      'replace',
      'type',
      'type-not',
      'max-depth',
      'pre',
      'pre-glob',
      'ignore-file',
      'type-add',
      'type-clear',
      'sort',
      'sortr',
      'colors',
      'color',
      'context-separator',
      'field-match-separator',
      'field-context-separator',
      'path-separator',
      'dfa-size-limit',
      'regex-size-limit',
      'engine',
      'max-filesize',
      'hostname-bin',
      'hyperlink-format',
      'generate',
    ],
  },
  { recursiveByDefault: true, filesMode: ['--files', '--type-list'], globs: ['-g', '--glob', '--iglob'], skipsHidden: rgSkipsHidden },
);
const AG_SPEC: OptSpec = {
  short: 'ABCGgmpW',
  long: [
    'after',
    'before',
    'context',
    'file-search-regex',
    'max-count',
    'depth',
    'path-to-ignore',
    'ignore',
    'ignore-dir',
    'pager',
    'width',
    'type',
  ],
};
// ack searches dotfiles (it skips only VCS directories and backups); pt's rules are not modelled.
grepLike(['ack', 'ack-grep', 'pt'], AG_SPEC, { recursiveByDefault: true });
// ag skips hidden entries unless --hidden, -u/--unrestricted (-a, which the manual says keeps
// skipping them, counts too); a path-to-ignore file may re-include names. `-g P` lists file names.
grepLike(['ag'], AG_SPEC, {
  recursiveByDefault: true,
  filesMode: ['-g'],
  skipsHidden: (p) => !has(p, '--hidden', '-u', '--unrestricted', '-a', '--all-types', '-p', '--path-to-ignore'),
});

/**
 * ripgrep skips hidden entries (names starting with `.`) unless --hidden/-., -uu (`-u` twice, in any
 * spelling) or whatever whitelists names: a glob that is not an exclusion (`-g '*'` matches `.env`),
 * a file type (`-t`), an ignore file given with --ignore-file (its `!` lines). --no-hidden does not
 * undo an earlier --hidden here. The ignore files it finds on disk are the protection check's to read.
 */
function rgSkipsHidden(p: Parsed): boolean {
  if (has(p, '--hidden', '-.', '--ignore-file', '-t', '--type')) return false;
  if (p.opts.filter((o) => o.name === '-u' || o.name === '--unrestricted').length >= 2) return false;
  return values(p, '-g', '--glob', '--iglob').every((g) => !g.dynamic && g.text.startsWith('!'));
}

reg('jq', (inv) => {
  const args = inv.args;
  let filter: WordValue | undefined;
  let filterFromFile = false;
  let argsMode = false;
  const files: WordValue[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (argsMode && filter) continue;
    if (t === '--args' || t === '--jsonargs') {
      argsMode = true;
      continue;
    }
    if (t === '-f' || t === '--from-file') {
      const f = args[++i];
      if (f) {
        inv.an.read(f, inv.scope);
        queryProgram(inv, programText(inv, f), 'jq');
      }
      filterFromFile = true;
      continue;
    }
    if (t === '--arg' || t === '--argjson') {
      i += 2;
      continue;
    }
    if (t === '--slurpfile' || t === '--rawfile') {
      const f = args[i + 2];
      if (f) inv.an.read(f, inv.scope);
      i += 2;
      continue;
    }
    if (t === '--indent') {
      i++;
      continue;
    }
    if (t === '-L' || t.startsWith('-L') || t === '--library-path' || t.startsWith('--library-path=')) {
      // Modules and data files come from these directories (`import "x" as $d;` prints x.json).
      inv.an.opaque('jq -L adds a directory of modules and data files');
      if (t === '-L' || t === '--library-path') i++;
      continue;
    }
    if (t.startsWith('-') && t.length > 1 && !w.dynamic) continue;
    if (!filter && !filterFromFile) filter = w;
    else files.push(w);
  }
  for (const f of files) inv.an.read(f, inv.scope);
  // `env` and `$ENV` are the environment: `jq -n env` prints every secret in it; `import` and
  // `include` read modules and data files (from ~/.jq, $ORIGIN/../lib/jq or -L directories).
  if (filter && filter.dynamic) inv.an.opaque('jq filter is not literal');
  else if (filter) queryProgram(inv, filter.text, 'jq');
});

/**
 * What a jq or yq program reads beyond its input files: the environment (`env`, `$ENV`, yq's
 * `env()`, `strenv()`, `envsubst`), modules and data files (jq's `import`/`include`, yq's `load*`),
 * a program built from strings (yq's `eval`).
 */
function queryProgram(inv: Inv, text: string | undefined, what: string): void {
  if (text === undefined) {
    inv.an.opaque(`${what} program cannot be read`);
    return;
  }
  if (/\b(import|include|load\w*|eval)\b/.test(text)) inv.an.opaque(`${what} program loads modules or files, or evaluates a string`);
  if (/(^|[^\w$.])(env|strenv|envsubst)\b|\$ENV\b|\$__prog_args\b/.test(text)) inv.an.readEnvironment(`${what} env`);
}

/** The text of a program file (`jq -f FILE`), when it names one known file. */
function programText(inv: Inv, f: WordValue): string | undefined {
  if (f.dynamic || f.glob) return undefined;
  const paths = inv.an.resolveText(f.text, inv.scope);
  return paths.length === 1 ? inv.an.readText(paths[0]!) : undefined;
}

// yq (mikefarah's v4 `yq [eval] EXPR FILE…`, v3 `yq read FILE PATH`, and the Python jq wrapper).
reg(['yq'], (inv) => {
  const p = parseOpts(inv.args, {
    short: 'opIs',
    long: ['output-format', 'input-format', 'indent', 'from-file', 'expression', 'front-matter', 'split-exp', 'arg', 'argjson'],
    flags: ['inplace', 'in-place', 'null-input', 'exit-status', 'no-doc', 'prettyPrint', 'raw-output'],
  });
  let pos = p.pos;
  if (pos[0] && ['eval', 'e', 'eval-all', 'ea'].includes(pos[0].text)) pos = pos.slice(1);
  const fromFile = values(p, '--from-file');
  for (const f of fromFile) {
    inv.an.read(f, inv.scope);
    queryProgram(inv, programText(inv, f), 'yq');
  }
  const expressions = values(p, '--expression');
  const given = fromFile.length > 0 || expressions.length > 0;
  for (const e of given ? expressions : pos.slice(0, 1)) {
    if (e.dynamic) inv.an.opaque('yq expression is not literal');
    else queryProgram(inv, e.text, 'yq');
  }
  // `yq config.yaml` (v4 with no expression) prints the file: a lone operand is read too.
  const files = given || pos.length === 1 ? pos : pos.slice(1);
  if (has(p, '-s', '--split-exp')) inv.an.opaque('yq --split-exp writes files named by the documents');
  const inPlace = has(p, '-i', '--inplace', '--in-place');
  for (const f of files) {
    if (f.text === '-') continue;
    inv.an.read(f, inv.scope);
    if (inPlace) inv.an.write(f, inv.scope);
  }
});

reg(['gpg', 'gpg2'], (inv) => {
  const p = parseOpts(inv.args, {
    short: 'oruz',
    long: [
      'output',
      'recipient',
      'local-user',
      'homedir',
      'passphrase',
      'passphrase-file',
      'passphrase-fd',
      'keyserver',
      'default-key',
      'trust-model',
      'cipher-algo',
      'digest-algo',
      'compress-algo',
      'set-filename',
      'comment',
      'status-fd',
      'logger-fd',
      'status-file',
      'logger-file',
      'pinentry-mode',
      'keyring',
      'secret-keyring',
      'trustdb-name',
      'default-recipient',
      'hidden-recipient',
      'encrypt-to',
      'options',
      'sig-notation',
      'cert-notation',
      'compress-level',
    ],
  });
  for (const o of values(p, '-o', '--output', '--status-file', '--logger-file')) if (o.text !== '-') inv.an.write(o, inv.scope);
  for (const r of values(p, '--passphrase-file', '--homedir', '--keyring', '--secret-keyring', '--options')) inv.an.read(r, inv.scope);
  if (
    has(
      p,
      '--recv-keys',
      '--receive-keys',
      '--search-keys',
      '--send-keys',
      '--refresh-keys',
      '--fetch-keys',
      '--locate-keys',
      '--locate-external-keys',
      '--auto-key-locate',
    ) ||
    values(p, '--keyserver').length
  ) {
    inv.an.net();
    for (const k of values(p, '--keyserver')) inv.an.netWord(k, 'gpg keyserver');
  }
  if (has(p, '--recv-keys', '--receive-keys', '--search-keys', '--send-keys', '--locate-keys', '--fetch-keys')) return;
  for (const f of p.pos) if (f.text !== '-') inv.an.read(f, inv.scope);
});

reg('openssl', (inv) => {
  const args = inv.args;
  const reads = new Set([
    '-in',
    '-inkey',
    '-key',
    '-CAfile',
    '-cert',
    '-certfile',
    '-signkey',
    '-config',
    '-extfile',
    '-kfile',
    '-rand',
    '-CAkey',
    '-CA',
    '-verify',
    '-prverify',
    '-sigfile',
    '-paramfile',
    '-peerkey',
    '-pubin-file',
    '-keyfile',
    '-chain',
    '-untrusted',
    '-trusted',
    '-CRL',
    '-CApath',
    '-reqin',
  ]);
  const writes = new Set(['-out', '-keyout', '-signature', '-sess_out', '-writerand', '-msgfile']);
  const sub = args[0]?.text ?? '';
  for (let i = 1; i < args.length; i++) {
    const t = args[i]!.text;
    const v = args[i + 1];
    if (!v) break;
    if (reads.has(t)) {
      inv.an.read(v, inv.scope);
      i++;
    } else if (writes.has(t)) {
      if (v.text !== '-') inv.an.write(v, inv.scope);
      i++;
    } else if (t === '-passin' || t === '-passout' || t === '-pass') {
      if (v.text.startsWith('file:')) inv.an.read(sliceWord(v, 5), inv.scope);
      i++;
    } else if (t === '-connect' || t === '-host' || t === '-url' || t === '-proxy') {
      inv.an.netWord(v, `openssl ${sub}`);
      i++;
    }
  }
  if (/^s_client$|^s_time$|^ocsp$/.test(sub)) inv.an.net();
});

reg('ssh-keygen', (inv) => {
  const { an, scope } = inv;
  const p = parseOpts(inv.args, { short: 'abCEfFGIJjmMnNOPrRsStTVwYzZ' });
  const f = lastValue(p, '-f');
  const readOnly = has(p, '-l', '-y', '-F', '-L', '-B', '-D', '-Q', '-e', '-k', '-H') && !has(p, '-R');
  if (has(p, '-R')) {
    an.write(f ?? literalWord(scope.home + '/.ssh/known_hosts'), scope);
    return;
  }
  if (readOnly) {
    an.read(f ?? literalWord(scope.home + '/.ssh'), scope);
    return;
  }
  for (const s of values(p, '-s')) an.read(s, scope);
  const key = f ?? literalWord(`${scope.home}/.ssh/id_${lastValue(p, '-t')?.text ?? 'ed25519'}`);
  // A new key pair in ~/.ssh is ordinary work, but ~/.ssh is the user's: a human decides. Replacing an
  // existing key, or writing the files ssh reads for access (authorized_keys, config), stays a write there.
  if (!key.dynamic && !key.glob && scope.home !== null && an.ctx.fs?.statFile) {
    const sshDir = `${scope.home.replace(/\/$/, '')}/.ssh/`;
    const targets = an.resolveText(key.text, scope);
    const fresh =
      targets.length > 0 &&
      targets.every(
        (t) =>
          t.startsWith(sshDir) &&
          !t.slice(sshDir.length).includes('/') &&
          !/^(authorized_keys.*|config|known_hosts.*|environment|rc)$/i.test(t.slice(sshDir.length)) &&
          !an.ctx.fs!.statFile!(t) &&
          !an.ctx.fs!.statFile!(`${t}.pub`) &&
          an.ctx.fs!.resolvePhysical(t) === t,
      );
    if (fresh) {
      an.approval(`ssh-keygen creates a new key pair ${targets.join(', ')} (+ .pub) in ~/.ssh`);
      return;
    }
  }
  an.write(key, scope);
  if (!key.dynamic) an.write(literalWord(key.text + '.pub'), scope);
});

reg('ssh-add', (inv) => {
  const p = parseOpts(inv.args, { short: 'EStH' });
  if (has(p, '-d', '-D', '-l', '-L', '-x', '-X')) return;
  if (p.pos.length === 0 && inv.an.platform !== 'win32') inv.an.read(literalWord(`${inv.scope.home}/.ssh`), inv.scope);
  for (const f of p.pos) if (f.text !== '-') inv.an.read(f, inv.scope);
});

reg('crontab', (inv) => {
  const p = parseOpts(inv.args, { short: 'us' });
  if (has(p, '-l', '-V') && !has(p, '-r', '-e')) return;
  inv.an.opaque("crontab changes the user's scheduled jobs");
  for (const f of p.pos) if (f.text !== '-') inv.an.read(f, inv.scope);
});

reg(['make', 'gmake'], (inv) => {
  const p = parseOpts(inv.args, {
    short: 'CfIjloOWE',
    long: [
      'directory',
      'file',
      'makefile',
      'include-dir',
      'jobs',
      'load-average',
      'old-file',
      'assume-old',
      'what-if',
      'new-file',
      'assume-new',
      'eval',
      'output-sync',
    ],
  });
  for (const f of values(p, '-f', '--file', '--makefile')) inv.an.read(f, inv.scope);
  if (has(p, '-E', '--eval')) inv.an.opaque('make --eval runs makefile code given on the command line');
  genericReads(inv, p.pos);
});

reg('mktemp', (inv) => {
  // The template's directory gets a new file; the name itself is random.
  const p = parseOpts(inv.args, { short: 'p', long: ['tmpdir', 'suffix'], flags: ['directory', 'dry-run', 'quiet'] });
  if (has(p, '-u', '--dry-run')) return;
  const dir = lastValue(p, '-p', '--tmpdir');
  const t = p.pos[0];
  if (t && (t.text.includes('/') || t.dynamic)) inv.an.write(dirWord(t, inv.an.platform), inv.scope);
  else if (dir) inv.an.write(dir, inv.scope);
});

reg(['dos2unix', 'unix2dos', 'mac2unix', 'unix2mac'], (inv) => {
  // Converts files in place, unless -n IN OUT pairs are given.
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === '-n' || t === '--newfile') {
      const [src, dst] = [args[i + 1], args[i + 2]];
      if (src) inv.an.read(src, inv.scope);
      if (dst) inv.an.write(dst, inv.scope);
      i += 2;
      continue;
    }
    if (t.startsWith('-')) continue;
    inv.an.read(args[i]!, inv.scope);
    inv.an.write(args[i]!, inv.scope);
  }
});

// ------------------------------------------------------------------------------------------
// Checksum lists: `sha256sum -c LIST` hashes the files LIST names (printing only OK/FAILED).

const CHECKSUM_LIST_MAX = 500;

/** The file names of a checksum list (GNU `HASH  NAME`, `HASH *NAME`; BSD `ALGO (NAME) = HASH`), or undefined when a line is not plain. */
function checksumNames(text: string): string[] | undefined {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    // A leading backslash escapes the name (newlines, backslashes): not modelled.
    const gnu = /^([0-9A-Fa-f]+|[A-Za-z0-9+/=]+) [ *](.+)$/.exec(line);
    const bsd = /^[A-Za-z0-9-]+ \((.+)\) = [0-9A-Fa-f]+$/.exec(line);
    const name = bsd?.[1] ?? (gnu && !line.startsWith('\\') ? gnu[2] : undefined);
    if (name === undefined || name.includes('\r')) return undefined;
    out.push(name);
    if (out.length > CHECKSUM_LIST_MAX) return undefined;
  }
  return out;
}

reg(['md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'shasum'], (inv) => {
  const { an, scope } = inv;
  const p = parseOpts(inv.args, {
    short: 'laN',
    long: ['length', 'algorithm', 'files0-from'],
    flags: ['binary', 'check', 'tag', 'text', 'zero', 'ignore-missing', 'quiet', 'status', 'strict', 'warn'],
  });
  for (const w of values(p, '--files0-from')) if (w.text !== '-') an.read(w, scope);
  const lists = p.pos.filter((w) => w.dynamic || w.text !== '-');
  for (const f of lists) an.read(f, scope);
  if (!has(p, '-c', '--check')) return;
  // With -z the list's names end in NUL and may hold newlines: not modelled.
  if (has(p, '-z', '--zero')) return an.opaque(`${inv.cmd} -c -z reads a list of NUL-terminated names`);
  // Each file a list names is read (hashed): the list's text says which, from the working directory.
  const texts: string[] = [];
  const unknown = (why: string) => an.opaque(`${inv.cmd} -c hashes the files its list names, and ${why}`);
  for (const f of lists) {
    const paths = f.dynamic || f.glob ? [] : an.resolveText(f.text, scope);
    const text = paths.length === 1 ? an.readText(paths[0]!) : undefined;
    if (text === undefined) return unknown(`the list \`${clip(f.raw)}\` cannot be read`);
    texts.push(text);
  }
  if (lists.length === 0 || p.pos.some((w) => !w.dynamic && w.text === '-')) {
    const io = inv.io;
    if (io.stdin === 'heredoc' && io.script !== undefined) texts.push(io.script);
    else if (io.stdin === 'pipe' && io.feed?.kind === 'text') texts.push(io.feed.text);
    else if (io.stdin === 'file' && io.from && !io.from.dynamic && an.resolveText(io.from.text, scope).length === 1) {
      const text = an.readText(an.resolveText(io.from.text, scope)[0]!);
      if (text === undefined) return unknown('its input cannot be read');
      texts.push(text);
    } else return unknown('its input cannot be read');
  }
  for (const text of texts) {
    const names = checksumNames(text);
    if (!names) return unknown('the list has lines that are not plain names');
    for (const n of names) an.read(literalWord(n), scope);
  }
});

// ------------------------------------------------------------------------------------------
// Binary inspectors (binutils): they read their operands. `@FILE` is a response file of more
// options (not read here: opaque); --plugin loads a shared object. nm and size read a.out without operands.

function binutils(names: string | readonly string[], spec: OptSpec, defaultFile?: string): void {
  reg(names, (inv) => {
    const { an, scope } = inv;
    const p = parseOpts(inv.args, spec);
    if (has(p, '--plugin')) an.opaque(`${inv.cmd} --plugin loads a shared object`);
    let files = p.pos.filter((w) => w.dynamic || w.text !== '-');
    for (const f of files) {
      if (!f.dynamic && f.text.startsWith('@')) {
        an.read(sliceWord(f, 1), scope);
        an.opaque(`${inv.cmd} takes more options from the response file \`${clip(f.raw)}\``);
      } else an.read(f, scope);
    }
    files = files.filter((f) => f.dynamic || !f.text.startsWith('@'));
    if (files.length === 0 && defaultFile && !p.pos.some((w) => !w.dynamic && w.text.startsWith('@')))
      an.read(literalWord(defaultFile), scope);
  });
}
binutils('strings', { short: 'ntesT', long: ['bytes', 'radix', 'encoding', 'target', 'output-separator'] });
binutils('nm', { short: 'ftX', long: ['format', 'radix', 'target', 'plugin'] }, 'a.out');
binutils('size', { short: 't', long: ['format', 'radix', 'target'] }, 'a.out');
binutils('readelf', {
  short: 'xpR',
  shortOpt: 'w',
  long: [
    'hex-dump',
    'string-dump',
    'relocated-dump',
    'dwarf-depth',
    'dwarf-start',
    'ctf',
    'ctf-parent',
    'ctf-symbols',
    'ctf-strings',
    'sframe',
    'sym-base',
  ],
});
binutils('objdump', {
  short: 'bjmMIP',
  long: [
    'target',
    'section',
    'architecture',
    'disassembler-options',
    'include',
    'start-address',
    'stop-address',
    'adjust-vma',
    'prefix',
    'prefix-strip',
    'insn-width',
    'dwarf-depth',
    'dwarf-start',
    'ctf-parent',
    'sframe',
    'visualize-jumps',
    'disassembler-color',
    'private',
  ],
});

// ------------------------------------------------------------------------------------------
// ruff (a linter and formatter that loads no plugins and runs no project code): `check` and
// `format --check|--diff` read the Python files below the paths they are given (and pyproject.toml
// files) unless a configuration widens `include`; they write their cache (.ruff_cache) in the
// project's root. Fixing and formatting write files the analysis cannot list (opaque).

const RUFF_CONFIGS = ['pyproject.toml', 'ruff.toml', '.ruff.toml'];
const RUFF_NAMES = ['*.py', '*.pyi', '*.ipynb', 'pyproject.toml'];

reg('ruff', (inv) => {
  const { an, scope } = inv;
  const [sub, ...rest] = inv.args;
  if (!sub || sub.dynamic || !['check', 'format'].includes(sub.text)) {
    // `ruff --version`, `ruff rule X`, `ruff config`: nothing read; anything else is not modelled.
    if (sub && !sub.dynamic && ['--version', '-V', 'version', '--help', '-h', 'help', 'rule', 'config', 'linter'].includes(sub.text))
      return;
    an.opaque('this ruff command is not modelled');
    return;
  }
  const p = parseOpts(rest, {
    short: 'o',
    long: [
      'config',
      'select',
      'ignore',
      'extend-select',
      'extend-ignore',
      'per-file-ignores',
      'extend-per-file-ignores',
      'exclude',
      'extend-exclude',
      'fixable',
      'unfixable',
      'extend-fixable',
      'target-version',
      'line-length',
      'dummy-variable-rgx',
      'output-format',
      'output-file',
      'cache-dir',
      'stdin-filename',
      'add-noqa',
      'range',
      'extension',
    ],
    flags: [
      'fix',
      'no-fix',
      'unsafe-fixes',
      'no-unsafe-fixes',
      'show-fixes',
      'diff',
      'watch',
      'fix-only',
      'check',
      'no-cache',
      'preview',
      'no-preview',
      'isolated',
      'respect-gitignore',
      'no-respect-gitignore',
      'force-exclude',
      'no-force-exclude',
      'exit-zero',
      'exit-non-zero-on-fix',
      'exit-non-zero-on-format',
      'statistics',
      'show-files',
      'show-settings',
      'quiet',
      'verbose',
      'silent',
    ],
  });
  const writes = sub.text === 'check' ? has(p, '--fix', '--fix-only', '--add-noqa') && !has(p, '--diff') : !has(p, '--check', '--diff');
  for (const o of values(p, '-o', '--output-file')) an.write(o, scope);
  for (const c of values(p, '--config')) if (!/=/.test(c.text) || c.dynamic) an.read(c, scope);
  // An inline setting (`--config "include=['*']"`) or --extension may change which files it reads.
  let widened = values(p, '--config', '--extension').length > 0;
  const roots = p.pos.length ? p.pos : [DOT];
  const fs = an.ctx.fs;
  const cwd = an.resolveText('.', scope).filter((d) => d.startsWith('/'));
  // Its configuration files: in and above the working directory and the paths, and below the paths.
  const configs: string[] = [];
  const above = (dir: string) => {
    for (let d = dir.replace(/\/+$/, ''); ; d = d.slice(0, d.lastIndexOf('/'))) {
      for (const n of RUFF_CONFIGS) configs.push(`${d}/${n}`);
      if (d === '') break;
    }
  };
  cwd.forEach(above);
  // The user's configuration, used where the project has none.
  if (scope.home !== null) for (const n of RUFF_CONFIGS) configs.push(`${scope.home.replace(/\/+$/, '')}/.config/ruff/${n}`);
  for (const r of roots) {
    if (r.dynamic || r.glob) {
      widened = true;
      continue;
    }
    for (const path of an.resolveText(r.text, scope)) {
      above(path);
      const tree = fs?.listTree(path, 5000);
      if (tree?.truncated) widened = true;
      for (const e of tree?.entries ?? []) if (RUFF_CONFIGS.includes(e.slice(e.lastIndexOf('/') + 1))) configs.push(e);
    }
  }
  const roots2 = new Set<string>();
  for (const c of configs) {
    if (!fs?.statFile || !fs.readText) {
      widened = true;
      break;
    }
    if (!fs.statFile(c)) continue;
    roots2.add(c.slice(0, c.lastIndexOf('/')));
    const text = fs.readText(c, 1 << 20);
    if (text === undefined || /^\s*(extend-)?include\s*=/m.test(text)) widened = true;
    if (text === undefined || /^\s*cache-dir\s*=/m.test(text)) an.opaque(`ruff writes its cache where ${c} says`);
    if (/^\s*extend\s*=/m.test(text ?? '')) an.opaque(`${c} extends a configuration the analysis does not follow`);
  }
  if (!has(p, '--no-cache')) {
    const cacheDir = lastValue(p, '--cache-dir');
    if (cacheDir) an.write(cacheDir, scope);
    else {
      // In the project's root: the working directory, or a directory above it holding a configuration.
      an.write(literalWord('.ruff_cache'), scope);
      for (const d of roots2) if (cwd.some((w) => w === d || w.startsWith(d + '/'))) an.write(literalWord(`${d}/.ruff_cache`), scope);
    }
  }
  for (const r of roots) {
    if (!r.dynamic && r.text === '-') continue;
    const file = !r.dynamic && !r.glob && /\.(pyi?|ipynb|toml)$/.test(r.text);
    if (file) an.read(r, scope);
    else an.readBelow(r, scope, 'contents', widened ? undefined : RUFF_NAMES);
    if (!writes) continue;
    if (file) an.write(r, scope);
    else {
      an.opaque(`ruff ${sub.text} rewrites the Python files below a directory, which are not listed here`);
      an.write(r, scope);
    }
  }
});

// ack takes options from a project .ackrc (the working directory or one above it): since ack 2.12
// not --pager, --output or --regex, but --files-from and -x (file names from a file or stdin) are
// still taken there. One that exists is opaque; the user's own ~/.ackrc is not the project's.
const ackSearch = FILE_COMMANDS.get('ack')!.fn;
reg(['ack', 'ack-grep'], (inv) => {
  const { an, scope } = inv;
  const fs = an.ctx.fs;
  if (!inv.args.some((w) => w.text === '--noenv')) {
    const home = scope.home?.replace(/\/+$/, '');
    for (const cwd of an.resolveText('.', scope)) {
      // Without a file system (lexical analysis) or a working directory there is nothing to look at.
      if (!fs || (!cwd.startsWith('/') && an.platform !== 'win32')) break;
      if (an.platform === 'win32') {
        an.opaque('ack may take options from a project _ackrc, which is not looked for on Windows');
        break;
      }
      if (!fs.statFile) {
        an.opaque('ack may take options from a project .ackrc, which cannot be checked');
        break;
      }
      for (let d = cwd.replace(/\/+$/, ''); ; d = d.slice(0, d.lastIndexOf('/'))) {
        if (d !== home && (fs.statFile(`${d}/.ackrc`) || fs.statFile(`${d}/_ackrc`)))
          an.opaque(`ack takes options from the project's ${d}/.ackrc`);
        if (d === '') break;
      }
    }
  }
  return ackSearch(inv);
});

// gofmt: formats the Go files it is given and the *.go files below directories it is given;
// -w writes them back (below a directory: files the analysis cannot list).
reg('gofmt', (inv) => {
  const { an, scope } = inv;
  // Go's flag package: -flag, --flag, -flag=value; -r and -cpuprofile take a value.
  let write = false;
  const files: WordValue[] = [];
  for (let i = 0; i < inv.args.length; i++) {
    const w = inv.args[i]!;
    const m = w.dynamic ? null : /^--?([a-z]+)(=.*)?$/.exec(w.text);
    if (!m) {
      files.push(w);
      continue;
    }
    if (m[1] === 'w') write = m[2] === undefined || m[2] === '=true' || m[2] === '=1';
    else if (m[1] === 'cpuprofile') {
      const v = m[2] !== undefined ? sliceWord(w, w.text.indexOf('=') + 1) : inv.args[++i];
      if (v) an.write(v, scope);
    } else if (m[1] === 'r' && m[2] === undefined) i++;
  }
  for (const f of files) {
    if (!f.dynamic && f.text === '-') continue;
    const file = !f.dynamic && !f.glob && /\.go$/.test(f.text);
    if (file) an.read(f, scope);
    else an.readBelow(f, scope, 'contents', ['*.go']);
    if (!write) continue;
    if (file) an.write(f, scope);
    else {
      an.opaque('gofmt -w rewrites the Go files below a directory, which are not listed here');
      an.write(f, scope);
    }
  }
});
