// An allowed shell tool call, rewritten so the agent's command runs inside Bulwark's OS sandbox
// (`bulwark exec … -- bash -c '<command>'`), for the clients whose pre-tool hook can replace the tool's
// input. Which clients take which answer form is data (security/agents/<agent>.yaml `rewrite`, measured
// with the real clients: test/agents/README.md), as is the field that holds each shell tool's command
// (`sandbox` on the tool rule). Pure: the hook (src/cli/hook-sandbox.ts) brings the probe, the paths
// and the shell analysis.
import type { HookAnswer } from './dialect';
import type { Dialect } from './dialect';
import type { AgentToolMap, ToolMapping, ToolRule } from './tool-map';

/**
 * How a client takes a rewritten input, per dialect:
 *   updated_input        hookSpecificOutput.updatedInput, no permission decision (Claude Code; Copilot CLI's PascalCase events)
 *   updated_input_allow  the same with permissionDecision "allow": Codex ignores the input without it; Copilot CLI
 *                        (PascalCase events) applies it but then asks to approve the wrapper's own paths outside the project
 *   modified_args        top-level modifiedArgs (Copilot CLI's camelCase events)
 *   modified_args_allow  the same with permissionDecision "allow" (Copilot CLI: its path approval, as above)
 *   tool_input           hookSpecificOutput.tool_input, merged over the model's arguments (Gemini CLI's BeforeTool)
 */
export type RewriteForm = 'updated_input' | 'updated_input_allow' | 'modified_args' | 'modified_args_allow' | 'tool_input';
export const REWRITE_FORMS: readonly RewriteForm[] = [
  'updated_input',
  'updated_input_allow',
  'modified_args',
  'modified_args_allow',
  'tool_input',
];

/** A shell tool's input fields (top-level names): the command, and its timeout in milliseconds if it has one. */
export interface SandboxToolSpec {
  readonly command: string;
  readonly timeout_ms?: string;
}

export class SandboxRewriteError extends Error {
  override readonly name = 'SandboxRewriteError';
}

/**
 * POSIX single-quoted form of any text: within single quotes nothing is special, and a quote is
 * closed, escaped and reopened (`'\''`). Newlines, `$(…)`, backslashes and globs stay literal. A NUL
 * cannot be passed to a program at all, so it is refused rather than cut.
 */
