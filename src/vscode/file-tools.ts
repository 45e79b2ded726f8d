// The agent's file tools as language-model tools: `bulwark_read_file` (secrets redacted, flagged as
// not authoritative) and `bulwark_apply_patch` (dry run shown as the confirmation, then an
// all-or-nothing write). Every call goes through Check Action's decision + audit path first; what
// the tool then did (before/after SHA-256 per file, or the refusing rule ids) is appended to the
// audit log as ACTION_EXECUTED / ACTION_FAILED. The checks themselves live in src/engine/patch and
// src/node/file-tools.ts; nothing here decides.
import * as vscode from 'vscode';
import crypto from 'node:crypto';
import { executionEvent } from '../engine/audit/events';
import { applyPatch, readFileForPrompt, type FileToolsOptions, type PatchFailure, type PatchResult } from '../node/file-tools';
import { checkActionToRun, type CheckActionResult } from './check-action';
import type { EngineHost } from './engine-host';
import type { AuditHost } from './audit-host';
import { errorMessage } from '../engine/error-message';

export const READ_FILE_TOOL = 'bulwark_read_file';
export const APPLY_PATCH_TOOL = 'bulwark_apply_patch';
/** Session id of the tools' actions (IFC taint and the audit log group them under it). */
const SESSION = 'bulwark.fileTools';
/** How long a dry run's hashes wait for the real run. */
const DRY_RUN_TTL_MS = 10 * 60 * 1000;

interface ReadInput {
  path?: unknown;
}
interface PatchInput {
  edits?: unknown;
  expected_sha256?: unknown;
}

