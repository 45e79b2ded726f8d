// A tool's output after it ran: what inspection finds in it (rule ids only) and the audit event
// that records that, never the text. One implementation for the extension's bridge, the hooks' own
// server and the in-process hook. Not exported from ./index: the hook loads it only after a tool ran.
import { inspect } from '../content';
import type { AuditEventInput } from '../audit';
import type { OutputFinding } from './messages';
import type { AgentId } from './types';
import { agentScopedSession } from './types';

/** Rule ids, tool names, categories: what a finding may carry into the audit log as text. */
export const IDENTIFIER = /^[\w.:@/#-]{1,128}$/;
/** Most rule ids (and list items) one output record keeps. */
export const MAX_ITEMS = 200;

export interface ToolOutput {
  readonly agent: AgentId;
  /** The agent's session id as the client gave it (scoped to the agent here). */
  readonly sessionId: string;
  readonly tool: string;
  readonly toolUseId?: string;
  readonly text: string;
}

/** Inspects the output as untrusted text entering the model's prompt; the event to append records counts and rule ids only. */
export function inspectToolOutput(o: ToolOutput): { findings: OutputFinding[]; event: AuditEventInput } {
  const r = inspect(o.text, 'pre_prompt', `${o.agent}:${o.tool}`, 'untrusted');
  const findings = r.findings.map((f) => ({ category: f.category, rule: f.rule }));
  const tool = IDENTIFIER.test(o.tool) ? o.tool : 'tool';
  const event: AuditEventInput = {
    event: 'ACTION_EXECUTED',
    session: agentScopedSession(o.agent, o.sessionId),
    action_type: tool,
    details: {
      agent: o.agent,
      inspected_output: {
        tool,
        ...(o.toolUseId && IDENTIFIER.test(o.toolUseId) ? { tool_use_id: o.toolUseId } : {}),
        characters: o.text.length,
        findings: findings.length,
        rules: [...new Set(findings.map((f) => f.rule))].slice(0, MAX_ITEMS),
        categories: [...new Set(findings.map((f) => f.category))],
        action: r.action,
      },
    },
  };
  return { findings, event };
}
