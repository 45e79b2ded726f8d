// The hook program's end of the bridge: find the running extension through bridge.json (or, when the
// window that wrote it is gone, another live window's peer file), send one request with its token
// and read one answer.
//
// Three outcomes, and the hook acts on each differently:
//   answer       the extension answered (an `ok: false` answer is a refusal: the hook denies with it)
//   not_running  no extension runs: the hook decides in-process
//   unreachable  an extension runs (or bridge.json cannot be trusted) but gave no usable answer: the
//                hook DENIES with `why` (fail closed; never decide around a live extension)
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { BridgeDecision, BridgeRequest, BridgeResponse } from './bridge-protocol';
import type { Reason } from '../../engine/types';
import { BRIDGE_FILE, type BridgeInfo } from './state-dir';
import { isProcessAlive, livePeers, readInfoFile } from './bridge-files';
import { errorMessage } from '../../engine/error-message';

/** A request as the hook builds it; the client adds the token from bridge.json. */
export type BridgeRequestBody = BridgeRequest extends infer R ? (R extends BridgeRequest ? Omit<R, 'token'> : never) : never;

export type BridgeAnswer =
  | { readonly kind: 'answer'; readonly response: BridgeResponse; readonly pid: number }
  | { readonly kind: 'not_running'; readonly why: string }
  | { readonly kind: 'unreachable'; readonly why: string };

/** Longest answer line read (a decision with its reason is a few KB). */
export const MAX_BRIDGE_ANSWER = 1024 * 1024;

const isWindows = process.platform === 'win32';

export async function askBridge(stateDir: string, request: BridgeRequestBody, o: { timeoutMs: number }): Promise<BridgeAnswer> {
  if (!path.isAbsolute(stateDir))
    return { kind: 'unreachable', why: `the Bulwark state directory must be an absolute path, got \`${stateDir}\`` };
  const until = Date.now() + Math.max(0, o.timeoutMs);
  const dirProblem = stateDirProblem(stateDir);
  if (dirProblem === 'missing')
    return { kind: 'not_running', why: `${stateDir} does not exist, so no Bulwark extension has published a bridge` };
  if (dirProblem)
    return {
      kind: 'unreachable',
      why: `${dirProblem}; the hook cannot trust the bridge file there (fix the directory's owner or run chmod 700 on it)`,
    };

  const bridgeFile = path.join(stateDir, BRIDGE_FILE);
  const published = readInfoFile(bridgeFile);
  if (published.kind === 'invalid')
    return {
      kind: 'unreachable',
      why: `${published.why}; the hook will not use it (restart VS Code so Bulwark writes it again, or delete it if VS Code is not running)`,
    };

  const candidates: BridgeInfo[] = [];
  if (published.kind === 'ok' && isProcessAlive(published.info.pid)) candidates.push(published.info);
  for (const peer of livePeers(stateDir)) if (!candidates.some((c) => c.socket === peer.socket)) candidates.push(peer);
  if (candidates.length === 0) {
    return {
      kind: 'not_running',
      why:
        published.kind === 'ok'
          ? `${bridgeFile} names process ${published.info.pid}, which no longer runs, and no other VS Code window serves the bridge`
          : `no ${BRIDGE_FILE} in ${stateDir}: the Bulwark extension is not running`,
    };
  }

  const failures: string[] = [];
  for (const info of candidates) {
    const r = await exchange(info, request, until - Date.now());
    if (r.kind !== 'connect_failed') return r;
    failures.push(`process ${info.pid}: ${r.why}`);
  }
  return {
    kind: 'unreachable',
    why: `the Bulwark extension runs but its hook bridge cannot be reached (${failures.join('; ')}), so the action is denied. Reload the VS Code window; if VS Code is not running, delete ${bridgeFile}`,
  };
}

/** Why the state directory cannot be trusted, 'missing', or undefined when it is fine. */
function stateDirProblem(dir: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : `${dir} cannot be read (${errorMessage(e)})`;
  }
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (isWindows) return undefined;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `${dir} belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o022) !== 0) return `${dir} is writable by others (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}

type Exchange = BridgeAnswer | { readonly kind: 'connect_failed'; readonly why: string };

