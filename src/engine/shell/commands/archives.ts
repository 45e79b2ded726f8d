// Archives and compression: what tar, zip, unzip, 7z and the compressors read, write and delete.
import { has, lastValue, parseOpts, values, type OptSpec } from '../options';
import { literalWord, sliceWord, type WordValue } from '../words';
import { DOT, baseName, clip, isRemoteSpec, joinWord, register, type Inv, type Registry } from '../helpers';
import type { Platform } from '../../types';

export const ARCHIVE_COMMANDS: Registry = new Map();
const reg = (names: string | readonly string[], fn: (inv: Inv) => void) => register(ARCHIVE_COMMANDS, names, fn);

// ------------------------------------------------------------------------------------------
// Archives and compression.

// tar: the options decide the mode and name the archive, the directory and files it reads or writes itself; the
// operands are the members. Old style `tar xzf a.tgz` is `-x -z -f a.tgz` (values taken in order by the letters
// that need them).
const TAR_VALUED_SHORT = 'fCTXbgLVIFKNH';
const TAR_VALUED_LONG = [
  'file',
  'directory',
  'files-from',
  'exclude-from',
  'exclude',
  'listed-incremental',
  'use-compress-program',
  'to-command',
  'checkpoint-action',
  'info-script',
  'new-volume-script',
  'index-file',
  'transform',
  'xform',
  'owner',
  'group',
  'mode',
  'mtime',
  'format',
  'strip-components',
  'blocking-factor',
  'label',
  'newer',
  'after-date',
  'newer-mtime',
  'tape-length',
  'starting-file',
  'suffix',
  'rsh-command',
  'volno-file',
  'record-size',
  'occurrence',
  'exclude-tag',
  'exclude-tag-all',
  'exclude-tag-under',
  'xattrs-include',
  'xattrs-exclude',
  'sort',
  'quoting-style',
  'pax-option',
  'backup',
  'hole-detection',
  'level',
  'warning',
  'checkpoint',
  'atime-preserve',
  'one-top-level',
  'add-file',
];

type TarMode = 'create' | 'extract' | 'list' | 'append' | 'diff' | 'delete' | null;

/** What one tar command line does, once its options are read. */
interface TarRun {
  mode: TarMode;
  archive: WordValue | undefined;
  /** -C: where the members that follow it are read from. */
  dir: WordValue;
  extractDir: WordValue;
  toStdout: boolean;
  absolute: boolean;
  removeFiles: boolean;
  recursive: boolean;
  filesFrom: boolean;
  readonly members: { w: WordValue; dir: WordValue }[];
}

/** `tar xzf a.tgz` -> `-x -z -f a.tgz`. */
function tarOldStyle(args: readonly WordValue[]): readonly WordValue[] {
  const first = args[0];
  if (!first || first.dynamic || !/^[A-Za-z]+$/.test(first.text) || !/[cxtruAd]/.test(first.text)) return args;
  const expanded: WordValue[] = [];
  let k = 1;
  for (const c of first.text) {
    expanded.push(literalWord('-' + c));
    if (TAR_VALUED_SHORT.includes(c) && k < args.length) expanded.push(args[k++]!);
  }
  return [...expanded, ...args.slice(k)];
}

/** The first mode option decides; a later one replaces only `list` (`tar -tx` extracts). */
function setMode(run: TarRun, m: TarMode): void {
  if (run.mode === null || run.mode === 'list') run.mode = m;
}

