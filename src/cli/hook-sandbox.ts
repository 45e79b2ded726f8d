// Whether an allowed shell call runs inside Bulwark's OS sandbox, and the rewritten input that makes
// it do so (src/engine/agents/sandbox-rewrite.ts builds it; this file brings what the hook process
// knows: the sandbox probe, the paths of this Node and dist/cli.js, the project folders, the shell
// analysis of the command, and the client's own settings). Worked out before the decision so the
// audit entry can say how the action will run; used only when the decision is allow.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HookAnswer, HookCall, RewriteTarget } from '../engine/agents';
import {
  SandboxRewriteError,
  claudeCommandRules,
  cliCommandRules,
  codexOwnSandbox,
  rewriteAnswer,
  rewrittenInput,
  sandboxHosts,
  sandboxedCommand,
} from '../engine/agents';
import { analyzeShell } from '../engine';
import { currentPlatform } from '../node/create-engine';
import { nodeFileSystem } from '../node/fs-port';
import { loadShellParser } from '../node/shell-grammar';
import { probeSandbox } from '../node/sandbox/probe';
import { bulwarkStateDir } from '../node/hooks/state-dir';
import { errorMessage } from '../engine/error-message';

export type SandboxOutcome =
  /**
   * Allowed → answer with the rewritten input; `answerHiding` when the decision allowed the command on the
   * condition that the sandbox hides some protected files (`bulwark exec --hide`).
   */
  | {
      readonly kind: 'wrap';
      readonly answer: HookAnswer;
      readonly answerHiding: (hide: readonly string[]) => HookAnswer;
      readonly note: string;
    }
  /** Allowed → answer as without the sandbox; `quiet`: the user switched wrapping off, nothing to warn about. */
  | { readonly kind: 'skip'; readonly why: string; readonly note: string; readonly quiet?: boolean }
  /** The rewrite cannot be built for this command (a NUL in it): an allow becomes a deny with `why`. */
  | { readonly kind: 'refuse'; readonly why: string; readonly note: string };

export interface HookSandboxOptions {
  /** Wrapping is on (default); `bulwark hook --no-sandbox` turns it off. */
  readonly enabled: boolean;
  /** Hosts the user allows every sandboxed command to reach (`--allow-net`), besides the ones the command names. */
  readonly allowNet: readonly string[];
  /** The state directory the hook was given (the sandbox hides it; a non-default one is passed on). */
  readonly stateDir?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** The probe starts bwrap twice (~10 ms); one that has not answered by then will not (a stuck sandbox start). */
const PROBE_BUDGET_MS = 5000;
let probeStuck = false;

/** A probe did not answer in time: something it started may still hold this process open after the answer. */
export const sandboxProbeStuck = (): boolean => probeStuck;

/** The probe's answer, or undefined when it takes longer than PROBE_BUDGET_MS. */
async function boundedProbe(): Promise<Awaited<ReturnType<typeof probeSandbox>> | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      probeStuck = true;
      resolve(undefined);
    }, PROBE_BUDGET_MS);
  });
  try {
    return await Promise.race([probeSandbox(), late]);
  } finally {
    clearTimeout(timer);
  }
}

const skip = (why: string, quiet = false): SandboxOutcome => ({
  kind: 'skip',
  why,
  note: `not sandboxed: ${why}`,
  ...(quiet ? { quiet } : {}),
});

/** How this allowed call will run; never throws (an unexpected error is a refusal that says what failed). */
export async function sandboxOutcome(
  call: HookCall,
  target: RewriteTarget,
  actionCwd: string | undefined,
  o: HookSandboxOptions,
): Promise<SandboxOutcome> {
  if (!o.enabled) return skip('wrapping is off (--no-sandbox)', true);
  try {
    return await plan(call, target, actionCwd, o);
  } catch (e) {
    if (e instanceof SandboxRewriteError) return { kind: 'refuse', why: e.message, note: `not sandboxed: ${e.message}` };
    const why = `the sandboxed form of the command could not be prepared (${errorMessage(e)})`;
    return { kind: 'refuse', why, note: `not sandboxed: ${why}` };
  }
}

