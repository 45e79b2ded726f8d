// Windows: cmd.exe builtins and PowerShell cmdlets (with their aliases and named parameters).
// The command line is parsed with the bash grammar "as best we can": quoting, `;`, `|`, `&&`,
// redirects and `$(…)` are close enough; backslashes are kept literally on win32.
import { literalWord, sliceWord, type WordValue } from '../words';
import { operandEntries } from '../operands';
import { COMMON_PARAMETERS, cmdOperands, isCmdSwitch, psParse, psValues, scriptBlockOpaque, type PsArgs, type PsSpec } from '../ps-params';
import { DOT, childOf, dirWord, genericReads, joinWord, register, type Inv, type Registry } from '../helpers';

export const PS_CMDLETS: Registry = new Map();
export const WIN_COMMANDS: Registry = new Map();

// ------------------------------------------------------------------------------------------
// PowerShell parameter binding.

const PATHS = ['path', 'literalpath'];
/** Copy-Item's and Move-Item's filters (they have no -Stream). */
const COPY_FILTERS = ['filter', 'include', 'exclude', 'credential'];

const SPECS: Record<string, PsSpec> = {
  'copy-item': {
    params: [
      'path',
      'destination',
      'literalpath',
      'container',
      'force',
      'filter',
      'include',
      'exclude',
      'recurse',
      'passthru',
      'credential',
      'tosession',
      'fromsession',
    ],
    values: [...PATHS, 'destination', ...COPY_FILTERS, 'tosession', 'fromsession'],
    positional: ['path', 'destination'],
  },
  'move-item': {
    params: ['path', 'destination', 'literalpath', 'force', 'filter', 'include', 'exclude', 'passthru', 'credential'],
    values: [...PATHS, 'destination', ...COPY_FILTERS],
    positional: ['path', 'destination'],
  },
  'rename-item': {
    params: ['path', 'newname', 'literalpath', 'force', 'passthru', 'credential'],
    values: [...PATHS, 'newname', 'credential'],
    positional: ['path', 'newname'],
  },
  'new-item': {
    params: ['path', 'itemtype', 'name', 'value', 'force', 'credential', 'target'],
    values: ['path', 'itemtype', 'name', 'value', 'credential', 'target'],
    positional: ['path'],
  },
  'invoke-expression': { params: ['command'], values: ['command'], positional: ['command'] },
  'test-netconnection': {
    params: [
      'computername',
      'port',
      'commontcpport',
      'traceroute',
      'hops',
      'informationlevel',
      'diagnoserouting',
      'constrainsourceaddress',
      'constraininterface',
      'detailed',
    ],
    values: ['computername', 'port', 'commontcpport', 'hops', 'informationlevel', 'constrainsourceaddress', 'constraininterface'],
    positional: ['computername'],
    aliases: { cn: 'computername', remoteaddress: 'computername', remoteport: 'port', tcp: 'commontcpport' },
  },
  // PowerShell 7 names the host -TargetName (alias -ComputerName); Windows PowerShell 5.1 -ComputerName, and its
  // -Source (position 1) names remote computers that send the pings: every one of them is contacted.
  'test-connection': {
    params: [
      'targetname',
      'source',
      'count',
      'delay',
      'buffersize',
      'maxhops',
      'timetolive',
      'timeoutseconds',
      'tcpport',
      'ipv4',
      'ipv6',
      'resolvedestination',
      'ping',
      'repeat',
      'quiet',
      'dontfragment',
      'traceroute',
      'mtusize',
      'detailed',
      'throttlelimit',
      'impersonation',
      'dcomauthentication',
      'wsmanauthentication',
      'protocol',
      'credential',
      'asjob',
    ],
    values: [
      'targetname',
      'source',
      'count',
      'delay',
      'buffersize',
      'maxhops',
      'timetolive',
      'timeoutseconds',
      'tcpport',
      'throttlelimit',
      'impersonation',
      'dcomauthentication',
      'wsmanauthentication',
      'protocol',
      'credential',
    ],
    positional: ['targetname', 'source'],
    aliases: {
      computername: 'targetname',
      cn: 'targetname',
      ipaddress: 'targetname',
      __server: 'targetname',
      server: 'targetname',
      destination: 'targetname',
      fcn: 'source',
      src: 'source',
      size: 'buffersize',
      bytes: 'buffersize',
      bs: 'buffersize',
      ttl: 'maxhops',
      hops: 'maxhops',
      authentication: 'dcomauthentication',
      mtusizedetect: 'mtusize',
    },
  },
};
SPECS['resolve-dnsname'] = {
  params: [
    'name',
    'type',
    'server',
    'dnsonly',
    'cacheonly',
    'dnssecok',
    'dnsseccd',
    'nohostsfile',
    'llmnronly',
    'llmnrnetbiosonly',
    'llmnrfallback',
    'netbiosfallback',
    'norecursion',
    'quicktimeout',
    'tcponly',
  ],
  values: ['name', 'type', 'server'],
  positional: ['name', 'type'],
};

