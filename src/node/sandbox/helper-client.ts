// The extension host's side of the sandbox helper (src/sandbox-helper): starts it on first use,
// starts it again after it died, and turns every way it can fail into a refusal that says why
// (fail closed): it could not start, it exited or crashed during a run (the sandbox dies with it:
// bubblewrap runs with --die-with-parent), it did not accept a request in time, or it did not report
// a result by the run's own deadline plus a grace period (it is then killed, and its sandboxes with it).
import { fork, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import type { DroppedOutput, FromHelper, HelperRunRequest, ToHelper } from '../../sandbox-helper/protocol';
import type { ProxyDecision } from './proxy';
import type { SandboxRunResult } from './runner';
import type { SandboxStatus } from './probe';

export type { HelperRunRequest } from '../../sandbox-helper/protocol';

export interface SandboxHelperClientOptions {
  /** dist/sandbox-helper.js. */
  readonly helperScript: string;
  /** How long the helper may take to accept a run (default 10 s). */
  readonly acceptTimeoutMs?: number;
  /** How long a probe may take (default 30 s). */
  readonly probeTimeoutMs?: number;
  /** After a run's own timeout, how long the helper has to report before it is killed (default 15 s). */
  readonly resultGraceMs?: number;
  readonly log?: (line: string) => void;
}

export interface RunHandlers {
  stdout(text: string): void;
  stderr(text: string): void;
  network?(decision: ProxyDecision): void;
}

export interface HelperRunResult extends SandboxRunResult {
  /** Characters beyond the request's outputLimit, counted and not sent. */
  readonly dropped: DroppedOutput;
  /** Set when the helper (not the sandbox) failed: sandbox.helper_* rule id. */
  readonly helperRule?: string;
}

export interface InteractiveRun {
  /** Sends text to the command's standard input (ignored after the run ended). */
  write(text: string): void;
  /** Closes the command's standard input. */
  end(): void;
  /** Kills the sandbox and everything in it. */
  cancel(): void;
  readonly result: Promise<HelperRunResult>;
}

interface Pending {
  readonly handlers?: RunHandlers;
  readonly finish: (r: HelperRunResult) => void;
  readonly probe?: (s: SandboxStatus) => void;
  /** A run's own timeout: once accepted, the helper has this plus the grace period to report. */
  readonly timeoutMs?: number;
  /** The helper process it was sent to: only that one's exit fails it. */
  child?: ChildProcess;
  /** The helper took the request: the command may have started. */
  accepted?: boolean;
  timer?: NodeJS.Timeout;
}

const NO_DROP: DroppedOutput = { stdout: 0, stderr: 0 };

/** The helper's last words: its error lines when there are any, else its last lines. */
function stderrSummary(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const errors = lines.filter((l) => /\b\w*Error\b/.test(l));
  return (errors.length ? errors.slice(0, 2) : lines.slice(-3)).join(' | ').slice(0, 500);
}

export function helperFailure(helperRule: string, error: string, fix?: string): HelperRunResult {
  return {
    status: 'sandbox_failed',
    exitCode: null,
    error,
    ...(fix ? { fix } : {}),
    violations: [],
    network: [],
    mechanism: 'none',
    durationMs: 0,
    dropped: NO_DROP,
    helperRule,
  };
}

export class SandboxHelperClient {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<string, Pending>();
  private stderrTail = '';
  private disposed = false;

  constructor(private readonly opts: SandboxHelperClientOptions) {}

  /** The helper's process id while it runs (tests, Doctor). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Runs one command in the sandbox. Never rejects: a failure is a result with status sandbox_failed and the reason. */
  run(request: HelperRunRequest, handlers: RunHandlers, signal?: AbortSignal): Promise<HelperRunResult> {
    const id = crypto.randomUUID();
    const result = this.start(id, request, handlers, false);
    if (signal) {
      const onAbort = () => this.post({ type: 'cancel', id });
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      void result.finally(() => signal.removeEventListener('abort', onAbort));
    }
    return result;
  }

  /** A run whose standard input stays open (a terminal). */
  runInteractive(request: HelperRunRequest, handlers: RunHandlers): InteractiveRun {
    const id = crypto.randomUUID();
    const result = this.start(id, request, handlers, true);
    let over = false;
    void result.finally(() => {
      over = true;
    });
    return {
      write: (data) => {
        if (!over) this.post({ type: 'stdin', id, data });
      },
      end: () => {
        if (!over) this.post({ type: 'stdin_end', id });
      },
      cancel: () => {
        if (!over) this.post({ type: 'cancel', id });
      },
      result,
    };
  }

  /** The sandbox as the helper sees it; when the helper cannot answer, unavailable with that reason. */
  probe(opts: { fresh?: boolean } = {}): Promise<SandboxStatus> {
    const id = crypto.randomUUID();
    return new Promise((resolve) => {
      const unavailable = (r: HelperRunResult): void =>
        resolve({ available: false, mechanism: 'none', reason: r.error, ...(r.fix ? { fix: r.fix } : {}), enforces: [] });
      const p: Pending = {
        finish: unavailable,
        probe: (s) => {
          this.settle(id);
          resolve(s);
        },
      };
      this.pending.set(id, p);
      p.timer = setTimeout(
        () => this.unresponsive(id, `did not answer a probe within ${this.probeTimeoutMs / 1000} s`),
        this.probeTimeoutMs,
      );
      if (!this.post({ type: 'probe', id, ...(opts.fresh ? { fresh: true } : {}) }, p)) this.fail(id, this.notStarted());
    });
  }

  /** Kills the helper (and with it every sandbox); pending runs end as refusals. */
  dispose(): void {
    this.disposed = true;
    this.kill(this.child, 'the extension is shutting down');
  }

  private get probeTimeoutMs(): number {
    return this.opts.probeTimeoutMs ?? 30_000;
  }

  private start(id: string, request: HelperRunRequest, handlers: RunHandlers, interactive: boolean): Promise<HelperRunResult> {
    return new Promise((resolve) => {
      const p: Pending = { handlers, finish: resolve, timeoutMs: request.timeoutMs };
      this.pending.set(id, p);
      const acceptMs = this.opts.acceptTimeoutMs ?? 10_000;
      p.timer = setTimeout(() => this.unresponsive(id, `did not accept the run within ${acceptMs / 1000} s`), acceptMs);
      if (!this.post({ type: 'run', id, request, ...(interactive ? { interactive: true } : {}) }, p)) this.fail(id, this.notStarted());
    });
  }

  private lastStartError: string | undefined;

  private notStarted(): HelperRunResult {
    return helperFailure(
      'sandbox.helper_start_failed',
      `the sandbox helper could not be started${this.lastStartError ? ` (${this.lastStartError})` : ''}, so nothing was run`,
      'check that dist/sandbox-helper.js exists beside the extension (reinstall Bulwark) and see the Bulwark output channel',
    );
  }

  /** Sends a message, starting the helper first when it is not running. False when it cannot be sent. */
  private post(m: ToHelper, p?: Pending): boolean {
    const child = this.ensure();
    if (!child?.connected) return false;
    try {
      child.send(m);
      if (p) p.child = child;
      return true;
    } catch (e) {
      this.opts.log?.(`sandbox helper: sending failed: ${(e as Error).message}`);
      return false;
    }
  }

  private ensure(): ChildProcess | undefined {
    if (this.disposed) {
      this.lastStartError = 'the extension is shutting down';
      return undefined;
    }
    if (this.child?.connected) return this.child;
    // A helper whose channel closed is on its way out: its exit handler fails what it had.
    if (this.child) this.kill(this.child, 'its IPC channel closed');
    let child: ChildProcess;
    try {
      // execArgv: none of the extension host's own flags (an inspector port would clash).
      child = fork(this.opts.helperScript, [], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json' });
    } catch (e) {
      this.lastStartError = (e as Error).message;
      this.opts.log?.(`sandbox helper: could not start: ${this.lastStartError}`);
      return undefined;
    }
    this.child = child;
    this.stderrTail = '';
    this.opts.log?.(`sandbox helper started (pid ${child.pid ?? '?'})`);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (t: string) => {
      this.stderrTail = (this.stderrTail + t).slice(-2000);
    });
    child.on('message', (m: FromHelper) => this.onMessage(m));
    child.on('error', (e) => {
      this.lastStartError = e.message;
      this.opts.log?.(`sandbox helper error: ${e.message}`);
    });
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = undefined;
      const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
      const tail = stderrSummary(this.stderrTail);
      this.opts.log?.(`sandbox helper ${how}${tail ? `: ${tail}` : ''}`);
      for (const [id, p] of [...this.pending]) {
        if (p.child !== child) continue;
        this.fail(
          id,
          helperFailure(
            'sandbox.helper_exited',
            p.accepted
              ? `the sandbox helper ${how}${tail ? ` (${tail})` : ''}; the command did not finish, and the sandbox and everything in it were killed with the helper`
              : `the sandbox helper ${how} before it took the request${tail ? ` (${tail})` : ''}; nothing was run`,
            'run it again (the helper restarts); if this repeats, see the Bulwark output channel',
          ),
        );
      }
    });
    return child;
  }

  private onMessage(m: FromHelper): void {
    if (m.type === 'ready') return;
    const id = m.id ?? '';
    const p = this.pending.get(id);
    if (!p) {
      if (m.type === 'error' && !m.id) this.opts.log?.(`sandbox helper: ${m.error}`);
      return;
    }
    switch (m.type) {
      case 'accepted': {
        p.accepted = true;
        clearTimeout(p.timer);
        // From now on the helper owes a result by the run's own deadline plus the grace period.
        const grace = this.opts.resultGraceMs ?? 15_000;
        const ms = (p.timeoutMs ?? 0) + grace;
        p.timer = setTimeout(
          () =>
            this.unresponsive(id, `did not report the result within ${Math.round(ms / 1000)} s (the run's timeout plus ${grace / 1000} s)`),
          ms,
        );
        return;
      }
      case 'stdout':
        p.handlers?.stdout(m.text);
        return;
      case 'stderr':
        p.handlers?.stderr(m.text);
        return;
      case 'network':
        p.handlers?.network?.(m.decision);
        return;
      case 'probe':
        p.probe?.(m.status);
        return;
      case 'result':
        this.settle(id);
        p.finish({ ...m.result, dropped: m.dropped });
        return;
      case 'error':
        this.fail(id, helperFailure('sandbox.helper_refused', `the sandbox helper refused the request: ${m.error}`));
        return;
    }
  }

  private settle(id: string): void {
    const p = this.pending.get(id);
    if (p) clearTimeout(p.timer);
    this.pending.delete(id);
  }

  private fail(id: string, r: HelperRunResult): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.settle(id);
    p.finish(r);
  }

  /** The helper did not answer in time: it is killed (its sandboxes die with it), so nothing runs on unseen. */
  private unresponsive(id: string, what: string): void {
    const child = this.pending.get(id)?.child;
    this.opts.log?.(`sandbox helper ${what}; killing it`);
    this.fail(
      id,
      helperFailure(
        'sandbox.helper_unresponsive',
        `the sandbox helper ${what}; it was killed, with every sandbox it ran`,
        'run it again (the helper restarts); if this repeats, see the Bulwark output channel',
      ),
    );
    if (child) this.kill(child, what);
  }

  /** Kills one helper process; what was sent to it fails at once (its exit event finds nothing left). */
  private kill(child: ChildProcess | undefined, why: string): void {
    if (!child) return;
    if (this.child === child) this.child = undefined;
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
    for (const [id, p] of [...this.pending]) {
      if (p.child !== child) continue;
      this.fail(
        id,
        helperFailure(
          'sandbox.helper_exited',
          `the sandbox helper was stopped (${why}); ${p.accepted ? 'the command did not finish, and the sandbox and everything in it were killed with it' : 'nothing was run'}`,
        ),
      );
    }
  }
}
