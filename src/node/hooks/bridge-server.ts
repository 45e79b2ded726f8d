// The extension's end of the hook bridge: a local socket (Unix socket in Bulwark's state directory,
// a named pipe on Windows) that answers the hook program's `decide` / `record` / `ping` requests,
// and the discovery file bridge.json that tells the hook where it is and which token it wants.
//
// Several editor windows (one extension host each): the last one started wins bridge.json, and
// every server also publishes its own `bridge-<pid>-<id>.json`. A server that stops hands
// bridge.json to the newest live one; when a host dies without stopping, the hook falls back to
// those files itself (bridge-client.ts), so a hook always reaches a live window when there is one.
//
// No vscode here: the extension passes `decide` and `record` (src/vscode/hook-bridge.ts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { isAgentId } from '../../engine/agents/types';
import { MAX_BRIDGE_LINE, type BridgeDecision, type BridgeFinding, type BridgeRequest, type BridgeResponse } from './bridge-protocol';
import { BRIDGE_FILE, type BridgeInfo } from './state-dir';
import {
  AUDIT_LOCATION_FILE,
  PEER_FILE_PATTERN,
  SOCKET_FILE_PATTERN,
  WINDOWS_PIPE_PREFIX,
  isProcessAlive,
  livePeers,
  preparePrivateDir,
  readInfoFile,
  writePrivateFileAtomic,
} from './bridge-files';
import { errorMessage } from '../../engine/error-message';

export type DecideRequest = Omit<Extract<BridgeRequest, { kind: 'decide' }>, 'token'>;
export type RecordRequest = Omit<Extract<BridgeRequest, { kind: 'record' }>, 'token'>;
export type InspectRequest = Omit<Extract<BridgeRequest, { kind: 'inspect' }>, 'token'>;
export type BridgeAuditLocation = NonNullable<BridgeInfo['audit']>;

export interface BridgeLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface BridgeServerOptions {
  readonly stateDir: string;
  /**
   * Decides one action. `signal` aborts when the request's deadline passes, the hook hangs up or the
   * server stops: the hook has then already been answered `block` (the signal's reason says why), so a
   * pending approval must close. Also called with a signal already aborted (the deadline had passed
   * on arrival): decide nothing then, only record the block. A throw is answered as a block that names the error.
   */
  decide(request: DecideRequest, signal: AbortSignal): Promise<BridgeDecision>;
  /** Records a post-tool finding in the audit log; a throw is answered as an error. */
  record(request: RecordRequest): Promise<void>;
  /** Inspects a tool's output and records what it found (rule ids only); a throw is answered as an error. Absent: `inspect` requests are refused. */
  inspect?(request: InspectRequest): Promise<readonly BridgeFinding[]>;
  /** The audit log the extension writes, published in bridge.json for a hook that decides in-process. */
  readonly audit?: BridgeAuditLocation;
  readonly log: BridgeLog;
  /** Tests: another process id to publish (default process.pid). */
  readonly pid?: number;
  /** Tests: the read timeout (default REQUEST_READ_TIMEOUT_MS). */
  readonly readTimeoutMs?: number;
}

export interface BridgeServer {
  /** What this server published (bridge.json and its own peer file). */
  readonly info: BridgeInfo;
  /** Publishes a new audit location (the user moved the log). */
  setAudit(audit: BridgeAuditLocation | undefined): void;
  /** Stops listening, answers pending requests `block`, removes the socket, the peer file and bridge.json if it is still ours. */
  dispose(): Promise<void>;
}

/** A connection must deliver its request line within this time (a 16 MB line takes milliseconds locally). */
export const REQUEST_READ_TIMEOUT_MS = 10_000;
/** Connections served at once; Node refuses more (that hook gets no answer and denies: fail closed). */
const MAX_CONNECTIONS = 64;

const isWindows = process.platform === 'win32';

/** Why a bridged decision was given up (the AbortSignal's reason): its rule id and the reason the hook was given. */
export class BridgeAbort extends Error {
  constructor(
    readonly rule: 'bridge.deadline' | 'bridge.aborted',
    message: string,
  ) {
    super(message);
  }
}

