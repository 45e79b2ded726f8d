// "Bulwark: Explain Protection of Current File": level, rule and reason for the active editor's file.
import * as vscode from 'vscode';
import type { PathExplanation } from '../engine';
import type { EngineHost } from './engine-host';

export const EXPLAIN_PROTECTION_COMMAND = 'bulwark.explainProtection';

export function registerExplainProtection(context: vscode.ExtensionContext, host: EngineHost): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(EXPLAIN_PROTECTION_COMMAND, async (uri?: vscode.Uri): Promise<PathExplanation | undefined> => {
      const target = uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
      if (!target) {
        void vscode.window.showWarningMessage('Bulwark: no file is open in the editor; open a file and run "Explain Protection" again.');
        return undefined;
      }
      if (target.scheme !== 'file') {
        void vscode.window.showWarningMessage(
          `Bulwark: ${target.toString(true)} is not a file on disk (scheme \`${target.scheme}\`), so no file protection applies to it.`,
        );
        return undefined;
      }
      const explanation = (await host.engine()).explainPath(target.fsPath);
      const name = vscode.workspace.asRelativePath(target, false);
      const rule = explanation.rule ? ` (rule ${explanation.rule})` : '';
      void vscode.window.showInformationMessage(`Bulwark: ${name} — ${explanation.level}${rule}: ${explanation.reason}`);
      return explanation;
    }),
  );
}
