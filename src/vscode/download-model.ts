// "Bulwark: Download Classifier Model": downloads a Tier 1 classifier folder with a progress
// notification (cancellable) and a SHA-256 check of every file, then points
// bulwark.classifier.modelDir at it. From the palette: a pick of KNOWN_MODELS (an entry whose hashes
// are not pinned is refused, with what to do instead). Programmatically:
//   executeCommand('bulwark.downloadClassifierModel', { baseUrl, files: [{ name, sha256, remotePath? }], destDir? })
// resolves to { ok: true, dir } or { ok: false, error }. What may be asked and the download itself are
// decided in src/node/classifier/download-request.ts; this file only shows them.
import * as vscode from 'vscode';
import path from 'node:path';
import { KNOWN_MODELS } from '../node/classifier/model-download';
import {
  afterUserConfirms,
  knownModelChoice,
  knownModelRequest,
  parseDownloadRequest,
  progressMessage,
  runModelDownload,
  type DownloadQuestion,
  type ModelDownloadRequest,
} from '../node/classifier/download-request';
import { errorMessage } from '../engine/error-message';

export const DOWNLOAD_MODEL_COMMAND = 'bulwark.downloadClassifierModel';

export type DownloadModelResult = { readonly ok: true; readonly dir: string } | { readonly ok: false; readonly error: string };

const PROGRESS_TITLE = 'Bulwark: downloading classifier model';
const MODEL_DIR_SETTING = 'classifier.modelDir';
const OPEN_SETTING = 'Open Setting';

export function registerDownloadModel(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(DOWNLOAD_MODEL_COMMAND, async (arg?: unknown): Promise<DownloadModelResult | undefined> => {
      if (arg === undefined) return fromPalette(context, log);
      const parsed = parseDownloadRequest(arg);
      if (!parsed.ok) return failed(log, parsed.error);
      // A caller's request needs the user's yes (afterUserConfirms; declining is unit-tested in
      // download-request.test.ts). The extension-test host refuses modals: in Test mode nobody is asked.
      const ask =
        context.extensionMode === vscode.ExtensionMode.Test
          ? async () => true
          : async (q: DownloadQuestion) =>
              (await vscode.window.showWarningMessage(q.message, { modal: true, detail: q.detail }, q.yes)) === q.yes;
      const r = await afterUserConfirms(parsed.value, ask, (request) => download(context, log, request));
      return r.confirmed ? r.result : failed(log, r.error);
    }),
  );
}

async function fromPalette(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): Promise<DownloadModelResult | undefined> {
  const items = KNOWN_MODELS.map((m) => ({ model: m, ...knownModelChoice(m) }));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Bulwark: Download Classifier Model',
    placeHolder: 'Choose a prompt-injection classifier for Tier 1 (every file is checked against its pinned SHA-256)',
    matchOnDescription: true,
    matchOnDetail: true,
    ignoreFocusOut: true,
  });
  if (!picked) return undefined;
  const request = knownModelRequest(picked.model);
  if (!request.ok) {
    log.warn(`classifier download: ${request.error}`);
    void vscode.window.showErrorMessage(`Bulwark: ${request.error}`, OPEN_SETTING).then((choice) => {
      if (choice === OPEN_SETTING) void vscode.commands.executeCommand('workbench.action.openSettings', `bulwark.${MODEL_DIR_SETTING}`);
    });
    return { ok: false, error: request.error };
  }
  return download(context, log, request.value);
}

async function download(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
  request: ModelDownloadRequest,
): Promise<DownloadModelResult> {
  const storage = context.globalStorageUri;
  const modelsRoot = storage.scheme === 'file' ? path.join(storage.fsPath, 'models') : undefined;
  log.info(
    `classifier download: ${request.files.map((f) => f.name).join(', ')} from ${request.baseUrl} into ${request.destDir ?? `${modelsRoot ?? '(no storage)'}/…`}`,
  );
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: PROGRESS_TITLE, cancellable: true },
    async (progress, token) => {
      const controller = new AbortController();
      const onCancel = token.onCancellationRequested(() => controller.abort());
      if (token.isCancellationRequested) controller.abort();
      let shown = 0; // percent already reported
      let lastAt = 0;
      let lastFile = '';
      try {
        return await runModelDownload(request, {
          ...(modelsRoot ? { modelsRoot } : {}),
          signal: controller.signal,
          onProgress: (p) => {
            const now = Date.now();
            const finished = p.total !== undefined && p.received >= p.total;
            if (p.file === lastFile && !finished && now - lastAt < 100) return; // a report per chunk would flood the UI
            lastAt = now;
            lastFile = p.file;
            const percent = p.fraction * 100;
            progress.report({ message: progressMessage(p), increment: Math.max(0, percent - shown) });
            shown = Math.max(shown, percent);
          },
        });
      } finally {
        onCancel.dispose();
      }
    },
  );
  if (!result.ok) {
    log.warn(`classifier download failed: ${result.error}`);
    if (result.cancelled)
      void vscode.window.showWarningMessage(
        'Bulwark: the classifier model download was cancelled; no partial files are left and bulwark.classifier.modelDir is unchanged.',
      );
    else
      void vscode.window.showErrorMessage(
        `Bulwark: the classifier model was not downloaded: ${result.error}. No partial files are left; bulwark.classifier.modelDir is unchanged.`,
      );
    return { ok: false, error: result.error };
  }
  try {
    await vscode.workspace.getConfiguration('bulwark').update(MODEL_DIR_SETTING, result.dir, vscode.ConfigurationTarget.Global);
  } catch (e) {
    return failed(
      log,
      `the model was downloaded and verified into ${result.dir}, but bulwark.${MODEL_DIR_SETTING} could not be set (${errorMessage(e)}); set it to that folder yourself`,
    );
  }
  log.info(`classifier download: ready in ${result.dir}; bulwark.${MODEL_DIR_SETTING} points at it`);
  void vscode.window.showInformationMessage(
    `Bulwark: classifier model ready in ${result.dir}. bulwark.${MODEL_DIR_SETTING} points at it; Tier 1 runs the classifier from the next check.`,
  );
  return { ok: true, dir: result.dir };
}

function failed(log: vscode.LogOutputChannel, error: string): DownloadModelResult {
  log.warn(`classifier download: ${error}`);
  void vscode.window.showErrorMessage(`Bulwark: ${error}`);
  return { ok: false, error };
}