async function plan(call: HookCall, target: RewriteTarget, actionCwd: string | undefined, o: HookSandboxOptions): Promise<SandboxOutcome> {
  const env = o.env ?? process.env;
  const home = os.homedir();
  const platform = currentPlatform();
  // All three at once: the probe starts bwrap, the analysis may load the shell grammar.
  const [status, facts, rules] = await Promise.all([
    boundedProbe(),
    loadShellParser().then((parser) => analyzeShell(parser, target.command, { cwd: actionCwd, home, platform, fs: nodeFileSystem })),
    clientCommandRules(call, env, home),
  ]);
  if (call.agent === 'codex') {
    const own = codexOwnSandbox(
      clientArgv(['codex']),
      readOptional(
        path.join(env.CODEX_HOME && path.isAbsolute(env.CODEX_HOME) ? env.CODEX_HOME : path.join(home, '.codex'), 'config.toml'),
      ),
    );
    if (own.on) return skip(own.why);
  }
  if (!status) return skip(`the sandbox probe did not answer within ${PROBE_BUDGET_MS / 1000} s (bwrap started but did not finish)`);
  if (!status.available)
    return skip(`no OS sandbox here: ${status.reason ?? 'unavailable'}${status.fix ? ` (to fix: ${status.fix})` : ''}`);
  if (rules) return skip(rules);
  const net = sandboxHosts(facts);
  if ('notSandboxed' in net) return skip(net.notSandboxed);
  const workspaces = projectFolders(call, env);
  if (workspaces.length === 0) return skip('the hook knows no project folder to make writable (the call has no absolute cwd)');
  // `bulwark exec` hides the state directory it finds in its environment; the hook's own is passed on when that differs.
  let execState: string | undefined;
  try {
    execState = bulwarkStateDir(undefined, env, home);
  } catch {
    execState = undefined;
  }
  const stateDir = o.stateDir && path.resolve(o.stateDir) !== execState ? path.resolve(o.stateDir) : undefined;
  const allowNet = [...new Set([...net.hosts, ...o.allowNet])];
  const ownState = o.stateDir ? path.resolve(o.stateDir) : execState;
  const answerHiding = (hide: readonly string[]) => {
    const command = sandboxedCommand(
      {
        node: process.execPath,
        cli: cliPath(),
        electron: Boolean(process.versions.electron),
        ...(stateDir ? { stateDir } : {}),
        ...(ownState ? { compileCache: path.join(ownState, 'cache', 'node-compile') } : {}),
        ...(actionCwd !== undefined && path.isAbsolute(actionCwd) ? { cwd: actionCwd } : {}),
        workspaces,
        allowNet,
        ...(target.timeoutS !== undefined ? { timeoutS: target.timeoutS } : {}),
        ...(hide.length ? { hide } : {}),
      },
      target.command,
    );
    return rewriteAnswer(target.form, call.event, rewrittenInput(call.toolInput, target.field, command));
  };
  const network = allowNet.length ? `network: ${allowNet.join(', ')}` : 'no network';
  return {
    kind: 'wrap',
    answer: answerHiding([]),
    answerHiding,
    note: `sandboxed (${status.mechanism}; writable: ${workspaces.join(', ')}; ${network})`,
  };
}

/** dist/cli.js, as this process runs it (the hook and `bulwark exec` are the same bundle). */
function cliPath(): string {
  return /[\\/]cli\.js$/.test(__filename) ? __filename : path.resolve(process.argv[1] ?? '');
}

/**
 * The folders the sandboxed command may write: the project folder the client names in its hook
 * environment, and the call's working directory unless it lies inside one already.
 */
