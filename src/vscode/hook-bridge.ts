// Serves agents' hooks (`bulwark hook --agent …`) from this window: the same engine, approval dialog
// and audit log as Check Action. Thin: the socket and bridge.json are src/node/hooks/bridge-server.ts,
// what one request does is src/node/hooks/bridge-service.ts.
import * as vscode from 'vscode';
import path from 'node:path';
import type { EngineHost } from './engine-host';
import { AUDIT_HMAC_KEY_FILE, type AuditHost } from './audit-host';
import { checkActionToRun } from './check-action';
import { bulwarkStateDir } from '../node/hooks/state-dir';
import { bridgeService } from '../node/hooks/bridge-service';
import { startBridgeServer, type BridgeAuditLocation, type BridgeServer } from '../node/hooks/bridge-server';
import { errorMessage } from '../engine/error-message';

export function registerHookBridge(
  context: vscode.ExtensionContext,
  host: EngineHost,
  audit: AuditHost,
  log: vscode.LogOutputChannel,
): void {
  let stateDir: string;
  try {
    stateDir = bulwarkStateDir();
  } catch (e) {
    notStarted(log, e);
    return;
  }
  const auditLocation = (): BridgeAuditLocation | undefined => {
    const loc = audit.location();
    const keyDir = context.globalStorageUri;
    return loc && keyDir.scheme === 'file' ? { ...loc, keyFile: path.join(keyDir.fsPath, AUDIT_HMAC_KEY_FILE) } : undefined;
  };
  const handlers = bridgeService({
    check: async (action) => {
      const { sandboxed, ...rest } = action;
      const { result, executed } = await checkActionToRun(host, rest, { sandboxed }, audit);
      return {
        result: {
          decision: result.decision,
          tier: result.tier,
          minTier: result.minTier,
          level: result.level,
          rules: [...result.rules],
          reason: result.reason,
          ...(result.sandboxHides ? { sandboxHides: result.sandboxHides } : {}),
        },
        executed,
      };
    },
    append: async (event) => {
      await (await audit.open()).append(event);
    },
    pending: host.pendingBridgeActions,
    log,
  });

  let server: BridgeServer | undefined;
  let disposed = false;
  context.subscriptions.push(
    {
      dispose: () => {
        disposed = true;
        void server?.dispose();
      },
    },
    audit.onDidChange(() => server?.setAudit(auditLocation())),
  );
  startBridgeServer({ stateDir, ...handlers, audit: auditLocation(), log }).then(
    (s) => {
      if (disposed) void s.dispose();
      else server = s;
    },
    (e: unknown) => notStarted(log, e),
  );
}

function notStarted(log: vscode.LogOutputChannel, e: unknown): void {
  const why = errorMessage(e);
  log.error(`the hook bridge did not start: ${why}`);
  void vscode.window.showWarningMessage(
    `Bulwark: agents' hooks cannot reach this window (${why}). They decide on their own and deny whatever would need your approval.`,
  );
}
