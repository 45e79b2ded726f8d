// A small getopt: enough to tell option values from operands for the commands the analyser knows.
import { sliceWord, type WordValue } from './words';

export interface OptSpec {
  /** Short options that take a value (`-o FILE`, `-oFILE`). */
  readonly short?: string;
  /** Short options whose value is optional and only taken when attached (`sed -i.bak`). */
  readonly shortOpt?: string;
  /** Long options that take a value (`--out FILE`, `--out=FILE`). */
  readonly long?: readonly string[];
  /** Known long flags, so abbreviations (`--in` for `--in-place`) resolve like getopt_long does. */
  readonly flags?: readonly string[];
  /** Stop at the first operand (POSIX utilities and wrappers: the rest belongs to the next command). */
  readonly posix?: boolean;
  /** Treat `-5` style words as operands (numbers), not option clusters. */
  readonly negNumbers?: boolean;
}

export interface Opt {
  /** `-x` for short options, `--name` (full name) for long ones. */
  readonly name: string;
  readonly value?: WordValue;
}

export interface Parsed {
  readonly opts: Opt[];
  /** Operands, in order (with `posix`, only the first one). */
  readonly pos: WordValue[];
  /** With `posix`: the first operand and everything after it. */
  readonly rest: WordValue[];
  /** Operands that came after `--`. */
  readonly afterDashDash: WordValue[];
}

export function parseOpts(args: readonly WordValue[], spec: OptSpec = {}): Parsed {
  const opts: Opt[] = [];
  const pos: WordValue[] = [];
  const afterDashDash: WordValue[] = [];
  let rest: WordValue[] = [];
  const short = spec.short ?? '';
  const shortOpt = spec.shortOpt ?? '';
  const long = spec.long ?? [];
  let dd = false;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    // An option must start with a literal dash; `$X` could be anything and counts as an operand.
    const t = w.stop === 'dyn' && !w.prefix.startsWith('-') ? '' : w.text;
    if (dd) {
      pos.push(w);
      afterDashDash.push(w);
      continue;
    }
    if (t === '--' && !w.dynamic) {
      dd = true;
      if (spec.posix) {
        rest = args.slice(i + 1);
        if (rest[0]) pos.push(rest[0]);
        break;
      }
      continue;
    }
    if (t.startsWith('--') && t.length > 2) {
      const eq = t.indexOf('=');
      const given = eq < 0 ? t.slice(2) : t.slice(2, eq);
      const name = resolveLong(given, long, spec.flags ?? []);
      if (eq >= 0) opts.push({ name: '--' + name, value: sliceWord(w, eq + 1) });
      else if (long.includes(name)) {
        const v = args[i + 1];
        if (v) i++;
        opts.push(v ? { name: '--' + name, value: v } : { name: '--' + name });
      } else opts.push({ name: '--' + name });
      continue;
    }
    if (t.startsWith('-') && t.length > 1 && !(spec.negNumbers && /^-\d/.test(t))) {
      for (let j = 1; j < t.length; j++) {
        const c = t[j]!;
        if (short.includes(c)) {
          if (j + 1 < t.length) opts.push({ name: '-' + c, value: sliceWord(w, j + 1) });
          else {
            const v = args[i + 1];
            if (v) i++;
            opts.push(v ? { name: '-' + c, value: v } : { name: '-' + c });
          }
          break;
        }
        if (shortOpt.includes(c)) {
          opts.push(j + 1 < t.length ? { name: '-' + c, value: sliceWord(w, j + 1) } : { name: '-' + c });
          break;
        }
        opts.push({ name: '-' + c });
      }
      continue;
    }
    pos.push(w);
    if (spec.posix) {
      rest = args.slice(i);
      break;
    }
  }
  return { opts, pos, rest, afterDashDash };
}

/** getopt_long accepts any unambiguous prefix of a long option. */
function resolveLong(given: string, long: readonly string[], flags: readonly string[]): string {
  if (long.includes(given) || flags.includes(given)) return given;
  const all = [...long, ...flags].filter((n) => n.startsWith(given));
  return all.length === 1 ? all[0]! : given;
}

export function has(p: Parsed, ...names: string[]): boolean {
  return p.opts.some((o) => names.includes(o.name));
}

/** Every value given to any of `names`, in order. */
export function values(p: Parsed, ...names: string[]): WordValue[] {
  const out: WordValue[] = [];
  for (const o of p.opts) if (o.value && names.includes(o.name)) out.push(o.value);
  return out;
}

export function lastValue(p: Parsed, ...names: string[]): WordValue | undefined {
  const v = values(p, ...names);
  return v[v.length - 1];
}
