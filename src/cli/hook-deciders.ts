// Who decides a hook call's actions: the running extension over its socket, or — when no extension
// runs — the embedded engine in this process, writing to the same audit chain. Loaded only once a
// hook call needs deciding (the engine and SQLite are not needed for events Bulwark ignores).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HookCall, MappedAction, OutputFinding } from '../engine/agents';
import { agentScopedSession, isAgentId } from '../engine/agents';
import type { BridgeDecision } from '../node/hooks/bridge-protocol';
import { bulwarkStateDir } from '../node/hooks/state-dir';
import { askBridge } from '../node/hooks/bridge-client';

export interface HookDecider {
  /** `sandbox`: how the action will run if allowed (`sandboxed (…)` / `not sandboxed: …`), for its audit entry. */
  /** `sandboxed`: the hook will run this shell command in the OS sandbox if it is allowed (the decision may rely on it). */
  decide(call: HookCall, action: MappedAction, via: string, sandbox?: string, sandboxed?: boolean): Promise<BridgeDecision>;
  /** Findings in a tool's output (rule ids only), recorded in the audit log. */
  inspectOutput(call: HookCall, text: string): Promise<readonly OutputFinding[]>;
  /** Secrets out of a reason before it goes to the agent (the extension's answers are redacted there, where the rules are already compiled). */
  redact(text: string): Promise<string>;
  /** Why an escalation could not be put to anyone (in-process: no extension running). */
  readonly noReviewer?: string;
}

export interface DeciderFlags {
  readonly agent: string;
  readonly stateDir?: string;
  readonly policy: string;
  readonly ifc: string;
  /** Do not start the hooks' own server when no extension runs (every call then decides in-process). */
  readonly noServer?: boolean;
}

const NO_REVIEWER =
  'No one can approve it right now: the Bulwark extension is not running in VS Code, so Bulwark decided without asking anyone.';

const blockDecision = (rule: string, reason: string): BridgeDecision => ({
  decision: 'block',
  tier: 0,
  minTier: 0,
  level: 'unprotected',
  rules: [rule],
  reason,
});

export async function deciders(flags: DeciderFlags, deadlineAt: number): Promise<HookDecider> {
  if (!isAgentId(flags.agent)) throw new Error(`unknown agent ${flags.agent}`);
  const stateDir = bulwarkStateDir(flags.stateDir);
  const redact = async (text: string) => {
    const { loadSecretRules, redactSecrets } = await import('../engine/secrets');
    // Only a refusal's text is redacted here: the user's known secrets are loaded then, not on every call.
    const { knownSecretsFor } = await import('../node/known-secrets');
    knownSecretsFor([process.cwd()], os.homedir(), process.env);
    return redactSecrets(loadSecretRules(), text).text;
  };
  const timeoutMs = () => Math.max(50, deadlineAt - Date.now() - 250);

  // Ask the extension first; its answer decides whether this process decides anything itself.
  const probe = await askBridge(stateDir, { v: 1, kind: 'ping' }, { timeoutMs: Math.min(2000, timeoutMs()) });
  if (probe.kind === 'unreachable') {
    const why = `the Bulwark extension is running but its hook bridge does not answer (${probe.why})`;
    return {
      redact,
      decide: async () =>
        blockDecision(
          'hook.bridge_unreachable',
          `Blocked: ${why}, and a hook never decides without it while it runs. Restart VS Code's extension host (Developer: Restart Extension Host) if this persists.`,
        ),
      inspectOutput: (c, text) => inspectLocally(c, text),
    };
  }
  if (probe.kind === 'answer') {
    return {
      redact: async (text) => text,
      // The extension never answers `escalate` (it asks a human or blocks); the hooks' own server does.
      noReviewer: NO_REVIEWER,
      decide: async (c, action, _via, sandbox, sandboxed) => {
        const ask = () =>
          askBridge(
            stateDir,
            {
              v: 1,
              kind: 'decide',
              agent: c.agent,
              deadlineMs: deadlineAt - 500,
              policy: flags.policy,
              ifc: flags.ifc,
              ...(c.cwd && path.isAbsolute(c.cwd) ? { workspace: c.cwd } : {}),
              ...(sandbox ? { sandbox: sandbox.slice(0, 4096) } : {}),
              action: {
                ...(c.toolUseId ? { id: c.toolUseId } : {}),
                type: action.type,
                payload: action.payload,
                sessionId: agentScopedSession(c.agent, c.sessionId),
                ...cwdOf(c, action),
                ...(sandboxed && action.type === 'execute_command' ? { sandboxed: true } : {}),
              },
            },
            { timeoutMs: timeoutMs() },
          );
        let r = await ask();
        // The hooks' own server handed over to an extension that just started: ask the extension.
        if (r.kind === 'answer' && r.response.ok && r.response.decision?.rules.includes('hook.handed_over')) r = await ask();
        if (r.kind !== 'answer')
          return blockDecision(
            'hook.bridge_unreachable',
            `Blocked: the Bulwark extension stopped answering (${r.kind === 'unreachable' ? r.why : 'it is no longer running'}).`,
          );
        if (!r.response.ok)
          return blockDecision('hook.bridge_error', `Blocked: the Bulwark extension refused the request (${r.response.error}).`);
        return r.response.decision ?? blockDecision('hook.bridge_error', 'Blocked: the Bulwark extension answered without a decision.');
      },
      // The extension inspects with its warm rules and records what it found; the hook compiles nothing.
      inspectOutput: async (c, text) => {
        if (!text) return [];
        const r = await askBridge(
          stateDir,
          {
            v: 1,
            kind: 'inspect',
            agent: c.agent,
            sessionId: agentScopedSession(c.agent, c.sessionId),
            tool: c.toolName!,
            ...(c.toolUseId ? { toolUseId: c.toolUseId } : {}),
            text,
            ...(c.cwd && path.isAbsolute(c.cwd) ? { workspace: c.cwd } : {}),
          },
          { timeoutMs: timeoutMs() },
        );
        if (r.kind === 'answer' && r.response.ok && r.response.findings) return r.response.findings;
        process.stderr.write('Bulwark: the extension could not inspect this tool output; it was inspected here and not recorded\n');
        return inspectLocally(c, text);
      },
    };
  }

  // No extension: decide here with the embedded engine (nobody can be asked), and start the hooks'
  // own server so the next calls find the engine warm.
  if (!flags.noServer) startHookServer(stateDir);
  const { LocalDecider } = await import('./hook-local');
  const local = new LocalDecider(stateDir);
  return {
    redact,
    noReviewer: NO_REVIEWER,
    decide: async (c, action, via, sandbox, sandboxed) =>
      local.decide({
        agent: c.agent,
        sessionId: c.sessionId,
        policy: flags.policy,
        ifc: flags.ifc,
        ...(c.cwd && path.isAbsolute(c.cwd) ? { workspace: c.cwd } : {}),
        action: {
          ...(c.toolUseId ? { id: c.toolUseId } : {}),
          type: action.type,
          payload: action.payload,
          ...cwdOf(c, action),
          ...(sandboxed && action.type === 'execute_command' ? { sandboxed: true } : {}),
        },
        note: { tool: c.toolName, via, ...(sandbox ? { sandbox } : {}) },
      }),
    inspectOutput: (c, text) =>
      local.inspect({
        agent: c.agent,
        sessionId: c.sessionId,
        tool: c.toolName!,
        ...(c.toolUseId ? { toolUseId: c.toolUseId } : {}),
        text,
        ...(c.cwd && path.isAbsolute(c.cwd) ? { workspace: c.cwd } : {}),
      }),
  };
}

