// Bulwark's per-user state outside any editor: the hook bridge's discovery file, the hook wrapper,
// the installer's manifest and, when no extension has named one, the hooks' audit log.
// Agents can neither read nor write it (it is one of the engine's self paths: full_block).
import os from 'node:os';
import path from 'node:path';

/** Discovery file the extension writes on start: where its socket is and the token it wants. */
export const BRIDGE_FILE = 'bridge.json';

/** `explicit` (a flag), else $BULWARK_STATE_DIR, else ~/.bulwark. Always absolute. */
export function bulwarkStateDir(explicit?: string, env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
  const chosen = explicit ?? env.BULWARK_STATE_DIR;
  if (chosen !== undefined && chosen !== '') {
    if (!path.isAbsolute(chosen)) throw new Error(`the Bulwark state directory must be an absolute path, got \`${chosen}\``);
    return path.resolve(chosen);
  }
  return path.join(home, '.bulwark');
}

/**
 * The state to hand the engine as self paths (full_block to agents): the directory in use and the
 * default ~/.bulwark, where the hooks may have been installed before; a relative BULWARK_STATE_DIR
 * (which bulwarkStateDir refuses) still leaves the default protected.
 */
export function stateDirSelfPaths(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string[] {
  const fallback = path.join(home, '.bulwark');
  let chosen: string | undefined;
  try {
    chosen = bulwarkStateDir(undefined, env, home);
  } catch {
    chosen = undefined;
  }
  return chosen !== undefined && chosen !== fallback ? [chosen, fallback] : [fallback];
}

/** What the running extension publishes in <stateDir>/bridge.json (mode 0600, directory 0700). */
export interface BridgeInfo {
  readonly version: 1;
  /** Process id of the extension host that serves the socket (checked for liveness by the hook). */
  readonly pid: number;
  /** Unix socket path, or a Windows named pipe (\\.\pipe\…). */
  readonly socket: string;
  /** Random per-start secret (hex); every request must carry it. */
  readonly token: string;
  readonly startedAt: string;
  /** The extension's audit log, so a hook that decides in-process (extension not running) appends to the same chain. */
  readonly audit?: { readonly logFile: string; readonly dbFile: string; readonly keyFile: string };
}