/** One option: what it changes in the run, the files it names itself (-T, -X, -g) and the programs it runs (opaque). */
function tarOption(inv: Inv, run: TarRun, name: string, value: WordValue | undefined): void {
  const { an } = inv;
  switch (name) {
    case 'c':
    case 'create':
      setMode(run, 'create');
      break;
    case 'x':
    case 'extract':
    case 'get':
      setMode(run, 'extract');
      break;
    case 't':
    case 'list':
      setMode(run, 'list');
      break;
    case 'r':
    case 'u':
    case 'A':
    case 'append':
    case 'update':
    case 'catenate':
    case 'concatenate':
      setMode(run, 'append');
      break;
    case 'd':
    case 'diff':
    case 'compare':
      setMode(run, 'diff');
      break;
    case 'delete':
      setMode(run, 'delete');
      break;
    case 'f':
    case 'file':
      run.archive = value;
      break;
    case 'C':
    case 'directory':
      if (value) {
        run.dir = value;
        run.extractDir = value;
      }
      break;
    case 'T':
    case 'files-from':
      if (value && value.text !== '-') an.read(value, inv.scope);
      run.filesFrom = true;
      break;
    case 'X':
    case 'exclude-from':
      if (value && value.text !== '-') an.read(value, inv.scope);
      break;
    case 'no-recursion':
      run.recursive = false;
      break;
    case 'g':
    case 'listed-incremental':
    case 'index-file':
    case 'volno-file':
      if (value) an.write(value, inv.scope);
      break;
    case 'O':
    case 'to-stdout':
      run.toStdout = true;
      break;
    case 'P':
    case 'absolute-names':
      run.absolute = true;
      break;
    case 'remove-files':
      run.removeFiles = true;
      break;
    case 'I':
    case 'use-compress-program':
    case 'to-command':
    case 'F':
    case 'info-script':
    case 'new-volume-script':
    case 'rsh-command':
      an.opaque(`tar --${name.length === 1 ? name : name} runs another program`);
      break;
    case 'checkpoint-action':
      if (value && /exec/.test(value.text)) an.opaque('tar --checkpoint-action runs a command');
      break;
    case 'add-file':
      if (value) run.members.push({ w: value, dir: run.dir });
      break;
  }
}

/** Reads the command line: every option through tarOption, every operand (and all after `--`) a member. */
function readTar(inv: Inv, args: readonly WordValue[]): TarRun {
  const run: TarRun = {
    mode: null,
    archive: undefined,
    dir: DOT,
    extractDir: DOT,
    toStdout: false,
    absolute: false,
    removeFiles: false,
    recursive: true,
    filesFrom: false,
    members: [],
  };
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.dynamic && w.stop === 'dyn' && w.prefix === '' ? '' : w.text;
    if (t === '--') {
      for (const m of args.slice(i + 1)) run.members.push({ w: m, dir: run.dir });
      break;
    }
    if (t.startsWith('--')) {
      const eq = t.indexOf('=');
      const name = eq < 0 ? t.slice(2) : t.slice(2, eq);
      let value: WordValue | undefined;
      if (eq >= 0) value = sliceWord(w, eq + 1);
      else if (TAR_VALUED_LONG.includes(name)) value = args[++i];
      tarOption(inv, run, name, value);
      continue;
    }
    if (t.startsWith('-') && t.length > 1) {
      for (let j = 1; j < t.length; j++) {
        const c = t[j]!;
        if (TAR_VALUED_SHORT.includes(c)) {
          tarOption(inv, run, c, j + 1 < t.length ? sliceWord(w, j + 1) : args[++i]);
          break;
        }
        tarOption(inv, run, c, undefined);
      }
      continue;
    }
    run.members.push({ w, dir: run.dir });
  }
  return run;
}

/** What the mode does with the archive, the members and the extraction directory. */
function tarEffects(inv: Inv, run: TarRun, forceLocal: boolean): void {
  const { an } = inv;
  const { mode, members, extractDir } = run;
  const arch = run.archive && run.archive.text !== '-' ? run.archive : undefined;
  // `-f host:file` is an archive on another machine, reached through rsh/ssh (unless --force-local).
  if (arch && !arch.dynamic && isRemoteSpec(arch.text, an.platform) && !forceLocal)
    an.opaque('tar reaches a remote archive through a remote shell');
  switch (mode) {
    case 'create':
    case 'append':
    case 'delete':
      if (arch) {
        an.write(arch, inv.scope);
        if (mode !== 'create') an.read(arch, inv.scope);
      }
      // A directory member is archived with everything below it (`tar czf x -C ~ .`).
      for (const m of members) {
        const w = m.dir === DOT || /^[\\/]/.test(m.w.text) ? m.w : joinWord(m.dir, m.w.text, an.platform);
        if (mode !== 'delete') {
          if (run.recursive) an.readBelow(m.w.dynamic ? m.w : w, inv.scope, 'contents');
          else an.read(m.w.dynamic ? m.w : w, inv.scope);
        }
        if (run.removeFiles) an.del(m.w.dynamic ? m.w : w, inv.scope);
      }
      if (run.filesFrom && mode !== 'delete') an.opaque('tar -T archives the files its list names, which are not known here');
      break;
    case 'extract':
      if (arch) an.read(arch, inv.scope);
      if (run.toStdout) break;
      if (run.absolute) an.opaque('tar -P extracts to the absolute paths stored in the archive');
      else
        an.opaque(
          `tar extracts the files the archive names, which cannot be listed here: they may replace protected files below \`${clip(extractDir.dynamic ? extractDir.raw : extractDir.text)}\``,
        );
      an.write(extractDir, inv.scope);
      break;
    case 'list':
    case 'diff':
      if (arch) an.read(arch, inv.scope);
      if (mode === 'diff') an.read(extractDir, inv.scope);
      break;
    default:
      if (arch) an.read(arch, inv.scope);
  }
}

