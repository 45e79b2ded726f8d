// `bulwark_run_command`, the agent's shell as a language-model tool: Check Action's decision and audit
// path first, then the command runs in the OS sandbox through the sandbox helper. Everything it does is
// in src/node/run-command.ts; here only VS Code's parts: the settings (user values only), the tool
// registration, the cancellation token and the dialog for running without a sandbox.
import * as vscode from 'vscode';
import crypto from 'node:crypto';
import {
  normalizeSandboxSettings,
  runCommandTool,
  unsandboxedApprovalText,
  type SandboxSettingKey,
  type SandboxSettings,
  type UnsandboxedApprovalRequest,
} from '../node/run-command';
import { probeSandbox } from '../node/sandbox/probe';
import { loadSecretRules, redactSecrets } from '../engine/secrets';
import { checkActionToRun } from './check-action';
import type { EngineHost } from './engine-host';
import type { AuditHost } from './audit-host';

export const RUN_COMMAND_TOOL = 'bulwark_run_command';
/**
 * The same session as the file tools (src/vscode/file-tools.ts): what the read tool handed out taints
 * the commands that follow (IFC), as it would for one agent using both.
 */
const SESSION = 'bulwark.fileTools';
const RUN_UNSANDBOXED = 'Run Without Sandbox';

/** The bulwark.sandbox.* settings: user (global) values only, so a workspace cannot loosen them. */
export function sandboxSettings(): { settings: SandboxSettings; problems: string[] } {
  const config = vscode.workspace.getConfiguration('bulwark');
  return normalizeSandboxSettings((key: SandboxSettingKey) => {
    const i = config.inspect(key);
    return i?.globalValue ?? i?.defaultValue;
  });
}

/** The file-scheme workspace folders (where commands may write). */
export function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

export function registerRunCommand(
  context: vscode.ExtensionContext,
  host: EngineHost,
  audit: AuditHost,
  log: vscode.LogOutputChannel,
): void {
  let lastProblems = '';
  context.subscriptions.push(
    vscode.lm.registerTool<unknown>(RUN_COMMAND_TOOL, {
      prepareInvocation: (opts) => {
        const c = (opts.input as { command?: unknown } | undefined)?.command;
        // Shown in the chat view: the command's secrets are not.
        const shown = typeof c === 'string' ? redactSecrets(loadSecretRules(), c).text : '(no command)';
        const text = shown.length > 120 ? `${shown.slice(0, 117)}...` : shown;
        return { invocationMessage: `Running in Bulwark's sandbox: ${text}` };
      },
      invoke: async (opts, token) => {
        const controller = new AbortController();
        const cancel = token.onCancellationRequested(() => controller.abort());
        const { settings, problems } = sandboxSettings();
        const joined = problems.join('\n');
        if (joined !== lastProblems) {
          for (const p of problems) log.warn(p);
          lastProblems = joined;
        }
        try {
          const answer = await runCommandTool(
            opts.input,
            {
              workspaceRoots: workspaceRoots(),
              settings,
              hostEnv: process.env,
              sessionId: SESSION,
              decide: ({ sandboxed, ...action }) => checkActionToRun(host, action, { sandboxed }, audit),
              sandboxPlan: async (roots) => (await host.engine()).sandboxPlan(roots),
              probe: () => probeSandbox(),
              approveUnsandboxed: (r) => askUnsandboxed(r, host.status().settings.tier3.timeoutSeconds, log),
              helper: host.sandboxHelper(),
              record: async (event) => {
                await (await audit.open()).append(event);
              },
              newId: () => crypto.randomUUID(),
            },
            controller.signal,
          );
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(JSON.stringify(answer))]);
        } finally {
          cancel.dispose();
        }
      },
    }),
  );
}

/** The modal for one command without a sandbox; no answer within the Tier 3 timeout denies. */
async function askUnsandboxed(r: UnsandboxedApprovalRequest, timeoutSeconds: number, log: vscode.LogOutputChannel): Promise<boolean> {
  const { title, detail } = unsandboxedApprovalText(r);
  log.info('asking to run a command without a sandbox');
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      resolve(undefined);
    }, timeoutSeconds * 1000);
  });
  const answer = Promise.resolve(vscode.window.showWarningMessage(title, { modal: true, detail }, RUN_UNSANDBOXED)).then((choice) => {
    if (timedOut && choice === RUN_UNSANDBOXED)
      void vscode.window.showWarningMessage('Bulwark: your approval came after the request had timed out, so the command was not run.');
    return choice;
  });
  try {
    return (await Promise.race([answer, timeout])) === RUN_UNSANDBOXED;
  } finally {
    clearTimeout(timer);
  }
}
