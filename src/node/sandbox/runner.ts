// Runs one command inside the OS sandbox: bubblewrap on Linux, sandbox-exec on macOS. Streams its
// output through the secret redactor, kills the whole sandbox on timeout or cancellation, routes
// allowed network through the filtering proxy, and checks afterwards that nothing protected appeared.
// Never runs a command unsandboxed: when the sandbox cannot start, the result says why.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StreamingRedactor, loadSecretRules } from '../../engine/secrets';
import type { SandboxPlan } from '../../engine';
import { bwrapArgs } from './bwrap';
import { macosSandboxProfile } from './macos-profile';
import { probeSandbox, type SandboxStatus } from './probe';
import { seccompFilter } from './seccomp';
import { landlockSupport, landlockWrapped } from './landlock';
import { startFilteringProxy, type ProxyDecision } from './proxy';
import { errorMessage } from '../../engine/error-message';

export interface SandboxRunRequest {
  /** argv; a shell line is `[shell, '-c', line]`. */
  readonly command: readonly string[];
  readonly cwd: string;
  readonly plan: SandboxPlan;
  /** The whole environment of the command (see sandboxEnvironment). */
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Hosts the command may reach through the filtering proxy; none = no network at all. */
  readonly allowHosts?: readonly string[];
  /** Text written to the command's standard input, then closed (default: nothing, closed). */
  readonly stdin?: string;
  /** The command reads this process's own standard input instead (a terminal user at `bulwark exec`). */
  readonly inheritStdin?: boolean;
}

export interface SandboxViolation {
  readonly path: string;
  readonly ruleId: string;
  readonly what: string;
}

export interface SandboxRunResult {
  /** exited: the command ran and ended by itself; the others: it was stopped, or never started. */
  readonly status: 'exited' | 'signaled' | 'timed_out' | 'cancelled' | 'sandbox_failed';
  readonly exitCode: number | null;
  readonly signal?: string;
  /** Why the sandbox could not run it (status sandbox_failed). */
  readonly error?: string;
  readonly fix?: string;
  /** Protected paths inside a writable root the command created although the sandbox could not stop it. */
  readonly violations: readonly SandboxViolation[];
  /** Every connection the proxy decided. */
  readonly network: readonly ProxyDecision[];
  readonly mechanism: SandboxStatus['mechanism'];
  readonly durationMs: number;
}

