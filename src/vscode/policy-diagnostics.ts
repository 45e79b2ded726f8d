// Problems in policy files, shown where they are: the workspace's `.bulwark/policy.yaml` files, the
// Shield policy file named by `bulwark.policy` and the IFC policy file named by `bulwark.ifc.policy`
// (when those settings are paths). Validated with the engine's own parsers (the same errors the
// engine would block with) on open, on every edit, and when the file changes on disk.
import * as vscode from 'vscode';
import fs from 'node:fs';
import path from 'node:path';
import { parseShieldPolicy } from '../engine/shield/policy';
import { DataFileError } from '../engine/data-file';
import { IfcPolicyError, parseIfcPolicy } from '../engine/ifc';
import { errorMessage } from '../engine/error-message';

const SOURCE = 'Bulwark';
type Kind = 'shield' | 'ifc';

export function registerPolicyDiagnostics(context: vscode.ExtensionContext): vscode.DiagnosticCollection {
  const collection = vscode.languages.createDiagnosticCollection('bulwark-policy');

  /** Which parser applies to a file, if it is a policy file at all. */
  const kindOf = (uri: vscode.Uri): Kind | undefined => {
    if (uri.scheme !== 'file') return undefined;
    const p = path.normalize(uri.fsPath);
    const config = vscode.workspace.getConfiguration('bulwark');
    const setting = (key: string) => {
      const v = config.inspect<string>(key)?.globalValue;
      return typeof v === 'string' && path.isAbsolute(v.trim()) ? path.normalize(v.trim()) : undefined;
    };
    if (p === setting('policy')) return 'shield';
    if (p === setting('ifc.policy')) return 'ifc';
    if (path.basename(p) === 'policy.yaml' && path.basename(path.dirname(p)) === '.bulwark') return 'shield';
    return undefined;
  };

  const validate = (uri: vscode.Uri, text: string | undefined): void => {
    const kind = kindOf(uri);
    if (!kind) {
      collection.delete(uri);
      return;
    }
    if (text === undefined) {
      try {
        text = fs.readFileSync(uri.fsPath, 'utf8');
      } catch {
        collection.delete(uri); // gone: nothing to show (the engine reports a missing user policy itself)
        return;
      }
    }
    collection.set(uri, problemsIn(kind, text, uri.fsPath));
  };

  const fromDocument = (doc: vscode.TextDocument) => {
    if (kindOf(doc.uri)) validate(doc.uri, doc.getText());
  };
  const openText = (uri: vscode.Uri) => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString())?.getText();
  /** Every policy file we know of, from disk (or the open editor's text). */
  const revalidateAll = async () => {
    collection.clear();
    const uris = await vscode.workspace.findFiles('**/.bulwark/policy.yaml', undefined, 200).then(
      (u) => u,
      () => [] as vscode.Uri[],
    );
    const config = vscode.workspace.getConfiguration('bulwark');
    for (const key of ['policy', 'ifc.policy']) {
      const v = config.inspect<string>(key)?.globalValue;
      if (typeof v === 'string' && path.isAbsolute(v.trim())) uris.push(vscode.Uri.file(v.trim()));
    }
    for (const uri of uris) validate(uri, openText(uri));
  };

  const watcher = vscode.workspace.createFileSystemWatcher('**/.bulwark/policy.yaml');
  const onDisk = (uri: vscode.Uri) => validate(uri, openText(uri));
  context.subscriptions.push(
    collection,
    watcher,
    watcher.onDidCreate(onDisk),
    watcher.onDidChange(onDisk),
    watcher.onDidDelete((uri) => collection.delete(uri)),
    vscode.workspace.onDidOpenTextDocument(fromDocument),
    vscode.workspace.onDidChangeTextDocument((e) => fromDocument(e.document)),
    // Closing an unsaved editor: what counts again is the file on disk.
    vscode.workspace.onDidCloseTextDocument((doc) => {
      if (kindOf(doc.uri)) validate(doc.uri, undefined);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('bulwark.policy') || e.affectsConfiguration('bulwark.ifc.policy')) void revalidateAll();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void revalidateAll()),
  );
  for (const doc of vscode.workspace.textDocuments) fromDocument(doc);
  void revalidateAll();
  return collection;
}

/** The parser's findings as diagnostics (empty when the file is valid). */
export function problemsIn(kind: Kind, text: string, file: string): vscode.Diagnostic[] {
  try {
    if (kind === 'shield') parseShieldPolicy(text, file);
    else parseIfcPolicy(text, file);
    return [];
  } catch (e) {
    if (e instanceof DataFileError) return [diagnostic(e.position?.line, e.position?.column, `Bulwark policy: ${e.detail}`, text)];
    if (e instanceof IfcPolicyError) {
      return e.problems.map((p) => diagnostic(p.line || undefined, p.column || undefined, `Bulwark IFC policy: ${p.message}`, text));
    }
    return [diagnostic(undefined, undefined, `Bulwark policy: ${errorMessage(e)}`, text)];
  }
}

/** A diagnostic at a 1-based line/column, spanning the rest of the token there (or the first line). */
function diagnostic(line: number | undefined, column: number | undefined, message: string, text: string): vscode.Diagnostic {
  const lines = text.split(/\r?\n/);
  const l = Math.min(Math.max((line ?? 1) - 1, 0), Math.max(lines.length - 1, 0));
  const lineText = lines[l] ?? '';
  const c = Math.min(Math.max((column ?? 1) - 1, 0), lineText.length);
  const token = /^[^\s:,\]}]+/.exec(lineText.slice(c))?.[0].length ?? 0;
  const end = line === undefined ? lineText.length : c + Math.max(token, 1);
  const d = new vscode.Diagnostic(
    new vscode.Range(l, c, l, Math.min(end, Math.max(lineText.length, c + 1))),
    message,
    vscode.DiagnosticSeverity.Error,
  );
  d.source = SOURCE;
  return d;
}