/**
 * Why a cmdlet's parameter table cannot be right, or [] (checked at load and by the tests): PowerShell matches
 * parameter names without case and psParse compares the lower-cased word, so a name written with a capital
 * (`customMethod`) would never match and its value would be taken for a positional operand.
 */
export function psSpecProblems(specs: Readonly<Record<string, PsSpec>> = SPECS): string[] {
  const problems: string[] = [];
  for (const [cmdlet, spec] of Object.entries(specs)) {
    const named = [
      ...spec.params,
      ...spec.values,
      ...spec.positional,
      ...Object.keys(spec.aliases ?? {}),
      ...Object.values(spec.aliases ?? {}),
    ];
    for (const n of named) if (n !== n.toLowerCase()) problems.push(`${cmdlet}: parameter \`${n}\` is not in lower case`);
    for (const n of [...spec.values, ...spec.positional, ...Object.values(spec.aliases ?? {})])
      if (!spec.params.includes(n)) problems.push(`${cmdlet}: \`${n}\` is not one of its parameters`);
    for (const n of spec.positional) if (!spec.values.includes(n)) problems.push(`${cmdlet}: positional \`${n}\` takes no value`);
  }
  return problems;
}
{
  const problems = psSpecProblems();
  if (problems.length) throw new Error(`PowerShell parameter tables: ${problems.join('; ')}`);
}

const ps = (names: string | readonly string[], fn: (inv: Inv, a: PsArgs) => void) => {
  for (const n of typeof names === 'string' ? [names] : names) {
    const spec = SPECS[n] ?? { params: [], values: [], positional: [] };
    register(PS_CMDLETS, n, (inv) => {
      if (scriptBlockOpaque(inv)) return;
      fn(inv, psParse(inv.args, spec));
    });
  }
};

/** Cmdlets that act on the pipeline's objects when no path is given. */
function fromPipeline(inv: Inv, what: string): void {
  if (inv.io.stdin === 'pipe') inv.an.opaque(`${inv.cmd} takes the items to ${what} from the pipeline`);
}

function psCopyMove(inv: Inv, a: PsArgs, move: boolean): void {
  const srcs = psValues(a, ...PATHS);
  const dst = psValues(a, 'destination')[0] ?? DOT;
  if (!srcs.length) fromPipeline(inv, move ? 'move' : 'copy');
  inv.an.write(dst, inv.scope);
  for (const s of srcs) {
    if (move) inv.an.del(s, inv.scope);
    else inv.an.read(s, inv.scope);
    const c = childOf(dst, s, inv.an.platform);
    if (c) inv.an.write(c, inv.scope);
  }
}
ps('copy-item', (inv, a) => psCopyMove(inv, a, false));
ps('move-item', (inv, a) => psCopyMove(inv, a, true));

