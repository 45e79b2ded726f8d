// A sandbox plan as bubblewrap arguments. Order matters to bwrap (later mounts cover earlier ones):
// the read-only root, fresh /dev, /proc, /tmp and /run, the writable roots, then what the tables
// keep read-only inside them, the placeholders, the hidden locations, and last the public files
// of a hidden directory bound back.
import type { SandboxPlan } from '../../engine';

export interface BwrapOptions {
  readonly plan: SandboxPlan;
  readonly cwd: string;
  /** An empty directory and an empty file, mode 000, that stand in for hidden and guarded places. */
  readonly emptyDir: string;
  readonly emptyFile: string;
  /** A directory holding the filtering proxy's socket, bound into the sandbox (network through the proxy only). */
  readonly proxyDir?: string;
  /** The descriptor the seccomp program is read from, when there is one. */
  readonly seccompFd?: number;
  /** Bound read-only when outside every other mount (the helper's forwarder script and the Node that runs it). */
  readonly extraReadOnly?: readonly string[];
  readonly command: readonly string[];
}

export function bwrapArgs(o: BwrapOptions): string[] {
  const plan = withinSandboxView(o.plan);
  const a: string[] = [
    '--die-with-parent',
    // Its own session: no TIOCSTI typing into the terminal that started it.
    '--new-session',
    // Every namespace, the network included (loopback only): the proxy's socket is the only way out.
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // A private temp directory; /run holds the user's session sockets (D-Bus and the keyring behind
    // it, ssh-agent, docker.sock): none of them reach inside.
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/run',
  ];
  for (const w of plan.writable) a.push('--bind', w, w);
  for (const m of plan.readOnly) a.push('--ro-bind', m.path, m.path);
  for (const g of plan.guardDirs) a.push('--ro-bind', o.emptyDir, g.path);
  const placed = new Set<string>();
  for (const h of plan.hidden) {
    if (h.kind === 'directory') {
      // Mode 000 (traverse-only where public files are bound back): listing and reading fail with
      // "Permission denied", not an empty success that looks like data. The public files are bound
      // while the tmpfs is still writable (bwrap makes their mount points), then it is made read-only.
      const inside = plan.reexposed.filter((m) => m.path.startsWith(`${h.path}/`));
      a.push('--perms', inside.length ? '0111' : '0000', '--tmpfs', h.path);
      for (const m of inside) {
        a.push('--ro-bind', m.path, m.path);
        placed.add(m.path);
      }
      a.push('--remount-ro', h.path);
    } else {
      a.push('--ro-bind', o.emptyFile, h.path);
    }
  }
  for (const m of plan.reexposed) if (!placed.has(m.path)) a.push('--ro-bind', m.path, m.path);
  for (const p of o.extraReadOnly ?? []) a.push('--ro-bind', p, p);
  if (o.proxyDir) a.push('--bind', o.proxyDir, o.proxyDir);
  if (o.seccompFd !== undefined) a.push('--seccomp', String(o.seccompFd));
  a.push('--chdir', o.cwd, '--', ...o.command);
  return a;
}

/** Trees bwrap mounts afresh; what the plan names below them exists inside only when a writable root brings it. */
const FRESH_TREES = ['/tmp', '/run', '/proc', '/dev'];

function withinSandboxView(plan: SandboxPlan): SandboxPlan {
  const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
  const visible = (p: string) => !FRESH_TREES.some((t) => under(p, t)) || plan.writable.some((w) => under(p, w));
  return {
    ...plan,
    hidden: plan.hidden.filter((m) => visible(m.path)),
    readOnly: plan.readOnly.filter((m) => visible(m.path)),
    guardDirs: plan.guardDirs.filter((m) => visible(m.path)),
    reexposed: plan.reexposed.filter((m) => visible(m.path)),
  };
}
