// Command-line flags of the `bulwark` subcommands: `--name value`, `--name=value`, booleans, and
// everything after `--` kept as it is. Small on purpose: `bulwark exec` and `bulwark hook` load it.
import path from 'node:path';
import { UsageError } from './usage-error';

export interface Flags {
  values: Map<string, string[]>;
  bools: Set<string>;
  rest: string[];
}

export function parseFlags(argv: string[], valued: string[], booleans: string[]): Flags {
  const values = new Map<string, string[]>();
  const bools = new Set<string>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      rest.push(...argv.slice(i + 1));
      break;
    }
    const [name, inline] =
      a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (valued.includes(name)) {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`${name} needs a value`);
      values.set(name, [...(values.get(name) ?? []), v]);
    } else if (booleans.includes(name)) {
      bools.add(name);
    } else if (a.startsWith('-')) {
      throw new UsageError(`unknown option ${a}`);
    } else {
      rest.push(a);
    }
  }
  return { values, bools, rest };
}

export function absoluteDir(flag: string, v: string): string {
  if (!path.isAbsolute(v)) throw new UsageError(`${flag} must be an absolute path, got \`${v}\``);
  return path.resolve(v);
}