export async function startBridgeServer(o: BridgeServerOptions): Promise<BridgeServer> {
  const pid = o.pid ?? process.pid;
  const stateDir = path.resolve(o.stateDir);
  preparePrivateDir(stateDir);
  removeStaleFiles(stateDir, o.log);

  const instance = crypto.randomBytes(4).toString('hex');
  const socket = isWindows
    ? `${WINDOWS_PIPE_PREFIX}${crypto.randomBytes(16).toString('hex')}`
    : path.join(stateDir, `bridge-${pid}-${instance}.sock`);
  const token = crypto.randomBytes(32).toString('hex');
  const bridge = new HookBridge(o, stateDir, {
    socket,
    tokenDigest: sha256(token),
    peerFile: path.join(stateDir, `bridge-${pid}-${instance}.json`),
    bridgeFile: path.join(stateDir, BRIDGE_FILE),
  });
  await bridge.listen({ version: 1, pid, socket, token, startedAt: new Date().toISOString(), ...(o.audit ? { audit: o.audit } : {}) });
  return bridge;
}

/** Where one bridge listens and what it published. */
interface BridgeFiles {
  readonly socket: string;
  /** SHA-256 of the token a request must carry (the token itself is only in the private files). */
  readonly tokenDigest: Buffer;
  /** This server's own discovery file (bridge-<pid>-<instance>.json). */
  readonly peerFile: string;
  /** bridge.json: the discovery file hooks read first. */
  readonly bridgeFile: string;
}

/**
 * The extension's side of the hook bridge: one request line per connection (size- and time-bounded), answered
 * once; a decide request races the engine against its deadline, and every failure answers with a refusal.
 */
class HookBridge implements BridgeServer {
  private readonly server: net.Server;
  private readonly inFlight = new Set<AbortController>();
  private disposed = false;
  private published!: BridgeInfo;

  constructor(
    private readonly o: BridgeServerOptions,
    private readonly stateDir: string,
    private readonly files: BridgeFiles,
  ) {
    this.server = net.createServer((conn) => this.serve(conn));
    this.server.maxConnections = MAX_CONNECTIONS;
  }

  get info(): BridgeInfo {
    return this.published;
  }

  /** Listens on the socket (private to this user), then publishes the discovery files; a failure leaves nothing behind. */
  async listen(info: BridgeInfo): Promise<void> {
    const { server, files, o } = this;
    this.published = info;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(files.socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (e) => o.log.error(`hook bridge: the socket failed: ${e.message}`));
    if (!isWindows) fs.chmodSync(files.socket, 0o600);
    try {
      writePrivateFileAtomic(files.peerFile, JSON.stringify(info, null, 2) + '\n');
      writePrivateFileAtomic(files.bridgeFile, JSON.stringify(info, null, 2) + '\n');
      publishAuditLocation(this.stateDir, o.audit);
    } catch (e) {
      server.close();
      removeQuietly(files.socket);
      removeQuietly(files.peerFile);
      throw e;
    }
    o.log.info(`hook bridge listening on ${files.socket} (discovery file ${files.bridgeFile})`);
  }

  setAudit(audit: BridgeAuditLocation | undefined): void {
    const { files, o } = this;
    const info = this.published;
    const next: BridgeInfo = {
      version: 1,
      pid: info.pid,
      socket: info.socket,
      token: info.token,
      startedAt: info.startedAt,
      ...(audit ? { audit } : {}),
    };
    this.published = next;
    if (this.disposed) return;
    try {
      writePrivateFileAtomic(files.peerFile, JSON.stringify(next, null, 2) + '\n');
      if (namesThisServer(files.bridgeFile, files.socket)) {
        writePrivateFileAtomic(files.bridgeFile, JSON.stringify(next, null, 2) + '\n');
        publishAuditLocation(this.stateDir, audit);
      }
    } catch (e) {
      o.log.error(`hook bridge: could not publish the new audit location: ${errorMessage(e)}`);
    }
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const { files, o } = this;
    // Files first and synchronously: the extension host may exit right after deactivation.
    removeQuietly(files.peerFile);
    if (namesThisServer(files.bridgeFile, files.socket)) handOver(this.stateDir, files.bridgeFile, o.log);
    for (const c of this.inFlight) c.abort(new BridgeAbort('bridge.aborted', 'the Bulwark extension is shutting down'));
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (!isWindows) removeQuietly(files.socket);
    o.log.info('hook bridge stopped');
  }

