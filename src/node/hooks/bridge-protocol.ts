// The hook program ↔ extension protocol over the local socket: one JSON object per line each way,
// one request per connection. Every request carries the per-start token from bridge.json; a request
// without it (or with a wrong one) gets an error answer and nothing is decided or recorded.
import type { AgentId } from '../../engine/agents/types';
import type { Reason } from '../../engine/types';

/** Largest request line the server reads (a tool input with a big file in it); longer is refused. */
export const MAX_BRIDGE_LINE = 16 * 1024 * 1024;

export interface BridgeAction {
  readonly id?: string;
  readonly type: string;
  readonly payload: Record<string, unknown>;
  readonly sessionId: string;
  readonly cwd?: string;
  /** The hook will run this shell command inside Bulwark's OS sandbox (`bulwark exec`) if it is allowed. */
  readonly sandboxed?: boolean;
}

export type BridgeRequest =
  /** Decide one action (Tier 3 through the editor's modal), record it in the audit log, and answer by `deadlineMs` (epoch ms). */
  | {
      readonly v: 1;
      readonly token: string;
      readonly kind: 'decide';
      readonly agent: AgentId;
      readonly action: BridgeAction;
      readonly deadlineMs: number;
      /** The policy the hook was installed with, its IFC policy and the agent's working directory: the hooks' own server decides with them; the extension uses its settings. */
      readonly policy?: string;
      readonly ifc?: string;
      readonly workspace?: string;
      /** How the hook will run the action if it is allowed (`sandboxed (…)` / `not sandboxed: …`), recorded with the decision. */
      readonly sandbox?: string;
    }
  /** Record what the hook found in a tool's output (post-tool inspection) in the audit log. Details are already redacted. */
  | {
      readonly v: 1;
      readonly token: string;
      readonly kind: 'record';
      readonly agent: AgentId;
      readonly sessionId: string;
      readonly event: 'tool_output_inspected';
      readonly details: Record<string, unknown>;
    }
  /**
   * Inspect a tool's output (prompt injection, secrets, invisible text) with the extension's warm rules,
   * record the findings (rule ids only) in the audit log, and answer them. The text is never stored.
   */
  | {
      readonly v: 1;
      readonly token: string;
      readonly kind: 'inspect';
      readonly agent: AgentId;
      readonly sessionId: string;
      readonly tool: string;
      readonly toolUseId?: string;
      readonly text: string;
      /** The agent's project folder: the hooks' own server loads its known secrets (.env values) to find them in the output. */
      readonly workspace?: string;
    }
  | { readonly v: 1; readonly token: string; readonly kind: 'ping' };

/** One thing found in a tool's output: its category and rule id, never the text. */
export interface BridgeFinding {
  readonly category: string;
  readonly rule: string;
}

/** The decision as the extension's check API returns it (see src/vscode/check-action.ts CheckActionResult). */
export interface BridgeDecision {
  readonly decision: 'allow' | 'block' | 'escalate';
  readonly tier: number;
  readonly minTier: number;
  readonly level: string;
  readonly rules: readonly string[];
  readonly reason: string;
  /** The structured reasons `reason` was rendered from (absent from an extension that predates them). */
  readonly reasons?: readonly Reason[];
  /**
   * Protected files the allow rests on the sandbox hiding (a search over a folder that holds a .env): the
   * hook passes them to `bulwark exec --hide`. Only ever on an allow of a sandboxed shell command.
   */
  readonly sandboxHides?: readonly { readonly path: string; readonly ruleId: string }[];
}

export type BridgeResponse =
  | { readonly v: 1; readonly ok: true; readonly decision?: BridgeDecision; readonly findings?: readonly BridgeFinding[] }
  | { readonly v: 1; readonly ok: false; readonly error: string };
