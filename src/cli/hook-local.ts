// The hook's in-process decider, for when no Bulwark extension is running: the same engine with the
// user's policy, in report mode (it never calls a model or a human: what needs Tier 2 or 3 comes back
// as `escalate` and the hook denies it with a reason), session taint in a state database shared by
// every hook process, and every decision appended to the same audit chain the extension writes
// (its location is in bridge.json from its last start; else <stateDir>/audit). Hook processes run
// in parallel (an agent may call several tools at once), so appends take a lock on the log.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckResult } from '../engine';
import type { HookCall, MappedAction } from '../engine/agents';
import type { BridgeDecision } from '../node/hooks/bridge-protocol';
import { readAuditLocationFile } from '../node/hooks/bridge-files';
import { createNodeEngine, currentPlatform } from '../node/create-engine';
import { buildShield } from '../node/shield-setup';
import { SqliteStateStore, StateDb } from '../node/audit/state-db';
import { AuditLog } from '../node/audit/audit-log';
import { cliAuditKey } from '../node/audit/cli-key';
import { ensureDirSync } from '../node/fs-util';
import { agentSession, cwdOf } from './hook-deciders';

export interface LocalEngine {
  decide(call: HookCall, action: MappedAction, via: string): Promise<BridgeDecision>;
  record(call: HookCall, details: Record<string, unknown>): Promise<void>;
}

export async function localEngine(o: { stateDir: string; policy: string; ifc: string; workspace?: string }): Promise<LocalEngine> {
  ensureDirSync(o.stateDir, 0o700);
  const home = os.homedir();
  const platform = currentPlatform();
  const { store, error: storeError } = openHookStore(path.join(o.stateDir, 'hooks', 'bulwark.db'));
  const shield = store ? buildShield({ policy: o.policy, ifc: o.ifc, store, home, platform, mode: 'report' }) : undefined;
  const workspaceRoots = o.workspace && path.isAbsolute(o.workspace) ? [o.workspace] : [];
  const { engine } = await createNodeEngine({ workspaceRoots, home, platform, selfPaths: [o.stateDir], shield });

  const append = async (fn: (log: AuditLog) => Promise<unknown>) => {
    const audit = auditLocation(o.stateDir);
    ensureDirSync(path.dirname(audit.logFile), 0o700);
    await withLock(`${audit.logFile}.lock`, async () => {
      const log = await AuditLog.open({ logFile: audit.logFile, dbFile: audit.dbFile, hmacKey: audit.keyFile ? readExtensionKey(audit.keyFile) : cliAuditKey(audit.dbFile, true), session: 'bulwark-hook' });
      try { await fn(log); } finally { await log.close(); }
    });
  };

  return {
    async decide(call, action, via) {
      const cwd = cwdOf(call, action).cwd;
      const r: CheckResult = storeError
        ? { decision: 'block', tier: 0, minTier: 0, level: 'unprotected', rules: ['hook.state_unavailable'], reason: `Blocked: ${storeError}.` }
        : await engine.check({ ...(call.toolUseId ? { id: call.toolUseId } : {}), type: action.type, payload: action.payload, sessionId: agentSession(call), ...(cwd ? { cwd } : {}) });
      // The agent runs the tool once the hook allows it: its reads taint the session now.
      if (r.decision === 'allow') engine.recordExecuted(r);
      try {
        await append((log) => log.appendDecision(r, { session: agentSession(call), actionType: action.type, payload: { ...action.payload, _hook: { agent: call.agent, tool: call.toolName, via } }, ...(cwd ? { cwd } : {}) }));
      } catch (e) {
        return { decision: 'block', tier: 0, minTier: 0, level: r.level, rules: ['audit.write_failed'], reason: `Blocked: the audit log could not be written (${e instanceof Error ? e.message : String(e)}), so the action cannot be allowed.` };
      }
      return { decision: r.decision, tier: r.tier, minTier: r.minTier, level: r.level, rules: [...r.rules], reason: r.reason };
    },
    async record(call, details) {
      await append((log) => log.append({ event: 'ACTION_EXECUTED', session: agentSession(call), action_type: call.toolName ?? 'tool', details: { inspected_output: details } }));
    },
  };
}

/** Session taint and rate limits shared by every hook process; a store that does not open blocks every decision. */
function openHookStore(file: string): { store?: SqliteStateStore; error?: string } {
  try {
    ensureDirSync(path.dirname(file), 0o700);
    return { store: new SqliteStateStore(new StateDb(file)) };
  } catch (e) {
    return { error: `Bulwark's hook state ${file} cannot be opened (${e instanceof Error ? e.message : String(e)}); repair or delete it` };
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
        if (Date.now() - fs.statSync(lockDir).mtimeMs > LOCK_STALE_MS) { fs.rmdirSync(lockDir); continue; }
      } catch { /* released meanwhile */ }
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
