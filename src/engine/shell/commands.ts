// Command dispatch: which handler runs a command word. The handlers are data (security/shell/operands/,
// data-handler.ts) or code, one module per family under commands/.
import type { Platform } from '../types';
import type { Analyzer } from './analyze';
import { same, type Io, type Outcome, type Scope } from './state';
import type { WordValue } from './words';
import { clip, genericReads, register, type Entry, type Inv, type Registry } from './helpers';
import { ARCHIVE_COMMANDS } from './commands/archives';
import { BUILTINS } from './commands/builtins';
import { FILE_COMMANDS } from './commands/files';
import { FIND_COMMANDS } from './commands/find';
import { GIT_COMMANDS } from './commands/git';
import { NET_COMMANDS } from './commands/network';
import { PACKAGE_COMMANDS } from './commands/packages';
import { SHELL_COMMANDS } from './commands/shells';
import { PS_CMDLETS, WIN_COMMANDS, psAliasFor } from './commands/windows';
import { WRAPPERS } from './commands/wrappers';
import { dataHandler, runsCommand } from './data-handler';
import { OperandTableError, operandEntries } from './operands';

/** The data entries' handlers (security/shell/operands/, `handler: data`); cmd.exe and PowerShell ones join their registries. */
const DATA_COMMANDS: Registry = new Map();
/** `registry name` of every name the data interpreter handles. */
const DATA_NAMES = new Set<string>();

/** Every registry of POSIX command names: a name is in one of them only (checked at load). */
const POSIX_REGISTRIES: readonly Registry[] = [
  DATA_COMMANDS,
  WRAPPERS,
  SHELL_COMMANDS,
  BUILTINS,
  FILE_COMMANDS,
  FIND_COMMANDS,
  ARCHIVE_COMMANDS,
  NET_COMMANDS,
  PACKAGE_COMMANDS,
  GIT_COMMANDS,
];

function posixEntry(key: string): Entry | undefined {
  for (const r of POSIX_REGISTRIES) {
    const e = r.get(key);
    if (e) return e;
  }
  return undefined;
}

/** Runs argv[0] with the remaining words. */
export function dispatch(an: Analyzer, argv: WordValue[], scope: Scope, io: Io, opts: { noFunctions?: boolean }): Outcome {
  const w0 = argv[0]!;
  const args = argv.slice(1);
  if (w0.dynamic || w0.glob) {
    an.pushCommand(w0.raw);
    an.opaque(`command name \`${clip(w0.raw)}\` is not literal`);
    genericReads({ an, cmd: w0.raw, args, scope, io }, args);
    return same(scope);
  }
  const full = w0.text;
  // A reserved word where a command should be (`rm x; }`) is a syntax error to bash: nothing runs.
  if (RESERVED.has(w0.raw)) {
    an.error(`syntax error near unexpected \`${w0.raw}\``);
    an.opaque('the command has a syntax error');
    return same(scope);
  }
  const cmd = displayName(full, an.platform);
  if (full.includes('/') || (an.platform === 'win32' && full.includes('\\'))) an.runsFile(w0, scope, 'the command');
  if (!opts.noFunctions && scope.functions.has(full)) {
    an.pushCommand(cmd);
    return an.callFunction(full, scope, io, args) ?? same(scope);
  }
  const entry = lookup(cmd, args, an.platform, io.stdin === 'pipe');
  const inv: Inv = { an, cmd, args, scope, io };
  const named = full.includes('/') || (an.platform === 'win32' && full.includes('\\')) ? full : undefined;
  if (!entry) {
    an.pushCommand(cmd, args, named);
    genericReads(inv, args);
    return same(scope);
  }
  if (!entry.wrapper) an.pushCommand(cmd, args, named);
  else an.recordWrapper(cmd, args, named);
  return entry.fn(inv) ?? same(scope);
}

const RESERVED = new Set(['}', 'then', 'fi', 'do', 'done', 'esac', 'else', 'elif', 'in', ';;']);

/** Basename; on Windows without `.exe`/`.com`/`.bat`/`.cmd`. */
function displayName(full: string, platform: Platform): string {
  const i = platform === 'win32' ? Math.max(full.lastIndexOf('/'), full.lastIndexOf('\\')) : full.lastIndexOf('/');
  let b = full.slice(i + 1);
  if (platform === 'win32') b = b.replace(/\.(exe|com|bat|cmd)$/i, '');
  return b === '' ? full : b;
}

