// The command operand table (security/shell/operands/*.yaml, schema.json): for every command the shell
// analysis has a handler for, what its options and operands are, whether code or the data interpreter
// handles it, and examples with the exact effects the analysis must report (run by the tests).
import builtinsTable from '../../../security/shell/operands/builtins.yaml';
import filesTable from '../../../security/shell/operands/files.yaml';
import networkTable from '../../../security/shell/operands/network.yaml';
import shellsTable from '../../../security/shell/operands/shells.yaml';
import windowsTable from '../../../security/shell/operands/windows.yaml';
import wrappersTable from '../../../security/shell/operands/wrappers.yaml';

export type OperandRegistry = 'posix' | 'cmd' | 'powershell';
/**
 * What an operand or option value is to the command: a file it reads, writes or deletes, `none` (not a file: a
 * duration, a name), `contacted` (a host or URL it connects to), `runs` (the command line it runs, from here on).
 */
export type OperandRole = 'read' | 'write' | 'delete' | 'read_write' | 'none' | 'contacted' | 'runs';
const REGISTRIES: readonly OperandRegistry[] = ['posix', 'cmd', 'powershell'];
const ROLES: readonly OperandRole[] = ['read', 'write', 'delete', 'read_write', 'none', 'contacted', 'runs'];

export interface OperandOptions {
  readonly short?: string;
  readonly short_optional?: string;
  readonly long?: readonly string[];
  readonly flags?: readonly string[];
  readonly posix?: boolean;
  readonly negative_numbers?: boolean;
}

/** One example: a command line and the exact effects (paths relative to the example cwd, `~/` below home). */
export interface OperandExample {
  readonly run: string;
  readonly also?: readonly string[];
  readonly [effect: string]: unknown;
}

export interface OperandEntry {
  readonly names: readonly string[];
  readonly registry?: OperandRegistry;
  readonly handler: 'code' | 'data';
  readonly module?: string;
  /** A code entry: what its handler does that the data interpreter cannot express (one sentence). */
  readonly code_because?: string;
  readonly options?: OperandOptions;
  /** One role for every operand, or roles by position (later operands are not files). */
  readonly operands?: OperandRole | readonly OperandRole[];
  readonly option_values?: Readonly<Record<string, OperandRole>>;
  readonly opaque_options?: Readonly<Record<string, string>>;
  /** An operand `-`, and a read option's value `-`, is standard input or output, not a file. */
  readonly dash_is_stdio?: boolean;
  /** An operand starting with `+` is an offset or a command (`tail +5`, `less +G`), not a file. */
  readonly plus_operands?: boolean;
  /** The command uses the network whatever its operands (`ping`, `torsocks`). */
  readonly network?: boolean;
  /** The command's effects are unknown whatever its operands: the reason (one sentence). */
  readonly opaque?: string;
  /** Options with which a command that `runs` one acts on a running process instead (`cpulimit -p PID`). */
  readonly no_command_options?: readonly string[];
  /** Why a command that `runs` one is opaque when given none (it starts an interactive shell). */
  readonly no_command_opaque?: string;
  /** The operands a command acts on when given none (`ls` and cmd.exe's `dir` list `.`). */
  readonly default_operands?: readonly string[];
  /** Options with which each read operand is searched below: its entries' names, or their contents (`ls -R`, `diff -r`). */
  readonly search_options?: Readonly<Record<string, 'names' | 'contents'>>;
  /** PowerShell: the parameters that take a value (lower case), with what the value is. */
  readonly parameters?: Readonly<Record<string, OperandRole>>;
  /** PowerShell: the switch parameters (lower case), so a prefix resolves to the right name. */
  readonly switches?: readonly string[];
  /** PowerShell: the parameters bound by position, in order. */
  readonly positional?: readonly string[];
  /** PowerShell: the value a parameter has when no parameter of its role is given (`Get-ChildItem` lists `.`). */
  readonly parameter_defaults?: Readonly<Record<string, string>>;
  /** PowerShell: given no file parameter and fed by a pipe, the cmdlet acts on the pipeline's items: what it does to them. */
  readonly from_pipeline?: string;
  /** Left out of the shipped bundles (esbuild.mjs); the tests read them from the files. */
  readonly examples?: readonly OperandExample[];
}

export interface OperandTable {
  readonly version: 1;
  readonly family: string;
  readonly description: string;
  readonly commands: readonly OperandEntry[];
}

