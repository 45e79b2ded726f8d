// What a command does beyond the files the analysis finds (security/shell/commands/*.yaml): the knowledge
// effect-based decisions rest on. A command the table does not name is not judged (never "harmless").
import devToolsTable from '../../../security/shell/commands/dev-tools.yaml';
import filesTable from '../../../security/shell/commands/files.yaml';
import shellsTable from '../../../security/shell/commands/shells.yaml';
import type { Invocation } from './analyze';

export type CommandEffect = 'analysed' | 'runs_project_code' | 'runs_its_argument';
const EFFECTS: readonly CommandEffect[] = ['analysed', 'runs_project_code', 'runs_its_argument'];

/**
 * `only_args`: every argument is one of these; `with_option`: this option is present; `words`: the
 * subcommand and the words right after it are these (`git stash list …`), with `with_option` too if
 * given. `unless_options`: the case does not apply when one of these is present.
 */
interface CaseSpec {
  readonly only_args?: readonly string[];
  readonly with_option?: string;
  readonly words?: readonly string[];
  readonly unless_options?: readonly string[];
  readonly effect: CommandEffect;
}
/** A program named by a relative path below the working directory (`./scripts/test.sh`, `node_modules/.bin/tsc`). */
const PROJECT_PROGRAM = /^(?!\/)(?!~)(?!.*(^|\/)\.\.(\/|$))/;
interface CommandSpec {
  readonly name: string;
  readonly effect?: CommandEffect;
  readonly unless_options?: readonly string[];
  /** With subcommands: options that make the invocation unjudged only before the subcommand (git's `-c name=value`, not `git shortlog -c`). */
  readonly global_unless_options?: readonly string[];
  readonly options_with_value?: readonly string[];
  /** Options come before the first operand (POSIX utilities, shells): a later `-c` belongs to the script. */
  readonly options_first?: boolean;
  readonly cases?: readonly CaseSpec[];
  readonly subcommands?: Readonly<Record<string, CommandEffect>>;
  readonly examples?: { readonly judged: readonly string[]; readonly unjudged: readonly string[] };
}
export interface CommandTable {
  readonly version: 1;
  readonly description?: string;
  readonly commands: readonly CommandSpec[];
}

/** The judgement of one invocation: its effect, or why it is not judged. */
export type InvocationJudgement =
  { readonly effect: CommandEffect; readonly why: string } | { readonly effect?: undefined; readonly why: string };

export class CommandTableError extends Error {}

