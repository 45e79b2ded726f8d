// Composition root: one register* call per surface, no policy logic here.
import * as vscode from 'vscode';
import { EngineHost } from './engine-host';
import { registerExplainProtection } from './explain-protection';

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Bulwark', { log: true });
  const host = new EngineHost(context, log);
  context.subscriptions.push(log, host);
  registerExplainProtection(context, host);
}

export function deactivate(): void {}
