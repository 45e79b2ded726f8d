// The CLI's audit HMAC key: BULWARK_AUDIT_KEY (≥ 16 characters), else `<db>.key` beside the
// database, created with mode 0600 (32 random bytes, hex) on first use when `create` is set.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

export function cliAuditKey(dbFile: string, create: boolean): Buffer {
  const env = process.env.BULWARK_AUDIT_KEY;
  if (env !== undefined) {
    if (env.length < 16) throw new Error('BULWARK_AUDIT_KEY must be at least 16 characters');
    return Buffer.from(env, 'utf8');
  }
  const keyFile = `${dbFile}.key`;
  if (!fs.existsSync(keyFile)) {
    if (!create) throw new Error(`no audit key: set BULWARK_AUDIT_KEY or provide ${keyFile}`);
    fs.writeFileSync(keyFile, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  }
  const st = fs.statSync(keyFile);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0)
    throw new Error(`${keyFile} is readable by others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`);
  const text = fs.readFileSync(keyFile, 'utf8').trim();
  if (text.length < 16) throw new Error(`${keyFile} holds no usable key`);
  return Buffer.from(text, 'utf8');
}
