// Bulwark's durable Shield state (Tier 2 budget and cache, Tier 3 rate limit, IFC session taint): the
// key/value table of the SQLite state database in Bulwark's state folder. Fail closed: a database that
// cannot be opened gives a store that throws on every call, so Tier 2, Tier 3 and IFC block.
import path from 'node:path';
import { MemoryStateStore, type StateStore } from '../engine/shield/types';
import { SqliteStateStore, StateDb } from './audit/state-db';
import { ensureDirSync } from './fs-util';
import { errorMessage } from '../engine/error-message';

export const STATE_FILE = 'bulwark.db';

/** A store that fails every call: whatever needs durable state blocks, with this reason. */
export class FailingStateStore implements StateStore {
  constructor(readonly reason: string) {}
  get(): string | undefined {
    throw new Error(this.reason);
  }
  set(): void {
    throw new Error(this.reason);
  }
  delete(): void {
    throw new Error(this.reason);
  }
}

export interface OpenedStateStore {
  readonly store: StateStore;
  /** Kept across restarts (SQLite); false for the in-memory store (no state folder) and a FailingStateStore. */
  readonly durable: boolean;
  /** Why the store is not durable: a warning for the in-memory store, an error for a FailingStateStore. */
  readonly error?: string;
}

/**
 * The durable store: the key/value table of Bulwark's SQLite state database `<stateDir>/bulwark.db`
 * (the same database that anchors the audit log by default). A database that cannot be opened gives
 * a FailingStateStore and the error.
 */
export function openStateStore(stateDir: string | undefined): OpenedStateStore {
  if (!stateDir)
    return {
      store: new MemoryStateStore(),
      durable: false,
      error:
        "no local folder for Bulwark's state is available, so the Tier 2 budget, the approval rate limit and the session taint last only until VS Code restarts",
    };
  const file = path.join(stateDir, STATE_FILE);
  try {
    ensureDirSync(stateDir, 0o700);
    return { store: new SqliteStateStore(new StateDb(file)), durable: true };
  } catch (e) {
    const why = `Bulwark's state file ${file} cannot be read (${errorMessage(e)}); the Tier 2 evaluator, approvals and IFC block until it is repaired or deleted`;
    return { store: new FailingStateStore(why), durable: false, error: why };
  }
}

/**
 * The state stores of the extension host, one per state folder, so every user of the Shield's durable
 * state (the engine, the file tools) shares one store and one SQLite connection: the IFC taint the
 * engine records is the one the file tools see, and their record of redacted reads is the engine's.
 * A database that failed to open is opened again on the next call (it may have been repaired or
 * deleted); until then the FailingStateStore blocks whatever needs it. The in-memory store (no state
 * folder) is kept, so its state lasts until the extension host stops, as its warning says.
 */
export class StateStores {
  private readonly byFolder = new Map<string, OpenedStateStore>();

  storeFor(stateDir: string | undefined): OpenedStateStore {
    const key = stateDir ?? '';
    const cached = this.byFolder.get(key);
    if (cached && !(cached.store instanceof FailingStateStore)) return cached;
    const opened = openStateStore(stateDir);
    this.byFolder.set(key, opened);
    return opened;
  }
}