export function registerFileTools(context: vscode.ExtensionContext, host: EngineHost, audit: AuditHost): void {
  const options = (): FileToolsOptions => ({
    workspaceRoots: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
    // The engine host's store (one owner per state folder): a store that failed to open throws with its reason.
    store: host.stateStore(),
  });
  const dryRuns = new Map<string, { hashes: Record<string, string | null>; at: number }>();

  /** Records what the tool did after an allowed decision. Throws when the log cannot be written. */
  const record = async (id: string, actionType: string, ok: boolean, details: Record<string, unknown>, error?: string): Promise<void> => {
    const log = await audit.open();
    await log.append(
      executionEvent({ id, sessionId: SESSION }, { session: SESSION, actionType, ok, details, ...(error ? { error } : {}) }),
    );
  };

  context.subscriptions.push(
    vscode.lm.registerTool<ReadInput>(READ_FILE_TOOL, {
      invoke: async (opts) => {
        const p = opts.input?.path;
        const id = crypto.randomUUID();
        const { result: decision, executed } = await checkActionToRun(
          host,
          { id, type: 'read_file', payload: { path: p }, sessionId: SESSION },
          {},
          audit,
        );
        if (decision.decision !== 'allow') return textResult(blocked('read', decision));
        const r = readFileForPrompt(p, options());
        if (r.ok) {
          // What was read now taints the session (IFC): if that cannot be recorded, the text is withheld.
          try {
            await executed();
          } catch (e) {
            return textResult(
              JSON.stringify({
                ok: false,
                rules: ['ifc.record_failed'],
                reason: `Refused: the session's data-flow state could not be recorded (${errorMessage(e)}), so the file is not returned.`,
              }),
            );
          }
        }
        try {
          if (r.ok)
            await record(id, 'read_file', true, {
              path: r.canonical_path,
              sha256: r.sha256,
              redacted: r.redacted,
              findings: r.findings.map((f) => f.rule),
              content_safety: r.content_safety,
            });
          else await record(id, 'read_file', false, { rules: [...r.rules] }, r.reason);
        } catch (e) {
          return textResult(
            JSON.stringify({
              ok: false,
              rules: ['audit.write_failed'],
              reason: `Refused: the audit log could not be written (${errorMessage(e)}), so the file is not returned.`,
            }),
          );
        }
        return textResult(JSON.stringify(r));
      },
    }),
  );

  context.subscriptions.push(
    vscode.lm.registerTool<PatchInput>(APPLY_PATCH_TOOL, {
      prepareInvocation: (opts) => {
        const dry = applyPatch(opts.input?.edits, { ...options(), dryRun: true });
        if (!dry.ok) return { invocationMessage: `Bulwark refuses this patch: ${dry.reason}` };
        const now = Date.now();
        for (const [k, v] of dryRuns) if (now - v.at > DRY_RUN_TTL_MS) dryRuns.delete(k);
        dryRuns.set(inputKey(opts.input), { hashes: hashesOf(dry), at: now });
        const message = new vscode.MarkdownString();
        message.appendMarkdown(
          `Bulwark checked this patch (dry run). Applying it writes ${dry.files.length} file(s) atomically, all or nothing:\n\n`,
        );
        message.appendMarkdown(codeBlock(dry.summary));
        return {
          invocationMessage: `Applying a patch to ${dry.files.length} file(s)`,
          confirmationMessages: { title: `Apply patch to ${dry.files.length} file(s)?`, message },
        };
      },
      invoke: async (opts, token) => {
        const input = opts.input ?? {};
        const id = crypto.randomUUID();
        const edits = Array.isArray(input.edits) ? (input.edits as unknown[]) : [];
        const paths = [
          ...new Set(edits.flatMap((e) => (typeof (e as { path?: unknown })?.path === 'string' ? [(e as { path: string }).path] : []))),
        ];
        const { result: decision } = await checkActionToRun(
          host,
          { id, type: 'write_file', payload: { paths, edits: input.edits ?? null }, sessionId: SESSION },
          {},
          audit,
        );
        if (decision.decision !== 'allow') return textResult(blocked('patch', decision));
        if (token.isCancellationRequested)
          return textResult(
            JSON.stringify({ ok: false, rules: ['patch.cancelled'], reason: 'Refused: the call was cancelled; nothing was written.' }),
          );
        const key = inputKey(input);
        const dry = dryRuns.get(key);
        dryRuns.delete(key);
        const expected = dry && Date.now() - dry.at <= DRY_RUN_TTL_MS ? dry.hashes : expectedFromInput(input.expected_sha256);
        const r = applyPatch(input.edits, { ...options(), dryRun: false, ...(expected ? { expectedSha256: expected } : {}) });
        try {
          if (r.ok)
            await record(id, 'write_file', true, {
              files: r.files.map((f) => ({
                path: f.canonical_path,
                created: f.created,
                before_sha256: f.before_sha256,
                after_sha256: f.after_sha256,
              })),
            });
          else
            await record(
              id,
              'write_file',
              false,
              {
                rules: [...r.rules],
                ...(r.restored ? { restored: [...r.restored] } : {}),
                ...(r.restore_failed ? { restore_failed: [...r.restore_failed] } : {}),
              },
              r.reason,
            );
        } catch (e) {
          return textResult(
            JSON.stringify({ ...r, audit_error: `the patch result could not be written to the audit log (${errorMessage(e)})` }),
          );
        }
        return textResult(JSON.stringify(r.ok ? { ok: true, files: r.files, summary: r.summary } : r));
      },
    }),
  );
}

const textResult = (s: string): vscode.LanguageModelToolResult => new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(s)]);
const inputKey = (input: unknown): string => JSON.stringify(input ?? null);

function blocked(what: string, d: CheckActionResult): string {
  return JSON.stringify({
    ok: false,
    decision: d.decision,
    tier: d.tier,
    rules: [...d.rules],
    reason: `Bulwark did not allow this ${what}: ${d.reason}`,
  });
}

function hashesOf(r: PatchResult | PatchFailure): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  if (r.ok) for (const f of r.files) out[f.canonical_path] = f.before_sha256;
  return out;
}

/** `expected_sha256` from the agent: path → hex digest or null (file must not exist). */
function expectedFromInput(v: unknown): Record<string, string | null> | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const out: Record<string, string | null> = {};
  for (const [k, x] of Object.entries(v)) if (x === null || typeof x === 'string') out[k] = x;
  return out;
}

/** A fenced code block whose fence is longer than any backtick run in `text` (no Markdown escapes it). */
function codeBlock(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}diff\n${text}\n${fence}\n`;
}