reg(['tar', 'bsdtar', 'gtar'], (inv) => {
  const args = tarOldStyle(inv.args);
  tarEffects(
    inv,
    readTar(inv, args),
    args.some((w) => w.text === '--force-local'),
  );
});

reg('unzip', (inv) => {
  const { an } = inv;
  const args = inv.args;
  let archive: WordValue | undefined;
  let dest: WordValue = DOT;
  let noWrite = false;
  let excluding = false;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (t === '-d') {
      const v = args[++i];
      if (v) dest = v;
      excluding = false;
      continue;
    }
    if (t.startsWith('-d') && t.length > 2 && !t.startsWith('--')) {
      dest = sliceWord(w, 2);
      continue;
    }
    if (t === '-x') {
      excluding = true;
      continue;
    }
    if (t === '-P' || t === '-O' || t === '-I') {
      i++;
      continue;
    }
    if (t.startsWith('-') && t.length > 1) {
      if (/[lptvzZ]/.test(t.slice(1)) && !t.startsWith('--')) noWrite = true;
      if (t.includes(':')) an.opaque('unzip -: extracts paths outside the destination directory');
      continue;
    }
    if (!archive) archive = w;
    else if (excluding) continue;
  }
  if (archive) an.read(archive, inv.scope);
  if (noWrite) return;
  an.opaque(
    `unzip extracts the files the archive names, which cannot be listed here: they may replace protected files below \`${clip(dest.dynamic ? dest.raw : dest.text)}\``,
  );
  an.write(dest, inv.scope);
});

reg('zip', (inv) => {
  const { an } = inv;
  const args = inv.args;
  const listValued = new Set(['-x', '-i', '--exclude', '--include']);
  const valued = new Set([
    '-b',
    '-n',
    '-P',
    '-t',
    '-tt',
    '-s',
    '-sp',
    '-Z',
    '-O',
    '--output-file',
    '-lf',
    '--logfile-path',
    '-la',
    '-li',
    '-sc',
    '-sb',
  ]);
  const operands: WordValue[] = [];
  let move = false;
  let recursive = false;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (listValued.has(t)) {
      // Patterns follow until the next option.
      while (i + 1 < args.length && !args[i + 1]!.text.startsWith('-')) i++;
      continue;
    }
    if (t === '-TT' || t === '--unzip-command' || (t === '-T' && args[i + 1]?.text === '-TT')) {
      an.opaque('zip -TT runs a command');
      i++;
      continue;
    }
    if (t === '-O' || t === '--output-file' || t === '-lf' || t === '--logfile-path') {
      const v = args[++i];
      if (v) an.write(v, inv.scope);
      continue;
    }
    if (valued.has(t)) {
      i++;
      continue;
    }
    if (t === '-@') an.opaque('zip reads the names of the files to add from stdin');
    if (t === '-m' || t === '--move') move = true;
    if (t === '--recurse-paths' || (/^-[a-zA-Z0-9]+$/.test(t) && /[rR]/.test(t))) recursive = true;
    if (t.startsWith('-') && t.length > 1) continue;
    operands.push(w);
  }
  const [out, ...files] = operands;
  if (!out) return;
  an.write(out, inv.scope);
  if (!out.dynamic && !/\.[^/\\]*$/.test(baseName(out.text, an.platform))) an.write(literalWord(out.text + '.zip'), inv.scope);
  for (const f of files) {
    if (recursive) an.readBelow(f, inv.scope, 'contents');
    else an.read(f, inv.scope);
    if (move) an.del(f, inv.scope);
  }
});

