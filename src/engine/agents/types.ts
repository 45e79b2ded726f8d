// The agents Bulwark guards through their pre-tool hooks, and what one hook call carries.
// Pure types: the hook program (src/cli/hook.ts), the installer and the bridge share them.

/** The clients whose hooks Bulwark answers, by the name of their dialect. */
export const AGENT_IDS = ['claude', 'codex', 'gemini', 'copilot-cli', 'vscode'] as const;
export type AgentId = (typeof AGENT_IDS)[number];

/** `claude:<session>`: sessions are per agent, so two agents' sessions never mix; one that already names its agent is kept, one naming another agent is nested, never adopted. */
export function agentScopedSession(agent: AgentId, sessionId: string): string {
  return sessionId.startsWith(`${agent}:`) ? sessionId : `${agent}:${sessionId}`;
}

export const isAgentId = (v: unknown): v is AgentId => typeof v === 'string' && (AGENT_IDS as readonly string[]).includes(v);

/** Human names, for messages and the installer. */
export const AGENT_NAMES: Readonly<Record<AgentId, string>> = {
  claude: 'Claude Code',
  codex: 'OpenAI Codex CLI',
  gemini: 'Gemini CLI',
  'copilot-cli': 'GitHub Copilot CLI',
  vscode: 'Copilot agent mode in VS Code',
};