export class OperandTableError extends Error {}

/** The keys each registry's data interpreter reads (data-handler.ts); any other data key is refused for it. */
const POSIX_DATA_KEYS = [
  'options',
  'operands',
  'option_values',
  'opaque_options',
  'dash_is_stdio',
  'plus_operands',
  'network',
  'opaque',
  'no_command_options',
  'no_command_opaque',
  'default_operands',
  'search_options',
] as const;
const CMD_DATA_KEYS = ['operands', 'default_operands', 'network', 'opaque'] as const;
const POWERSHELL_DATA_KEYS = ['parameters', 'switches', 'positional', 'parameter_defaults', 'from_pipeline', 'network', 'opaque'] as const;
type DataKey = (typeof POSIX_DATA_KEYS | typeof CMD_DATA_KEYS | typeof POWERSHELL_DATA_KEYS)[number];
const REGISTRY_DATA_KEYS: Record<OperandRegistry, readonly DataKey[]> = {
  posix: POSIX_DATA_KEYS,
  cmd: CMD_DATA_KEYS,
  powershell: POWERSHELL_DATA_KEYS,
};
/** Every data key of any registry: refused on a code entry. */
const DATA_KEYS: readonly DataKey[] = [...new Set<DataKey>([...POSIX_DATA_KEYS, ...CMD_DATA_KEYS, ...POWERSHELL_DATA_KEYS])];
const ENTRY_KEYS: readonly string[] = ['names', 'registry', 'handler', 'module', 'code_because', ...DATA_KEYS, 'examples'];
/** The shortest `code_because` taken for a sentence that says why. */
const CODE_BECAUSE_MIN = 20;
const OPTION_KEYS = ['short', 'short_optional', 'long', 'flags', 'posix', 'negative_numbers'];
const EXAMPLE_KEYS = [
  'run',
  'also',
  'reads',
  'writes',
  'deletes',
  'globs',
  'searches',
  'urls',
  'logins',
  'network',
  'unnamed_network',
  'sinks',
  'prints_environment',
  'opaque',
  'reviews',
  'approvals',
];

type Fail = (msg: string) => never;
const isOption = (o: string) => /^--?[^\s=]+$/.test(o);
const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length > 0 && !/\s/.test(x));

