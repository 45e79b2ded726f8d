// "Bulwark: Show Audit Log": one webview panel (revealed if already open) over the audit log. The
// model (rows, filter, paging, details) is src/node/audit-view.ts; the page is src/webview/main.ts;
// they talk through the typed messages in src/webview/protocol.ts. UI and wiring only here.
import * as vscode from 'vscode';
import crypto from 'node:crypto';
import { AuditView, type AuditEntry, type VerifyReport } from '../node/audit-view';
import { PAGE_SIZE, sanitizeFilter, type ChainStatus, type HostMessage, type PageMessage } from '../webview/protocol';
import type { AuditHost } from './audit-host';
import { errorMessage } from '../engine/error-message';

export const SHOW_AUDIT_LOG_COMMAND = 'bulwark.showAuditLog';
const VIEW_TYPE = 'bulwark.auditLog';

/** The chain status a verify report gives. */
export function chainStatusOf(r: VerifyReport): ChainStatus {
  if (r.ok) return { state: 'intact', checked: r.checked, message: `intact: ${r.checked} entries` };
  const b = r.firstBroken;
  return {
    state: 'broken',
    checked: r.checked,
    message: b ? `broken at entry ${b.seq ?? '?'} (line ${b.line}, ${b.kind}): ${b.message}` : 'broken',
    ...(b && b.seq !== null ? { firstBrokenSeq: b.seq } : {}),
  };
}

