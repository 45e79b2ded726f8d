// Owns the engine for the extension host and rebuilds it when workspace folders change.
import * as vscode from 'vscode';
import type { Engine } from '../engine';
import { createNodeEngine } from '../node/create-engine';

export class EngineHost implements vscode.Disposable {
  private current: Promise<Engine> | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly context: vscode.ExtensionContext, private readonly log: vscode.LogOutputChannel) {
    this.subscriptions.push(vscode.workspace.onDidChangeWorkspaceFolders(() => { this.current = undefined; }));
  }

  /** The engine for the current workspace folders; built lazily, off the activation path. */
  engine(): Promise<Engine> {
    this.current ??= this.build();
    return this.current;
  }

  private async build(): Promise<Engine> {
    const workspaceRoots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    const selfPaths = [this.context.globalStorageUri, this.context.storageUri, this.context.logUri].flatMap((u) => (u && u.scheme === 'file' ? [u.fsPath] : []));
    const { engine, shellError } = await createNodeEngine({ workspaceRoots, selfPaths });
    if (shellError) this.log.error(`shell grammar failed to load; every shell command will be blocked: ${shellError}`);
    this.log.info(`engine ready for ${workspaceRoots.length} workspace folder(s)`);
    return engine;
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
  }
}
