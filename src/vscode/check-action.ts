// "Bulwark: Check Action…" — the public check API. Called with an action object it returns the
// engine's decision; from the command palette it asks for the action as JSON and shows the decision.
// It never executes the action.
import * as vscode from 'vscode';
import type { ActionRequest, CheckResult, Reason } from '../engine';
import { hostBlock } from '../engine/reasons';
import type { EngineHost } from './engine-host';
import type { AuditHost } from './audit-host';
import { errorMessage } from '../engine/error-message';

export const CHECK_ACTION_COMMAND = 'bulwark.checkAction';

/** Session id used when the caller names none (IFC taint is kept per session). */
export const DEFAULT_SESSION = 'bulwark.checkAction';
const PALETTE_SESSION = 'bulwark.checkAction (command palette)';

/** What `executeCommand('bulwark.checkAction', action)` resolves to. */
export interface CheckActionResult {
  readonly decision: CheckResult['decision'];
  readonly tier: CheckResult['tier'];
  readonly minTier: CheckResult['minTier'];
  readonly level: CheckResult['level'];
  readonly rules: readonly string[];
  readonly reason: string;
  /** The structured reasons `reason` was rendered from. */
  readonly reasons: readonly Reason[];
  readonly confidence?: number;
  /** Protected files the allow rests on the OS sandbox hiding (only for a sandboxed command). */
  readonly sandboxHides?: CheckResult['sandboxHides'];
}

export function registerCheckAction(context: vscode.ExtensionContext, host: EngineHost, audit: AuditHost): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(CHECK_ACTION_COMMAND, async (arg?: unknown): Promise<CheckActionResult | undefined> => {
      if (arg === undefined) return checkFromPalette(host, audit);
      return checkAction(host, arg, {}, audit);
    }),
  );
}

/**
 * Checks one action given as `{ type, payload, sessionId?, cwd? }` and records the decision in the
 * audit log. Never throws: a failure is a block, and so is a decision that could not be recorded.
 */
export async function checkAction(
  host: EngineHost,
  arg: unknown,
  defaults: { sessionId?: string; cwd?: string; sandboxed?: boolean } = {},
  audit?: AuditHost,
): Promise<CheckActionResult> {
  return (await checkAndRecord(host, arg, defaults, audit)).result;
}

/**
 * For a tool that runs the action itself after an allow: `executed()` then records what the action
 * read in its session (IFC taint), and throws if that cannot be recorded (the caller must not hand
 * out what it read).
 */
export async function checkActionToRun(
  host: EngineHost,
  arg: unknown,
  defaults: { sessionId?: string; cwd?: string; sandboxed?: boolean },
  audit: AuditHost,
): Promise<{ result: CheckActionResult; executed: () => Promise<void> }> {
  const { result, raw } = await checkAndRecord(host, arg, defaults, audit);
  return {
    result,
    executed: async () => {
      if (result.decision === 'allow' && raw) (await host.engine()).recordExecuted(raw);
    },
  };
}

async function checkAndRecord(
  host: EngineHost,
  arg: unknown,
  defaults: { sessionId?: string; cwd?: string; sandboxed?: boolean },
  audit?: AuditHost,
): Promise<{ result: CheckActionResult; raw?: CheckResult }> {
  const decided = await decide(host, arg, defaults);
  if (!audit) return decided;
  const { result, raw } = decided;
  const a = typeof arg === 'object' && arg !== null && !Array.isArray(arg) ? (arg as Record<string, unknown>) : {};
  const session = typeof a.sessionId === 'string' && a.sessionId ? a.sessionId : (defaults.sessionId ?? DEFAULT_SESSION);
  const cwd = typeof a.cwd === 'string' ? a.cwd : defaults.cwd;
  try {
    await (
      await audit.open()
    ).appendDecision(raw ?? { ...result, rules: [...result.rules], sessionId: session }, {
      session,
      actionType: typeof a.type === 'string' ? a.type : '(invalid)',
      payload: a.payload ?? null,
      ...(cwd ? { cwd } : {}),
    });
  } catch (e) {
    return {
      result: failed('audit.write_failed', `the audit log could not be written (${errorMessage(e)}), so the action cannot be allowed`),
    };
  }
  return decided;
}