class AuditPanel implements vscode.Disposable {
  private view = new AuditView();
  private chain: ChainStatus = { state: 'unverified' };
  private generation = 0;
  private readonly disposables: vscode.Disposable[] = [];
  private unsubscribe: { dispose(): void } | undefined;
  private logFile = '';
  private disposed = false;

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private readonly audit: AuditHost,
    private readonly onDisposed: () => void,
  ) {
    panel.webview.html = this.html(panel.webview);
    this.disposables.push(
      panel.onDidDispose(() => this.dispose()),
      panel.webview.onDidReceiveMessage((m: PageMessage) => this.receive(m)),
      audit.onDidChange(() => void this.load()),
    );
  }

  private post(m: HostMessage): void {
    void this.panel.webview.postMessage(m);
  }

  private receive(m: PageMessage): void {
    switch (m.type) {
      case 'ready':
        if (m.filter) this.view.setFilter(sanitizeFilter(m.filter));
        void this.load();
        return;
      case 'reload':
        void this.load();
        return;
      case 'requestRange':
        this.post({
          type: 'rows',
          requestId: m.requestId,
          start: m.start,
          rows: this.view.range(m.start, Math.min(m.count, 2000)),
          filtered: this.view.filtered,
        });
        return;
      case 'filter':
        this.view.setFilter(sanitizeFilter(m.filter));
        this.postInit();
        return;
      case 'select':
        this.post({ type: 'detail', seq: m.seq, detail: this.view.detail(m.seq) });
        return;
      case 'verify':
        void this.verify();
        return;
    }
  }

  /** (Re)reads the whole log into a fresh model; appends that arrive meanwhile are kept. */
  private async load(): Promise<void> {
    const gen = ++this.generation;
    this.unsubscribe?.dispose();
    this.unsubscribe = undefined;
    const view = new AuditView();
    view.setFilter(this.view.filter);
    this.chain = { state: 'unverified' };
    this.logFile = this.audit.location()?.logFile ?? '';
    // Opening the log (it checks the file against its anchor) runs while the file is read.
    const opening = this.audit.open();
    opening.catch(() => undefined);
    let last = 0;
    try {
      let shown = false;
      for await (const e of this.audit.entries()) {
        if (gen !== this.generation) return;
        view.add(e);
        last = e.seq;
        // The first screenful goes out at once; a large log keeps loading behind it.
        if (!shown && view.filtered >= PAGE_SIZE) {
          shown = true;
          this.view = view;
          this.postInit(undefined, true);
        }
      }
    } catch (e) {
      if (gen !== this.generation) return;
      this.view = view;
      this.postInit(`The audit log could not be read: ${errorMessage(e)}`);
      return;
    }
    if (gen !== this.generation) return;
    this.view = view;
    this.postInit();
    // Live updates come from the open log; a log that does not open is still shown (read from disk).
    try {
      const log = await opening;
      if (gen !== this.generation) return;
      const pending: AuditEntry[] = [];
      let catchingUp = true;
      this.unsubscribe = log.onAppend((entries) => {
        if (gen !== this.generation) return;
        if (catchingUp) pending.push(...entries);
        else this.appendLive(entries);
      });
      // Entries appended between the read and the subscription (e.g. the recovery entry open() wrote).
      const missed: AuditEntry[] = [];
      if (log.head.seq > last) for await (const e of this.audit.entries()) if (e.seq > last) missed.push(e);
      if (gen !== this.generation) return;
      for (const e of pending) if (!missed.some((m) => m.seq === e.seq)) missed.push(e);
      catchingUp = false;
      missed.sort((x, y) => x.seq - y.seq);
      const fresh = missed.filter((e) => e.seq > last);
      if (fresh.length) this.appendLive(fresh);
    } catch (e) {
      if (gen !== this.generation) return;
      this.postInit(`The audit log could not be opened, so new entries are not shown live: ${errorMessage(e)}`);
    }
  }

  private appendLive(entries: readonly AuditEntry[]): void {
    const rows = entries.flatMap((e) => {
      const r = this.view.add(e);
      return r ? [r] : [];
    });
    this.post({
      type: 'append',
      total: this.view.total,
      filtered: this.view.filtered,
      rows,
      sessions: this.view.sessions,
      events: this.view.events,
    });
  }

  private postInit(error?: string, partial = false): void {
    const v = this.view;
    this.post({
      type: 'init',
      logFile: this.logFile,
      total: v.total,
      filtered: v.filtered,
      filter: v.filter,
      sessions: v.sessions,
      events: v.events,
      decisions: v.decisions,
      chain: this.chain,
      start: 0,
      rows: v.range(0, PAGE_SIZE),
      ...(error ? { error } : {}),
      ...(partial ? { partial } : {}),
    });
  }

  private async verify(): Promise<void> {
    this.chain = { state: 'verifying' };
    this.post({ type: 'verifyResult', chain: this.chain });
    try {
      const report = await this.audit.verify((checked) => this.post({ type: 'verifyProgress', checked }));
      this.chain = chainStatusOf(report);
      const seq = this.chain.firstBrokenSeq;
      this.post({ type: 'verifyResult', chain: this.chain, ...(seq !== undefined ? { index: this.view.indexOf(seq) } : {}) });
    } catch (e) {
      this.chain = { state: 'error', message: `verification failed: ${errorMessage(e)}` };
      this.post({ type: 'verifyResult', chain: this.chain });
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = crypto.randomBytes(18).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const css = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'audit.css'));
    const csp = `default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}'; img-src ${webview.cspSource}`;
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${css}" rel="stylesheet">
<title>Bulwark Audit Log</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.generation++;
    this.unsubscribe?.dispose();
    this.unsubscribe = undefined;
    while (this.disposables.length) this.disposables.pop()?.dispose();
    this.panel.dispose();
    this.onDisposed();
  }
}

export function registerAuditPanel(context: vscode.ExtensionContext, audit: AuditHost): void {
  let current: AuditPanel | undefined;
  const options: vscode.WebviewPanelOptions & vscode.WebviewOptions = {
    enableScripts: true,
    retainContextWhenHidden: true,
    localResourceRoots: [vscode.Uri.joinPath(context.extensionUri, 'media'), vscode.Uri.joinPath(context.extensionUri, 'dist')],
  };
  const adopt = (panel: vscode.WebviewPanel): void => {
    current = new AuditPanel(panel, context.extensionUri, audit, () => {
      current = undefined;
    });
  };
  context.subscriptions.push(
    vscode.commands.registerCommand(SHOW_AUDIT_LOG_COMMAND, (): void => {
      if (current) {
        current.panel.reveal();
        return;
      }
      adopt(vscode.window.createWebviewPanel(VIEW_TYPE, 'Bulwark Audit Log', vscode.ViewColumn.Active, options));
    }),
    // A panel left open when the window reloads comes back with its filter (the page keeps it in its state).
    vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
      deserializeWebviewPanel: async (panel: vscode.WebviewPanel): Promise<void> => {
        if (current) {
          panel.dispose();
          return;
        }
        panel.webview.options = options;
        adopt(panel);
      },
    }),
    { dispose: () => current?.dispose() },
  );
}
