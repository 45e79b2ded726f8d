// "Bulwark: Verify Audit Chain": verifies the audit log with a progress notification and says whether
// the chain is intact or where it is first broken and what is wrong. Returns the report (for tests).
import * as vscode from 'vscode';
import type { VerifyReport } from '../node/audit-view';
import type { AuditHost } from './audit-host';
import { errorMessage } from '../engine/error-message';

export const VERIFY_AUDIT_CHAIN_COMMAND = 'bulwark.verifyAuditChain';

export function registerVerifyAudit(context: vscode.ExtensionContext, audit: AuditHost): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(VERIFY_AUDIT_CHAIN_COMMAND, async (): Promise<VerifyReport | undefined> => {
      let report: VerifyReport;
      try {
        report = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'Bulwark: verifying the audit chain', cancellable: false },
          async (progress) => {
            return audit.verify((checked) => progress.report({ message: `${checked} entries checked` }));
          },
        );
      } catch (e) {
        void vscode.window.showErrorMessage(`Bulwark: the audit chain could not be verified: ${errorMessage(e)}`);
        return undefined;
      }
      const file = audit.location()?.logFile ?? 'the audit log';
      if (report.ok) {
        void vscode.window.showInformationMessage(`Bulwark: audit chain intact: ${report.checked} entries (${file}).`);
      } else {
        const b = report.firstBroken;
        const where = b ? `first broken entry: seq ${b.seq ?? '?'} (line ${b.line}), ${b.kind}: ${b.message}` : 'the chain is broken';
        void vscode.window.showErrorMessage(`Bulwark: audit chain BROKEN after ${report.checked} intact entries — ${where} (${file}).`);
      }
      return report;
    }),
  );
}