ps('rename-item', (inv, a) => {
  const [path] = psValues(a, ...PATHS);
  const [name] = psValues(a, 'newname');
  if (!path) return fromPipeline(inv, 'rename');
  inv.an.del(path, inv.scope);
  if (name) inv.an.write(name.dynamic ? name : joinWord(dirWord(path, inv.an.platform), name.text, inv.an.platform), inv.scope);
});

ps('new-item', (inv, a) => {
  const paths = psValues(a, 'path');
  const [name] = psValues(a, 'name');
  const targets = name ? (paths.length ? paths : [DOT]).map((p) => (name.dynamic ? name : joinWord(p, name.text, inv.an.platform))) : paths;
  for (const t of targets) inv.an.write(t, inv.scope);
  const type = psValues(a, 'itemtype')[0]?.text.toLowerCase() ?? '';
  if (/link|junction/.test(type)) for (const t of psValues(a, 'target', 'value')) inv.an.read(t, inv.scope);
});

ps('invoke-expression', (inv, a) => {
  inv.an.opaque('Invoke-Expression runs a string as code');
  const [c] = psValues(a, 'command');
  if (c && !c.dynamic) inv.an.runScript(c.text, inv.scope, 'Invoke-Expression');
});

/** Test-NetConnection -CommonTCPPort: the port each name stands for. */
const COMMON_TCP_PORTS: Record<string, string> = { http: '80', rdp: '3389', smb: '445', winrm: '5985' };

// The hosts these cmdlets contact (Resolve-DnsName -Server: the DNS server it asks), with the TCP port
// Test-NetConnection -Port / -CommonTCPPort and Test-Connection -TcpPort connect to.
ps(['test-netconnection', 'resolve-dnsname', 'test-connection'], (inv, a) => {
  inv.an.net();
  const port = psValues(a, 'port', 'tcpport', 'commontcpport')[0];
  if (port?.dynamic) inv.an.opaque(`${inv.cmd} connects to a port that is not literal`);
  const portText = port && !port.dynamic ? (COMMON_TCP_PORTS[port.text.toLowerCase()] ?? port.text) : '';
  for (const list of [...psValues(a, 'computername', 'targetname', 'source', 'name', 'server'), ...a.extra]) {
    // `a,b` is an array of hosts; an all-digit word is a count, not a host.
    for (const h of list.dynamic ? [list] : list.text.split(',').map((t) => literalWord(t))) {
      if (h.dynamic) inv.an.netWord(h, inv.cmd);
      else if (h.text !== '' && !/^\d+$/.test(h.text))
        inv.an.net(portText ? `${h.text.includes(':') ? `[${h.text}]` : h.text}:${portText}` : h.text);
    }
  }
});

ps(['foreach-object', 'where-object'], (inv) => {
  genericReads(inv, inv.args);
});

/** PowerShell aliases; ambiguous ones (rm, cp, cat…) only when the arguments look like PowerShell. */
const PS_ALIASES: Record<string, string> = {
  rm: 'remove-item',
  ri: 'remove-item',
  del: 'remove-item',
  erase: 'remove-item',
  rd: 'remove-item',
  rmdir: 'remove-item',
  cp: 'copy-item',
  copy: 'copy-item',
  cpi: 'copy-item',
  mv: 'move-item',
  move: 'move-item',
  mi: 'move-item',
  ren: 'rename-item',
  rni: 'rename-item',
  sc: 'set-content',
  ac: 'add-content',
  clc: 'clear-content',
  gc: 'get-content',
  cat: 'get-content',
  type: 'get-content',
  ls: 'get-childitem',
  dir: 'get-childitem',
  gci: 'get-childitem',
  iwr: 'invoke-webrequest',
  curl: 'invoke-webrequest',
  wget: 'invoke-webrequest',
  irm: 'invoke-restmethod',
  ni: 'new-item',
  iex: 'invoke-expression',
  saps: 'start-process',
  start: 'start-process',
  tee: 'tee-object',
  sls: 'select-string',
  '%': 'foreach-object',
  foreach: 'foreach-object',
  '?': 'where-object',
  icm: 'invoke-command',
  epcsv: 'export-csv',
  ipcsv: 'import-csv',
  gi: 'get-item',
  sp: 'set-itemproperty',
  ii: 'invoke-item',
};
const PS_ONLY_ALIASES = new Set([
  'ri',
  'cpi',
  'mi',
  'rni',
  'sc',
  'ac',
  'clc',
  'gc',
  'gci',
  'iwr',
  'irm',
  'ni',
  'iex',
  'saps',
  'sls',
  '%',
  'foreach',
  '?',
  'icm',
  'epcsv',
  'ipcsv',
  'gi',
  'sp',
  'ii',
  'start',
]);