  /** One connection: reads its request line (bounded in size and time), then answers it exactly once. */
  private serve(conn: net.Socket): void {
    const chunks: Buffer[] = [];
    let size = 0;
    let state: 'reading' | 'handling' | 'answered' = 'reading';
    const readTimeoutMs = this.o.readTimeoutMs ?? REQUEST_READ_TIMEOUT_MS;
    const timer = setTimeout(
      () => answer({ v: 1, ok: false, error: `no complete request line within ${readTimeoutMs} ms; nothing was decided` }),
      readTimeoutMs,
    );
    conn.on('error', () => undefined); // a hook that dies mid-answer is not an error of the extension
    function answer(response: BridgeResponse): void {
      if (state === 'answered') return;
      state = 'answered';
      clearTimeout(timer);
      if (!conn.writable) {
        conn.destroy();
        return;
      }
      conn.end(JSON.stringify(response) + '\n');
      // A client that never reads its answer does not keep the connection open.
      setTimeout(() => conn.destroy(), 5000).unref();
    }
    conn.on('data', (chunk: Buffer) => {
      if (state !== 'reading') return; // after the line (or a refusal) the rest is discarded
      const nl = chunk.indexOf(0x0a);
      const take = nl === -1 ? chunk : chunk.subarray(0, nl);
      size += take.length;
      if (size > MAX_BRIDGE_LINE) {
        answer({ v: 1, ok: false, error: `the request line is longer than ${MAX_BRIDGE_LINE} bytes; nothing was decided` });
        return;
      }
      chunks.push(take);
      if (nl === -1) return;
      state = 'handling';
      clearTimeout(timer);
      const line = Buffer.concat(chunks, size);
      chunks.length = 0;
      void this.handleLine(line, conn).then(answer, (e: unknown) =>
        answer({ v: 1, ok: false, error: `internal error: ${errorMessage(e)}; nothing was decided` }),
      );
    });
    // The hook keeps its side open until it has the answer; an end before the line is a hook that gave up.
    conn.on('end', () => {
      if (state === 'reading')
        answer({ v: 1, ok: false, error: 'the connection ended before a complete request line; nothing was decided' });
    });
  }

  private async handleLine(line: Buffer, conn: net.Socket): Promise<BridgeResponse> {
    const { o } = this;
    const parsed = parseRequest(line, this.files.tokenDigest);
    if ('error' in parsed) {
      o.log.warn(`hook bridge: refused a request: ${parsed.error}`);
      return { v: 1, ok: false, error: parsed.error };
    }
    const req = parsed.request;
    if (this.disposed) return { v: 1, ok: false, error: 'the Bulwark extension is shutting down; nothing was decided' };
    switch (req.kind) {
      case 'ping':
        return { v: 1, ok: true };
      case 'record':
        try {
          await o.record(req);
          return { v: 1, ok: true };
        } catch (e) {
          o.log.error(`hook bridge: could not record a ${req.event} event from ${req.agent}: ${errorMessage(e)}`);
          return { v: 1, ok: false, error: `the finding could not be recorded in the audit log (${errorMessage(e)})` };
        }
      case 'inspect':
        if (!o.inspect) return { v: 1, ok: false, error: 'this Bulwark does not inspect tool output over the bridge' };
        try {
          return { v: 1, ok: true, findings: await o.inspect(req) };
        } catch (e) {
          o.log.error(`hook bridge: could not inspect the output of ${req.agent}'s ${req.tool}: ${errorMessage(e)}`);
          return { v: 1, ok: false, error: `the tool output could not be inspected and recorded (${errorMessage(e)})` };
        }
      case 'decide':
        return { v: 1, ok: true, decision: await this.decideBy(req, conn) };
    }
  }

  /** Runs `decide` against the request's deadline; whatever comes first answers the hook. */
  private async decideBy(req: DecideRequest, conn: net.Socket): Promise<BridgeDecision> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const hungUp = () => controller.abort(new BridgeAbort('bridge.aborted', 'the hook closed the connection before Bulwark decided'));
    conn.once('close', hungUp);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const waitMs = req.deadlineMs - Date.now();
      const late = new Promise<BridgeDecision>((resolve) => {
        const expire = () => {
          const d = deadlineBlock();
          resolve(d); // before the abort, whose listener would resolve with its own reason
          controller.abort(new BridgeAbort('bridge.deadline', d.reason));
        };
        if (waitMs <= 0) expire();
        else timer = setTimeout(expire, waitMs);
        controller.signal.addEventListener('abort', () => resolve(stoppedBlock(controller.signal.reason)), { once: true });
      });
      // Called even when the deadline has already passed: `decide` records the block (the signal says why).
      const decided = this.o
        .decide(req, controller.signal)
        .catch((e: unknown): BridgeDecision =>
          blockFor('bridge.error', `the decision failed (${errorMessage(e)}), so the action cannot be allowed`),
        );
      const d = await Promise.race([decided, late]);
      this.o.log.info(
        `hook bridge: ${req.agent} ${truncate(req.action.type, 80)} → ${d.decision} at Tier ${d.tier}${d.rules.length ? ` [${d.rules.slice(0, 5).join(', ')}]` : ''}`,
      );
      return d;
    } finally {
      clearTimeout(timer);
      conn.off('close', hungUp);
      this.inFlight.delete(controller);
    }
  }
}

