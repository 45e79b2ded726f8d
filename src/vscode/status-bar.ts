// Status bar: the active policy and how Tier 1 runs, e.g. "$(shield) Bulwark: default · heuristics only",
// with "$(warning) no sandbox" when commands cannot run in an OS sandbox here.
// Clicking it runs "Bulwark: Show Status" (everything the tooltip says, in a dialog).
import * as vscode from 'vscode';
import { probeSandbox, type SandboxStatus } from '../node/sandbox/probe';
import type { EngineHost, HostStatus } from './engine-host';
import { agentHookStatusLines } from './install-hooks';
import { errorMessage } from '../engine/error-message';

export const SHOW_STATUS_COMMAND = 'bulwark.showStatus';

export function statusText(s: HostStatus, sandbox?: SandboxStatus): string {
  return `$(shield) Bulwark: ${s.policyError ? 'policy invalid' : s.policyLabel} · ${s.tier1}${sandbox && !sandbox.available ? ' · $(warning) no sandbox' : ''}`;
}

/** The sandbox in one line (undefined while it is being checked). */
export function sandboxLine(sandbox: SandboxStatus | undefined): string {
  if (!sandbox) return 'Sandbox: being checked.';
  if (sandbox.available)
    return `Sandbox: ${sandbox.mechanism}${sandbox.version ? ` ${sandbox.version}` : ''}; agent commands (bulwark_run_command) run inside it.`;
  return `Sandbox: NONE — ${sandbox.reason ?? 'no OS sandbox'}.${sandbox.fix ? ` To fix: ${sandbox.fix}.` : ''} Run "Bulwark: Doctor" for details.`;
}

/** Every part of the status, one line each (tooltip and the Show Status dialog). */
export function statusLines(s: HostStatus, sandbox?: SandboxStatus): string[] {
  const c = s.settings;
  return [
    s.policyError
      ? `Policy: INVALID — every action other than a read is blocked until it is fixed: ${s.policyError}`
      : `Policy (Tier 0): ${s.policyLabel}, tightened by any workspace .bulwark/policy.yaml.`,
    `IFC: ${c.ifcPolicy}${c.ifcMode ? ` (mode ${c.ifcMode})` : ''}.`,
    s.tier1Detail,
    s.tier2,
    `Tier 3: you are asked in a dialog; no answer in ${c.tier3.timeoutSeconds} s denies; at most ${c.tier3.maxPerHour} requests an hour.`,
    sandboxLine(sandbox),
    `State: ${s.stateDir ?? 'in memory only'}.`,
    ...s.problems.map((p) => `${p.severity === 'error' ? 'Error' : 'Warning'}: ${p.message}`),
  ];
}

export function registerStatusBar(context: vscode.ExtensionContext, host: EngineHost): void {
  const item = vscode.window.createStatusBarItem('bulwark.status', vscode.StatusBarAlignment.Left, 100);
  item.name = 'Bulwark';
  item.command = SHOW_STATUS_COMMAND;
  let sandbox: SandboxStatus | undefined;
  const update = () => {
    const s = host.status();
    item.text = statusText(s, sandbox);
    const md = new vscode.MarkdownString(undefined, true);
    md.isTrusted = false;
    md.appendMarkdown('**Bulwark** decides every agent action before it runs.\n\n');
    for (const line of statusLines(s, sandbox)) md.appendText(`• ${line}\n`);
    md.appendMarkdown('\n\nClick for details.');
    item.tooltip = md;
    item.backgroundColor =
      s.policyError || s.problems.some((p) => p.severity === 'error')
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : sandbox && !sandbox.available
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
  };
  update();
  // Off the activation path: the check starts bubblewrap once (cached for the process).
  void probeSandbox().then(
    (st) => {
      sandbox = st;
      update();
    },
    (e: unknown) => {
      sandbox = { available: false, mechanism: 'none', reason: `the sandbox check failed (${errorMessage(e)})`, enforces: [] };
      update();
    },
  );
  item.show();
  context.subscriptions.push(
    item,
    host.onDidChange(update),
    vscode.commands.registerCommand(SHOW_STATUS_COMMAND, async (): Promise<void> => {
      update();
      const s = host.status();
      const detail = [statusLines(s, sandbox).join('\n\n'), agentHookStatusLines().join('\n')].join('\n\n');
      await vscode.window.showInformationMessage(statusText(s, sandbox).replace('$(shield) ', '').replace('$(warning) ', ''), {
        modal: true,
        detail,
      });
    }),
  );
}