async function decide(
  host: EngineHost,
  arg: unknown,
  defaults: { sessionId?: string; cwd?: string; sandboxed?: boolean },
): Promise<{ result: CheckActionResult; raw?: CheckResult }> {
  if (typeof arg !== 'object' || arg === null || Array.isArray(arg)) {
    return { result: failed('action.invalid', 'the action must be an object { type, payload, sessionId?, cwd? }') };
  }
  const a = arg as Record<string, unknown>;
  const action = {
    ...(typeof a.id === 'string' ? { id: a.id } : {}),
    type: a.type,
    payload: a.payload,
    sessionId: typeof a.sessionId === 'string' && a.sessionId ? a.sessionId : (defaults.sessionId ?? DEFAULT_SESSION),
    ...(a.cwd !== undefined ? { cwd: a.cwd } : defaults.cwd !== undefined ? { cwd: defaults.cwd } : {}),
    // Only Bulwark's own surfaces say a command runs in the OS sandbox; a caller's `sandboxed` field is ignored.
    ...(defaults.sandboxed ? { sandboxed: true } : {}),
  } as ActionRequest; // the engine validates the fields and blocks what is malformed
  let r: CheckResult;
  try {
    r = await (await host.engine()).check(action);
  } catch (e) {
    return { result: failed('engine.error', `the engine could not be set up (${errorMessage(e)}), so the action cannot be allowed`) };
  }
  return {
    raw: r,
    result: {
      decision: r.decision,
      tier: r.tier,
      minTier: r.minTier,
      level: r.level,
      rules: [...r.rules],
      reason: r.reason,
      reasons: r.reasons,
      ...(r.confidence !== undefined ? { confidence: r.confidence } : {}),
      ...(r.sandboxHides?.length ? { sandboxHides: r.sandboxHides } : {}),
    },
  };
}

function failed(rule: string, why: string): CheckActionResult {
  return hostBlock(rule, rule === 'action.invalid' ? 'policy' : 'error', why);
}

async function checkFromPalette(host: EngineHost, audit: AuditHost): Promise<CheckActionResult | undefined> {
  const text = await vscode.window.showInputBox({
    title: 'Bulwark: Check Action',
    prompt: 'The action as JSON: {"type": …, "payload": {…}}. Bulwark only decides; nothing is executed.',
    placeHolder: '{"type":"read_file","payload":{"path":"~/.ssh/id_rsa"}}',
    ignoreFocusOut: true,
    validateInput: (v) => {
      if (!v.trim()) return undefined;
      try {
        const parsed: unknown = JSON.parse(v);
        return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? undefined : 'The action must be a JSON object.';
      } catch (e) {
        return `Not valid JSON: ${errorMessage(e)}`;
      }
    },
  });
  if (text === undefined || !text.trim()) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    void vscode.window.showErrorMessage(`Bulwark: the action is not valid JSON: ${errorMessage(e)}`);
    return undefined;
  }
  const root = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
  const r = await checkAction(host, parsed, { sessionId: PALETTE_SESSION, cwd: root }, audit);
  const type = typeof (parsed as { type?: unknown }).type === 'string' ? (parsed as { type: string }).type : 'action';
  const where = r.decision === 'escalate' ? `needs Tier ${r.tier}` : `at Tier ${r.tier}`;
  const rules = r.rules.length ? ` [rules: ${r.rules.join(', ')}]` : '';
  const message = `Bulwark: ${type} — ${r.decision.toUpperCase()} ${where}. ${r.reason}${rules}`;
  if (r.decision === 'allow') void vscode.window.showInformationMessage(message);
  else void vscode.window.showWarningMessage(message);
  return r;
}