/** One connection: send the line, read one answer line. Failing to connect lets the caller try the next window. */
function exchange(info: BridgeInfo, request: BridgeRequestBody, timeoutMs: number): Promise<Exchange> {
  return new Promise((resolve) => {
    let settled = false;
    let connected = false;
    const chunks: Buffer[] = [];
    let size = 0;
    const conn = net.createConnection(info.socket);
    const finish = (r: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.destroy();
      resolve(r);
    };
    const unreachable = (why: string): Exchange => ({
      kind: 'unreachable',
      why: `the Bulwark extension (process ${info.pid}) ${why}, so the action is denied`,
    });
    const timer = setTimeout(
      () =>
        finish(
          connected
            ? unreachable(`gave no answer within ${Math.round(Math.max(0, timeoutMs))} ms`)
            : { kind: 'connect_failed', why: `no connection within ${Math.round(Math.max(0, timeoutMs))} ms` },
        ),
      Math.max(0, timeoutMs),
    );
    conn.on('connect', () => {
      connected = true;
      conn.write(JSON.stringify({ ...request, token: info.token }) + '\n');
    });
    conn.on('data', (chunk: Buffer) => {
      const nl = chunk.indexOf(0x0a);
      const take = nl === -1 ? chunk : chunk.subarray(0, nl);
      size += take.length;
      if (size > MAX_BRIDGE_ANSWER) return finish(unreachable(`sent an answer longer than ${MAX_BRIDGE_ANSWER} bytes`));
      chunks.push(take);
      if (nl === -1) return;
      const parsed = parseAnswer(Buffer.concat(chunks, size), request.kind);
      finish(
        typeof parsed === 'string'
          ? unreachable(`sent a malformed answer (${parsed})`)
          : { kind: 'answer', response: parsed, pid: info.pid },
      );
    });
    conn.on('error', (e: NodeJS.ErrnoException) => {
      if (!connected) finish({ kind: 'connect_failed', why: `${e.code ?? 'error'}: ${e.message}` });
      else finish(unreachable(`broke the connection (${e.code ?? e.message})`));
    });
    conn.on('close', () => finish(unreachable('closed the connection without answering')));
  });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isReason = (r: unknown): r is Reason =>
  isObject(r) &&
  typeof r.rule === 'string' &&
  [0, 1, 2, 3].includes(r.tier as number) &&
  (r.kind === 'policy' || r.kind === 'protection' || r.kind === 'error') &&
  typeof r.message === 'string';

/** The answer, or why it is not one. A decide answer that is `ok` must carry a well-formed decision. */
export function parseAnswer(line: Buffer, kind: BridgeRequest['kind']): BridgeResponse | string {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(line));
  } catch (e) {
    return `not JSON: ${errorMessage(e)}`;
  }
  if (!isObject(v) || v.v !== 1 || typeof v.ok !== 'boolean') return 'not a version 1 answer';
  if (!v.ok) return typeof v.error === 'string' ? { v: 1, ok: false, error: v.error } : 'an error answer without `error`';
  if (kind === 'inspect') {
    const f = v.findings;
    if (!Array.isArray(f) || !f.every((x) => isObject(x) && typeof x.category === 'string' && typeof x.rule === 'string'))
      return 'an inspect answer without well-formed findings';
    return { v: 1, ok: true, findings: f.map((x) => ({ category: x.category as string, rule: x.rule as string })) };
  }
  if (v.decision === undefined) return kind === 'decide' ? 'no decision' : { v: 1, ok: true };
  const d = v.decision;
  if (
    !isObject(d) ||
    !['allow', 'block', 'escalate'].includes(d.decision as string) ||
    typeof d.tier !== 'number' ||
    typeof d.minTier !== 'number' ||
    typeof d.level !== 'string' ||
    !Array.isArray(d.rules) ||
    !d.rules.every((r) => typeof r === 'string') ||
    typeof d.reason !== 'string'
  )
    return 'a malformed decision';
  const reasons = d.reasons;
  if (reasons !== undefined && (!Array.isArray(reasons) || !reasons.every(isReason))) return 'a decision with malformed reasons';
  const hides = d.sandboxHides;
  // A malformed list is refused whole: the allow it came with rests on hiding exactly these files.
  if (
    hides !== undefined &&
    (!Array.isArray(hides) ||
      !hides.every(
        (h) =>
          isObject(h) && typeof h.path === 'string' && h.path.startsWith('/') && !h.path.includes('\0') && typeof h.ruleId === 'string',
      ))
  )
    return 'a decision with malformed sandboxHides';
  const decision: BridgeDecision = {
    decision: d.decision as BridgeDecision['decision'],
    tier: d.tier,
    minTier: d.minTier,
    level: d.level,
    rules: d.rules as string[],
    reason: d.reason,
    ...(Array.isArray(reasons)
      ? { reasons: reasons.map((r: Reason) => ({ rule: r.rule, tier: r.tier, kind: r.kind, message: r.message })) }
      : {}),
    ...(Array.isArray(hides) && hides.length
      ? { sandboxHides: hides.map((h) => ({ path: (h as { path: string }).path, ruleId: (h as { ruleId: string }).ruleId })) }
      : {}),
  };
  return { v: 1, ok: true, decision };
}