/** A cmdlet's parameter names, from its code table or its data entry (security/shell/operands/windows.yaml). */
function cmdletParameters(cmdlet: string): readonly string[] | undefined {
  const spec = SPECS[cmdlet];
  if (spec) return spec.params;
  const entry = operandEntries().get(`powershell ${cmdlet}`);
  return entry?.handler === 'data' ? [...Object.keys(entry.parameters ?? {}), ...(entry.switches ?? [])] : undefined;
}

export function psAliasFor(key: string, args: readonly WordValue[], piped: boolean): string | undefined {
  const target = PS_ALIASES[key];
  if (!target) return undefined;
  if (PS_ONLY_ALIASES.has(key)) return target;
  // `ls | rm` in PowerShell removes whatever the pipeline delivers.
  if (piped && args.every((w) => !w.dynamic && w.text.startsWith('-'))) return target;
  const params = cmdletParameters(target);
  if (!params) return undefined;
  const names = new Set([...params, ...COMMON_PARAMETERS]);
  const psStyle = args.some((w) => {
    const m = w.dynamic ? null : /^-([A-Za-z]{2,})(:.*)?$/.exec(w.text);
    return !!m && names.has(m[1]!.toLowerCase());
  });
  return psStyle ? target : undefined;
}

// ------------------------------------------------------------------------------------------
// PowerShell and cmd.exe launchers: their command strings are analysed recursively.

const ENCODED =
  /^(e|ec|en|enc|enco|encod|encode|encoded|encodedc|encodedco|encodedcom|encodedcomm|encodedcomma|encodedcomman|encodedcommand)$/;
const PS_VALUED =
  /^(ex|ep|exe|exec|execu|execut|executi|executio|execution|executionp|executionpo|executionpol|executionpoli|executionpolic|executionpolicy|w|wi|win|wind|windo|window|windows|windowst|windowsty|windowstyl|windowstyle|inputformat|inp|if|outputformat|of|o|configurationname|config|workingdirectory|wd|version|v|psconsolefile|settingsfile|custompipename|encodedarguments|ea)$/;

register(WIN_COMMANDS, ['powershell', 'pwsh', 'powershell_ise'], powershell);
register(PS_CMDLETS, ['powershell', 'pwsh'], powershell);

export function powershell(inv: Inv): void {
  const args = inv.args;
  let scope = inv.scope;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (!w.dynamic && /^[-/][A-Za-z]/.test(t)) {
      const name = t.slice(1).split(':')[0]!.toLowerCase();
      if (ENCODED.test(name)) return void inv.an.opaque('PowerShell -EncodedCommand hides the script');
      if ('command'.startsWith(name)) return psCommand(inv, args.slice(i + 1), scope);
      if ('file'.startsWith(name)) {
        const f = args[i + 1];
        if (f && f.text !== '-') inv.an.read(f, scope);
        else programStdin(inv);
        return;
      }
      if (PS_VALUED.test(name)) {
        const v = args[++i];
        if (v && (name === 'workingdirectory' || name === 'wd')) scope = inv.an.chdir(scope, v);
      }
      continue;
    }
    // The first operand is the command (PowerShell 5) or a script file (pwsh); treat as a command.
    if (inv.cmd.toLowerCase() === 'pwsh' && /\.ps1$/i.test(t)) return void inv.an.read(w, scope);
    return psCommand(inv, args.slice(i), scope);
  }
  programStdin(inv);
}