export function projectFolders(call: HookCall, env: NodeJS.ProcessEnv): string[] {
  const named = ['CLAUDE_PROJECT_DIR', 'GEMINI_PROJECT_DIR', 'COPILOT_PROJECT_DIR'].map((k) => env[k]);
  const candidates = [...named, call.cwd]
    .filter((d): d is string => typeof d === 'string' && path.isAbsolute(d) && isDir(d))
    .map((d) => path.resolve(d));
  const out: string[] = [];
  for (const d of candidates) if (!out.some((w) => d === w || d.startsWith(w + path.sep))) out.push(d);
  return out.filter((d, i) => !out.some((w, j) => j !== i && d.startsWith(w + path.sep)));
}

/**
 * Why the client's own rules for particular commands stop the wrapping, or undefined. Claude Code and
 * Copilot CLI match their rules against the command they run (after a rewrite: the wrapper), so where
 * their command line or Claude's settings hold rules for particular shell commands the command runs as
 * the model wrote it. A settings file that exists but cannot be read counts as holding such rules.
 */
async function clientCommandRules(call: HookCall, env: NodeJS.ProcessEnv, home: string): Promise<string | undefined> {
  if (call.agent === 'claude' || call.agent === 'copilot-cli') {
    const argv = clientArgv(call.agent === 'claude' ? ['claude', 'claude.exe'] : ['copilot']);
    const flags = argv ? cliCommandRules(call.agent, argv) : [];
    if (flags.length)
      return `the client's own rules for particular shell commands on its command line (${flags.slice(0, 2).join('; ')}${flags.length > 2 ? '; …' : ''}) are matched against the command it runs, and would no longer match a wrapped one`;
  }
  if (call.agent !== 'claude') return undefined;
  const project =
    env.CLAUDE_PROJECT_DIR && path.isAbsolute(env.CLAUDE_PROJECT_DIR)
      ? env.CLAUDE_PROJECT_DIR
      : call.cwd && path.isAbsolute(call.cwd)
        ? call.cwd
        : undefined;
  const user = env.CLAUDE_CONFIG_DIR && path.isAbsolute(env.CLAUDE_CONFIG_DIR) ? env.CLAUDE_CONFIG_DIR : path.join(home, '.claude');
  const files = [
    process.platform === 'darwin'
      ? '/Library/Application Support/ClaudeCode/managed-settings.json'
      : '/etc/claude-code/managed-settings.json',
    path.join(user, 'settings.json'),
    path.join(user, 'settings.local.json'),
    ...(project ? [path.join(project, '.claude', 'settings.json'), path.join(project, '.claude', 'settings.local.json')] : []),
  ];
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') continue;
      return `Claude Code's settings ${file} cannot be read, and rules for particular Bash commands there would not match a wrapped command`;
    }
    let rules: string[];
    try {
      rules = claudeCommandRules(JSON.parse(text));
    } catch {
      return `Claude Code's settings ${file} is not valid JSON, and rules for particular Bash commands there would not match a wrapped command`;
    }
    if (rules.length)
      return `Claude Code's own rules for particular Bash commands (${file}: ${rules.slice(0, 2).join('; ')}${rules.length > 2 ? '; …' : ''}) are matched against the command it runs, and would no longer match a wrapped one`;
  }
  return undefined;
}

/**
 * The command line of the client process that runs this hook (the nearest ancestor whose program has
 * one of `names`), from /proc; undefined where there is none (macOS) or it is not found within a few levels.
 */
function clientArgv(names: readonly string[]): string[] | undefined {
  let pid = process.ppid;
  for (let depth = 0; depth < 8 && pid > 1; depth++) {
    let argv: string[];
    let stat: string;
    try {
      argv = fs
        .readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .split('\0')
        .filter((a, i, all) => a !== '' || i < all.length - 1);
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return undefined;
    }
    if (argv[0] && names.includes(path.basename(argv[0]))) return argv.slice(1);
    // The parent's pid is the 4th field, after the command name in parentheses (which may hold spaces).
    pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return undefined;
}

function readOptional(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
