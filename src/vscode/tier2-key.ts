// "Bulwark: Set Tier 2 API Key" / "Bulwark: Clear Tier 2 API Key": the OpenAI-compatible evaluator's
// key lives in VS Code's SecretStorage (the OS keychain), never in settings. The commands take no
// arguments, so nothing (an agent running commands included) can set the key without the prompt.
import * as vscode from 'vscode';
import { TIER2_API_KEY_SECRET, type EngineHost } from './engine-host';

export const SET_TIER2_KEY_COMMAND = 'bulwark.setTier2ApiKey';
export const CLEAR_TIER2_KEY_COMMAND = 'bulwark.clearTier2ApiKey';

/** Stores (or, with an empty key, deletes) the key and rebuilds the engine with it. */
export async function storeTier2ApiKey(context: vscode.ExtensionContext, host: EngineHost, key: string | undefined): Promise<void> {
  if (key) await context.secrets.store(TIER2_API_KEY_SECRET, key);
  else await context.secrets.delete(TIER2_API_KEY_SECRET);
  host.invalidate();
}

export function registerTier2KeyCommands(context: vscode.ExtensionContext, host: EngineHost): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(SET_TIER2_KEY_COMMAND, async (): Promise<void> => {
      const key = await vscode.window.showInputBox({
        title: 'Bulwark: Tier 2 API Key',
        prompt:
          "API key of the OpenAI-compatible Tier 2 evaluator. It is kept in VS Code's secret storage, never in settings. (A keyless local server: any placeholder.)",
        password: true,
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() ? undefined : 'Enter a key (use "Bulwark: Clear Tier 2 API Key" to remove it).'),
      });
      if (key === undefined || !key.trim()) return;
      await storeTier2ApiKey(context, host, key.trim());
      const backend = vscode.workspace.getConfiguration('bulwark').inspect<string>('tier2.backend')?.globalValue ?? 'none';
      const hint = backend === 'openai' ? '' : ` It is used once bulwark.tier2.backend is "openai" (now "${backend}").`;
      void vscode.window.showInformationMessage(`Bulwark: the Tier 2 API key is stored in VS Code's secret storage.${hint}`);
    }),
    vscode.commands.registerCommand(CLEAR_TIER2_KEY_COMMAND, async (): Promise<void> => {
      await storeTier2ApiKey(context, host, undefined);
      void vscode.window.showInformationMessage(
        'Bulwark: the Tier 2 API key is removed; the OpenAI-compatible evaluator is not configured until a key is set again.',
      );
    }),
  );
}
