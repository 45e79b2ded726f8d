// The hooks' own decider, for when no Bulwark extension is running (in the hook process itself, or in
// the hook server that keeps it warm for the next calls): the same engine with the user's policy, in report mode (it never calls a model or a human: what needs Tier 2 or 3 comes back
// as `escalate` and the hook denies it with a reason), session taint in a state database shared by
// every hook process, and every decision appended to the same audit chain the extension writes
// (its location is in bridge.json from its last start; else <stateDir>/audit). Hook processes run
// in parallel (an agent may call several tools at once), so appends take a lock on the log.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckResult, Engine } from '../engine';
import { agentScopedSession, type AgentId, type OutputFinding } from '../engine/agents';
import type { BridgeDecision } from '../node/hooks/bridge-protocol';
import { knownSecretsFor } from '../node/known-secrets';
import { inspectToolOutput, type ToolOutput } from '../engine/agents/output';
import { loadSecretRules, redactSecrets } from '../engine/secrets';
import { readAuditLocationFile } from '../node/hooks/bridge-files';
import { createNodeEngine, currentPlatform } from '../node/create-engine';
import { buildShield } from '../node/shield-setup';
import { SqliteStateStore, StateDb } from '../node/audit/state-db';
import { AuditLog } from '../node/audit/audit-log';
import { cliAuditKey } from '../node/audit/cli-key';
import { ensureDirSync } from '../node/fs-util';
import { errorMessage } from '../engine/error-message';
import { hostBlock } from '../engine/reasons';

/** One action to decide, as the hook (in-process) or the hook server (for the hooks it serves) has it. */
export interface LocalDecideRequest {
  readonly agent: AgentId;
  readonly action: {
    readonly id?: string;
    readonly type: string;
    readonly payload: Record<string, unknown>;
    readonly cwd?: string;
    readonly sandboxed?: boolean;
  };
  /** The agent's session id as the client gave it (scoped to the agent here). */
  readonly sessionId: string;
  readonly policy: string;
  readonly ifc: string;
  /** The agent's working directory: the workspace whose own protected files count. */
  readonly workspace?: string;
  /** Which tool and mapping produced the action (recorded with it). */
  readonly note?: Record<string, unknown>;
}

/**
 * Decides hook actions without an extension: one engine per (policy, IFC policy, workspace), built
 * once per process (the hook server keeps them warm), every decision appended to the audit chain.
 */
export class LocalDecider {
  private readonly engines = new Map<string, Promise<{ engine: Engine; storeError?: string }>>();

  /**
   * `mayAppend` runs under the audit lock right before each append and throws HandOver when this
   * process must no longer write the chain (the hook server, once an extension has taken over).
   */
  constructor(
    private readonly stateDir: string,
    private readonly mayAppend: () => void = () => undefined,
  ) {
    ensureDirSync(stateDir, 0o700);
  }

  private engineFor(policy: string, ifc: string, workspace: string | undefined): Promise<{ engine: Engine; storeError?: string }> {
    const ws = workspace && path.isAbsolute(workspace) ? workspace : undefined;
    const key = JSON.stringify([policy, ifc, ws ?? '', policyStamp(policy)]);
    let e = this.engines.get(key);
    if (!e) {
      if (this.engines.size >= 16) this.engines.delete(this.engines.keys().next().value!);
      e = (async () => {
        const home = os.homedir();
        const platform = currentPlatform();
        const { store, error: storeError } = openHookStore(path.join(this.stateDir, 'hooks', 'bulwark.db'));
        const shield = store ? buildShield({ policy, ifc, store, home, platform, mode: 'report' }) : undefined;
        const { engine } = await createNodeEngine({ workspaceRoots: ws ? [ws] : [], home, platform, selfPaths: [this.stateDir], shield });
        return { engine, ...(storeError ? { storeError } : {}) };
      })();
      this.engines.set(key, e);
      e.catch(() => this.engines.delete(key));
    }
    return e;
  }

  private async append(fn: (log: AuditLog) => Promise<unknown>): Promise<void> {
    const audit = auditLocation(this.stateDir);
    ensureDirSync(path.dirname(audit.logFile), 0o700);
    await withLock(`${audit.logFile}.lock`, async () => {
      this.mayAppend();
      const log = await AuditLog.open({
        logFile: audit.logFile,
        dbFile: audit.dbFile,
        hmacKey: audit.keyFile ? readExtensionKey(audit.keyFile) : cliAuditKey(audit.dbFile, true),
        session: 'bulwark-hook',
      });
      try {
        await fn(log);
      } finally {
        await log.close();
      }
    });
  }