/** Shape check: the table is compiled in, but a malformed one must stop Bulwark, not widen what it allows. */
export function validateCommandTable(data: unknown, file = 'security/shell/commands'): CommandTable {
  const fail = (msg: string): never => {
    throw new CommandTableError(`command table ${file}: ${msg}`);
  };
  if (typeof data !== 'object' || data === null) fail('not an object');
  const t = data as Record<string, unknown>;
  if (t.version !== 1) fail('version must be 1');
  if (!Array.isArray(t.commands) || t.commands.length === 0) fail('commands must be a non-empty list');
  const names = new Set<string>();
  const isEffect = (e: unknown): e is CommandEffect => EFFECTS.includes(e as CommandEffect);
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length > 0);
  for (const c of t.commands as Record<string, unknown>[]) {
    const name = typeof c.name === 'string' && c.name.length > 0 ? c.name : fail('an entry without a name');
    if (names.has(name)) fail(`\`${name}\` is listed twice`);
    names.add(name);
    for (const k of Object.keys(c))
      if (
        ![
          'name',
          'effect',
          'unless_options',
          'global_unless_options',
          'options_with_value',
          'options_first',
          'cases',
          'subcommands',
          'examples',
        ].includes(k)
      )
        fail(`\`${name}\`: unknown key \`${k}\``);
    if (c.options_first !== undefined && typeof c.options_first !== 'boolean') fail(`\`${name}\`: options_first must be true or false`);
    if (c.effect !== undefined && !isEffect(c.effect)) fail(`\`${name}\`: effect must be one of ${EFFECTS.join(', ')}`);
    if (c.effect === undefined && c.subcommands === undefined && c.cases === undefined)
      fail(`\`${name}\`: needs an effect, subcommands or cases`);
    for (const k of ['unless_options', 'global_unless_options', 'options_with_value'] as const)
      if (c[k] !== undefined && !strings(c[k])) fail(`\`${name}\`: ${k} must be a list of options`);
    // Before the subcommand only: without subcommands there is no "before", and the options must be
    // skipped with their values to find the subcommand.
    if (c.global_unless_options !== undefined) {
      if (c.subcommands === undefined) fail(`\`${name}\`: global_unless_options needs subcommands`);
      for (const o of c.global_unless_options as string[])
        if (!o.startsWith('-')) fail(`\`${name}\`: global_unless_options must be options`);
    }
    if (c.subcommands !== undefined) {
      if (typeof c.subcommands !== 'object' || c.subcommands === null || Array.isArray(c.subcommands))
        fail(`\`${name}\`: subcommands must be a mapping`);
      for (const [s, e] of Object.entries(c.subcommands as object))
        if (!isEffect(e)) fail(`\`${name} ${s}\`: effect must be one of ${EFFECTS.join(', ')}`);
    }
    if (c.cases !== undefined) {
      if (!Array.isArray(c.cases)) fail(`\`${name}\`: cases must be a list`);
      for (const k of c.cases as Record<string, unknown>[]) {
        if (!isEffect(k.effect)) fail(`\`${name}\`: a case needs an effect`);
        for (const key of Object.keys(k))
          if (!['only_args', 'with_option', 'words', 'unless_options', 'effect'].includes(key))
            fail(`\`${name}\`: a case has an unknown key \`${key}\``);
        if (k.words !== undefined) {
          if (!strings(k.words) || (k.words as string[]).length === 0 || (k.words as string[]).some((w) => w.startsWith('-')))
            fail(`\`${name}\`: words must be a list of words (the subcommand first)`);
          if (k.only_args !== undefined) fail(`\`${name}\`: a case has exactly one of only_args, with_option, words`);
        } else if ((k.only_args === undefined) === (k.with_option === undefined))
          fail(`\`${name}\`: a case has exactly one of only_args, with_option`);
        if (k.with_option !== undefined && (typeof k.with_option !== 'string' || !k.with_option.startsWith('-')))
          fail(`\`${name}\`: with_option must be an option`);
        if (k.only_args !== undefined && !strings(k.only_args)) fail(`\`${name}\`: only_args must be a list`);
        if (k.unless_options !== undefined && !strings(k.unless_options))
          fail(`\`${name}\`: a case's unless_options must be a list of options`);
      }
    }
    // The shipped bundles leave examples out (esbuild.mjs); the tests check them on the file itself.
    const ex = c.examples as Record<string, unknown> | undefined;
    if (ex !== undefined && (!strings(ex.judged) || (ex.judged as string[]).length === 0 || !Array.isArray(ex.unjudged)))
      fail(`\`${name}\`: examples need judged (at least one) and unjudged lists`);
  }
  return data as CommandTable;
}

let compiled: Map<string, CommandSpec> | undefined;

/** The table's files; a name may be in one of them only. */
export const COMMAND_TABLE_FILES: readonly { readonly file: string; readonly data: unknown }[] = [
  { file: 'security/shell/commands/files.yaml', data: filesTable },
  { file: 'security/shell/commands/dev-tools.yaml', data: devToolsTable },
  { file: 'security/shell/commands/shells.yaml', data: shellsTable },
];

function table(): Map<string, CommandSpec> {
  if (compiled) return compiled;
  const all = new Map<string, CommandSpec>();
  for (const { file, data } of COMMAND_TABLE_FILES) {
    for (const c of validateCommandTable(data, file).commands) {
      if (all.has(c.name)) throw new CommandTableError(`command table ${file}: \`${c.name}\` is also in another file of the table`);
      all.set(c.name, c);
    }
  }
  return (compiled = all);
}

/** Whether `args` use `option`: exactly, as `--opt=value`, glued to a short option (`-ofile`), or a letter of a short cluster (`-ni`). */
function usesOption(args: readonly string[], option: string): boolean {
  const shortLetter = /^-[A-Za-z0-9]$/.test(option) ? option[1]! : undefined;
  for (const a of args) {
    if (a === '--') return false;
    if (a === option || a.startsWith(`${option}=`)) return true;
    if (option.startsWith('--') || !shortLetter) {
      // A single-dash long option (find's -fprint) may be followed by its value as the next word only.
      continue;
    }
    if (/^-[A-Za-z0-9]/.test(a) && !a.startsWith('--') && a.slice(1).includes(shortLetter)) return true;
  }
  return false;
}

/** Where the system's own programs live: `/usr/bin/ls` is ls; `./bin/ls` or `~/x/ls` is some other program. */
const SYSTEM_PROGRAM_DIRS = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;