reg(['7z', '7za', '7zr'], (inv) => {
  const [sub, ...rest] = inv.args;
  if (!sub) return;
  const ops = rest.filter((w) => !w.text.startsWith('-'));
  const outDir = rest.find((w) => w.text.startsWith('-o'));
  const [archive, ...files] = ops;
  if (/^[xe]$/.test(sub.text)) {
    if (archive) inv.an.read(archive, inv.scope);
    const dest = outDir ? sliceWord(outDir, 2) : DOT;
    inv.an.opaque(
      `7z extracts the files the archive names, which cannot be listed here: they may replace protected files below \`${clip(dest.dynamic ? dest.raw : dest.text)}\``,
    );
    inv.an.write(dest, inv.scope);
  } else if (/^[aud]$/.test(sub.text)) {
    if (archive) inv.an.write(archive, inv.scope);
    // 7z adds directories with everything below them.
    for (const f of files) inv.an.readBelow(f, inv.scope, 'contents');
  } else if (archive) inv.an.read(archive, inv.scope);
});

/** One compressed format: what its compressor adds to a name and what its decompressor takes off. */
interface Codec {
  readonly suffix: string;
  /** The suffixes decompression recognises, each with what replaces it (`.tgz` becomes `.tar`), in the order tried. */
  readonly strip: readonly (readonly [string, string])[];
  /** gzip compares suffixes without case (`x.GZ`, `x.Z`). */
  readonly anyCase?: boolean;
  /**
   * Decompressing a name without a known suffix: gzip and compress open NAME+suffix and write NAME; bzip2 and lzip
   * write NAME.out; xz, zstd and lz4 skip it (counted here as writing and removing NAME, which fails closed).
   */
  readonly unknownSuffix: 'opens-with-suffix' | 'writes-out' | 'skips';
  /** zstd and lz4 keep their input unless --rm. */
  readonly keepsInput?: boolean;
}

const GZ: Codec = {
  suffix: '.gz',
  strip: [
    ['.gz', ''],
    ['.z', ''],
    ['.taz', '.tar'],
    ['.tgz', '.tar'],
    ['-gz', ''],
    ['-z', ''],
    ['_z', ''],
  ],
  anyCase: true,
  unknownSuffix: 'opens-with-suffix',
};
const BZ2: Codec = {
  suffix: '.bz2',
  strip: [
    ['.bz2', ''],
    ['.bz', ''],
    ['.tbz2', '.tar'],
    ['.tbz', '.tar'],
  ],
  unknownSuffix: 'writes-out',
};
const LZMA_STRIP = [
  ['.lzma', ''],
  ['.tlz', '.tar'],
] as const;
const XZ: Codec = { suffix: '.xz', strip: [['.xz', ''], ['.txz', '.tar'], ...LZMA_STRIP, ['.lz', '']], unknownSuffix: 'skips' };
const LZMA: Codec = { suffix: '.lzma', strip: LZMA_STRIP, unknownSuffix: 'skips' };
const ZSTD: Codec = {
  suffix: '.zst',
  strip: [
    ['.zst', ''],
    ['.tzst', '.tar'],
    ['.gz', ''],
    ['.tgz', '.tar'],
    ['.xz', ''],
    ['.txz', '.tar'],
    ['.lzma', ''],
    ['.lz4', ''],
    ['.tlz4', '.tar'],
  ],
  unknownSuffix: 'skips',
  keepsInput: true,
};
const LZ4: Codec = { suffix: '.lz4', strip: [['.lz4', '']], unknownSuffix: 'skips', keepsInput: true };
const Z: Codec = { suffix: '.Z', strip: [['.Z', '']], unknownSuffix: 'opens-with-suffix' };
const LZIP: Codec = {
  suffix: '.lz',
  strip: [
    ['.lz', ''],
    ['.tlz', '.tar'],
  ],
  unknownSuffix: 'writes-out',
};

