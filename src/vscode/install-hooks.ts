// "Bulwark: Install Agent Hooks" / "Bulwark: Uninstall Agent Hooks": the editor face of
// `bulwark hooks install|uninstall` (src/node/hooks/install.ts decides everything). A pick of the
// clients (those found on this machine pre-selected) and of the scope, then a modal that lists every
// file it will write and every entry; nothing is written without "Install". The wrapper runs this
// extension host's own executable (Electron acting as Node) and this extension's dist/cli.js.
// Commands take no arguments: whoever calls them (an agent's tool included), the user confirms.
import * as vscode from 'vscode';
import os from 'node:os';
import path from 'node:path';
import { AGENT_IDS, AGENT_NAMES, type AgentId } from '../engine/agents/types';
import {
  applyPlan,
  clientTimeoutForApprovals,
  describePlan,
  describeStatus,
  detectClients,
  hooksStatus,
  planChangesAnything,
  planInstall,
  planUninstall,
  readManifest,
  repairWrapper,
  type HookScope,
  type HooksContext,
  type HooksPlan,
} from '../node/hooks/install';
import { bulwarkStateDir } from '../node/hooks/state-dir';
import type { EngineHost } from './engine-host';
import { errorMessage } from '../engine/error-message';

export const INSTALL_HOOKS_COMMAND = 'bulwark.installAgentHooks';
export const UNINSTALL_HOOKS_COMMAND = 'bulwark.uninstallAgentHooks';

function hooksContext(): HooksContext {
  return {
    home: os.homedir(),
    stateDir: bulwarkStateDir(),
    env: process.env,
    platform: process.platform === 'win32' ? 'win32' : process.platform === 'darwin' ? 'darwin' : 'linux',
  };
}

export function registerInstallHooks(context: vscode.ExtensionContext, host: EngineHost, log: vscode.LogOutputChannel): void {
  // After an update of this extension the wrapper may still name the old dist/cli.js (then every
  // hook call is denied): point it at this one. The clients' files are not touched.
  try {
    const repaired = repairWrapper({
      stateDir: bulwarkStateDir(),
      platform: hooksContext().platform,
      node: process.execPath,
      cli: path.join(context.extensionPath, 'dist', 'cli.js'),
    });
    if (repaired) log.info(`agent hooks: ${repaired}`);
  } catch (e) {
    log.warn(`agent hooks: the wrapper could not be checked: ${errorMessage(e)}`);
  }
  context.subscriptions.push(
    vscode.commands.registerCommand(INSTALL_HOOKS_COMMAND, () => guarded(log, () => install(context, host, log))),
    vscode.commands.registerCommand(UNINSTALL_HOOKS_COMMAND, () => guarded(log, () => uninstall(log))),
  );
}

async function guarded(log: vscode.LogOutputChannel, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (e) {
    const msg = errorMessage(e);
    log.error(`agent hooks: ${msg}`);
    void vscode.window.showErrorMessage(`Bulwark: ${msg}`);
  }
}

async function install(context: vscode.ExtensionContext, host: EngineHost, log: vscode.LogOutputChannel): Promise<void> {
  const ctx = hooksContext();
  const found = detectClients(ctx);
  const picked = await vscode.window.showQuickPick(
    AGENT_IDS.map((agent) => ({
      label: AGENT_NAMES[agent],
      description: found.includes(agent) ? 'found on this machine' : 'not found',
      picked: found.includes(agent),
      agent,
    })),
    {
      title: 'Bulwark: Install Agent Hooks (1/2)',
      placeHolder: 'Which agents should call Bulwark before every tool call?',
      canPickMany: true,
      ignoreFocusOut: true,
    },
  );
  if (!picked?.length) return;
  const scope = await pickScope();
  if (!scope) return;
  const timeoutSeconds = clientTimeoutForApprovals(host.status().settings.tier3.timeoutSeconds);
  const plan = planInstall({
    ...ctx,
    agents: picked.map((p) => p.agent),
    scope: scope.scope,
    ...(scope.workspace ? { workspace: scope.workspace } : {}),
    timeoutSeconds,
    node: process.execPath,
    cli: path.join(context.extensionPath, 'dist', 'cli.js'),
  });
  if (await confirmAndApply(plan, 'Install', `Hook timeout ${timeoutSeconds} s, so a Tier 3 approval can take its full time.`, log)) {
    void vscode.window.showInformationMessage(`Bulwark: agent hooks installed for ${picked.map((p) => p.label).join(', ')}.`, {
      modal: false,
    });
  }
}

