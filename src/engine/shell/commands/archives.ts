// Archives and compression: what tar, zip, unzip, 7z and the compressors read, write and delete.
import { has, lastValue, parseOpts } from '../options';
import { literalWord, sliceWord, type WordValue } from '../words';
import { DOT, baseName, clip, isRemoteSpec, joinWord, register, type Inv, type Registry } from '../helpers';

export const ARCHIVE_COMMANDS: Registry = new Map();
const reg = (names: string | readonly string[], fn: (inv: Inv) => void) => register(ARCHIVE_COMMANDS, names, fn);

// ------------------------------------------------------------------------------------------
// Archives and compression.

reg(['tar', 'bsdtar', 'gtar'], (inv) => {
  const { an } = inv;
  let args = inv.args;
  // Old style: `tar xzf a.tgz` -> -x -z -f a.tgz (values taken in order by the letters that need them).
  const VALUED = 'fCTXbgLVIFKNH';
  const first = args[0];
  if (first && !first.dynamic && /^[A-Za-z]+$/.test(first.text) && /[cxtruAd]/.test(first.text)) {
    const expanded: WordValue[] = [];
    let k = 1;
    for (const c of first.text) {
      expanded.push(literalWord('-' + c));
      if (VALUED.includes(c) && k < args.length) expanded.push(args[k++]!);
    }
    args = [...expanded, ...args.slice(k)];
  }
  type Mode = 'create' | 'extract' | 'list' | 'append' | 'diff' | 'delete' | null;
  let mode = null as Mode;
  let archive: WordValue | undefined;
  let dir: WordValue = DOT;
  let extractDir: WordValue = DOT;
  let toStdout = false;
  let absolute = false;
  let removeFiles = false;
  let recursive = true;
  let filesFrom = false;
  const members: Array<{ w: WordValue; dir: WordValue }> = [];
  const longValued = [
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
  const setMode = (m: Mode) => {
    if (mode === null || mode === 'list') mode = m;
  };
  const onOpt = (name: string, value: WordValue | undefined) => {
    switch (name) {
      case 'c':
      case 'create':
        setMode('create');
        break;
      case 'x':
      case 'extract':
      case 'get':
        setMode('extract');
        break;
      case 't':
      case 'list':
        setMode('list');
        break;
      case 'r':
      case 'u':
      case 'A':
      case 'append':
      case 'update':
      case 'catenate':
      case 'concatenate':
        setMode('append');
        break;
      case 'd':
      case 'diff':
      case 'compare':
        setMode('diff');
        break;
      case 'delete':
        setMode('delete');
        break;
      case 'f':
      case 'file':
        archive = value;
        break;
      case 'C':
      case 'directory':
        if (value) {
          dir = value;
          extractDir = value;
        }
        break;
      case 'T':
      case 'files-from':
        if (value && value.text !== '-') an.read(value, inv.scope);
        filesFrom = true;
        break;
      case 'X':
      case 'exclude-from':
        if (value && value.text !== '-') an.read(value, inv.scope);
        break;
      case 'no-recursion':
        recursive = false;
        break;
      case 'g':
      case 'listed-incremental':
      case 'index-file':
      case 'volno-file':
        if (value) an.write(value, inv.scope);
        break;
      case 'O':
      case 'to-stdout':
        toStdout = true;
        break;
      case 'P':
      case 'absolute-names':
        absolute = true;
        break;
      case 'remove-files':
        removeFiles = true;
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
        if (value) members.push({ w: value, dir });
        break;
    }
  };
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.dynamic && w.stop === 'dyn' && w.prefix === '' ? '' : w.text;
    if (t === '--') {
      for (const m of args.slice(i + 1)) members.push({ w: m, dir });
      break;
    }
    if (t.startsWith('--')) {
      const eq = t.indexOf('=');
      const name = eq < 0 ? t.slice(2) : t.slice(2, eq);
      let value: WordValue | undefined;
      if (eq >= 0) value = sliceWord(w, eq + 1);
      else if (longValued.includes(name)) value = args[++i];
      onOpt(name, value);
      continue;
    }
    if (t.startsWith('-') && t.length > 1) {
      for (let j = 1; j < t.length; j++) {
        const c = t[j]!;
        if (VALUED.includes(c)) {
          const value = j + 1 < t.length ? sliceWord(w, j + 1) : args[++i];
          onOpt(c, value);
          break;
        }
        onOpt(c, undefined);
      }
      continue;
    }
    members.push({ w, dir });
  }
  const arch = archive && archive.text !== '-' ? archive : undefined;
  // `-f host:file` is an archive on another machine, reached through rsh/ssh (unless --force-local).
  if (arch && !arch.dynamic && isRemoteSpec(arch.text, an.platform) && !args.some((w) => w.text === '--force-local'))
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
          if (recursive) an.readBelow(m.w.dynamic ? m.w : w, inv.scope, 'contents');
          else an.read(m.w.dynamic ? m.w : w, inv.scope);
        }
        if (removeFiles) an.del(m.w.dynamic ? m.w : w, inv.scope);
      }
      if (filesFrom && mode !== 'delete') an.opaque('tar -T archives the files its list names, which are not known here');
      break;
    case 'extract':
      if (arch) an.read(arch, inv.scope);
      if (toStdout) break;
      if (absolute) an.opaque('tar -P extracts to the absolute paths stored in the archive');
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

