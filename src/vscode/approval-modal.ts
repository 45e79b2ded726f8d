// Tier 3 in VS Code: a modal warning with the tool, its arguments (secrets redacted) and every
// tier's reason; Approve or Deny. Dismissing it (Cancel, Escape) denies.
//
// A modal cannot be closed programmatically. When the request is decided elsewhere first (another
// surface answered, or the broker's timeout denied it), ask() resolves as `deny` at once and the
// dialog stays open; whatever is clicked in it afterwards is ignored and the user is told so.
// A request from an agent's hook (src/node/hooks/bridge-service.ts) names the agent, and gives up
// when the hook's deadline passes: the dialog then fails with that reason instead of denying.
import * as vscode from 'vscode';
import type { ApprovalAnswer, ApprovalRequest, ApprovalSurface } from '../engine/shield/tier3';
import { approvalText } from '../node/approval-text';
import type { PendingBridgeActions } from '../node/hooks/bridge-service';
import { BridgeAbort } from '../node/hooks/bridge-server';

const APPROVE = 'Approve';
const DENY = 'Deny';

export class ModalApprovalSurface implements ApprovalSurface {
  readonly id = 'VS Code dialog';

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly bridged?: PendingBridgeActions,
  ) {}

  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (signal.aborted) return Promise.resolve('deny');
    const hook = this.bridged?.get(request.id);
    if (hook?.signal.aborted) return Promise.reject(hookGaveUp(hook.signal));
    const { title, detail } = approvalText(request, hook?.requester);
    this.log.info(
      `Tier 3: asking for approval of ${request.actionType} (session ${request.sessionId}${hook ? `, asked by ${hook.requester}` : ''})`,
    );
    const aborted = new Promise<ApprovalAnswer>((resolve, reject) => {
      signal.addEventListener('abort', () => resolve('deny'), { once: true });
      hook?.signal.addEventListener('abort', () => reject(hookGaveUp(hook.signal)), { once: true });
    });
    const answered = Promise.resolve(vscode.window.showWarningMessage(title, { modal: true, detail }, APPROVE, DENY)).then(
      (choice): ApprovalAnswer => {
        const answer: ApprovalAnswer = choice === APPROVE ? 'approve' : 'deny';
        if (signal.aborted || hook?.signal.aborted) {
          this.log.info(`Tier 3: late answer "${choice ?? 'dismissed'}" for ${request.actionType} ignored (already decided)`);
          if (choice === APPROVE)
            void vscode.window.showWarningMessage(
              `Bulwark: your approval of ${request.actionType} came after the request had already been decided (timed out or answered elsewhere), so it was not applied.`,
            );
        }
        return answer;
      },
    );
    return Promise.race([answered, aborted]);
  }
}

function hookGaveUp(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return new Error(r instanceof BridgeAbort && r.rule === 'bridge.aborted' ? r.message : "no answer came before the agent's hook deadline");
}
