// A durable StateStore in one JSON file, written atomically (temp file, fsync, rename) on every
// change. Small state only (budget counters, taint, rate-limit windows); the SQLite store replaces
// it once the audit anchor database exists.
import fs from 'node:fs';
import path from 'node:path';
import type { StateStore } from '../engine/shield/types';
import { ensureDirSync } from './fs-util';

export class JsonFileStateStore implements StateStore {
  private data: Record<string, Record<string, string>>;

  /** Throws if the file exists but is not a valid state file: callers fail closed. */
  constructor(private readonly file: string) {
    this.data = {};
    if (fs.existsSync(file)) {
      const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${file}: not a Bulwark state file`);
      this.data = parsed as Record<string, Record<string, string>>;
    }
  }

  get(namespace: string, key: string): string | undefined {
    return this.data[namespace]?.[key];
  }

  set(namespace: string, key: string, value: string): void {
    (this.data[namespace] ??= {})[key] = value;
    this.flush();
  }

  delete(namespace: string, key: string): void {
    if (this.data[namespace]) delete this.data[namespace][key];
    this.flush();
  }

  private flush(): void {
    ensureDirSync(path.dirname(this.file));
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeSync(fd, JSON.stringify(this.data));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.file);
  }
}