/**
 * Keeps the extension's audit location in <stateDir>/audit-location.json after the extension exits
 * (bridge.json does not outlive it), so a hook that decides in-process appends to the same chain.
 */
function publishAuditLocation(stateDir: string, audit: BridgeAuditLocation | undefined): void {
  if (audit) writePrivateFileAtomic(path.join(stateDir, AUDIT_LOCATION_FILE), JSON.stringify(audit, null, 2) + '\n');
}

export function deadlineBlock(): BridgeDecision {
  return blockFor(
    'bridge.deadline',
    "no decision came before the hook's deadline, so the action is denied: Bulwark was still deciding it (usually waiting for your approval in the VS Code dialog, or for the Tier 2 review). " +
      "Answer the Bulwark dialog sooner, or raise the hook's timeout in the agent's hook settings, then retry the tool call",
  );
}

function stoppedBlock(reason: unknown): BridgeDecision {
  return blockFor('bridge.aborted', `${errorMessage(reason)}, so the action is denied; retry the tool call`);
}

function blockFor(rule: string, why: string): BridgeDecision {
  return { decision: 'block', tier: 0, minTier: 0, level: 'unprotected', rules: [rule], reason: `Blocked: ${why}.` };
}

export type BridgeRequestWithoutToken = DecideRequest | RecordRequest | InspectRequest | { readonly v: 1; readonly kind: 'ping' };
type Parsed = { request: BridgeRequestWithoutToken } | { error: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const shortString = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

/** Checks the line: UTF-8, JSON, the token (constant time), then the request's shape. Nothing is decided on an error. */
export function parseRequest(line: Buffer, tokenDigest: Buffer): Parsed {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(line);
  } catch {
    return { error: 'the request is not valid UTF-8; nothing was decided' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `the request is not valid JSON (${errorMessage(e)}); nothing was decided` };
  }
  if (!isObject(value)) return { error: 'the request must be a JSON object; nothing was decided' };
  if (typeof value.token !== 'string' || value.token === '')
    return { error: 'the request carries no token (read it from bridge.json); nothing was decided' };
  if (!crypto.timingSafeEqual(sha256(value.token), tokenDigest))
    return { error: 'wrong token (bridge.json was rewritten: read it again); nothing was decided' };
  if (value.v !== 1)
    return { error: `unsupported protocol version ${JSON.stringify(value.v)} (this extension speaks 1); nothing was decided` };
  switch (value.kind) {
    case 'ping':
      return { request: { v: 1, kind: 'ping' } };
    case 'decide': {
      if (!isAgentId(value.agent)) return { error: `unknown agent ${JSON.stringify(value.agent)}; nothing was decided` };
      const a = value.action;
      if (!isObject(a)) return { error: 'decide needs an `action` object; nothing was decided' };
      if (!shortString(a.type, 200)) return { error: 'the action needs a `type` (1–200 characters); nothing was decided' };
      if (!isObject(a.payload)) return { error: 'the action needs a `payload` object; nothing was decided' };
      if (!shortString(a.sessionId, 500)) return { error: 'the action needs a `sessionId` (1–500 characters); nothing was decided' };
      if (a.cwd !== undefined && typeof a.cwd !== 'string') return { error: "the action's `cwd` must be a string; nothing was decided" };
      if (a.id !== undefined && !shortString(a.id, 200))
        return { error: "the action's `id` must be a string of 1–200 characters; nothing was decided" };
      if (a.sandboxed !== undefined && typeof a.sandboxed !== 'boolean')
        return { error: "the action's `sandboxed` must be true or false; nothing was decided" };
      if (typeof value.deadlineMs !== 'number' || !Number.isFinite(value.deadlineMs))
        return { error: 'decide needs `deadlineMs` (epoch milliseconds); nothing was decided' };
      for (const k of ['policy', 'ifc', 'workspace', 'sandbox'] as const) {
        if (value[k] !== undefined && !shortString(value[k], 4096))
          return { error: `decide: \`${k}\` must be a string of 1–4096 characters; nothing was decided` };
      }
      return {
        request: {
          v: 1,
          kind: 'decide',
          agent: value.agent,
          deadlineMs: value.deadlineMs,
          ...(value.policy !== undefined ? { policy: value.policy as string } : {}),
          ...(value.ifc !== undefined ? { ifc: value.ifc as string } : {}),
          ...(value.workspace !== undefined ? { workspace: value.workspace as string } : {}),
          ...(value.sandbox !== undefined ? { sandbox: value.sandbox as string } : {}),
          action: {
            ...(a.id !== undefined ? { id: a.id } : {}),
            type: a.type,
            payload: a.payload,
            sessionId: a.sessionId,
            ...(a.cwd !== undefined ? { cwd: a.cwd } : {}),
            ...(a.sandboxed === true ? { sandboxed: true } : {}),
          },
        },
      };
    }
    case 'record': {
      if (!isAgentId(value.agent)) return { error: `unknown agent ${JSON.stringify(value.agent)}; nothing was recorded` };
      if (!shortString(value.sessionId, 500)) return { error: 'record needs a `sessionId` (1–500 characters); nothing was recorded' };
      if (value.event !== 'tool_output_inspected')
        return { error: `unknown event ${JSON.stringify(value.event)} (known: tool_output_inspected); nothing was recorded` };
      if (!isObject(value.details)) return { error: 'record needs a `details` object; nothing was recorded' };
      return {
        request: { v: 1, kind: 'record', agent: value.agent, sessionId: value.sessionId, event: value.event, details: value.details },
      };
    }
    case 'inspect': {
      if (!isAgentId(value.agent)) return { error: `unknown agent ${JSON.stringify(value.agent)}; nothing was inspected` };
      if (!shortString(value.sessionId, 500)) return { error: 'inspect needs a `sessionId` (1–500 characters); nothing was inspected' };
      if (!shortString(value.tool, 256)) return { error: 'inspect needs the `tool` name (1–256 characters); nothing was inspected' };
      if (value.toolUseId !== undefined && !shortString(value.toolUseId, 200))
        return { error: 'inspect: `toolUseId` must be a string of 1–200 characters; nothing was inspected' };
      if (typeof value.text !== 'string') return { error: 'inspect needs the output `text`; nothing was inspected' };
      if (value.workspace !== undefined && !(shortString(value.workspace, 4096) && (value.workspace as string).startsWith('/')))
        return { error: 'inspect: `workspace` must be an absolute path; nothing was inspected' };
      return {
        request: {
          v: 1,
          kind: 'inspect',
          agent: value.agent,
          sessionId: value.sessionId,
          tool: value.tool,
          ...(value.toolUseId !== undefined ? { toolUseId: value.toolUseId } : {}),
          text: value.text,
          ...(value.workspace !== undefined ? { workspace: value.workspace as string } : {}),
        },
      };
    }
    default:
      return { error: `unknown request kind ${JSON.stringify(value.kind)} (known: decide, record, inspect, ping); nothing was decided` };
  }
}

