// The messages between the extension host (src/node/sandbox/helper-client.ts) and the sandbox helper
// process (main.ts), over Node's IPC channel (JSON). Types only: both sides import it.
import type { ProxyDecision } from '../node/sandbox/proxy';
import type { SandboxRunRequest, SandboxRunResult } from '../node/sandbox/runner';
import type { SandboxStatus } from '../node/sandbox/probe';

/** A run as the runner takes it (its own stdin is never the helper's), plus what the IPC channel needs. */
export interface HelperRunRequest extends Omit<SandboxRunRequest, 'inheritStdin'> {
  /** Characters sent back per stream; the rest is counted (`dropped`), not sent. Default: everything. */
  readonly outputLimit?: number;
}

export type ToHelper =
  /** interactive: standard input stays open and is fed by `stdin` messages until `stdin_end`. */
  | { readonly type: 'run'; readonly id: string; readonly request: HelperRunRequest; readonly interactive?: boolean }
  | { readonly type: 'stdin'; readonly id: string; readonly data: string }
  | { readonly type: 'stdin_end'; readonly id: string }
  | { readonly type: 'cancel'; readonly id: string }
  | { readonly type: 'probe'; readonly id: string; readonly fresh?: boolean };

export interface DroppedOutput {
  readonly stdout: number;
  readonly stderr: number;
}

export type FromHelper =
  | { readonly type: 'ready'; readonly pid: number }
  /** The run request was read and the run is starting (the client's proof that the helper answers). */
  | { readonly type: 'accepted'; readonly id: string }
  /** Output, already redacted by the runner. */
  | { readonly type: 'stdout' | 'stderr'; readonly id: string; readonly text: string }
  | { readonly type: 'network'; readonly id: string; readonly decision: ProxyDecision }
  | { readonly type: 'result'; readonly id: string; readonly result: SandboxRunResult; readonly dropped: DroppedOutput }
  | { readonly type: 'probe'; readonly id: string; readonly status: SandboxStatus }
  /** A request the helper could not take (malformed, duplicate id); `id` when it names one. */
  | { readonly type: 'error'; readonly id?: string; readonly error: string };
