// The user's known secrets, masked by value in every output of this extension host: loaded from the
// workspace folders' .env files, the host's secret-named variables, the credential files in the home
// directory and Bulwark's own SecretStorage (the Tier 2 API key), and re-read when a .env file changes.
import os from 'node:os';
import * as vscode from 'vscode';
import { installKnownSecrets, type KnownSecrets } from '../node/known-secrets';
import { TIER2_API_KEY_SECRET } from './engine-host';

export function registerKnownSecrets(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const roots = () => (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  let loader = load();

  function load(previous?: KnownSecrets) {
    const { known, report } = installKnownSecrets({ workspaceRoots: roots(), home: os.homedir(), env: process.env }, previous?.values);
    const count = report.files.reduce((n, f) => n + f.values, report.environment);
    log.info(`known secrets: ${count} values masked by value (${report.files.length} files, ${report.environment} environment variables)`);
    for (const e of report.errors) log.warn(`known secrets: ${e}`);
    void context.secrets.get(TIER2_API_KEY_SECRET).then((k) => { if (k) known.values.add(k, 'known-value.secret-storage'); }, () => undefined);
    return known;
  }

  const refresh = () => { for (const e of loader.refresh().errors) log.warn(`known secrets: ${e}`); };
  const watcher = vscode.workspace.createFileSystemWatcher('**/{.env,.env.*,.envrc,.dev.vars}');
  context.subscriptions.push(
    watcher, watcher.onDidChange(refresh), watcher.onDidCreate(refresh),
    // New folders: read their .env files into the same registry (values found so far stay masked).
    vscode.workspace.onDidChangeWorkspaceFolders(() => { loader = load(loader); }),
    context.secrets.onDidChange((e) => {
      if (e.key === TIER2_API_KEY_SECRET) void context.secrets.get(TIER2_API_KEY_SECRET).then((k) => { if (k) loader.values.add(k, 'known-value.secret-storage'); }, () => undefined);
    }),
  );
}