/** Each compressor: its format, whether the name alone decompresses (gunzip, bunzip2, unxz…), and its options that take a value. */
const COMPRESSORS: Record<string, { codec: Codec; decompresses?: true; spec: OptSpec }> = {};
/** The long flags gzip, xz and lz4 share (getopt_long resolves an abbreviation against every flag, in any order). */
const COMPRESSOR_FLAGS = ['stdout', 'to-stdout', 'decompress', 'uncompress', 'keep', 'force', 'test', 'list', 'quiet', 'verbose'];
const GZIP_SPEC: OptSpec = {
  short: 'S',
  long: ['suffix'],
  flags: [...COMPRESSOR_FLAGS, 'recursive', 'best', 'fast', 'rsyncable', 'name', 'no-name', 'synchronous'],
};
const PIGZ_SPEC: OptSpec = {
  ...GZIP_SPEC,
  short: 'bpSIJ',
  long: ['blocksize', 'processes', 'suffix', 'iterations', 'maxsplits', 'comment', 'alias'],
};
const BZIP2_SPEC: OptSpec = {
  flags: ['stdout', 'decompress', 'compress', 'keep', 'force', 'test', 'small', 'quiet', 'verbose', 'best', 'fast'],
};
const PBZIP2_SPEC: OptSpec = { ...BZIP2_SPEC, short: 'bmp' };
// xz --files[=FILE] and --files0[=FILE] read the names to compress from FILE: flags here, their `=` values read below.
const XZ_SPEC: OptSpec = {
  short: 'CFMST',
  long: [
    'check',
    'format',
    'memlimit',
    'memlimit-compress',
    'memlimit-decompress',
    'memlimit-mt-decompress',
    'suffix',
    'threads',
    'block-size',
    'block-list',
    'filters',
  ],
  flags: [...COMPRESSOR_FLAGS, 'files', 'files0', 'single-stream', 'no-sparse', 'best', 'fast', 'extreme'],
};
const ZSTD_SPEC: OptSpec = {
  short: 'oD',
  long: ['output', 'patch-from', 'memory', 'threads', 'format', 'trace', 'output-dir-flat', 'output-dir-mirror', 'filelist', 'dictID'],
  flags: [
    'stdout',
    'decompress',
    'uncompress',
    'keep',
    'rm',
    'force',
    'test',
    'list',
    'quiet',
    'verbose',
    'recursive',
    'ultra',
    'long',
    'fast',
    'sparse',
    'no-progress',
  ],
};
const LZ4_SPEC: OptSpec = {
  flags: [...COMPRESSOR_FLAGS, 'rm', 'multiple', 'sparse', 'no-frame-crc', 'content-size', 'favor-decSpeed', 'fast', 'best'],
};
const COMPRESS_SPEC: OptSpec = { short: 'b' };
const LZIP_SPEC: OptSpec = {
  short: 'bmnosSB',
  long: ['member-size', 'match-length', 'threads', 'output', 'dictionary-size', 'volume-size', 'data-size'],
  flags: ['stdout', 'decompress', 'keep', 'force', 'test', 'list', 'quiet', 'verbose', 'recursive', 'best', 'fast'],
};
const compressor = (names: readonly string[], codec: Codec, spec: OptSpec, decompresses?: true) => {
  for (const n of names) COMPRESSORS[n] = { codec, spec, ...(decompresses && { decompresses }) };
};
compressor(['gzip'], GZ, GZIP_SPEC);
compressor(['gunzip'], GZ, GZIP_SPEC, true);
compressor(['pigz'], GZ, PIGZ_SPEC);
compressor(['unpigz'], GZ, PIGZ_SPEC, true);
compressor(['bzip2'], BZ2, BZIP2_SPEC);
compressor(['bunzip2'], BZ2, BZIP2_SPEC, true);
compressor(['pbzip2'], BZ2, PBZIP2_SPEC);
compressor(['xz'], XZ, XZ_SPEC);
compressor(['unxz'], XZ, XZ_SPEC, true);
compressor(['lzma'], LZMA, XZ_SPEC);
compressor(['unlzma'], LZMA, XZ_SPEC, true);
compressor(['zstd'], ZSTD, ZSTD_SPEC);
compressor(['unzstd'], ZSTD, ZSTD_SPEC, true);
compressor(['lz4'], LZ4, LZ4_SPEC);
compressor(['unlz4'], LZ4, LZ4_SPEC, true);
compressor(['compress'], Z, COMPRESS_SPEC);
compressor(['uncompress'], Z, COMPRESS_SPEC, true);
compressor(['lzip'], LZIP, LZIP_SPEC);

/** The suffix a format option names (`xz -F lzma`, `zstd --format=gzip`); undefined keeps the command's own. */
const FORMAT_SUFFIX: Record<string, string> = {
  gzip: '.gz',
  xz: '.xz',
  lzma: '.lzma',
  alone: '.lzma',
  lz4: '.lz4',
  zstd: '.zst',
  lzip: '.lz',
};

/** The name decompressing `text` writes, or null when no suffix of the codec (nor the -S one) ends it. */
function decompressedName(text: string, codec: Codec, customSuffix: string | undefined, platform: Platform): string | null {
  const strip: (readonly [string, string])[] = customSuffix ? [[customSuffix, ''], ...codec.strip] : [...codec.strip];
  const base = baseName(text, platform);
  for (const [suffix, replacement] of strip) {
    const ends = codec.anyCase ? base.toLowerCase().endsWith(suffix.toLowerCase()) : base.endsWith(suffix);
    // A name that is only the suffix (`.gz`) has nothing left to write to.
    if (ends && base.length > suffix.length) return text.slice(0, text.length - suffix.length) + replacement;
  }
  return null;
}