function lookup(cmd: string, args: readonly WordValue[], platform: Platform, piped: boolean): Entry | undefined {
  // Case-insensitive file systems (macOS, Windows) find `RM` as `rm`.
  let key = platform === 'linux' ? cmd : cmd.toLowerCase();
  if (/^[A-Za-z]+-[A-Za-z]+$/.test(cmd)) {
    const ps = PS_CMDLETS.get(cmd.toLowerCase()) ?? posixEntry(cmd.toLowerCase());
    if (ps) return ps;
  }
  if (platform === 'win32') {
    const alias = psAliasFor(key, args, piped);
    if (alias) return PS_CMDLETS.get(alias);
    const w = WIN_COMMANDS.get(key);
    if (w) return w;
  }
  key = key.replace(/^(python|pip|pypy|ruby|perl|php|lua|node)[\d.]+$/, '$1');
  return posixEntry(key);
}

// Commands whose knowledge is data only (security/shell/operands/, `handler: data`). A name with code
// too would be two answers to one question: refused at load.
for (const entry of new Set(operandEntries().values())) {
  if (entry.handler !== 'data') continue;
  const registry = entry.registry ?? 'posix';
  const taken = registry === 'posix' ? posixEntry : (n: string) => (registry === 'cmd' ? WIN_COMMANDS : PS_CMDLETS).get(n);
  for (const n of entry.names)
    if (taken(n)) throw new OperandTableError(`operand table: \`${n}\` (${registry}) has a data entry and a code handler`);
  const into = registry === 'posix' ? DATA_COMMANDS : registry === 'cmd' ? WIN_COMMANDS : PS_CMDLETS;
  register(into, entry.names, dataHandler(entry), runsCommand(entry));
  for (const n of entry.names) DATA_NAMES.add(`${registry} ${n}`);
}

// Two code modules registering one name would make the answer depend on the lookup order.
for (const [i, r] of POSIX_REGISTRIES.entries()) {
  for (const n of r.keys())
    if (POSIX_REGISTRIES.slice(i + 1).some((later) => later.has(n))) throw new Error(`shell command \`${n}\` is registered by two modules`);
}

/** Which registry a command name is looked up in: the POSIX one, cmd.exe's (Windows only), or PowerShell's cmdlets. */
export type CommandRegistry = 'posix' | 'cmd' | 'powershell';

/** Every registered command name per registry (the architecture test checks each has data and examples). */
export function registeredCommandNames(): ReadonlyMap<CommandRegistry, readonly string[]> {
  const posix = POSIX_REGISTRIES.flatMap((r) => [...r.keys()]);
  return new Map<CommandRegistry, readonly string[]>([
    ['posix', posix.sort()],
    ['cmd', [...WIN_COMMANDS.keys()].sort()],
    ['powershell', [...PS_CMDLETS.keys()].sort()],
  ]);
}

/** Which module handles each registered name: `data`, or the code module under commands/ (for the tests). */
export function commandModules(): ReadonlyMap<string, string> {
  const modules: [string, Registry, CommandRegistry][] = [
    ['data', DATA_COMMANDS, 'posix'],
    ['wrappers', WRAPPERS, 'posix'],
    ['shells', SHELL_COMMANDS, 'posix'],
    ['builtins', BUILTINS, 'posix'],
    ['files', FILE_COMMANDS, 'posix'],
    ['find', FIND_COMMANDS, 'posix'],
    ['archives', ARCHIVE_COMMANDS, 'posix'],
    ['network', NET_COMMANDS, 'posix'],
    ['packages', PACKAGE_COMMANDS, 'posix'],
    ['git', GIT_COMMANDS, 'posix'],
    ['windows', WIN_COMMANDS, 'cmd'],
    ['windows', PS_CMDLETS, 'powershell'],
  ];
  return new Map(
    modules.flatMap(([m, r, registry]) =>
      [...r.keys()].map((n): [string, string] => [`${registry} ${n}`, DATA_NAMES.has(`${registry} ${n}`) ? 'data' : m]),
    ),
  );
}
