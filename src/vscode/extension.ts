// Composition root: one register* call per surface, no policy logic here.
import * as vscode from 'vscode';
import { EngineHost } from './engine-host';
import { registerExplainProtection } from './explain-protection';
import { registerCheckAction } from './check-action';
import { registerTier2KeyCommands, storeTier2ApiKey } from './tier2-key';
import { registerStatusBar } from './status-bar';
import { registerPolicyDiagnostics } from './policy-diagnostics';
import { registerDownloadModel } from './download-model';
import { AuditHost } from './audit-host';
import { registerAuditPanel } from './audit-panel';
import { registerVerifyAudit } from './verify-audit';
import { registerFileTools } from './file-tools';
import { registerHookBridge } from './hook-bridge';
import { registerInstallHooks } from './install-hooks';
import { registerRunCommand } from './run-command';
import { registerSandboxTerminal } from './sandbox-terminal';
import { registerDoctor } from './doctor';
import { registerKnownSecrets } from './known-secrets';
import { stateDirSelfPaths } from '../node/hooks/state-dir';

/** Exported only when VS Code runs the extension-host tests (ExtensionMode.Test); nothing otherwise. */
export interface BulwarkTestApi {
  /** Stores (or with undefined, deletes) the Tier 2 API key without the input box. */
  setTier2ApiKey(key: string | undefined): Promise<void>;
}

export function activate(context: vscode.ExtensionContext): BulwarkTestApi | undefined {
  const log = vscode.window.createOutputChannel('Bulwark', { log: true });
  const audit = new AuditHost(context, log);
  const host = new EngineHost(context, log, () => [...audit.selfPaths(), ...stateDirSelfPaths()]);
  context.subscriptions.push(log, host, audit);
  registerKnownSecrets(context, log);
  registerExplainProtection(context, host);
  registerCheckAction(context, host, audit);
  registerTier2KeyCommands(context, host);
  registerStatusBar(context, host);
  registerPolicyDiagnostics(context);
  registerDownloadModel(context, log);
  registerAuditPanel(context, audit);
  registerVerifyAudit(context, audit);
  registerFileTools(context, host, audit);
  registerHookBridge(context, host, audit, log);
  registerInstallHooks(context, host, log);
  registerRunCommand(context, host, audit, log);
  registerSandboxTerminal(context, host);
  registerDoctor(context, host);
  if (context.extensionMode === vscode.ExtensionMode.Test) {
    return { setTier2ApiKey: (key) => storeTier2ApiKey(context, host, key) };
  }
  return undefined;
}

export function deactivate(): void {}
