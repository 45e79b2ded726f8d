// The hook dialects: how each client hands a tool call to its hook, and how it reads the answer.
// Each differs, and a wrong answer format is silently ignored (the tool then runs): Gemini and
// Copilot CLI's camelCase hooks ignore a Claude-style deny; Codex runs the tool on `ask`; Copilot CLI
// drops the reason on exit 2. So Bulwark never answers `ask`, and answers each client in its own form.
import type { AgentId } from './types';

/** The answer format: Claude's (also Codex, VS Code, Copilot CLI with PascalCase events), Gemini's, or Copilot CLI's camelCase one. */
export type Dialect = 'claude' | 'gemini' | 'copilot';

export type HookPhase = 'pre_tool' | 'post_tool' | 'other';

/** One hook call, read from the client's stdin. */
export interface HookCall {
  readonly agent: AgentId;
  readonly dialect: Dialect;
  readonly phase: HookPhase;
  /** The event as the client named it (PreToolUse, BeforeTool, preToolUse…). */
  readonly event: string;
  readonly sessionId: string;
  readonly cwd?: string;
  readonly toolName?: string;
  readonly toolInput?: unknown;
  readonly toolOutput?: unknown;
  readonly toolUseId?: string;
}

export class HookInputError extends Error {
  override readonly name = 'HookInputError';
}

const PRE_EVENTS = new Set(['PreToolUse', 'BeforeTool', 'preToolUse']);
const POST_EVENTS = new Set(['PostToolUse', 'AfterTool', 'postToolUse']);
const GEMINI_EVENTS = new Set([
  'BeforeTool',
  'AfterTool',
  'BeforeAgent',
  'AfterAgent',
  'BeforeModel',
  'AfterModel',
  'BeforeToolSelection',
  'SessionStart',
  'SessionEnd',
  'PreCompress',
  'Notification',
]);

/** The dialect a client answers in when the payload does not say (the flag's default). */
export const DEFAULT_DIALECT: Readonly<Record<AgentId, Dialect>> = {
  claude: 'claude',
  codex: 'claude',
  gemini: 'gemini',
  'copilot-cli': 'copilot',
  vscode: 'claude',
};

/**
 * Reads a hook payload. The dialect comes from the payload's own shape (an event name field means
 * the Claude/Gemini families; `toolName`/`toolArgs` without one means Copilot CLI's camelCase hooks)
 * and the agent flag; `eventFlag` names the event when the payload does not (Copilot's camelCase).
 * The agent is the flag's, except that a VS Code payload is VS Code's (it runs Claude's hook files too).
 */
export function parseHookCall(value: unknown, flagAgent: AgentId, eventFlag?: string): HookCall {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HookInputError('the hook input is not a JSON object');
  const v = value as Record<string, unknown>;
  // VS Code also runs the hooks in Claude's settings files (and names its event `hookEventName`):
  // such a call is VS Code's, whatever the installed command says.
  const agent: AgentId = str(v.hookEventName) !== undefined && v.hook_event_name === undefined ? 'vscode' : flagAgent;
  const named = str(v.hook_event_name) ?? str(v.hookEventName);
  const event = named ?? eventFlag ?? (v.toolResult !== undefined ? 'postToolUse' : v.toolName !== undefined ? 'preToolUse' : undefined);
  if (event === undefined) throw new HookInputError('the hook input names no event (hook_event_name) and no tool');
  const dialect: Dialect =
    named === undefined && (v.toolName !== undefined || agent === 'copilot-cli')
      ? 'copilot'
      : GEMINI_EVENTS.has(event) && (agent === 'gemini' || event === 'BeforeTool' || event === 'AfterTool')
        ? 'gemini'
        : 'claude';
  const phase: HookPhase = PRE_EVENTS.has(event) ? 'pre_tool' : POST_EVENTS.has(event) ? 'post_tool' : 'other';
  const sessionId = str(v.session_id) ?? str(v.sessionId) ?? 'unknown-session';
  const cwd = str(v.cwd);
  let toolName = str(v.tool_name) ?? str(v.toolName);
  let toolInput: unknown = v.tool_input ?? v.toolArgs;
  if (typeof toolInput === 'string' && v.toolArgs !== undefined) {
    // Copilot CLI sends toolArgs as a JSON string in some releases.
    try {
      toolInput = JSON.parse(toolInput);
    } catch {
      toolInput = { toolArgs: toolInput };
    }
  }
  if (phase !== 'other') {
    if (toolName === undefined || toolName.length === 0 || toolName.length > 256)
      throw new HookInputError('the hook input has no usable tool name (tool_name)');
    if (toolInput === undefined) toolInput = {};
  } else {
    toolName = undefined;
  }
  return {
    agent,
    dialect,
    phase,
    event,
    sessionId: sessionId.slice(0, 200),
    ...(cwd !== undefined ? { cwd } : {}),
    ...(toolName !== undefined ? { toolName, toolInput } : {}),
    ...(phase === 'post_tool' ? { toolOutput: v.tool_response ?? v.toolResult ?? v.tool_result } : {}),
    ...(str(v.tool_use_id) !== undefined ? { toolUseId: str(v.tool_use_id) } : {}),
  };
}

/** What the hook process writes and how it exits. */
export interface HookAnswer {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: 0 | 2;
}

/**
 * The pre-tool answer. `allow` says nothing, so the client's own permission checks still apply
 * (Bulwark only ever takes permissions away); `deny` is the client's own deny with the reason.
 */
export function preToolAnswer(dialect: Dialect, event: string, verdict: { readonly allow: boolean; readonly reason: string }): HookAnswer {
  if (verdict.allow) return { stdout: '', stderr: '', exitCode: 0 };
  switch (dialect) {
    case 'gemini':
      return json({ decision: 'deny', reason: verdict.reason });
    case 'copilot':
      return json({ permissionDecision: 'deny', permissionDecisionReason: verdict.reason });
    case 'claude':
      return json({ hookSpecificOutput: { hookEventName: event, permissionDecision: 'deny', permissionDecisionReason: verdict.reason } });
  }
}

/** The post-tool answer: context for the model about what was found in the tool's output. */
export function postToolAnswer(dialect: Dialect, event: string, context: string | undefined): HookAnswer {
  if (!context) return { stdout: '', stderr: '', exitCode: 0 };
  switch (dialect) {
    case 'copilot':
      return json({ additionalContext: context });
    case 'gemini':
    case 'claude':
      return json({ hookSpecificOutput: { hookEventName: event, additionalContext: context } });
  }
}

/**
 * A deny for when the payload itself could not be read (so its event is unknown either): exit 2
 * with the reason on stderr blocks in every client; Copilot CLI drops that reason, so it gets its
 * own JSON deny instead.
 */
export function denyWithoutPayload(agent: AgentId, reason: string): HookAnswer {
  if (DEFAULT_DIALECT[agent] === 'copilot') return preToolAnswer('copilot', '', { allow: false, reason });
  return { stdout: '', stderr: reason + '\n', exitCode: 2 };
}

function json(o: unknown): HookAnswer {
  return { stdout: JSON.stringify(o) + '\n', stderr: '', exitCode: 0 };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}
