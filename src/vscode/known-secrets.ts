// The user's known secrets, masked by value in every output of this extension host: loaded from the
// workspace folders' .env files, the host's secret-named variables, the credential files in the home
// directory and Bulwark's own SecretStorage (the Tier 2 API key), and re-read when a .env file changes.
import os from 'node:os';
import * as vscode from 'vscode';
import { installKnownSecrets } from '../node/known-secrets';
import { TIER2_API_KEY_SECRET } from './engine-host';

export function registerKnownSecrets(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const roots = () => (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  const { known: loader, report } = installKnownSecrets({ workspaceRoots: roots(), home: os.homedir(), env: process.env });
  const count = report.files.reduce((n, f) => n + f.values, report.environment);
  log.info(`known secrets: ${count} values masked by value (${report.files.length} files, ${report.environment} environment variables)`);
  for (const e of report.errors) log.warn(`known secrets: ${e}`);
  const addStoredKey = () => {
    void context.secrets.get(TIER2_API_KEY_SECRET).then(
      (k) => {
        if (k) loader.values.add(k, 'known-value.secret-storage');
      },
      () => undefined,
    );
  };
  addStoredKey();

  const refresh = () => {
    for (const e of loader.refresh().errors) log.warn(`known secrets: ${e}`);
  };
  const watcher = vscode.workspace.createFileSystemWatcher('**/{.env,.env.*,.envrc,.dev.vars}');
  context.subscriptions.push(
    watcher,
    watcher.onDidChange(refresh),
    watcher.onDidCreate(refresh),
    // New folders: their .env files are read into the same registry (values found so far stay masked).
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      loader.addWorkspaceRoots(roots());
      refresh();
    }),
    context.secrets.onDidChange((e) => {
      if (e.key === TIER2_API_KEY_SECRET) addStoredKey();
    }),
  );
}
