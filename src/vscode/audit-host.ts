// Owns the audit log for the extension host: where it lives (setting bulwark.audit.logFile, user
// value only; default <storage>/audit.jsonl with bulwark.db beside it), the HMAC key in the
// extension's global storage (outside every workspace, full_block to agents), and one open AuditLog
// shared by Check Action, the audit panel and Verify. No log logic here.
// Why not SecretStorage: code-server keeps secrets per browser, so a second browser would get a
// new key, the anchor would no longer verify, and every decision would block.
import * as vscode from 'vscode';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AuditIntegrityError, AuditLog, readEntries } from '../node/audit/audit-log';
import { fileWitness } from '../node/audit/audit-verify';
import type { AuditEntry, VerifyReport } from '../node/audit-view';
import { ensureDirSync } from '../node/fs-util';
import { errorMessage } from '../engine/error-message';

/** File (in global storage) holding the audit anchor's HMAC key: 32 random bytes, hex. */
export const AUDIT_HMAC_KEY_FILE = 'audit-hmac.key';
/** File (in global storage) with each log's high-water mark (see AuditWitness). */
export const AUDIT_WITNESS_FILE = 'audit-witness.json';
const AUDIT_LOG_SETTING = 'audit.logFile';

export interface AuditLocation {
  readonly logFile: string;
  readonly dbFile: string;
}

export class AuditHost implements vscode.Disposable {
  private opened: { key: string; log: Promise<AuditLog> } | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly subscriptions: vscode.Disposable[] = [this.changed];
  /** Fires when the log's location changed (the panel reloads). */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`bulwark.${AUDIT_LOG_SETTING}`)) this.changed.fire();
      }),
    );
  }

  /** The log and database files; undefined when there is no local storage folder and no location is set. */
  location(): AuditLocation | undefined {
    // User (global) value only: a workspace must not move the log somewhere it controls.
    const i = vscode.workspace.getConfiguration('bulwark').inspect<string>(AUDIT_LOG_SETTING);
    const configured = typeof i?.globalValue === 'string' ? i.globalValue.trim() : '';
    let logFile: string;
    if (configured) {
      logFile = configured.startsWith('~') ? path.join(process.env.HOME ?? '', configured.slice(1)) : configured;
      if (!path.isAbsolute(logFile)) return undefined;
    } else {
      const uri = this.context.storageUri ?? this.context.globalStorageUri;
      if (!uri || uri.scheme !== 'file') return undefined;
      logFile = path.join(uri.fsPath, 'audit.jsonl');
    }
    return { logFile, dbFile: path.join(path.dirname(logFile), 'bulwark.db') };
  }

  /** Files agents must not touch (FullBlock): the log, its database and the database's side files. */
  selfPaths(): string[] {
    const l = this.location();
    return l ? [l.logFile, l.dbFile, `${l.dbFile}-wal`, `${l.dbFile}-shm`, `${l.dbFile}-journal`] : [];
  }

  /** The 32-byte HMAC key, created on first use (mode 0600, never overwritten). */
  private async hmacKey(): Promise<Buffer> {
    const dir = this.context.globalStorageUri;
    if (dir.scheme !== 'file') throw new Error('the audit log needs a local global storage folder for its key');
    const file = path.join(dir.fsPath, AUDIT_HMAC_KEY_FILE);
    ensureDirSync(dir.fsPath);
    try {
      await fs.promises.writeFile(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const stored = (await fs.promises.readFile(file, 'utf8')).trim();
    if (!/^[0-9a-f]{64}$/.test(stored))
      throw new Error(`${file} is not a valid audit key (64 hex characters); the audit log cannot be anchored`);
    return Buffer.from(stored, 'hex');
  }

  /** The open log at the current location (opened on first use, reopened when the location changes). */
  open(): Promise<AuditLog> {
    const loc = this.location();
    if (!loc) return Promise.reject(new Error('no audit log location: open a folder or set bulwark.audit.logFile to an absolute path'));
    const key = JSON.stringify(loc);
    if (!this.opened || this.opened.key !== key) {
      const previous = this.opened;
      const log = (async () => {
        if (previous)
          await previous.log.then(
            (l) => l.close(),
            () => undefined,
          );
        const hmacKey = await this.hmacKey();
        return AuditLog.open({
          ...loc,
          hmacKey,
          session: 'bulwark',
          witness: fileWitness(path.join(this.context.globalStorageUri.fsPath, AUDIT_WITNESS_FILE), loc.logFile),
          onRecovery: (m) => {
            this.log.warn(`audit log ${loc.logFile}: ${m}`);
            void vscode.window.showWarningMessage(`Bulwark: the audit log was recovered: ${m}`);
          },
        });
      })();
      const entry = { key, log };
      this.opened = entry;
      // A log that could not be opened is tried again next time (and reported by whoever asked).
      log.catch((e: unknown) => {
        this.log.error(`the audit log ${loc.logFile} could not be opened: ${errorMessage(e)}`);
        if (this.opened === entry) this.opened = undefined;
      });
    }
    return this.opened.log;
  }

  /** Every entry in the log file, read from disk (also when the log cannot be opened for appends). */
  entries(): AsyncIterable<AuditEntry> {
    const loc = this.location();
    return loc
      ? readEntries(loc.logFile)
      : (async function* () {
          /* no log */
        })();
  }

  /**
   * Verifies the chain against its anchor. A log that does not even open (it disagrees with its anchor)
   * is reported through the result its opening found.
   */
  async verify(onProgress?: (entries: number) => void): Promise<VerifyReport> {
    let log: AuditLog;
    try {
      log = await this.open();
    } catch (e) {
      if (e instanceof AuditIntegrityError) {
        return (
          e.result ?? {
            ok: false,
            checked: 0,
            lastSeq: 0,
            lastHash: '',
            firstBroken: { seq: null, line: 0, kind: 'anchor_mismatch', message: e.message },
          }
        );
      }
      throw e;
    }
    return log.verify(onProgress ? (p) => onProgress(p.entries) : undefined);
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
    if (this.opened)
      void this.opened.log.then(
        (l) => l.close(),
        () => undefined,
      );
    this.opened = undefined;
  }
}
