// Which OS sandbox this machine can run, and when none: exactly why and how to fix it. Asked once
// per process (a real start of the sandbox, not a guess from versions), then cached.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { findOnPath, isExecutable } from '../find-on-path';
import { landlockSupport } from './landlock';

export type SandboxMechanism = 'bubblewrap' | 'sandbox-exec' | 'none';

export interface SandboxStatus {
  readonly available: boolean;
  readonly mechanism: SandboxMechanism;
  /** The program that runs it (bwrap, sandbox-exec). */
  readonly program?: string;
  readonly version?: string;
  /** When unavailable: what failed, in one sentence. */
  readonly reason?: string;
  /** When unavailable: what the user can do about it. */
  readonly fix?: string;
  /** What the sandbox enforces here, for Doctor and the status bar. */
  readonly enforces: readonly string[];
}

const LINUX_ENFORCES = [
  'root file system read-only; workspace folders and a private /tmp writable',
  'credential locations of the protection tables hidden (empty, unreadable)',
  'protected files inside the workspace (.git/hooks, .vscode/*.json, agent instructions) read-only',
  "no network (own network namespace); allowed hosts only through Bulwark's filtering proxy (SSRF rules)",
  'own PID, IPC and UTS namespaces; no new user namespaces; seccomp refuses ptrace, mount, bpf, kernel modules',
  "session sockets (/run: D-Bus, keyring, ssh-agent, docker.sock) and the user's /tmp not reachable",
  'environment: an allow-list; secrets withheld; output redacted',
];

let cached: Promise<SandboxStatus> | undefined;

/** The sandbox of this machine (cached per process; `fresh` asks again, for Doctor). */
export function probeSandbox(opts: { bwrapPath?: string; fresh?: boolean } = {}): Promise<SandboxStatus> {
  if (!cached || opts.fresh || opts.bwrapPath) cached = probe(opts.bwrapPath);
  return cached;
}

async function probe(bwrapPath?: string): Promise<SandboxStatus> {
  if (process.platform === 'darwin') {
    const program = '/usr/bin/sandbox-exec';
    if (!fs.existsSync(program))
      return none('sandbox-exec', '/usr/bin/sandbox-exec is missing', 'it ships with macOS; restore the system tools');
    return {
      available: true,
      mechanism: 'sandbox-exec',
      program,
      enforces: [
        'file reads of credential locations denied',
        'writes only to the workspace and a private temp directory',
        "network only through Bulwark's filtering proxy",
        'environment: an allow-list; output redacted',
      ],
    };
  }
  if (process.platform !== 'linux') {
    return none(
      'none',
      `there is no OS sandbox for ${process.platform} yet`,
      'set bulwark.sandbox.unsandboxed to "tier3" to run commands after a human approves each one, or keep "refuse"',
    );
  }
  const program = bwrapPath ?? findOnPath('bwrap');
  if (bwrapPath && !isExecutable(bwrapPath))
    return none(
      'bubblewrap',
      `bubblewrap (bwrap) is not installed at ${bwrapPath} (BULWARK_BWRAP)`,
      'install it: `sudo apt-get install bubblewrap` (Debian, Ubuntu), `sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch), or point BULWARK_BWRAP at it',
    );
  if (!program)
    return none(
      'bubblewrap',
      'bubblewrap (bwrap) is not installed',
      'install it: `sudo apt-get install bubblewrap` (Debian, Ubuntu), `sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch)',
    );
  const version = (await run(program, ['--version'])).stdout.trim().replace(/^bubblewrap\s*/, '');
  const trial = await run(program, [
    '--ro-bind',
    '/',
    '/',
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--',
    'true',
  ]);
  if (trial.code === 0) {
    const ll = landlockSupport();
    const layer = ll.available
      ? `Landlock (ABI ${ll.abi}) as a second layer under the mounts: writes only below the workspace folders, /tmp and /dev`
      : `no Landlock layer: ${ll.reason}`;
    return { available: true, mechanism: 'bubblewrap', program, version, enforces: [...LINUX_ENFORCES, layer] };
  }
  const err = trial.stderr.trim() || trial.error || `exit ${trial.code}`;
  if (/unrecognized option|Unknown option/i.test(err)) {
    return none(
      'bubblewrap',
      `bubblewrap ${version || ''} is too old (it lacks --disable-userns): ${err}`,
      'install bubblewrap 0.8 or later',
    );
  }
  const reading = (p: string) => {
    try {
      return fs.readFileSync(p, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  if (reading('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1') {
    return none(
      'bubblewrap',
      `AppArmor restricts unprivileged user namespaces, so bubblewrap cannot start (${err})`,
      'allow bwrap in AppArmor: create /etc/apparmor.d/bwrap with `abi <abi/4.0>, include <tunables/global> profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }` and run `sudo apparmor_parser -r /etc/apparmor.d/bwrap` (Ubuntu 24.04+)',
    );
  }
  if (reading('/proc/sys/kernel/unprivileged_userns_clone') === '0') {
    return none(
      'bubblewrap',
      `unprivileged user namespaces are switched off (${err})`,
      'run `sudo sysctl kernel.unprivileged_userns_clone=1` (and put it in /etc/sysctl.d to keep it)',
    );
  }
  if (reading('/proc/sys/user/max_user_namespaces') === '0') {
    return none(
      'bubblewrap',
      `user namespaces are disabled (${err})`,
      'run `sudo sysctl user.max_user_namespaces=15000` (and put it in /etc/sysctl.d to keep it)',
    );
  }
  return none(
    'bubblewrap',
    `bubblewrap could not start a sandbox: ${err}`,
    'check that user namespaces are allowed for your user (inside a container, start it with --security-opt seccomp=unconfined or give it user namespaces)',
  );
}

function none(mechanism: SandboxMechanism, reason: string, fix: string): SandboxStatus {
  return { available: false, mechanism, reason, fix, enforces: [] };
}

function run(program: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; error?: string }> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const done = (r: { code: number | null; error?: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, stdout, stderr });
    };
    // Its own process group, so a failed start that leaves a child holding the pipes is killed with it.
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      done({ code: null, error: 'it did not finish within 10 s' });
    }, 10_000);
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', (e) => done({ code: null, error: e.message }));
    // 'exit', not 'close': the answer is the program's status, whatever still holds its pipes. The output
    // read so far is what the diagnosis needs; give the pipes a moment to drain first.
    child.on('exit', (code) => setTimeout(() => done({ code }), 20));
    child.on('close', (code) => done({ code }));
  });
}
