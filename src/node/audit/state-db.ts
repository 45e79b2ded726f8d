// Bulwark's durable state database (better-sqlite3, WAL). This module alone owns the schema and its
// migrations (PRAGMA user_version): the audit anchor (chain head + HMAC-signed checkpoints) and a
// generic key/value table for the Shield's state (Tier 2 budget and verdict cache, Tier 3 rate
// limit, IFC session taint). Every error throws: callers on a decision path fail closed.
import Database from 'better-sqlite3';
import path from 'node:path';
import type { StateStore } from '../../engine/shield/types';
import { ensureDirSync } from '../fs-util';

/** Ordered migrations; migration i brings the schema from version i to i + 1. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE audit_head (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     seq INTEGER NOT NULL,
     hash TEXT NOT NULL,
     mac TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE TABLE audit_checkpoint (
     seq INTEGER PRIMARY KEY,
     hash TEXT NOT NULL,
     mac TEXT NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE TABLE kv (
     namespace TEXT NOT NULL,
     key TEXT NOT NULL,
     value TEXT NOT NULL,
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (namespace, key)
   ) WITHOUT ROWID;`,
];
export const STATE_DB_SCHEMA_VERSION = MIGRATIONS.length;

export interface AnchorRow {
  readonly seq: number;
  readonly hash: string;
  readonly mac: string;
}

export class StateDb {
  readonly db: Database.Database;
  private readonly stmts: {
    head: Database.Statement;
    setHead: Database.Statement;
    addCp: Database.Statement;
    cps: Database.Statement;
    kvGet: Database.Statement;
    kvSet: Database.Statement;
    kvDel: Database.Statement;
  };
  private readonly commitTx: (head: AnchorRow, cps: readonly AnchorRow[]) => void;

  /** Opens (creating if needed) and migrates. Throws on a newer schema than this build knows. */
  constructor(
    readonly file: string,
    opts: { readonly?: boolean } = {},
  ) {
    if (!opts.readonly) ensureDirSync(path.dirname(file));
    this.db = new Database(file, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
    try {
      this.db.pragma('busy_timeout = 5000');
      if (!opts.readonly) {
        const mode = this.db.pragma('journal_mode = WAL', { simple: true });
        if (String(mode).toLowerCase() !== 'wal') throw new Error(`${file}: cannot switch to WAL mode (got ${String(mode)})`);
      }
      // FULL: a commit is on disk when it returns (the anchor must never lag an acknowledged entry).
      this.db.pragma('synchronous = FULL');
      this.migrate(opts.readonly ?? false);
    } catch (e) {
      this.db.close();
      throw e;
    }
    this.stmts = {
      head: this.db.prepare('SELECT seq, hash, mac FROM audit_head WHERE id = 1'),
      setHead: this.db.prepare(`INSERT INTO audit_head (id, seq, hash, mac, updated_at) VALUES (1, @seq, @hash, @mac, @at)
        ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, mac = excluded.mac, updated_at = excluded.updated_at`),
      addCp: this.db.prepare('INSERT OR REPLACE INTO audit_checkpoint (seq, hash, mac, created_at) VALUES (@seq, @hash, @mac, @at)'),
      cps: this.db.prepare('SELECT seq, hash, mac FROM audit_checkpoint ORDER BY seq'),
      kvGet: this.db.prepare('SELECT value FROM kv WHERE namespace = ? AND key = ?').pluck(),
      kvSet: this.db.prepare(`INSERT INTO kv (namespace, key, value, updated_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`),
      kvDel: this.db.prepare('DELETE FROM kv WHERE namespace = ? AND key = ?'),
    };
    this.commitTx = this.db.transaction((head: AnchorRow, cps: readonly AnchorRow[]) => {
      const at = new Date().toISOString();
      for (const c of cps) this.stmts.addCp.run({ ...c, at });
      this.stmts.setHead.run({ ...head, at });
    });
  }

  private migrate(readonly: boolean): void {
    const version = Number(this.db.pragma('user_version', { simple: true }));
    if (version > MIGRATIONS.length)
      throw new Error(`${this.file}: schema version ${version} is newer than this Bulwark (${MIGRATIONS.length}); update Bulwark`);
    if (version === MIGRATIONS.length) return;
    if (readonly) throw new Error(`${this.file}: schema version ${version} needs a migration; open it read-write`);
    this.db
      .transaction(() => {
        for (let v = version; v < MIGRATIONS.length; v++) this.db.exec(MIGRATIONS[v]!);
        this.db.pragma(`user_version = ${MIGRATIONS.length}`);
      })
      .immediate();
  }

  get schemaVersion(): number {
    return Number(this.db.pragma('user_version', { simple: true }));
  }

  auditHead(): AnchorRow | undefined {
    return this.stmts.head.get() as AnchorRow | undefined;
  }
  auditCheckpoints(): AnchorRow[] {
    return this.stmts.cps.all() as AnchorRow[];
  }
  /** Moves the head and adds checkpoints in one durable transaction. */
  commitAnchor(head: AnchorRow, checkpoints: readonly AnchorRow[] = []): void {
    this.commitTx(head, checkpoints);
  }

  kvGet(namespace: string, key: string): string | undefined {
    return this.stmts.kvGet.get(namespace, key) as string | undefined;
  }
  kvSet(namespace: string, key: string, value: string): void {
    this.stmts.kvSet.run(namespace, key, value, Date.now());
  }
  kvDelete(namespace: string, key: string): void {
    this.stmts.kvDel.run(namespace, key);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** The Shield's StateStore over the database's kv table. Throws on any store error. */
export class SqliteStateStore implements StateStore {
  constructor(private readonly db: StateDb) {}
  get(namespace: string, key: string): string | undefined {
    return this.db.kvGet(namespace, key);
  }
  set(namespace: string, key: string, value: string): void {
    if (typeof value !== 'string') throw new TypeError('StateStore values are strings');
    this.db.kvSet(namespace, key, value);
  }
  delete(namespace: string, key: string): void {
    this.db.kvDelete(namespace, key);
  }
}
