// What the extension does with a bridged hook request, apart from VS Code itself: scope the session
// to the agent, give the action an id the approval dialog can find it by, decide it with the
// extension's engine and audit log, record the taint at allow time (the agent runs the tool as soon
// as it gets the answer), and keep the audit log honest when the hook was answered `block` because
// no decision came in time. src/vscode/hook-bridge.ts passes the engine and the log.
import crypto from 'node:crypto';
import { AGENT_NAMES, agentScopedSession, type AgentId } from '../../engine/agents/types';
import { IDENTIFIER, MAX_ITEMS, inspectToolOutput } from '../../engine/agents/output';
import type { AuditEventInput } from '../../engine/audit';
import { redactArgs } from '../../engine/audit/events';
import { loadSecretRules, redactSecrets } from '../../engine/secrets';
import type { BridgeDecision, BridgeFinding } from './bridge-protocol';
import { BridgeAbort, type BridgeServerOptions, type DecideRequest, type InspectRequest, type RecordRequest } from './bridge-server';
import { errorMessage } from '../../engine/error-message';
import { hostBlock } from '../../engine/reasons';

/** The action as the extension's check API takes it (src/vscode/check-action.ts). */
export interface BridgedAction {
  readonly id: string;
  readonly type: string;
  readonly payload: Record<string, unknown>;
  readonly sessionId: string;
  readonly cwd?: string;
  /** The hook runs it in the OS sandbox if allowed (only ever a shell command). */
  readonly sandboxed?: boolean;
}

export interface BridgeServiceDeps {
  /** Decides and records the decision in the audit log; `executed()` records what an allowed action reads (throws if it cannot). */
  check(action: BridgedAction): Promise<{ result: BridgeDecision; executed(): Promise<void> }>;
  /** Appends one audit event (throws if it cannot). */
  append(event: AuditEventInput): Promise<void>;
  /** Where the approval dialog looks up who asks and when to give up. */
  readonly pending: PendingBridgeActions;
  readonly log: { error(message: string): void };
}

/** Bridged actions being decided, by action id (= the Tier 3 request id): who asks, and the signal that ends the wait. */
export class PendingBridgeActions {
  private readonly byId = new Map<string, { readonly agent: AgentId; readonly signal: AbortSignal }>();

  add(id: string, entry: { readonly agent: AgentId; readonly signal: AbortSignal }): () => void {
    this.byId.set(id, entry);
    return () => {
      if (this.byId.get(id) === entry) this.byId.delete(id);
    };
  }

  get(id: string): { readonly agent: AgentId; readonly requester: string; readonly signal: AbortSignal } | undefined {
    const e = this.byId.get(id);
    return e && { ...e, requester: AGENT_NAMES[e.agent] };
  }

  get size(): number {
    return this.byId.size;
  }
}

export function bridgeService(d: BridgeServiceDeps): Pick<BridgeServerOptions, 'decide' | 'record' | 'inspect'> {
  /** The hook was answered `block` without the engine's verdict: the audit log says so, whatever the engine decides later. */
  const recordUnanswered = async (action: BridgedAction, signal: AbortSignal, engineDecision?: string) => {
    const reason = errorMessage(signal.reason);
    const rule = signal.reason instanceof BridgeAbort ? signal.reason.rule : 'bridge.aborted';
    try {
      await d.append({
        event: 'ACTION_BLOCKED',
        session: action.sessionId,
        action_type: action.type,
        details: { action_id: action.id, tier: 0, rules: [rule], reason, ...(engineDecision ? { engine_decision: engineDecision } : {}) },
      });
    } catch (e) {
      d.log.error(`hook bridge: could not record that ${action.type} was denied for lack of a timely decision: ${errorMessage(e)}`);
    }
  };

  return {
    async decide(req: DecideRequest, signal: AbortSignal): Promise<BridgeDecision> {
      const a = req.action;
      const action: BridgedAction = {
        id: `${a.id ?? req.agent}#${crypto.randomBytes(4).toString('hex')}`,
        type: a.type,
        payload: a.payload as Record<string, unknown>,
        sessionId: agentScopedSession(req.agent, a.sessionId),
        ...(a.cwd !== undefined ? { cwd: a.cwd } : {}),
        ...(a.sandboxed === true && a.type === 'execute_command' ? { sandboxed: true } : {}),
      };
      if (signal.aborted) {
        await recordUnanswered(action, signal);
        return blocked('bridge.deadline', 'no time was left to decide');
      }
      const release = d.pending.add(action.id, { agent: req.agent, signal });
      try {
        const { result: raw, executed } = await d.check(action);
        // The reason goes to another program and on to a model: no secret leaves in it.
        const secretRules = loadSecretRules();
        const result = {
          ...raw,
          reason: redactSecrets(secretRules, raw.reason).text,
          ...(raw.reasons ? { reasons: raw.reasons.map((r) => ({ ...r, message: redactSecrets(secretRules, r.message).text })) } : {}),
        };
        if (signal.aborted) {
          // The hook already got its block; only an engine verdict other than block needs correcting.
          if (result.decision !== 'block') await recordUnanswered(action, signal, result.decision);
          return result;
        }
        if (result.decision !== 'allow') return result;
        try {
          await executed();
        } catch (e) {
          const why = `what this action reads could not be recorded in its session (${errorMessage(e)}), so it cannot be allowed`;
          await d
            .append({
              event: 'ACTION_BLOCKED',
              session: action.sessionId,
              action_type: action.type,
              details: { action_id: action.id, tier: result.tier, rules: ['ifc.store_error'], reason: `Blocked: ${why}.` },
            })
            .catch(() => undefined);
          return blocked('ifc.store_error', why);
        }
        return result;
      } finally {
        release();
      }
    },

    async record(req: RecordRequest): Promise<void> {
      const details = withheldText(redactArgs(req.details), 0);
      const tool = typeof req.details.tool === 'string' && IDENTIFIER.test(req.details.tool) ? req.details.tool : 'tool';
      await d.append({
        event: 'ACTION_EXECUTED',
        session: agentScopedSession(req.agent, req.sessionId),
        action_type: tool,
        details: { agent: req.agent, inspected_output: details },
      });
    },

    async inspect(req: InspectRequest): Promise<readonly BridgeFinding[]> {
      const { findings, event } = inspectToolOutput(req);
      await d.append(event);
      return findings;
    },
  };
}

function blocked(rule: string, why: string): BridgeDecision {
  return hostBlock(rule, 'error', why);
}

/**
 * Keeps numbers, booleans and identifier-like strings; any other text (a piece of the tool's output
 * the hook should not have sent) is replaced by its length, so the log never holds output text.
 */
function withheldText(v: unknown, depth: number): unknown {
  if (v === null || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return v;
  if (typeof v === 'string') return IDENTIFIER.test(v) ? v : `[text withheld: ${v.length} characters]`;
  if (depth >= 4) return '[withheld: nested too deep]';
  if (Array.isArray(v)) {
    const kept = v.slice(0, MAX_ITEMS).map((x) => withheldText(x, depth + 1));
    return v.length > MAX_ITEMS ? [...kept, `[${v.length - MAX_ITEMS} more items withheld]`] : kept;
  }
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v).slice(0, MAX_ITEMS))
      out[IDENTIFIER.test(k) ? k : `[key withheld: ${k.length} characters]`] = withheldText(x, depth + 1);
    return out;
  }
  return `[withheld: ${typeof v}]`;
}
