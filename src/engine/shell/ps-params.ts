// PowerShell parameter binding for the cmdlets the analyser knows: named parameters (`-Path x`, `-Path:x`,
// any prefix, the common parameters and their aliases), switches, then the remaining words by position.
import type { Inv } from './helpers';
import { literalWord, sliceWord, type WordValue } from './words';

export interface PsSpec {
  /** Parameter names (lower case), in the order used to break prefix ties. */
  readonly params: readonly string[];
  /** Parameters that take a value (the rest are switches). */
  readonly values: readonly string[];
  /** Positional parameters, by position. */
  readonly positional: readonly string[];
  /** The cmdlet's parameter aliases (`-CN` for `-ComputerName`), each to its parameter. */
  readonly aliases?: Readonly<Record<string, string>>;
  /** Parameters whose values are split at unquoted commas (a PowerShell array); default PATH_PARAMS. */
  readonly arrays?: ReadonlySet<string>;
}

const COMMON_VALUES = [
  'erroraction',
  'warningaction',
  'informationaction',
  'errorvariable',
  'warningvariable',
  'informationvariable',
  'outvariable',
  'outbuffer',
  'pipelinevariable',
  'progressaction',
];
const COMMON_SWITCHES = ['verbose', 'debug', 'whatif', 'confirm'];
/** The common parameters every cmdlet takes (-ErrorAction, -Verbose…). */
export const COMMON_PARAMETERS: readonly string[] = [...COMMON_VALUES, ...COMMON_SWITCHES];
const COMMON_ALIASES: Record<string, string> = {
  ea: 'erroraction',
  wa: 'warningaction',
  infa: 'informationaction',
  ev: 'errorvariable',
  wv: 'warningvariable',
  iv: 'informationvariable',
  ov: 'outvariable',
  ob: 'outbuffer',
  pv: 'pipelinevariable',
  proga: 'progressaction',
  vb: 'verbose',
  db: 'debug',
  wi: 'whatif',
  cf: 'confirm',
  lp: 'literalpath',
  pspath: 'literalpath',
};

/** The parameters that name paths (and Start-BitsTransfer's sources): their values are arrays. */
export const PATH_PARAMS: ReadonlySet<string> = new Set([
  'path',
  'literalpath',
  'destination',
  'filepath',
  'outfile',
  'infile',
  'destinationpath',
  'target',
  'source',
]);

export interface PsArgs {
  readonly named: Map<string, WordValue[]>;
  readonly switches: Set<string>;
  readonly extra: WordValue[];
}

export function resolveParam(given: string, spec: PsSpec): string {
  const g = spec.aliases?.[given] ?? COMMON_ALIASES[given] ?? given;
  const all = [...spec.params, ...COMMON_VALUES, ...COMMON_SWITCHES];
  if (all.includes(g)) return g;
  return all.find((p) => p.startsWith(g)) ?? g;
}

/** `a,b` is an array in PowerShell: split unquoted commas. */
export function splitArray(w: WordValue): WordValue[] {
  if (w.dynamic || !w.text.includes(',') || /^['"]/.test(w.raw)) return [w];
  return w.text
    .split(',')
    .filter(Boolean)
    .map((t) => ({
      ...literalWord(t),
      glob: /[*?[]/.test(t),
      prefix: t.split(/[*?[]/)[0]!,
      stop: /[*?[]/.test(t) ? ('glob' as const) : null,
    }));
}

export function psParse(args: readonly WordValue[], spec: PsSpec): PsArgs {
  const named = new Map<string, WordValue[]>();
  const switches = new Set<string>();
  const loose: WordValue[] = [];
  const add = (k: string, v: WordValue) => {
    const vs = (spec.arrays ?? PATH_PARAMS).has(k) ? splitArray(v) : [v];
    named.set(k, [...(named.get(k) ?? []), ...vs]);
  };
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    const m = w.dynamic ? null : /^-([A-Za-z][A-Za-z0-9_]*)(:.*)?$/.exec(t);
    if (m) {
      const name = resolveParam(m[1]!.toLowerCase(), spec);
      if (spec.values.includes(name) || COMMON_VALUES.includes(name)) {
        const v = m[2] !== undefined ? sliceWord(w, m[1]!.length + 2) : args[++i];
        if (v) add(name, v);
      } else switches.add(name);
      continue;
    }
    loose.push(w);
  }
  const extra: WordValue[] = [];
  for (const w of loose) {
    const slot = spec.positional.find((p) => !named.has(p));
    if (slot) add(slot, w);
    else extra.push(w);
  }
  return { named, switches, extra };
}

export const psValues = (a: PsArgs, ...names: string[]): WordValue[] => names.flatMap((n) => a.named.get(n) ?? []);

/**
 * `ForEach-Object { Remove-Item $_ }`: bash sees `{` as a word; a script block cannot be analysed, so the cmdlet is
 * opaque and its parameters are not bound. True when it had one.
 */
export function scriptBlockOpaque(inv: Inv): boolean {
  if (!inv.args.some((w) => w.raw === '{' || /^\{[^}]/.test(w.raw) || w.raw === '}')) return false;
  inv.an.opaque(`PowerShell script block passed to ${inv.cmd}`);
  return true;
}

/** PowerShell's `Env:` drive (`gci env:`, `Get-Content env:OPENAI_API_KEY`) is the environment: its secrets. */
export const ENV_DRIVE = /^env:/i;

/** `/S`, `/Q`, `/EXCLUDE:x`: a cmd.exe switch, not a path. */
export function isCmdSwitch(w: WordValue): boolean {
  return !w.dynamic && /^\/[A-Za-z0-9?+-][A-Za-z0-9?+-]*(:.*)?$/.test(w.text);
}

/** A cmd.exe command's operands: its words that are neither `/x` switches nor `-x` options. */
export function cmdOperands(args: readonly WordValue[]): WordValue[] {
  return args.filter((w) => !isCmdSwitch(w) && !(w.text.startsWith('-') && w.text.length > 1 && !w.dynamic));
}