const COMPRESSORS: Record<string, string> = {
  gzip: '.gz',
  gunzip: '.gz',
  pigz: '.gz',
  unpigz: '.gz',
  bzip2: '.bz2',
  bunzip2: '.bz2',
  pbzip2: '.bz2',
  xz: '.xz',
  unxz: '.xz',
  lzma: '.lzma',
  unlzma: '.lzma',
  zstd: '.zst',
  unzstd: '.zst',
  lz4: '.lz4',
  unlz4: '.lz4',
  compress: '.Z',
  uncompress: '.Z',
  lzip: '.lz',
};

reg(Object.keys(COMPRESSORS), (inv) => {
  const { an } = inv;
  const p = parseOpts(inv.args, {
    short: 'SoTM',
    long: ['suffix', 'output', 'threads', 'memory', 'format', 'files0-from'],
    flags: [
      'stdout',
      'to-stdout',
      'decompress',
      'uncompress',
      'keep',
      'force',
      'test',
      'list',
      'rm',
      'quiet',
      'verbose',
      'recursive',
      'best',
      'fast',
    ],
  });
  const name = inv.cmd.toLowerCase();
  let suffix = COMPRESSORS[name] ?? '.gz';
  const s = lastValue(p, '-S', '--suffix');
  if (s && !s.dynamic) suffix = s.text.startsWith('.') ? s.text : '.' + s.text;
  const decompress = name.startsWith('un') || name === 'gunzip' || has(p, '-d', '--decompress', '--uncompress');
  const toStdout = has(p, '-c', '--stdout', '--to-stdout', '-t', '--test', '-l', '--list');
  const isZstd = name === 'zstd' || name === 'unzstd' || name === 'lz4' || name === 'unlz4';
  const keep = has(p, '-k', '--keep') || (isZstd && !has(p, '--rm'));
  const out = lastValue(p, '-o', '--output');
  if (out && isZstd) an.write(out, inv.scope);
  for (const f of p.pos) {
    if (f.text === '-' && !f.dynamic) continue;
    an.read(f, inv.scope);
    if (toStdout) continue;
    if (!(out && isZstd)) {
      if (decompress) {
        if (f.dynamic || f.glob) an.write(f, inv.scope);
        else an.write(literalWord(f.text.endsWith(suffix) ? f.text.slice(0, -suffix.length) : f.text.replace(/\.tgz$/, '.tar')), inv.scope);
      } else an.write(f.dynamic || f.glob ? f : literalWord(f.text + suffix), inv.scope);
    }
    if (!keep) an.del(f, inv.scope);
  }
});