/** A posix or cmd.exe data entry: its options (posix) and the roles of its operands and option values. */
function validateOperandRoles(c: Record<string, unknown>, label: string, fail: Fail, registry: OperandRegistry): void {
  const o = (c.options ?? {}) as Record<string, unknown>;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) fail(`${label}: options must be a mapping`);
  for (const k of Object.keys(o)) if (!OPTION_KEYS.includes(k)) fail(`${label}: options has an unknown key \`${k}\``);
  for (const k of ['short', 'short_optional'] as const)
    if (o[k] !== undefined && (typeof o[k] !== 'string' || !/^[A-Za-z0-9#]+$/.test(o[k] as string)))
      fail(`${label}: options.${k} must be option letters`);
  for (const k of ['long', 'flags'] as const)
    if (o[k] !== undefined && !strings(o[k])) fail(`${label}: options.${k} must be a list of long option names`);
  for (const k of ['posix', 'negative_numbers'] as const)
    if (o[k] !== undefined && typeof o[k] !== 'boolean') fail(`${label}: options.${k} must be true or false`);
  const roles = Array.isArray(c.operands) ? c.operands : c.operands === undefined ? [] : [c.operands];
  if ((Array.isArray(c.operands) && c.operands.length === 0) || !roles.every((r) => ROLES.includes(r as OperandRole)))
    fail(`${label}: operands must be one of ${ROLES.join(', ')}, or a list of them by position`);
  // The command line it runs is every word from its position on: the last role, and options must end there.
  const runsAt = roles.indexOf('runs');
  if (runsAt >= 0 && registry === 'cmd') fail(`${label}: a cmd.exe command that runs another is code`);
  if (runsAt >= 0 && runsAt !== roles.length - 1) fail(`${label}: \`runs\` must be the last operand role`);
  if (runsAt >= 0 && o.posix !== true) fail(`${label}: a command that runs one needs options.posix (its options end at the command)`);
  if (runsAt < 0 && (c.no_command_options !== undefined || c.no_command_opaque !== undefined))
    fail(`${label}: no_command_options and no_command_opaque are for commands that run one (a \`runs\` operand)`);
  if (c.no_command_options !== undefined && (!strings(c.no_command_options) || !(c.no_command_options as string[]).every(isOption)))
    fail(`${label}: no_command_options must be a list of options`);
  const ov = (c.option_values ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(ov))
    if (!isOption(k) || !ROLES.includes(v as OperandRole) || v === 'runs')
      fail(`${label}: option_values maps options to one of ${ROLES.filter((r) => r !== 'runs').join(', ')}`);
  const oo = (c.opaque_options ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(oo))
    if (!isOption(k) || typeof v !== 'string' || v.length < 10) fail(`${label}: opaque_options maps options to the reason`);
  for (const k of ['dash_is_stdio', 'plus_operands'] as const)
    if (c[k] !== undefined && typeof c[k] !== 'boolean') fail(`${label}: ${k} must be true or false`);
  if (c.default_operands !== undefined && !strings(c.default_operands)) fail(`${label}: default_operands must be a list of words`);
  const so = (c.search_options ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(so))
    if (!isOption(k) || (v !== 'names' && v !== 'contents')) fail(`${label}: search_options maps options to names or contents`);
  if (c.operands === undefined && c.option_values === undefined)
    fail(`${label}: a data handler gives its operands or option values a role`);
}

/** A PowerShell data entry: parameters with roles, switches, positions and defaults, all lower-case names. */
function validatePowershellData(c: Record<string, unknown>, label: string, fail: Fail): void {
  const name = (n: unknown) => typeof n === 'string' && /^[a-z][a-z0-9]*$/.test(n);
  const params = (c.parameters ?? {}) as Record<string, unknown>;
  if (typeof params !== 'object' || params === null || Array.isArray(params) || Object.keys(params).length === 0)
    fail(`${label}: a PowerShell data entry gives its parameters (lower case) a role`);
  for (const [k, v] of Object.entries(params))
    if (!name(k) || !ROLES.includes(v as OperandRole) || v === 'runs')
      fail(`${label}: parameters maps lower-case names to one of ${ROLES.filter((r) => r !== 'runs').join(', ')}`);
  for (const k of ['switches', 'positional'] as const)
    if (c[k] !== undefined && (!Array.isArray(c[k]) || !(c[k] as unknown[]).every(name)))
      fail(`${label}: ${k} must be a list of lower-case names`);
  for (const p of (c.positional ?? []) as string[])
    if (!(p in params)) fail(`${label}: positional parameter \`${p}\` is not one of its parameters`);
  for (const sw of (c.switches ?? []) as string[]) if (sw in params) fail(`${label}: \`${sw}\` is both a switch and a parameter`);
  const defaults = (c.parameter_defaults ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(defaults))
    if (!(k in params) || typeof v !== 'string' || v === '') fail(`${label}: parameter_defaults maps its parameters to a word`);
}

/**
 * Shape check at load (the schema's rules the engine relies on): the table is compiled in, but a
 * malformed one must stop Bulwark, not change what a command is taken to do.
 */
export function validateOperandTable(data: unknown, file: string): OperandTable {
  const fail = (msg: string): never => {
    throw new OperandTableError(`operand table ${file}: ${msg}`);
  };
  if (typeof data !== 'object' || data === null || Array.isArray(data)) fail('not an object');
  const t = data as Record<string, unknown>;
  for (const k of Object.keys(t)) if (!['version', 'family', 'description', 'commands'].includes(k)) fail(`unknown key \`${k}\``);
  if (t.version !== 1) fail('version must be 1');
  if (typeof t.family !== 'string' || !/^[a-z][a-z-]*$/.test(t.family)) fail('family must be a lower-case word');
  if (typeof t.description !== 'string' || t.description.length < 10) fail('description missing');
  if (!Array.isArray(t.commands) || t.commands.length === 0) fail('commands must be a non-empty list');
  for (const c of t.commands as Record<string, unknown>[]) {
    if (typeof c !== 'object' || c === null) fail('an entry is not a mapping');
    if (!strings(c.names) || (c.names as string[]).length === 0) fail('an entry needs names (a list of command names)');
    const label = `\`${(c.names as string[]).join(' ')}\``;
    for (const k of Object.keys(c)) if (!ENTRY_KEYS.includes(k)) fail(`${label}: unknown key \`${k}\``);
    if (new Set(c.names as string[]).size !== (c.names as string[]).length) fail(`${label}: a name is listed twice`);
    if (c.registry !== undefined && !REGISTRIES.includes(c.registry as OperandRegistry))
      fail(`${label}: registry must be one of ${REGISTRIES.join(', ')}`);
    if (c.handler === 'code') {
      if (typeof c.module !== 'string' || !/^[a-z][a-z/-]*$/.test(c.module)) fail(`${label}: a code handler names its module`);
      // Code is kept only where the semantics need it: each code entry says what the data interpreter cannot express.
      if (typeof c.code_because !== 'string' || c.code_because.trim().length < CODE_BECAUSE_MIN)
        fail(`${label}: a code handler says in code_because what the data interpreter cannot express (one sentence)`);
      for (const k of DATA_KEYS) if (c[k] !== undefined) fail(`${label}: \`${k}\` is for the data interpreter, but the handler is code`);
    } else if (c.handler === 'data') {
      if (c.module !== undefined) fail(`${label}: a data handler has no module`);
      if (c.code_because !== undefined) fail(`${label}: a data handler has no code_because (the data interpreter handles it)`);
      const registry = (c.registry ?? 'posix') as OperandRegistry;
      for (const k of DATA_KEYS)
        if (c[k] !== undefined && !REGISTRY_DATA_KEYS[registry].includes(k))
          fail(`${label}: \`${k}\` is not read for ${registry} commands`);
      for (const k of ['opaque', 'no_command_opaque', 'from_pipeline'] as const)
        if (c[k] !== undefined && (typeof c[k] !== 'string' || (c[k] as string).length < (k === 'from_pipeline' ? 3 : 10)))
          fail(`${label}: ${k} is ${k === 'from_pipeline' ? 'what the cmdlet does to the items' : 'the reason (one sentence)'}`);
      if (c.network !== undefined && typeof c.network !== 'boolean') fail(`${label}: network must be true or false`);
      if (registry === 'powershell') validatePowershellData(c, label, fail);
      else validateOperandRoles(c, label, fail, registry);
    } else fail(`${label}: handler must be code or data`);
    // The shipped bundles leave examples out (esbuild.mjs); when present they must be usable.
    if (c.examples !== undefined) {
      if (!Array.isArray(c.examples) || c.examples.length === 0) fail(`${label}: examples must be a non-empty list`);
      for (const e of c.examples as Record<string, unknown>[]) {
        if (typeof e !== 'object' || e === null || typeof e.run !== 'string' || e.run.length === 0) fail(`${label}: an example needs run`);
        for (const k of Object.keys(e)) if (!EXAMPLE_KEYS.includes(k)) fail(`${label}: example \`${e.run}\` has an unknown key \`${k}\``);
        if (e.also !== undefined && (!strings(e.also) || !(e.also as string[]).every((n) => (c.names as string[]).includes(n))))
          fail(`${label}: example \`${e.run}\`: also names names of this entry`);
      }
    }
  }
  return data as OperandTable;
}

/** The table's files; a name is in one entry of one file per registry. */
export const OPERAND_TABLE_FILES: readonly { readonly file: string; readonly data: unknown }[] = [
  { file: 'security/shell/operands/wrappers.yaml', data: wrappersTable },
  { file: 'security/shell/operands/shells.yaml', data: shellsTable },
  { file: 'security/shell/operands/builtins.yaml', data: builtinsTable },
  { file: 'security/shell/operands/files.yaml', data: filesTable },
  { file: 'security/shell/operands/network.yaml', data: networkTable },
  { file: 'security/shell/operands/windows.yaml', data: windowsTable },
];

let compiled: Map<string, OperandEntry> | undefined;

/** Every entry by `registry name`; a name listed twice in a registry stops the load. */
export function operandEntries(): ReadonlyMap<string, OperandEntry> {
  if (compiled) return compiled;
  const all = new Map<string, OperandEntry>();
  for (const { file, data } of OPERAND_TABLE_FILES) {
    for (const c of validateOperandTable(data, file).commands) {
      for (const n of c.names) {
        const key = `${c.registry ?? 'posix'} ${n}`;
        if (all.has(key)) throw new OperandTableError(`operand table ${file}: \`${n}\` (${c.registry ?? 'posix'}) is in two entries`);
        all.set(key, c);
      }
    }
  }
  return (compiled = all);
}
