// The sandbox helper (dist/sandbox-helper.js): a child process of the extension host that runs
// commands in the OS sandbox (src/node/sandbox/runner.ts) and streams what happens back over IPC
// (protocol.ts). Its own process, so a sandbox run never blocks or crashes the extension host, and
// every sandbox is a child of it: bubblewrap's --die-with-parent ends them all when it dies.
// When the extension host goes away (IPC disconnect), it kills every running sandbox and exits.
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { findOnPath } from '../node/find-on-path';
import { probeSandbox } from '../node/sandbox/probe';
import { knownSecretsFor } from '../node/known-secrets';
import { runSandboxed, type SandboxRunResult, type SandboxRunnerOptions } from '../node/sandbox/runner';
import type { FromHelper, HelperRunRequest, ToHelper } from './protocol';
import { errorMessage } from '../engine/error-message';

interface Run {
  readonly controller: AbortController;
  stdin?: NodeJS.WritableStream;
  /** Input that came before the command started. */
  readonly pending: string[];
  ended: boolean;
  readonly done: Promise<void>;
}

const runs = new Map<string, Run>();
let shuttingDown = false;

function send(m: FromHelper): void {
  if (!process.connected) return;
  try {
    process.send!(m);
  } catch {
    /* the channel closed: the disconnect handler ends everything */
  }
}

/**
 * The network forwarder runs inside the sandbox as `node sandbox-init.js`. Under Electron this
 * process's binary is Electron, which acts as Node only with ELECTRON_RUN_AS_NODE, a variable the
 * command must not inherit: there a Node on PATH runs it, and without one network runs are refused.
 */
function forwarder(): SandboxRunnerOptions['forwarder'] {
  const script = path.join(__dirname, 'sandbox-init.js');
  if (!fs.existsSync(script)) return undefined;
  const node = process.versions.electron ? findOnPath('node') : process.execPath;
  return node ? { node, script } : undefined;
}

function validRequest(r: unknown): r is HelperRunRequest {
  if (typeof r !== 'object' || r === null) return false;
  const q = r as Record<string, unknown>;
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  return (
    strings(q.command) &&
    typeof q.cwd === 'string' &&
    typeof q.plan === 'object' &&
    q.plan !== null &&
    typeof q.env === 'object' &&
    q.env !== null &&
    typeof q.timeoutMs === 'number' &&
    (q.allowHosts === undefined || strings(q.allowHosts)) &&
    (q.stdin === undefined || typeof q.stdin === 'string') &&
    (q.outputLimit === undefined || typeof q.outputLimit === 'number')
  );
}

function startRun(id: string, request: HelperRunRequest, interactive: boolean): void {
  const controller = new AbortController();
  const limit = request.outputLimit ?? Number.POSITIVE_INFINITY;
  const sent = { stdout: 0, stderr: 0 };
  const dropped = { stdout: 0, stderr: 0 };
  const stream = (name: 'stdout' | 'stderr') => (text: string) => {
    const room = Math.max(0, limit - sent[name]);
    const part = text.length <= room ? text : text.slice(0, room);
    if (part) {
      sent[name] += part.length;
      send({ type: name, id, text: part });
    }
    dropped[name] += text.length - part.length;
  };
  // Never handed to the command, whatever the caller put in its environment.
  const { ELECTRON_RUN_AS_NODE: _electron, ...env } = request.env;
  // Output masks the user's known secrets by value: the workspace's .env files, credential files, the host's secret-named variables.
  knownSecretsFor(request.plan.writable, os.homedir(), process.env, 0);
  const run: Run = {
    controller,
    pending: [],
    ended: false,
    done: (async () => {
      let result: SandboxRunResult;
      try {
        result = await runSandboxed(
          { ...request, env },
          { stdout: stream('stdout'), stderr: stream('stderr'), network: (decision) => send({ type: 'network', id, decision }) },
          controller.signal,
          {
            forwarder: forwarder(),
            ...(interactive
              ? {
                  interactiveStdin: (stdin: NodeJS.WritableStream) => {
                    run.stdin = stdin;
                    for (const p of run.pending.splice(0)) stdin.write(p);
                    if (run.ended) stdin.end();
                  },
                }
              : {}),
          },
        );
      } catch (e) {
        result = {
          status: 'sandbox_failed',
          exitCode: null,
          error: `the sandbox helper failed: ${errorMessage(e)}`,
          violations: [],
          network: [],
          mechanism: 'none',
          durationMs: 0,
        };
      }
      runs.delete(id);
      send({ type: 'result', id, result, dropped });
    })(),
  };
  runs.set(id, run);
  send({ type: 'accepted', id });
}

async function handle(m: ToHelper): Promise<void> {
  if (typeof m !== 'object' || m === null || typeof (m as { id?: unknown }).id !== 'string') {
    send({ type: 'error', error: `malformed message ${JSON.stringify(m).slice(0, 200)}` });
    return;
  }
  switch (m.type) {
    case 'run':
      if (shuttingDown) {
        send({ type: 'error', id: m.id, error: 'the sandbox helper is shutting down' });
        return;
      }
      if (runs.has(m.id)) {
        send({ type: 'error', id: m.id, error: `a run with id ${m.id} is already going` });
        return;
      }
      if (!validRequest(m.request)) {
        send({ type: 'error', id: m.id, error: 'malformed run request' });
        return;
      }
      startRun(m.id, m.request, m.interactive === true);
      return;
    case 'stdin': {
      const r = runs.get(m.id);
      if (!r || r.ended || typeof m.data !== 'string') return;
      if (r.stdin) r.stdin.write(m.data);
      else r.pending.push(m.data);
      return;
    }
    case 'stdin_end': {
      const r = runs.get(m.id);
      if (!r) return;
      r.ended = true;
      r.stdin?.end();
      return;
    }
    case 'cancel':
      runs.get(m.id)?.controller.abort();
      return;
    case 'probe': {
      const status = await probeSandbox({ fresh: m.fresh === true });
      send({ type: 'probe', id: m.id, status });
      return;
    }
    default:
      send({
        type: 'error',
        id: (m as { id: string }).id,
        error: `unknown request type ${JSON.stringify((m as { type?: unknown }).type)}`,
      });
  }
}

/** The extension host is gone: every sandbox is killed (the runner kills its process group), then exit. */
async function shutdown(): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  const done = [...runs.values()].map((r) => {
    r.controller.abort();
    return r.done;
  });
  await Promise.race([Promise.allSettled(done), new Promise((r) => setTimeout(r, 5000))]);
  process.exit(0);
}

if (!process.send) {
  process.stderr.write(
    'bulwark sandbox-helper: this program is started by the Bulwark extension (it talks over an IPC channel); use `bulwark exec` to run a command in the sandbox by hand\n',
  );
  process.exit(2);
}
process.on('message', (m: ToHelper) => {
  void handle(m).catch((e: unknown) => send({ type: 'error', id: (m as { id?: string })?.id, error: errorMessage(e) }));
});
process.on('disconnect', () => {
  void shutdown();
});
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
  process.on(sig, () => {
    void shutdown();
  });
send({ type: 'ready', pid: process.pid });
