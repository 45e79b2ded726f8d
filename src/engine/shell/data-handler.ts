// The data interpreter: runs a `handler: data` entry of the operand table (security/shell/operands/):
// its options parsed with the entry's spec, then each option value and operand given its role.
import type { Handler, Inv } from './helpers';
import { has, parseOpts, values, type OptSpec } from './options';
import type { OperandEntry, OperandRole } from './operands';
import type { WordValue } from './words';

/** `traceroute HOST 60`, `ping -c 3 HOST`: an all-digit word beside a host is a count or a size, not a host. */
const COUNT = /^\d*$/;

function apply(inv: Inv, role: OperandRole, w: WordValue): void {
  if (role === 'read' || role === 'read_write') inv.an.read(w, inv.scope);
  if (role === 'write' || role === 'read_write') inv.an.write(w, inv.scope);
  if (role === 'delete') inv.an.del(w, inv.scope);
  if (role === 'contacted') {
    if (w.dynamic) inv.an.netWord(w, inv.cmd);
    else if (!COUNT.test(w.text)) inv.an.net(w.text);
  }
}

/** Does the entry run a command (a `runs` operand)? Such a command is a wrapper: what it runs is what is reported. */
export function runsCommand(entry: OperandEntry): boolean {
  const roles = entry.operands;
  return roles === 'runs' || (Array.isArray(roles) && roles.includes('runs'));
}

export function dataHandler(entry: OperandEntry): Handler {
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
    const operands = o.posix ? p.rest : p.pos;
    // A list gives the roles by position (`link TARGET LINK`); operands past it are not files (`mknod NAME TYPE`).
    const roles = entry.operands;
    for (const [i, w] of operands.entries()) {
      const role = typeof roles === 'string' ? roles : roles[i];
      if (!role) break;
      if (role === 'runs') {
        // The operands from here on are the command line it runs, in a child process (no shell functions).
        return void inv.an.runArgv(operands.slice(i), inv.scope, inv.io, { noFunctions: true });
      }
      // `cat -`, `tee -`, `tail +5`, `less +G`: standard input or output, an offset or a pager command. A word that is not
      // literal may be a file whatever it starts with.
      if (!w.dynamic && ((dashIsStdio && w.text === '-') || (plusOperands && w.text.startsWith('+')))) continue;
      apply(inv, role, w);
    }
    // A wrapper given no command: reported as itself, or (unshare, nsenter, firejail) it starts an interactive shell.
    if (wrapper) {
      if (entry.no_command_opaque) inv.an.opaque(`${inv.cmd} ${entry.no_command_opaque}`);
      else inv.an.pushCommand(inv.cmd);
    }
  };
}