reg(Object.keys(COMPRESSORS), (inv) => {
  const { an, scope } = inv;
  const name = inv.cmd.toLowerCase();
  const { codec, decompresses, spec } = COMPRESSORS[name]!;
  const p = parseOpts(inv.args, spec);
  const s = lastValue(p, '-S', '--suffix');
  // gzip, pigz and xz take -S as the suffix itself (no dot added); lzip's -S is a volume size.
  const customSuffix = s && !s.dynamic && s.text !== '' && codec !== LZIP ? s.text : undefined;
  const format = lastValue(p, '-F', '--format');
  let suffix = customSuffix ?? codec.suffix;
  if (!customSuffix && format && !format.dynamic && FORMAT_SUFFIX[format.text]) suffix = FORMAT_SUFFIX[format.text]!;
  const decompress = decompresses === true || has(p, '-d', '--decompress', '--uncompress');
  // lz4's -l is its legacy frame format, not a listing.
  const toStdout = has(p, '-c', '--stdout', '--to-stdout', '-t', '--test', '--list') || (codec !== LZ4 && has(p, '-l'));
  const keep = has(p, '-k', '--keep') || (codec.keepsInput === true && !has(p, '--rm'));
  // A list of the files to work on (standard input without a value), a dictionary, a patch base: read.
  for (const f of values(p, '--files', '--files0', '--filelist', '-D', '--patch-from')) if (f.dynamic || f.text !== '-') an.read(f, scope);
  if (has(p, '--files', '--files0', '--filelist'))
    an.opaque(`${inv.cmd} takes the names of the files it writes and removes from a list, which is not known here`);
  for (const f of values(p, '--trace')) an.write(f, scope);
  const out = lastValue(p, '-o', '--output');
  if (out && (out.dynamic || out.text !== '-')) an.write(out, scope);
  const outDir = lastValue(p, '--output-dir-flat', '--output-dir-mirror');
  if (outDir) an.write(outDir, scope);
  let inputs = p.pos;
  // lz4 INPUT [OUTPUT]: without -m the second operand is the file it writes (`-` and `stdout`: standard output).
  if (codec === LZ4 && !has(p, '-m', '--multiple') && inputs.length >= 2) {
    const output = inputs[1]!;
    if (output.dynamic || (output.text !== '-' && output.text !== 'stdout')) an.write(output, scope);
    for (const f of inputs.slice(2)) an.read(f, scope);
    inputs = inputs.slice(0, 1);
    for (const f of inputs) if (f.dynamic || f.text !== '-') an.read(f, scope);
    if (!toStdout && !keep) for (const f of inputs) if (f.dynamic || f.text !== '-') an.del(f, scope);
    return;
  }
  const recursive = has(p, '-r', '--recursive');
  for (const f of inputs) {
    if (f.text === '-' && !f.dynamic) continue;
    // -r: every file below a directory operand is compressed (or decompressed) in place.
    if (recursive) an.readBelow(f, scope, 'contents');
    else an.read(f, scope);
    if (toStdout) continue;
    const named = out ?? outDir;
    if (!named) {
      if (f.dynamic || f.glob || recursive) an.write(f, scope);
      else if (!decompress) an.write(literalWord(f.text + suffix), scope);
      else {
        const plain = decompressedName(f.text, codec, customSuffix, an.platform);
        if (plain !== null) an.write(literalWord(plain), scope);
        else if (codec.unknownSuffix === 'writes-out') an.write(literalWord(f.text + '.out'), scope);
        else if (codec.unknownSuffix === 'opens-with-suffix') {
          // `gunzip log` opens log.gz when log has no suffix it knows, writes log and removes log.gz.
          const compressed = literalWord(f.text + suffix);
          an.read(compressed, scope);
          an.write(f, scope);
          if (!keep) an.del(compressed, scope);
          continue;
        } else an.write(f, scope);
      }
    } else if (outDir && !f.dynamic && !f.glob) {
      const plain = decompress ? decompressedName(f.text, codec, customSuffix, an.platform) : baseName(f.text, an.platform) + suffix;
      if (plain !== null) an.write(joinWord(outDir, baseName(plain, an.platform), an.platform), scope);
    }
    if (!keep) an.del(f, scope);
  }
});