export function judgeInvocation(inv: Invocation): InvocationJudgement {
  if (inv.path !== undefined && !SYSTEM_PROGRAM_DIRS.test(inv.path)) {
    // A program of the project (its scripts, node_modules/.bin): whatever it does is the project's code.
    // Any other path (home, /opt, `..`) is some program the analysis knows nothing about.
    if (!inv.wrapper && PROJECT_PROGRAM.test(inv.path))
      return { effect: 'runs_project_code', why: `\`${inv.path}\` is a program of the project` };
    return { why: `\`${inv.path}\` is a program named by its path, not the system's ${inv.name}` };
  }
  const spec = table().get(inv.name);
  if (!spec)
    return {
      why: inv.wrapper
        ? `\`${inv.name}\` runs its command in a way that changes what it may do (privileges, root, namespaces)`
        : `\`${inv.name}\` is not in the command table, so what it does is not known`,
    };
  // A wrapper is judged only as one that adds nothing; an ordinary command never as a wrapper.
  if ((spec.effect === 'runs_its_argument') !== (inv.wrapper === true)) return { why: `\`${inv.name}\` is not judged here` };
  const needsArgs = spec.unless_options || spec.global_unless_options || spec.cases || spec.subcommands;
  if (needsArgs && !inv.args) return { why: `\`${inv.name}\` runs with arguments the analysis does not keep` };
  const all = inv.args ?? [];
  // With options_first, only the words before the first operand are options (`bash x.sh -c`: the script's).
  const firstOperand = spec.options_first ? all.findIndex((a) => a === '--' || !a.startsWith('-')) : -1;
  const args = firstOperand < 0 ? all : all.slice(0, firstOperand);
  if (needsArgs && inv.dynamic) return { why: `\`${inv.name}\` has arguments that are not literal` };
  for (const o of spec.unless_options ?? [])
    if (usesOption(args, o)) return { why: `\`${inv.name} ${o}\` can do more than the analysis sees` };
  if (spec.global_unless_options) {
    // The command's own options come before its subcommand (`git -c x=y log`); after it they are the subcommand's (`git shortlog -c`).
    const at = subcommandIndex(all, spec.options_with_value ?? []);
    const before = at === undefined ? all : all.slice(0, at);
    for (const o of spec.global_unless_options)
      if (usesOption(before, o)) return { why: `\`${inv.name} ${o}\` can do more than the analysis sees` };
  }
  for (const k of spec.cases ?? []) {
    if (k.unless_options?.some((o) => usesOption(all, o))) continue;
    if (k.words) {
      // The subcommand and the words after it, in order (`git stash list`, not `git stash -p list`).
      const at = subcommandIndex(all, spec.options_with_value ?? []);
      if (at === undefined || !k.words.every((w, j) => all[at + j] === w)) continue;
      if (k.with_option && !usesOption(all.slice(at + k.words.length), k.with_option)) continue;
      return {
        effect: k.effect,
        why: `\`${inv.name} ${k.words.join(' ')}${k.with_option ? ` ${k.with_option}` : ''}\` ${describe(k.effect)}`,
      };
    }
    if (k.only_args && all.length > 0 && all.every((a) => k.only_args!.includes(a)))
      return { effect: k.effect, why: `\`${inv.name} ${all.join(' ')}\` ${describe(k.effect)}` };
    if (k.with_option && usesOption(args, k.with_option))
      return { effect: k.effect, why: `\`${inv.name} ${k.with_option}\` ${describe(k.effect)}` };
  }
  if (spec.subcommands) {
    const sub = subcommandOf(all, spec.options_with_value ?? []);
    const effect =
      sub === undefined ? undefined : Object.prototype.hasOwnProperty.call(spec.subcommands, sub) ? spec.subcommands[sub] : undefined;
    if (effect) return { effect, why: `\`${inv.name} ${sub}\` ${describe(effect)}` };
    if (!spec.effect)
      return {
        why:
          sub === undefined
            ? `\`${inv.name}\` without a known subcommand is not judged`
            : `\`${inv.name} ${sub}\` is not in the command table, so what it does is not known`,
      };
  }
  if (!spec.effect) return { why: `\`${inv.name}\` with these arguments is not judged` };
  return { effect: spec.effect, why: `\`${inv.name}\` ${describe(spec.effect)}` };
}

/** The first argument that is not an option (skipping the values of options that take one). */
function subcommandOf(args: readonly string[], withValue: readonly string[]): string | undefined {
  const at = subcommandIndex(args, withValue);
  return at === undefined ? undefined : args[at];
}

/** Where subcommandOf's argument is; `--` ends the options (nothing after it is a subcommand). */
function subcommandIndex(args: readonly string[], withValue: readonly string[]): number | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return undefined;
    if (withValue.includes(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    return i;
  }
  return undefined;
}

function describe(effect: CommandEffect): string {
  return effect === 'analysed'
    ? 'only touches the files the analysis lists'
    : effect === 'runs_its_argument'
      ? 'runs the command it is given, adding nothing'
      : 'runs code of the project';
}

/** The table's entries with their examples (for the tests over the data). */
export function commandTableEntries(): readonly CommandSpec[] {
  return [...table().values()];
}
