// The data interpreter: runs a `handler: data` entry of the operand table (security/shell/operands/):
// its options parsed with the entry's spec, then each option value and operand given its role.
import { urlOperand, type Handler, type Inv } from './helpers';
import { has, parseOpts, values, type OptSpec } from './options';
import type { OperandEntry, OperandRole } from './operands';
import { ENV_DRIVE, PATH_PARAMS, cmdOperands, psParse, scriptBlockOpaque, psValues, type PsSpec } from './ps-params';
import { literalWord, type WordValue } from './words';

function apply(inv: Inv, role: OperandRole, w: WordValue): void {
  if (role === 'read' || role === 'read_write') inv.an.read(w, inv.scope);
  if (role === 'write' || role === 'read_write') inv.an.write(w, inv.scope);
  if (role === 'delete') inv.an.del(w, inv.scope);
  if (role === 'contacted') urlOperand(inv, w, inv.cmd);
}

/** Does the entry run a command (a `runs` operand)? Such a command is a wrapper: what it runs is what is reported. */
export function runsCommand(entry: OperandEntry): boolean {
  const roles = entry.operands;
  return roles === 'runs' || (Array.isArray(roles) && roles.includes('runs'));
}

export function dataHandler(entry: OperandEntry): Handler {
  if (entry.registry === 'cmd') return cmdHandler(entry);
  if (entry.registry === 'powershell') return powershellHandler(entry);
  const o = entry.options ?? {};
  const spec: OptSpec = {
    short: o.short,
    shortOpt: o.short_optional,
    long: o.long,
    flags: o.flags,
    posix: o.posix,
    negNumbers: o.negative_numbers,
  };
  const optionValues = Object.entries(entry.option_values ?? {});
  const opaqueOptions = Object.entries(entry.opaque_options ?? {});
  const noCommandOptions = entry.no_command_options ?? [];
  const dashIsStdio = entry.dash_is_stdio === true;
  const plusOperands = entry.plus_operands === true;
  const wrapper = runsCommand(entry);
  const defaults = (entry.default_operands ?? []).map(literalWord);
  const searchOptions = Object.entries(entry.search_options ?? {});
  return (inv) => {
    const p = parseOpts(inv.args, spec);
    if (entry.network) inv.an.net();
    if (entry.opaque) inv.an.opaque(entry.opaque);
    for (const [option, reason] of opaqueOptions) if (has(p, option)) inv.an.opaque(`${inv.cmd} ${option}: ${reason}`);
    for (const [option, role] of optionValues) {
      // `--random-source=-`: standard input, not a file (a written value `-` stays a file name).
      for (const v of values(p, option)) if (!(dashIsStdio && role === 'read' && v.text === '-')) apply(inv, role, v);
    }
    // `cpulimit -p PID`, `chrt -p PID`: the command acts on a running process and runs nothing itself.
    if (wrapper && has(p, ...noCommandOptions)) return void inv.an.pushCommand(inv.cmd);
    if (!entry.operands) return;
    // With `posix`, options end at the first operand: every word from there on is an operand.
    const given = o.posix ? p.rest : p.pos;
    // `ls` with no operand lists `.`; `ls -` lists a file named `-`, so only an empty list takes the default.
    const operands = given.length ? given : defaults;
    // `ls -R DIR`, `diff -r A B`: the operands are searched below (names, or contents), not only read.
    const below = searchOptions.find(([option]) => has(p, option))?.[1];
    // A list gives the roles by position (`link TARGET LINK`); operands past it are not files (`mknod NAME TYPE`).
    const roles = entry.operands;
    for (const [i, w] of operands.entries()) {
      const role = roleAt(roles, i);
      if (!role) break;
      if (role === 'runs') {
        // The operands from here on are the command line it runs, in a child process (no shell functions).
        return void inv.an.runArgv(operands.slice(i), inv.scope, inv.io, { noFunctions: true });
      }
      // `cat -`, `tee -`, `tail +5`, `less +G`: standard input or output, an offset or a pager command. A word that is not
      // literal may be a file whatever it starts with.
      if (!w.dynamic && ((dashIsStdio && w.text === '-') || (plusOperands && w.text.startsWith('+')))) continue;
      if (below && role === 'read') inv.an.readBelow(w, inv.scope, below);
      else apply(inv, role, w);
    }
    // A wrapper given no command: reported as itself, or (unshare, nsenter, firejail) it starts an interactive shell.
    if (wrapper) {
      if (entry.no_command_opaque) inv.an.opaque(entry.no_command_opaque);
      else inv.an.pushCommand(inv.cmd);
    }
  };
}

/** What an operand list gives each operand: one role for all, or roles by position (none past the list). */
function roleAt(roles: OperandEntry['operands'], i: number): OperandRole | undefined {
  return typeof roles === 'string' ? roles : roles?.[i];
}

/** cmd.exe: the words that are not `/x` switches are the operands, each given its role. */
function cmdHandler(entry: OperandEntry): Handler {
  const defaults = (entry.default_operands ?? []).map(literalWord);
  return (inv) => {
    if (entry.network) inv.an.net();
    if (entry.opaque) inv.an.opaque(entry.opaque);
    const operands = cmdOperands(inv.args);
    for (const [i, w] of (operands.length ? operands : defaults).entries()) {
      const role = roleAt(entry.operands, i);
      if (!role) break;
      apply(inv, role, w);
    }
  };
}

const FILE_ROLES: ReadonlySet<OperandRole> = new Set(['read', 'write', 'delete', 'read_write']);

/** PowerShell: named parameters, switches and positions bound as the cmdlet binds them, each value given its role. */
function powershellHandler(entry: OperandEntry): Handler {
  const parameters = Object.entries(entry.parameters ?? {});
  const spec: PsSpec = {
    params: [...parameters.map(([name]) => name), ...(entry.switches ?? [])],
    values: parameters.map(([name]) => name),
    positional: entry.positional ?? [],
    // `-Path a,b` is two paths (a URL may hold a comma: `-Uri` is never split).
    arrays: new Set([...PATH_PARAMS, ...parameters.filter(([, role]) => FILE_ROLES.has(role)).map(([name]) => name)]),
  };
  const defaults = Object.entries(entry.parameter_defaults ?? {});
  return (inv) => {
    if (scriptBlockOpaque(inv)) return;
    if (entry.network) inv.an.net();
    if (entry.opaque) inv.an.opaque(entry.opaque);
    const a = psParse(inv.args, spec);
    // A default stands in when no parameter of its role has a value (`Get-ChildItem -LiteralPath x` lists x, not `.` too).
    for (const [name, word] of defaults) {
      const role = entry.parameters![name];
      if (!parameters.some(([other, r]) => r === role && a.named.has(other))) a.named.set(name, [literalWord(word)]);
    }
    let files = 0;
    for (const [name, role] of parameters) {
      for (const w of psValues(a, name)) {
        if (FILE_ROLES.has(role)) files++;
        // A path on the Env: drive is the environment, whichever cmdlet reads it.
        if (role === 'read' && !w.dynamic && ENV_DRIVE.test(w.text)) inv.an.readEnvironment(`${inv.cmd} ${w.raw}`);
        else apply(inv, role, w);
      }
    }
    // `Get-ChildItem *.log | Remove-Item`: given no path, the cmdlet acts on the pipeline's items, which are not known.
    if (files === 0 && entry.from_pipeline && inv.io.stdin === 'pipe')
      inv.an.opaque(`${inv.cmd} takes the items to ${entry.from_pipeline} from the pipeline`);
  };
}