/** bridge.json names this server (by socket; a later start of the same process has another socket). */
function namesThisServer(bridgeFile: string, socket: string): boolean {
  const r = readInfoFile(bridgeFile);
  return r.kind === 'ok' && r.info.socket === socket;
}

/** bridge.json goes to the newest live peer, or away when there is none. */
function handOver(stateDir: string, bridgeFile: string, log: BridgeLog): void {
  const next = livePeers(stateDir)[0];
  try {
    if (next) {
      writePrivateFileAtomic(bridgeFile, JSON.stringify(next, null, 2) + '\n');
      log.info(`hook bridge: bridge.json now names the window of process ${next.pid}`);
    } else {
      fs.unlinkSync(bridgeFile);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') log.warn(`hook bridge: could not update ${bridgeFile}: ${errorMessage(e)}`);
  }
}

/** Peer files, sockets and temporary files left by processes that are gone. bridge.json itself is replaced on start. */
function removeStaleFiles(stateDir: string, log: BridgeLog): void {
  let names: string[];
  try {
    names = fs.readdirSync(stateDir);
  } catch {
    return;
  }
  for (const name of names) {
    const m =
      PEER_FILE_PATTERN.exec(name) ??
      SOCKET_FILE_PATTERN.exec(name) ??
      /^bridge(?:-\d+-[0-9a-f]{8})?\.json\.(\d+)\.[0-9a-f]{8}\.tmp$/.exec(name);
    if (!m || isProcessAlive(Number(m[1]))) continue;
    removeQuietly(path.join(stateDir, name));
    log.info(`hook bridge: removed ${name}, left by process ${m[1]} that no longer runs`);
  }
}

function removeQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch {
    /* already gone */
  }
}

function sha256(s: string): Buffer {
  return crypto.createHash('sha256').update(s, 'utf8').digest();
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