async function pickScope(): Promise<{ scope: HookScope; workspace?: string } | undefined> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  const items: (vscode.QuickPickItem & { scope: HookScope; workspace?: string })[] = [
    { label: 'User', description: 'every project on this machine (files in your home folder)', scope: 'user' },
    ...folders.map((f) => ({
      label: `Workspace: ${f.name}`,
      description: `files inside ${f.uri.fsPath} (e.g. .github/hooks, .claude)`,
      scope: 'workspace' as const,
      workspace: f.uri.fsPath,
    })),
  ];
  return vscode.window.showQuickPick(items, {
    title: 'Bulwark: Install Agent Hooks (2/2)',
    placeHolder: 'Where should the hooks be installed?',
    ignoreFocusOut: true,
  });
}

async function uninstall(log: vscode.LogOutputChannel): Promise<void> {
  const ctx = hooksContext();
  const installed = AGENT_IDS.filter((a) => readManifest(ctx.stateDir).files.some((f) => f.additions.some((x) => x.client === a)));
  if (!installed.length) {
    void vscode.window.showInformationMessage('Bulwark: no agent hooks of Bulwark are installed.');
    return;
  }
  const picked = await vscode.window.showQuickPick(
    installed.map((agent: AgentId) => ({ label: AGENT_NAMES[agent], picked: true, agent })),
    {
      title: 'Bulwark: Uninstall Agent Hooks',
      placeHolder: "Remove Bulwark's hooks from which agents? (those agents then run tools unchecked)",
      canPickMany: true,
      ignoreFocusOut: true,
    },
  );
  if (!picked?.length) return;
  const plan = planUninstall({ ...ctx, agents: picked.map((p) => p.agent) });
  if (await confirmAndApply(plan, 'Uninstall', 'These agents will no longer be checked by Bulwark.', log)) {
    void vscode.window.showInformationMessage(`Bulwark: agent hooks removed for ${picked.map((p) => p.label).join(', ')}.`);
  }
}

/** The modal that lists exactly what will be written; applies the plan only on the confirming button. */
async function confirmAndApply(
  plan: HooksPlan,
  verb: 'Install' | 'Uninstall',
  note: string,
  log: vscode.LogOutputChannel,
): Promise<boolean> {
  const lines = describePlan(plan);
  if (!planChangesAnything(plan)) {
    void vscode.window.showInformationMessage(`Bulwark: nothing to ${verb.toLowerCase()}; the hooks are already as asked.`, {
      modal: true,
      detail: lines.join('\n'),
    });
    return false;
  }
  const detail = [
    `Bulwark will ${verb === 'Install' ? 'write' : 'change'} these files:`,
    '',
    ...lines,
    '',
    ...plan.warnings.map((w) => `Warning: ${w}`),
    ...plan.notes.map((n) => `Note: ${n}`),
    note,
  ].join('\n');
  const answer = await vscode.window.showWarningMessage(`Bulwark: ${verb} agent hooks?`, { modal: true, detail }, verb);
  if (answer !== verb) return false;
  const r = applyPlan(plan);
  log.info(
    `agent hooks ${verb.toLowerCase()}: ${r.written.length} file(s) written (${r.written.join(', ')}), ${r.deleted.length} removed (${r.deleted.join(', ')})`,
  );
  return true;
}

/** The guarded-clients summary for "Bulwark: Show Status". */
export function agentHookStatusLines(): string[] {
  try {
    const lines = describeStatus(hooksStatus(hooksContext()));
    return ['Agent hooks (Bulwark: Install Agent Hooks):', ...lines];
  } catch (e) {
    return [`Agent hooks: the status could not be read: ${errorMessage(e)}`];
  }
}