export interface SandboxOutput {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Each connection the proxy decided, as it is decided (they are also in the result's `network`). */
  network?(decision: ProxyDecision): void;
}

export interface SandboxRunnerOptions {
  /** How the in-sandbox network forwarder is started: a Node binary and dist/sandbox-init.js. */
  readonly forwarder?: { readonly node: string; readonly script: string };
  readonly bwrapPath?: string;
  /** Where the run's private files go (default os.tmpdir()). */
  readonly tmpRoot?: string;
  /**
   * An interactive run (a terminal): called once the command has started, with its standard input left
   * open, instead of writing `req.stdin` and closing it. Writes after the command ended are dropped.
   */
  readonly interactiveStdin?: (stdin: NodeJS.WritableStream) => void;
}

export async function runSandboxed(
  req: SandboxRunRequest,
  out: SandboxOutput,
  signal?: AbortSignal,
  opts: SandboxRunnerOptions = {},
): Promise<SandboxRunResult> {
  const started = Date.now();
  const status = await probeSandbox({ bwrapPath: opts.bwrapPath });
  const failed = (error: string, fix?: string): SandboxRunResult => ({
    status: 'sandbox_failed',
    exitCode: null,
    error,
    ...(fix ? { fix } : {}),
    violations: [],
    network: [],
    mechanism: status.mechanism,
    durationMs: Date.now() - started,
  });
  if (!status.available) return failed(status.reason ?? 'no OS sandbox', status.fix);
  if (req.command.length === 0) return failed('no command given');
  if (!(req.timeoutMs > 0)) return failed('the timeout must be a positive number of milliseconds');
  if (req.allowHosts?.length && !opts.forwarder)
    return failed('network was allowed but the network forwarder (dist/sandbox-init.js) is not available to this host');
  if (signal?.aborted) return { ...failed('cancelled before it started'), status: 'cancelled' };

  const runDir = fs.mkdtempSync(path.join(opts.tmpRoot ?? os.tmpdir(), 'bulwark-sbx-'));
  const network: ProxyDecision[] = [];
  let proxy: { close(): Promise<void> } | undefined;
  const guardsBefore = new Set(req.plan.guardDirs.filter((g) => fs.existsSync(g.createdFrom ?? g.path)).map((g) => g.path));
  try {
    fs.chmodSync(runDir, 0o711);
    const emptyDir = path.join(runDir, 'empty-dir');
    const emptyFile = path.join(runDir, 'empty-file');
    fs.mkdirSync(emptyDir, { mode: 0o000 });
    fs.writeFileSync(emptyFile, '', { mode: 0o000 });
    let command = [...req.command];
    let proxyDir: string | undefined;
    if (req.allowHosts?.length) {
      proxyDir = path.join(runDir, 'net');
      fs.mkdirSync(proxyDir, { mode: 0o700 });
      const socketPath = path.join(proxyDir, 'proxy.sock');
      proxy = await startFilteringProxy({
        socketPath,
        allowHosts: [...req.allowHosts],
        onDecision: (d) => {
          if (network.length < 10_000) network.push(d);
          out.network?.(d);
        },
      });
      command = [opts.forwarder!.node, opts.forwarder!.script, '--proxy-socket', socketPath, '--port', '0', '--', ...command];
    }

    let program: string;
    let args: string[];
    const extraFds: number[] = [];
    if (status.mechanism === 'bubblewrap') {
      const filter = seccompFilter(process.arch);
      let seccompFd: number | undefined;
      if (filter) {
        const f = path.join(runDir, 'seccomp.bpf');
        fs.writeFileSync(f, filter, { mode: 0o600 });
        extraFds.push(fs.openSync(f, 'r'));
        seccompFd = 3;
      }
      const extraReadOnly = opts.forwarder && proxyDir ? [opts.forwarder.node, opts.forwarder.script] : [];
      // Landlock under the mounts: writes only below the writable roots, the private /tmp and /dev.
      const landlock = landlockSupport();
      if (landlock.available) command = landlockWrapped(landlock.perl!, [...req.plan.writable, '/tmp', '/dev'], command);
      program = status.program!;
      args = bwrapArgs({ plan: req.plan, cwd: req.cwd, emptyDir, emptyFile, proxyDir, seccompFd, extraReadOnly, command });
    } else {
      const profile = macosSandboxProfile({
        hidden: req.plan.hidden.map((h) => h.path),
        readOnlyInWritable: [...req.plan.readOnly, ...req.plan.guardDirs].map((m) => m.path),
        writable: [...req.plan.writable],
        tmpDir: runDir,
      });
      program = status.program!;
      args = ['-p', profile, ...command];
    }
    const env = { ...req.env, PWD: req.cwd, ...(status.mechanism === 'sandbox-exec' ? { TMPDIR: runDir } : {}) };
    return await new Promise<SandboxRunResult>((resolve) => {
      const child = spawn(program, args, {
        cwd: status.mechanism === 'bubblewrap' ? '/' : req.cwd,
        env,
        stdio: [req.inheritStdin ? 'inherit' : 'pipe', 'pipe', 'pipe', ...extraFds],
        // Its own process group: a timeout kills everything it started, not only the first process.
        detached: true,
      });
      for (const fd of extraFds) fs.closeSync(fd);
      child.stdin?.on('error', () => {
        /* the command may not read its input */
      });
      if (opts.interactiveStdin && child.stdin) opts.interactiveStdin(child.stdin);
      else child.stdin?.end(req.stdin ?? '');
      void superviseChild(child, out, req.timeoutMs, signal).then((end) => {
        const base = {
          violations: afterRun(req.plan, guardsBefore),
          network,
          mechanism: status.mechanism,
          durationMs: Date.now() - started,
        };
        resolve(
          end.status === 'sandbox_failed'
            ? { ...base, ...end, error: `${program} could not be started: ${end.error}` }
            : { ...base, ...end },
        );
      });
    });
  } catch (e) {
    return failed(`the sandbox could not be prepared: ${errorMessage(e)}`);
  } finally {
    await proxy?.close().catch(() => undefined);
    try {
      fs.chmodSync(path.join(runDir, 'empty-dir'), 0o700);
    } catch {
      /* not made */
    }
    fs.rmSync(runDir, { recursive: true, force: true });
  }
}

/** How a supervised process ended (what SandboxRunResult says of it). */
export type ChildEnd = Pick<SandboxRunResult, 'status' | 'exitCode' | 'signal' | 'error'>;

/**
 * Streams a started process's output through the secret redactor, kills its whole process group (it
 * must have been spawned `detached`) on timeout or cancellation, and tells how it ended. One place for
 * the sandboxed run and the unsandboxed one the user approved.
 */
export function superviseChild(child: ChildProcess, out: SandboxOutput, timeoutMs: number, signal?: AbortSignal): Promise<ChildEnd> {
  return new Promise((resolve) => {
    const rules = loadSecretRules();
    const streams = (['stdout', 'stderr'] as const).map((name) => {
      const decoder = new TextDecoder('utf-8', { fatal: false });
      const redactor = new StreamingRedactor(rules, (t) => out[name](t));
      child[name]?.on('data', (b: Buffer) => redactor.write(decoder.decode(b, { stream: true })));
      return {
        end: () => {
          redactor.write(decoder.decode());
          redactor.close();
        },
      };
    });
    let stopped: 'timed_out' | 'cancelled' | undefined;
    const stop = (why: 'timed_out' | 'cancelled') => {
      if (stopped) return;
      stopped = why;
      // For bwrap, the group holds the sandbox's PID 1: killing it ends the PID namespace and all in it.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        try {
          child.kill('SIGKILL');
        } catch {
          /* gone */
        }
      }
    };
    const timer = setTimeout(() => stop('timed_out'), timeoutMs);
    const onAbort = () => stop('cancelled');
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let spawnError: string | undefined;
    child.on('error', (e) => {
      spawnError = e.message;
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      for (const st of streams) st.end();
      if (spawnError) resolve({ status: 'sandbox_failed', exitCode: null, error: spawnError });
      else if (stopped) resolve({ status: stopped, exitCode: null, signal: 'SIGKILL' });
      else if (sig) resolve({ status: 'signaled', exitCode: null, signal: sig });
      else resolve({ status: 'exited', exitCode: code });
    });
  });
}

