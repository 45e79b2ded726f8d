// Who decides a hook call's actions: the running extension over its socket, or — when no extension
// runs — the embedded engine in this process, writing to the same audit chain. Loaded only once a
// hook call needs deciding (the engine and SQLite are not needed for events Bulwark ignores).
import os from 'node:os';
import path from 'node:path';
import type { HookCall, MappedAction, OutputFinding } from '../engine/agents';
import { isAgentId } from '../engine/agents';
import type { BridgeDecision } from '../node/hooks/bridge-protocol';
import { bulwarkStateDir } from '../node/hooks/state-dir';
import { askBridge } from '../node/hooks/bridge-client';

export interface HookDecider {
  decide(call: HookCall, action: MappedAction, via: string): Promise<BridgeDecision>;
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
}

const blockDecision = (rule: string, reason: string): BridgeDecision => ({ decision: 'block', tier: 0, minTier: 0, level: 'unprotected', rules: [rule], reason });

/** The session as the extension and the audit log name it: per agent, so two agents' sessions never mix. */
export const agentSession = (call: HookCall) => `${call.agent}:${call.sessionId}`;

export async function deciders(flags: DeciderFlags, call: HookCall, deadlineAt: number): Promise<HookDecider> {
  if (!isAgentId(flags.agent)) throw new Error(`unknown agent ${flags.agent}`);
  const stateDir = bulwarkStateDir(flags.stateDir);
  const redact = async (text: string) => {
    const { loadSecretRules, redactSecrets } = await import('../engine/secrets');
    return redactSecrets(loadSecretRules(), text).text;
  };
  const timeoutMs = () => Math.max(50, deadlineAt - Date.now() - 250);

  // Ask the extension first; its answer decides whether this process decides anything itself.
  const probe = await askBridge(stateDir, { v: 1, kind: 'ping' }, { timeoutMs: Math.min(2000, timeoutMs()) });
  if (probe.kind === 'unreachable') {
    const why = `the Bulwark extension is running but its hook bridge does not answer (${probe.why})`;
    return {
      redact,
      decide: async () => blockDecision('hook.bridge_unreachable', `Blocked: ${why}, and a hook never decides without it while it runs. Restart VS Code's extension host (Developer: Restart Extension Host) if this persists.`),
      inspectOutput: (c, text) => inspectLocally(c, text),
    };
  }
  if (probe.kind === 'answer') {
    return {
      redact: async (text) => text,
      decide: async (c, action) => {
        const r = await askBridge(stateDir, {
          v: 1, kind: 'decide', agent: c.agent, deadlineMs: deadlineAt - 500,
          action: { ...(c.toolUseId ? { id: c.toolUseId } : {}), type: action.type, payload: action.payload, sessionId: agentSession(c), ...cwdOf(c, action) },
        }, { timeoutMs: timeoutMs() });
        if (r.kind !== 'answer') return blockDecision('hook.bridge_unreachable', `Blocked: the Bulwark extension stopped answering (${r.kind === 'unreachable' ? r.why : 'it is no longer running'}).`);
        if (!r.response.ok) return blockDecision('hook.bridge_error', `Blocked: the Bulwark extension refused the request (${r.response.error}).`);
        return r.response.decision ?? blockDecision('hook.bridge_error', 'Blocked: the Bulwark extension answered without a decision.');
      },
      // The extension inspects with its warm rules and records what it found; the hook compiles nothing.
      inspectOutput: async (c, text) => {
        if (!text) return [];
        const r = await askBridge(stateDir, { v: 1, kind: 'inspect', agent: c.agent, sessionId: agentSession(c), tool: c.toolName!, ...(c.toolUseId ? { toolUseId: c.toolUseId } : {}), text }, { timeoutMs: timeoutMs() });
        if (r.kind === 'answer' && r.response.ok && r.response.findings) return r.response.findings;
        process.stderr.write('Bulwark: the extension could not inspect this tool output; it was inspected here and not recorded\n');
        return inspectLocally(c, text);
      },
    };
  }

  // No extension: decide here with the embedded engine; nobody can be asked.
  const local = await import('./hook-local');
  const engine = await local.localEngine({ stateDir, policy: flags.policy, ifc: flags.ifc, workspace: call.cwd });
  return {
    redact,
    noReviewer: 'No one can approve it right now: the Bulwark extension is not running, so this hook decided on its own and never asks.',
    decide: async (c, action, via) => engine.decide(c, action, via),
    inspectOutput: async (c, text) => {
      const findings = await inspectLocally(c, text);
      await engine.record(c, outputDetails(c, findings));
      return findings;
    },
  };
}

function cwdOf(call: HookCall, action: MappedAction): { cwd?: string } {
  const base = call.cwd !== undefined && path.isAbsolute(call.cwd) ? call.cwd : undefined;
  if (action.cwd === undefined) return base ? { cwd: base } : {};
  if (path.isAbsolute(action.cwd)) return { cwd: action.cwd };
  return base ? { cwd: path.resolve(base, action.cwd.startsWith('~') ? path.join(os.homedir(), action.cwd.slice(1)) : action.cwd) } : {};
}
export { cwdOf };

async function inspectLocally(call: HookCall, text: string): Promise<OutputFinding[]> {
  if (!text) return [];
  const { inspect } = await import('../engine/content');
  const r = inspect(text, 'pre_prompt', `${call.agent}:${call.toolName}`, 'untrusted');
  return r.findings.map((f) => ({ category: f.category, rule: f.rule }));
}

function outputDetails(call: HookCall, findings: readonly OutputFinding[]): Record<string, unknown> {
  const rules = [...new Set(findings.map((f) => f.rule))];
  return { agent: call.agent, tool: call.toolName, ...(call.toolUseId ? { tool_use_id: call.toolUseId } : {}), findings: findings.length, rules, categories: [...new Set(findings.map((f) => f.category))] };
}