  async decide(req: LocalDecideRequest): Promise<BridgeDecision> {
    const { engine, storeError } = await this.engineFor(req.policy, req.ifc, req.workspace);
    const session = agentScopedSession(req.agent, req.sessionId);
    const a = req.action;
    const r: CheckResult = storeError
      ? hostBlock('hook.state_unavailable', 'error', storeError)
      : await engine.check({
          ...(a.id ? { id: a.id } : {}),
          type: a.type,
          payload: a.payload,
          sessionId: session,
          ...(a.cwd ? { cwd: a.cwd } : {}),
          ...(a.sandboxed === true && a.type === 'execute_command' ? { sandboxed: true } : {}),
        });
    // The agent runs the tool once the hook allows it: its reads taint the session now.
    if (r.decision === 'allow') engine.recordExecuted(r);
    try {
      await this.append((log) =>
        log.appendDecision(r, {
          session,
          actionType: a.type,
          payload: { ...a.payload, _hook: { agent: req.agent, ...req.note } },
          ...(a.cwd ? { cwd: a.cwd } : {}),
        }),
      );
    } catch (e) {
      if (e instanceof HandOver) return hostBlock(HAND_OVER_RULE, 'error', `${e.message}; ask it again`);
      return hostBlock(
        'audit.write_failed',
        'error',
        `the audit log could not be written (${errorMessage(e)}), so the action cannot be allowed`,
        r.level,
      );
    }
    const secretRules = loadSecretRules();
    return {
      decision: r.decision,
      tier: r.tier,
      minTier: r.minTier,
      level: r.level,
      rules: [...r.rules],
      reason: redactSecrets(secretRules, r.reason).text,
      reasons: r.reasons.map((x) => ({ ...x, message: redactSecrets(secretRules, x.message).text })),
      ...(r.sandboxHides?.length ? { sandboxHides: r.sandboxHides } : {}),
    };
  }

  /** Inspects a tool's output and records what was found (rule ids and counts, never the text). */
  async inspect(req: ToolOutput & { workspace?: string }): Promise<OutputFinding[]> {
    if (!req.text) return [];
    // The user's known secrets count as secrets in the output too (masked by value, whatever their shape).
    knownSecretsFor([req.workspace], os.homedir(), process.env);
    const { findings, event } = inspectToolOutput(req);
    await this.append((log) => log.append(event));
    return findings;
  }
}

/** The rule of a refusal that only means "ask the bridge again": an extension took over from the hook server. */
export const HAND_OVER_RULE = 'hook.handed_over';

/** Thrown by the hook server's `mayAppend` once the extension serves the hooks (the chain is then the extension's to write). */
export class HandOver extends Error {}

/** A policy file's stamp (size and mtime), so an edited policy gets a new engine; presets have none. */
function policyStamp(policy: string): string {
  if (!path.isAbsolute(policy)) return '';
  try {
    const st = fs.statSync(policy);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

/** Session taint and rate limits shared by every hook process; a store that does not open blocks every decision. */
function openHookStore(file: string): { store?: SqliteStateStore; error?: string } {
  try {
    ensureDirSync(path.dirname(file), 0o700);
    return { store: new SqliteStateStore(new StateDb(file)) };
  } catch (e) {
    return { error: `Bulwark's hook state ${file} cannot be opened (${errorMessage(e)}); repair or delete it` };
  }
}

/**
 * The extension's audit chain as it last published it (<stateDir>/audit-location.json), else the
 * hooks' own under <stateDir>/audit. A published location that cannot be trusted (another owner,
 * writable by others, a symlink) is an error: appending elsewhere would split the chain silently.
 */
export function auditLocation(stateDir: string): { logFile: string; dbFile: string; keyFile?: string } {
  const published = readAuditLocationFile(stateDir);
  if (published.kind === 'ok') return published.audit;
  if (published.kind === 'invalid') throw new Error(`the extension's audit location cannot be trusted: ${published.why}`);
  // The hooks' own log uses the CLI's key convention (<db>.key), so `bulwark audit verify --db` reads it.
  const dir = path.join(stateDir, 'audit');
  return { logFile: path.join(dir, 'audit.jsonl'), dbFile: path.join(dir, 'bulwark.db') };
}

/** The extension's anchor key: 32 bytes as 64 hex characters (src/vscode/audit-host.ts); never created here. */
function readExtensionKey(keyFile: string): Buffer {
  const text = fs.readFileSync(keyFile, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${keyFile} is not a valid audit key (64 hex characters)`);
  return Buffer.from(text, 'hex');
}

const LOCK_STALE_MS = 30_000;

/** A cross-process lock: a directory created atomically; one left by a crashed holder expires. */
async function withLock<T>(lockDir: string, fn: () => Promise<T>): Promise<T> {
  const start = Date.now();
  for (;;) {
    try {
      fs.mkdirSync(lockDir, { mode: 0o700 });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      try {
        if (Date.now() - fs.statSync(lockDir).mtimeMs > LOCK_STALE_MS) {
          fs.rmdirSync(lockDir);
          continue;
        }
      } catch {
        /* released meanwhile */
      }
      if (Date.now() - start > 20_000) throw new Error(`the audit log is locked by another process (${lockDir})`);
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 20));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}