function psCommand(inv: Inv, rest: WordValue[], scope = inv.scope): void {
  if (rest.length === 0) return;
  if (rest.length === 1 && rest[0]!.text === '-') return programStdin(inv);
  if (rest.some((w) => w.dynamic)) return void inv.an.opaque(`${inv.cmd} -Command string is not literal`);
  inv.an.runScript(rest.map((w) => w.text).join(' '), scope, `${inv.cmd} -Command`);
}

function programStdin(inv: Inv): void {
  if (inv.io.stdin === 'pipe' || inv.io.stdin === 'heredoc') inv.an.opaque(`${inv.cmd} reads its script from stdin`);
}

register(WIN_COMMANDS, 'cmd', (inv) => {
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    const m = /^\/([ckCK])(.*)$/.exec(t);
    if (m && !w.dynamic) {
      const rest = m[2] ? [sliceWord(w, 2), ...args.slice(i + 1)] : args.slice(i + 1);
      if (rest.some((r) => r.dynamic)) return void inv.an.opaque('cmd /c command is not literal');
      if (rest.length) inv.an.runScript(rest.map((r) => r.text).join(' '), inv.scope, 'cmd /c');
      return;
    }
    if (/^\/[A-Za-z]/.test(t)) continue;
    break;
  }
  programStdin(inv);
});

// ------------------------------------------------------------------------------------------
// cmd.exe builtins and common Windows tools.

register(WIN_COMMANDS, ['copy', 'xcopy'], (inv) => {
  // `copy a+b dest` concatenates sources.
  const ops = cmdOperands(inv.args).flatMap((w) =>
    w.dynamic || !w.text.includes('+')
      ? [w]
      : w.text
          .split('+')
          .filter(Boolean)
          .map((t) => literalWord(t)),
  );
  if (ops.length === 0) return;
  const dst = ops.length >= 2 ? ops[ops.length - 1]! : DOT;
  const srcs = ops.length >= 2 ? ops.slice(0, -1) : ops;
  inv.an.write(dst, inv.scope);
  for (const s of srcs) {
    inv.an.read(s, inv.scope);
    const c = childOf(dst, s, inv.an.platform);
    if (c) inv.an.write(c, inv.scope);
  }
});

register(WIN_COMMANDS, 'robocopy', (inv) => {
  const ops: WordValue[] = [];
  let inList = false;
  let mirror = false;
  let moveSrc = false;
  for (const w of inv.args) {
    const t = w.text.toUpperCase();
    if (isCmdSwitch(w)) {
      inList = t === '/XF' || t === '/XD';
      if (t === '/MIR' || t === '/PURGE') mirror = true;
      if (t === '/MOV' || t === '/MOVE') moveSrc = true;
      const log = /^\/(UNI)?LOG\+?:(.+)$/i.exec(w.text);
      if (log) inv.an.write(literalWord(log[2]!), inv.scope);
      continue;
    }
    if (inList) continue;
    ops.push(w);
  }
  const [src, dst] = ops;
  if (src) {
    inv.an.read(src, inv.scope);
    if (moveSrc) inv.an.del(src, inv.scope);
  }
  if (dst) {
    inv.an.write(dst, inv.scope);
    if (mirror) inv.an.del(dst, inv.scope);
  }
});

register(WIN_COMMANDS, 'move', (inv) => {
  const ops = cmdOperands(inv.args);
  if (ops.length < 2) return;
  const dst = ops[ops.length - 1]!;
  inv.an.write(dst, inv.scope);
  for (const s of ops.slice(0, -1)) {
    inv.an.del(s, inv.scope);
    const c = childOf(dst, s, inv.an.platform);
    if (c) inv.an.write(c, inv.scope);
  }
});