export function singleQuote(text: string): string {
  if (text.includes('\0')) throw new SandboxRewriteError('the command contains a NUL character, which cannot be passed to a shell');
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Everything the wrapper command needs besides the agent's command. */
export interface SandboxExecTarget {
  /** Absolute path of the Node (or Electron) running the hook, and of dist/cli.js. */
  readonly node: string;
  readonly cli: string;
  /** The Node is Electron's: it runs as Node only with ELECTRON_RUN_AS_NODE=1. */
  readonly electron?: boolean;
  /** Bulwark's state directory, when `bulwark exec` would not find it in its environment (the sandbox hides it). */
  readonly stateDir?: string;
  /** Node's compile cache for dist/cli.js (in Bulwark's state, as the hook wrapper uses it): exec starts a third faster. */
  readonly compileCache?: string;
  readonly cwd?: string;
  /** The folders the command may write (the project roots the hook knows); at least one. */
  readonly workspaces: readonly string[];
  /** HOST[:PORT] the command may reach through the sandbox's filtering proxy. */
  readonly allowNet: readonly string[];
  /** Seconds before the sandbox kills the command (the client's own timeout for the call). */
  readonly timeoutS?: number;
  /** Protected files the decision allowed the command on the condition that the sandbox hides them. */
  readonly hide?: readonly string[];
}

/**
 * `NODE_OPTIONS= NODE_PATH= <node> <cli> exec --cwd … --workspace … [--allow-net …]… [--timeout S] -- bash -c '<command>'`,
 * every argument quoted. `bulwark exec` itself runs outside the sandbox, in the client's shell: nothing in
 * that environment may load code into it (as the hook wrapper does for the hook).
 */
export function sandboxedCommand(target: SandboxExecTarget, command: string): string {
  const paths: [string, string][] = [
    ['node', target.node],
    ['cli', target.cli],
    ...(target.stateDir !== undefined ? [['state directory', target.stateDir] as [string, string]] : []),
    ...(target.compileCache !== undefined ? [['compile cache', target.compileCache] as [string, string]] : []),
    ...(target.cwd !== undefined ? [['cwd', target.cwd] as [string, string]] : []),
    ...target.workspaces.map((w): [string, string] => ['workspace', w]),
    ...(target.hide ?? []).map((h): [string, string] => ['hidden file', h]),
  ];
  for (const [name, p] of paths) {
    if (!p.startsWith('/')) throw new SandboxRewriteError(`the ${name} path ${JSON.stringify(p)} is not absolute`);
  }
  if (target.workspaces.length === 0) throw new SandboxRewriteError('no workspace folder to make writable');
  const words = [
    'NODE_OPTIONS=',
    'NODE_PATH=',
    ...(target.compileCache !== undefined ? [`NODE_COMPILE_CACHE=${singleQuote(target.compileCache)}`] : []),
    ...(target.electron ? ['ELECTRON_RUN_AS_NODE=1'] : []),
    ...(target.stateDir !== undefined ? [`BULWARK_STATE_DIR=${singleQuote(target.stateDir)}`] : []),
    singleQuote(target.node),
    singleQuote(target.cli),
    'exec',
    ...(target.cwd !== undefined ? ['--cwd', singleQuote(target.cwd)] : []),
    ...target.workspaces.flatMap((w) => ['--workspace', singleQuote(w)]),
    ...target.allowNet.flatMap((h) => ['--allow-net', singleQuote(h)]),
    ...(target.hide ?? []).flatMap((h) => ['--hide', singleQuote(h)]),
    ...(target.timeoutS !== undefined ? ['--timeout', String(target.timeoutS)] : []),
    '--',
    'bash',
    '-c',
    singleQuote(command),
  ];
  return words.join(' ');
}

/** A shell call the client can have rewritten: the form, the input field to replace and the command the engine judged. */
export interface RewriteTarget {
  readonly form: RewriteForm;
  readonly field: string;
  readonly command: string;
  /** The call's own timeout in whole seconds (rounded up), when its input gives one. */
  readonly timeoutS?: number;
}

/**
 * Whether this call can be rewritten: the client (`clientMap`, the map of the agent that runs the hook)
 * takes a rewritten input in this dialect, the rule that mapped the tool names its command field, and
 * the mapping is one execute_command. Undefined means "answer as without sandboxing".
 */
export function rewriteTarget(
  clientMap: AgentToolMap,
  mapMaps: readonly AgentToolMap[],
  dialect: Dialect,
  toolName: string,
  input: unknown,
  mapping: ToolMapping,
): RewriteTarget | undefined {
  const form = clientMap.rewrite?.[dialect];
  if (!form) return undefined;
  const rule: ToolRule | undefined = mapMaps
    .find((m) => m.tools.some((t) => t.names.includes(toolName)))
    ?.tools.find((t) => t.names.includes(toolName));
  if (!rule?.sandbox) return undefined;
  if (mapping.actions.length !== 1 || mapping.actions[0]!.type !== 'execute_command') return undefined;
  const command = mapping.actions[0]!.payload.command;
  if (typeof command !== 'string' || command === '') return undefined;
  const ms = rule.sandbox.timeout_ms !== undefined && isRecord(input) ? input[rule.sandbox.timeout_ms] : undefined;
  const timeoutS = typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? Math.min(86_400, Math.ceil(ms / 1000)) : undefined;
  return { form, field: rule.sandbox.command, command, ...(timeoutS !== undefined ? { timeoutS } : {}) };
}

/** The tool's input with its command replaced: every other field as the model gave it. */
export function rewrittenInput(input: unknown, field: string, command: string): Record<string, unknown> {
  return { ...(isRecord(input) ? input : {}), [field]: command };
}

/** The allow answer that carries the rewritten input, in the client's form. */
export function rewriteAnswer(form: RewriteForm, event: string, newInput: Record<string, unknown>): HookAnswer {
  switch (form) {
    case 'updated_input':
      return json({ hookSpecificOutput: { hookEventName: event, updatedInput: newInput } });
    case 'updated_input_allow':
      return json({ hookSpecificOutput: { hookEventName: event, permissionDecision: 'allow', updatedInput: newInput } });
    case 'modified_args':
      return json({ modifiedArgs: newInput });
    case 'modified_args_allow':
      return json({ permissionDecision: 'allow', modifiedArgs: newInput });
    case 'tool_input':
      return json({ hookSpecificOutput: { hookEventName: event, tool_input: newInput } });
  }
}

/** What the shell analysis found about the network (a subset of ShellAnalysis). */
export interface NetworkFacts {
  readonly commands: readonly string[];
  readonly network: boolean;
  /** Some network use names no target (`npm install && curl https://x`: npm's registry is not x). */
  readonly unnamedNetwork?: boolean;
  readonly urls: readonly string[];
  readonly logins: readonly string[];
  readonly sinks: readonly string[];
}

/**
 * The hosts a sandboxed command may reach, or why it cannot be sandboxed. The sandbox's network is an
 * HTTP proxy that allows named hosts: a command whose every network target is an http(s) URL gets
 * those hosts (with the URL's port); one that uses the network without naming where (npm install,
 * git fetch), logs in over ssh, or listens for connections would only fail inside, so it is not wrapped.
 */
export function sandboxHosts(facts: NetworkFacts): { readonly hosts: readonly string[] } | { readonly notSandboxed: string } {
  if (!facts.network) return { hosts: [] };
  const what = facts.commands.length ? ` (${[...new Set(facts.commands)].slice(0, 4).join(', ')})` : '';
  if (facts.sinks.length) return { notSandboxed: `the command listens for connections${what}, which the sandbox's network cannot carry` };
  if (facts.logins.length)
    return { notSandboxed: `the command logs in to another machine over ssh${what}, which the sandbox's HTTP proxy cannot carry` };
  if (facts.urls.length === 0 || facts.unnamedNetwork)
    return { notSandboxed: `the command uses the network${what} and Bulwark cannot name the hosts it reaches` };
  const hosts: string[] = [];
  for (const u of facts.urls) {
    const h = httpHostPort(u);
    // Named by its scheme only: the target itself may carry a secret (a token in a URL).
    if (!h)
      return {
        notSandboxed: `the command reaches ${/^[a-z][a-z0-9+.-]*:\/\//i.test(u) ? `a ${u.slice(0, u.indexOf(':')).toLowerCase()}:// address` : 'a host by name or address'}${what}, which the sandbox's HTTP proxy cannot carry`,
      };
    if (!hosts.includes(h)) hosts.push(h);
  }
  return { hosts };
}

/** `host:port` of an http(s) URL (the scheme's port when none is given); IPv6 literals keep their brackets. */
export function httpHostPort(url: string): string | undefined {
  const m = /^(https?):\/\/(?:[^@/?#]*@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::([0-9]{1,5}))?(?:[/?#]|$)/i.exec(url);
  if (!m) return undefined;
  const port = m[3] !== undefined ? Number(m[3]) : m[1]!.toLowerCase() === 'https' ? 443 : 80;
  if (!(port >= 1 && port <= 65535)) return undefined;
  return `${m[2]!.toLowerCase()}:${port}`;
}

/**
 * Claude Code's permission rules that name particular shell commands (`Bash(npm test:*)`) in one of
 * its settings objects. Claude matches its rules against the command it runs, which after a rewrite is
 * Bulwark's wrapper: measured (test/agents/README.md), a deny or ask rule for the agent's command then
 * no longer applies, and an allow rule no longer matches. Where such rules exist, commands are not wrapped.
 */
export function claudeCommandRules(settings: unknown): string[] {
  if (!isRecord(settings) || !isRecord(settings.permissions)) return [];
  const out: string[] = [];
  for (const list of ['allow', 'ask', 'deny'] as const) {
    const rules = settings.permissions[list];
    if (!Array.isArray(rules)) continue;
    for (const r of rules) if (typeof r === 'string' && /^Bash\(/.test(r.trim())) out.push(`${list}: ${clip(r)}`);
  }
  return out;
}

/**
 * Rules for particular shell commands on a client's command line (`argv`, the client process's), which
 * it matches against the command it runs, after a rewrite the wrapper: Claude Code's `--allowedTools` /
 * `--disallowedTools` with `Bash(…)`, Copilot CLI's `--allow-tool` / `--deny-tool` with `shell(…)`
 * (measured: a deny rule for the agent's command no longer applies once wrapped). Where there are such
 * rules, commands are not wrapped.
 */
export function cliCommandRules(agent: 'claude' | 'copilot-cli', argv: readonly string[]): string[] {
  const flags =
    agent === 'claude' ? ['--allowedTools', '--allowed-tools', '--disallowedTools', '--disallowed-tools'] : ['--allow-tool', '--deny-tool'];
  const pattern = agent === 'claude' ? /\bBash\(/ : /\bshell\(/;
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    if (!flags.includes(name)) continue;
    // The values: inline after `=`, else every word up to the next option (Claude takes a list).
    const values = eq > 0 && name !== a ? [a.slice(eq + 1)] : [];
    if (!values.length) while (i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) values.push(argv[++i]!);
    for (const v of values) if (pattern.test(v)) out.push(`${name} ${clip(v)}`);
  }
  return out;
}

/**
 * Whether Codex runs its commands in its own sandbox, from its command line (`argv`, the Codex process's)
 * and its config.toml: Bulwark's sandbox cannot start inside it (measured: bwrap fails on its seccomp
 * filter, `bulwark exec` exits 125), so a command is wrapped only where Codex's is evidently off
 * (`--dangerously-bypass-approvals-and-sandbox`, `--yolo`, sandbox mode danger-full-access). Unknown → on.
 */
export function codexOwnSandbox(
  argv: readonly string[] | undefined,
  configToml: string | undefined,
): { readonly on: boolean; readonly why: string } {
  if (!argv) return { on: true, why: 'the Codex process and its sandbox setting could not be found' };
  let mode: string | undefined;
  let profile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (flag: string) => (a === flag ? argv[++i] : a.startsWith(`${flag}=`) ? a.slice(flag.length + 1) : undefined);
    if (a === '--dangerously-bypass-approvals-and-sandbox' || a === '--yolo') return { on: false, why: `Codex runs with ${a}` };
    if (a === '--full-auto') {
      mode = 'workspace-write';
      continue;
    }
    const sandbox = value('--sandbox') ?? value('-s');
    if (sandbox !== undefined) {
      mode = sandbox;
      continue;
    }
    const prof = value('--profile') ?? value('-p');
    if (prof !== undefined) {
      profile = prof;
      continue;
    }
    const override = value('--config') ?? value('-c');
    const m = override !== undefined ? /^sandbox_mode\s*=\s*"?([a-z-]+)"?$/.exec(override.trim()) : null;
    if (m) mode = m[1];
  }
  mode ??= tomlSandboxMode(configToml, profile);
  return mode === 'danger-full-access'
    ? { on: false, why: 'Codex runs with sandbox mode danger-full-access' }
    : { on: true, why: `Codex runs commands in its own sandbox (${mode ?? 'its default'}), inside which Bulwark's cannot start` };
}

/** `sandbox_mode` of a Codex config.toml: the profile's section when one is named and sets it, else the top level. */
function tomlSandboxMode(text: string | undefined, profile: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let section = '';
  let top: string | undefined;
  let inProfile: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const head = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (head) {
      section = head[1]!.replace(/"/g, '');
      continue;
    }
    const m = /^sandbox_mode\s*=\s*["']([a-z-]+)["']$/.exec(line);
    if (!m) continue;
    if (section === '') top = m[1];
    else if (profile !== undefined && section === `profiles.${profile}`) inProfile = m[1];
  }
  return inProfile ?? top;
}

function json(o: unknown): HookAnswer {
  return { stdout: JSON.stringify(o) + '\n', stderr: '', exitCode: 0 };
}

const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}…` : s);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
