// Tier 3 in VS Code: a modal warning with the tool, its arguments (secrets redacted) and every
// tier's reason; Approve or Deny. Dismissing it (Cancel, Escape) denies.
//
// A modal cannot be closed programmatically. When the request is decided elsewhere first (another
// surface answered, or the broker's timeout denied it), ask() resolves as `deny` at once and the
// dialog stays open; whatever is clicked in it afterwards is ignored and the user is told so.
import * as vscode from 'vscode';
import type { ApprovalAnswer, ApprovalRequest, ApprovalSurface } from '../engine/shield/tier3';
import { approvalText } from '../node/approval-text';

const APPROVE = 'Approve';
const DENY = 'Deny';

export class ModalApprovalSurface implements ApprovalSurface {
  readonly id = 'VS Code dialog';

  constructor(private readonly log: vscode.LogOutputChannel) {}

  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (signal.aborted) return Promise.resolve('deny');
    const { title, detail } = approvalText(request);
    this.log.info(`Tier 3: asking for approval of ${request.actionType} (session ${request.sessionId})`);
    const aborted = new Promise<ApprovalAnswer>((resolve) => signal.addEventListener('abort', () => resolve('deny'), { once: true }));
    const answered = Promise.resolve(vscode.window.showWarningMessage(title, { modal: true, detail }, APPROVE, DENY)).then((choice): ApprovalAnswer => {
      const answer: ApprovalAnswer = choice === APPROVE ? 'approve' : 'deny';
      if (signal.aborted) {
        this.log.info(`Tier 3: late answer "${choice ?? 'dismissed'}" for ${request.actionType} ignored (already decided)`);
        if (choice === APPROVE) void vscode.window.showWarningMessage(`Bulwark: your approval of ${request.actionType} came after the request had already been decided (timed out or answered elsewhere), so it was not applied.`);
      }
      return answer;
    });
    return Promise.race([answered, aborted]);
  }
}
