// The data interpreter: runs a `handler: data` entry of the operand table (security/shell/operands/):
// its options parsed with the entry's spec, then each option value and operand given its role.
import type { Handler, Inv } from './helpers';
import { has, parseOpts, values, type OptSpec } from './options';
import type { OperandEntry, OperandRole } from './operands';
import type { WordValue } from './words';

function apply(inv: Inv, role: OperandRole, w: WordValue): void {
  if (role === 'read' || role === 'read_write') inv.an.read(w, inv.scope);
  if (role === 'write' || role === 'read_write') inv.an.write(w, inv.scope);
  if (role === 'delete') inv.an.del(w, inv.scope);
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
  const dashIsStdio = entry.dash_is_stdio === true;
  const plusOperands = entry.plus_operands === true;
  return (inv) => {
    const p = parseOpts(inv.args, spec);
    for (const [option, reason] of opaqueOptions) if (has(p, option)) inv.an.opaque(`${inv.cmd} ${option}: ${reason}`);
    for (const [option, role] of optionValues) {
      // `--random-source=-`: standard input, not a file (a written value `-` stays a file name).
      for (const v of values(p, option)) if (!(dashIsStdio && role === 'read' && v.text === '-')) apply(inv, role, v);
    }
    if (!entry.operands) return;
    // A list gives the roles by position (`link TARGET LINK`); operands past it are not files (`mknod NAME TYPE`).
    const roles = entry.operands;
    for (const [i, w] of p.pos.entries()) {
      const role = typeof roles === 'string' ? roles : roles[i];
      if (!role) break;
      // `cat -`, `tee -`, `tail +5`, `less +G`: standard input or output, an offset or a pager command. A word that is not
      // literal may be a file whatever it starts with.
      if (!w.dynamic && ((dashIsStdio && w.text === '-') || (plusOperands && w.text.startsWith('+')))) continue;
      apply(inv, role, w);
    }
  };
}