/**
 * Starts `bulwark hook-server` in the background, detached, with none of the agent's environment
 * (it holds API keys). One at a time: a marker file keeps parallel hook calls from starting several.
 */
function startHookServer(stateDir: string): void {
  const marker = path.join(stateDir, 'hook-server.starting');
  try {
    try {
      if (Date.now() - fs.statSync(marker).mtimeMs < 15_000) return;
      fs.rmSync(marker, { force: true });
    } catch {
      /* no marker */
    }
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(marker, String(process.pid), { flag: 'wx', mode: 0o600 });
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME ?? os.homedir() };
    for (const k of ['NODE_COMPILE_CACHE', 'ELECTRON_RUN_AS_NODE', 'USERPROFILE', 'SystemRoot', 'TMPDIR', 'TEMP', 'TMP'])
      if (process.env[k] !== undefined) env[k] = process.env[k];
    const idle = process.env.BULWARK_HOOK_SERVER_IDLE_SECONDS;
    const child = spawn(
      process.execPath,
      [process.argv[1]!, 'hook-server', '--state-dir', stateDir, ...(idle && /^\d{1,5}$/.test(idle) ? ['--idle-seconds', idle] : [])],
      { detached: true, stdio: 'ignore', env, cwd: stateDir },
    );
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // Only the warm-up failed: this call is decided in-process all the same.
  }
}

/** The working directory the engine judges a mapped action in: its own (a shell tool's directory field, against the call's), else the call's. */
export function cwdOf(call: HookCall, action: MappedAction): { cwd?: string } {
  const base = call.cwd !== undefined && path.isAbsolute(call.cwd) ? call.cwd : undefined;
  if (action.cwd === undefined) return base ? { cwd: base } : {};
  if (path.isAbsolute(action.cwd)) return { cwd: action.cwd };
  return base ? { cwd: path.resolve(base, action.cwd.startsWith('~') ? path.join(os.homedir(), action.cwd.slice(1)) : action.cwd) } : {};
}

/** Findings only, recorded nowhere: for when neither an extension nor this process may write the chain. */
async function inspectLocally(call: HookCall, text: string): Promise<OutputFinding[]> {
  if (!text) return [];
  const { knownSecretsFor } = await import('../node/known-secrets');
  knownSecretsFor([call.cwd], os.homedir(), process.env);
  const { inspectToolOutput } = await import('../engine/agents/output');
  return inspectToolOutput({ agent: call.agent, sessionId: call.sessionId, tool: call.toolName!, text }).findings;
}
