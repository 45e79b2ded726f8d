// The hook bridge's files in Bulwark's state directory, shared by the server (the extension) and the
// client (the hook program): the private directory, atomic 0600 writes, and reading bridge.json and
// the per-window peer files back without trusting them (ours, not writable by others, small, the
// right shape, a socket inside the state directory).
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from '../fs-util';
import { ensureDirSync } from '../fs-util';
import type { BridgeInfo } from './state-dir';
import { errorMessage } from '../../engine/error-message';

/** Each server's own discovery file and socket: `bridge-<pid>-<instance>.json|.sock`. */
export const PEER_FILE_PATTERN = /^bridge-(\d+)-([0-9a-f]{8})\.json$/;
export const SOCKET_FILE_PATTERN = /^bridge-(\d+)-([0-9a-f]{8})\.sock$/;
/** Windows: the named pipe's prefix; 32 hex characters follow. */
export const WINDOWS_PIPE_PREFIX = '\\\\.\\pipe\\bulwark-';
/** Longest bridge.json / peer file read back (ours are < 1 KB). */
export const MAX_INFO_FILE_BYTES = 64 * 1024;

const isWindows = process.platform === 'win32';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The state directory: created 0700, or an existing one owned by this user tightened to 0700. */
export function preparePrivateDir(dir: string): void {
  ensureDirSync(dir, 0o700);
  const st = fs.statSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (isWindows) return;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new Error(`${dir} belongs to another user (uid ${st.uid}); Bulwark's state directory must be yours`);
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

/** Writes `file` (mode 0600) atomically: a reader never sees half of it. */
export function writePrivateFileAtomic(file: string, text: string): void {
  writeFileAtomicSync(file, text, { mode: 0o600 });
}

/** True when the process exists (EPERM: it exists but is another user's). Only positive pids: 0 and -1 name groups. */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reads a small JSON file of ours from the state directory: a regular file (no symlink), our own, not writable by others. */
export function readPrivateJson(file: string): { kind: 'ok'; value: unknown } | { kind: 'missing' } | { kind: 'invalid'; why: string } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (isWindows ? 0 : fs.constants.O_NOFOLLOW));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'invalid', why: `${file} is a symbolic link` };
    return { kind: 'invalid', why: `${file} cannot be opened (${errorMessage(e)})` };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { kind: 'invalid', why: `${file} is not a regular file` };
    if (!isWindows) {
      const uid = process.getuid?.();
      if (uid !== undefined && st.uid !== uid) return { kind: 'invalid', why: `${file} belongs to another user (uid ${st.uid})` };
      if ((st.mode & 0o022) !== 0) return { kind: 'invalid', why: `${file} is writable by others (mode ${(st.mode & 0o777).toString(8)})` };
    }
    if (st.size > MAX_INFO_FILE_BYTES) return { kind: 'invalid', why: `${file} is ${st.size} bytes, more than ${MAX_INFO_FILE_BYTES}` };
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = fs.readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    try {
      return { kind: 'ok', value: JSON.parse(buf.subarray(0, off).toString('utf8')) };
    } catch (e) {
      return { kind: 'invalid', why: `${file} is not valid JSON (${errorMessage(e)})` };
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads bridge.json or a peer file: a private file (readPrivateJson) of the right shape. */
export function readInfoFile(file: string): { kind: 'ok'; info: BridgeInfo } | { kind: 'missing' } | { kind: 'invalid'; why: string } {
  const r = readPrivateJson(file);
  if (r.kind !== 'ok') return r;
  const why = infoShapeError(r.value, path.dirname(file));
  return why ? { kind: 'invalid', why: `${file}: ${why}` } : { kind: 'ok', info: r.value as BridgeInfo };
}

/**
 * The extension's audit log as it last published it (<stateDir>/audit-location.json, kept after the
 * extension exits), so a hook deciding in-process appends to the same chain. Undefined when none was
 * published; an error when the file is there but cannot be trusted.
 */
export function readAuditLocationFile(
  stateDir: string,
): { kind: 'ok'; audit: NonNullable<BridgeInfo['audit']> } | { kind: 'missing' } | { kind: 'invalid'; why: string } {
  const file = path.join(stateDir, AUDIT_LOCATION_FILE);
  const r = readPrivateJson(file);
  if (r.kind !== 'ok') return r;
  const a = r.value;
  if (!isObject(a) || ![a.logFile, a.dbFile, a.keyFile].every((p) => typeof p === 'string' && path.isAbsolute(p)))
    return { kind: 'invalid', why: `${file} needs absolute logFile, dbFile and keyFile` };
  return { kind: 'ok', audit: { logFile: a.logFile as string, dbFile: a.dbFile as string, keyFile: a.keyFile as string } };
}

/** Persistent record of the extension's audit location (bridge.json goes away when the extension exits). */
export const AUDIT_LOCATION_FILE = 'audit-location.json';

/** Why `v` is not a BridgeInfo for this state directory (its socket must be one of ours), or undefined. */
function infoShapeError(v: unknown, stateDir: string): string | undefined {
  if (!isObject(v)) return 'not a JSON object';
  if (v.version !== 1) return `unsupported version ${JSON.stringify(v.version)}`;
  if (typeof v.pid !== 'number' || !Number.isSafeInteger(v.pid) || v.pid <= 0) return '`pid` is not a positive integer';
  if (typeof v.token !== 'string' || !/^[0-9a-f]{64}$/.test(v.token)) return '`token` is not 64 hex characters';
  if (typeof v.startedAt !== 'string') return '`startedAt` is missing';
  if (typeof v.socket !== 'string') return '`socket` is missing';
  const socketOk = isWindows
    ? v.socket.startsWith(WINDOWS_PIPE_PREFIX) && /^[0-9a-f]{32}$/.test(v.socket.slice(WINDOWS_PIPE_PREFIX.length))
    : path.dirname(v.socket) === stateDir && SOCKET_FILE_PATTERN.test(path.basename(v.socket));
  if (!socketOk) return `\`socket\` ${JSON.stringify(v.socket).slice(0, 200)} is not a Bulwark socket in ${stateDir}`;
  if (v.audit !== undefined) {
    const a = v.audit;
    if (!isObject(a) || typeof a.logFile !== 'string' || typeof a.dbFile !== 'string' || typeof a.keyFile !== 'string')
      return '`audit` needs logFile, dbFile and keyFile';
    if (![a.logFile, a.dbFile, a.keyFile].every((p) => path.isAbsolute(p as string))) return '`audit` paths must be absolute';
  }
  return undefined;
}

/** Peer files of live servers in `stateDir`, newest first. */
export function livePeers(stateDir: string): BridgeInfo[] {
  let names: string[];
  try {
    names = fs.readdirSync(stateDir);
  } catch {
    return [];
  }
  const out: BridgeInfo[] = [];
  for (const name of names) {
    const m = PEER_FILE_PATTERN.exec(name);
    if (!m || !isProcessAlive(Number(m[1]))) continue;
    const r = readInfoFile(path.join(stateDir, name));
    if (r.kind === 'ok' && r.info.pid === Number(m[1])) out.push(r.info);
  }
  return out.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
}