/**
 * After the run: placeholder directories bwrap created are removed while still empty; a protected path
 * that appeared where the sandbox could not put a placeholder is reported (never deleted).
 */
function afterRun(plan: SandboxPlan, guardsBefore: ReadonlySet<string>): SandboxViolation[] {
  for (const g of plan.guardDirs) {
    if (guardsBefore.has(g.path)) continue;
    // The placeholder and the parents bwrap made for it, deepest first, each only while empty.
    const stop = g.createdFrom ?? g.path;
    for (let dir = g.path; dir.length >= stop.length; dir = path.dirname(dir)) {
      try {
        if (fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
        else break;
      } catch {
        break;
      }
    }
  }
  const violations: SandboxViolation[] = [];
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  for (const m of plan.watchMissing) {
    if (!fs.existsSync(m.path)) continue;
    // Moved aside, not deleted: what reads it (the editor's settings, an agent's instructions) no longer
    // does, and the user can look at it and put it back.
    const aside = `${m.path}.bulwark-blocked-${stamp}`;
    try {
      fs.renameSync(m.path, aside);
      violations.push({
        path: m.path,
        ruleId: m.ruleId,
        what: `the command created ${m.path}, which ${m.ruleId} protects; it was moved to ${aside} (rename it back if you meant it)`,
      });
    } catch (e) {
      violations.push({
        path: m.path,
        ruleId: m.ruleId,
        what: `the command created ${m.path}, which ${m.ruleId} protects, and it could not be moved aside (${(e as Error).message}); review it before anything uses it`,
      });
    }
  }
  return violations;
}