register(WIN_COMMANDS, ['ren', 'rename'], (inv) => {
  const [src, name] = cmdOperands(inv.args);
  if (!src) return;
  inv.an.del(src, inv.scope);
  if (name) inv.an.write(name.dynamic || name.glob ? name : joinWord(dirWord(src, inv.an.platform), name.text, inv.an.platform), inv.scope);
});

register(WIN_COMMANDS, 'findstr', (inv) => {
  const ops = cmdOperands(inv.args);
  const explicit = inv.args.some((w) => /^\/(c|g):/i.test(w.text));
  for (const w of inv.args) {
    const g = /^\/(g|f):(.+)$/i.exec(w.text);
    if (g) inv.an.read(literalWord(g[2]!), inv.scope);
  }
  for (const w of explicit ? ops : ops.slice(1)) inv.an.read(w, inv.scope);
});

register(WIN_COMMANDS, 'attrib', (inv) => {
  for (const w of cmdOperands(inv.args)) if (!/^[+-][RASHIOXVPU]$/i.test(w.text)) inv.an.write(w, inv.scope);
});

register(WIN_COMMANDS, 'takeown', (inv) => {
  const args = inv.args;
  for (let i = 0; i < args.length; i++) if (/^\/f$/i.test(args[i]!.text) && args[i + 1]) inv.an.write(args[i + 1]!, inv.scope);
});

register(WIN_COMMANDS, 'certutil', (inv) => {
  const args = inv.args;
  const verb = args
    .find((w) => /^[-/](urlcache|decode|encode|decodehex|encodehex|verifyctl)$/i.test(w.text))
    ?.text.slice(1)
    .toLowerCase();
  const ops = args.filter((w) => !/^[-/]/.test(w.text));
  if (verb === 'urlcache' || verb === 'verifyctl') {
    inv.an.net();
    const [url, out] = ops;
    if (url) inv.an.netWord(url, 'certutil');
    if (out) inv.an.write(out, inv.scope);
    else if (url && !url.dynamic) inv.an.write(DOT, inv.scope);
  } else if (verb) {
    const [input, output] = ops;
    if (input) inv.an.read(input, inv.scope);
    if (output) inv.an.write(output, inv.scope);
  } else genericReads(inv, ops);
});

register(WIN_COMMANDS, 'bitsadmin', (inv) => {
  if (!inv.args.some((w) => /^\/(transfer|addfile)$/i.test(w.text))) return;
  inv.an.net();
  const ops = inv.args.filter((w) => !isCmdSwitch(w));
  // /transfer NAME [/download] [/priority P] URL LOCAL: the last two operands.
  const local = ops[ops.length - 1];
  const url = ops[ops.length - 2];
  if (url) inv.an.netWord(url, 'bitsadmin');
  if (local) inv.an.write(local, inv.scope);
});

// tracert and pathping: every operand is a host they send packets to (the target, and the hosts of a -j/-g
// source route); -h, -w, -S (tracert) and -h, -i, -p, -q, -w (pathping) take a number or a local address.
const TRACE_VALUED: Record<string, string> = { tracert: 'hws', pathping: 'hipqw' };
register(WIN_COMMANDS, ['tracert', 'pathping'], (inv) => {
  inv.an.net();
  const valued = TRACE_VALUED[inv.cmd.toLowerCase()] ?? '';
  const args = inv.args;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const option = w.dynamic ? null : /^[-/]([A-Za-z0-9])$/.exec(w.text);
    if (option) {
      if (valued.includes(option[1]!.toLowerCase())) i++;
      continue;
    }
    if (w.dynamic) inv.an.netWord(w, inv.cmd);
    else if (!/^\d*$/.test(w.text)) inv.an.net(w.text);
  }
});

register(WIN_COMMANDS, 'set', (inv) => {
  // cmd's `set` alone (or `set PREFIX`) prints the environment; `set NAME=value`, `/a`, `/p` do not.
  const [first] = inv.args;
  if (!first || (!first.dynamic && !first.text.includes('=') && !/^\/[ap]$/i.test(first.text))) inv.an.readEnvironment('set');
});
