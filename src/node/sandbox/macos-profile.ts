// The Seatbelt profile (SBPL) for commands run under `sandbox-exec -p` on macOS. It starts from
// (allow default) so ordinary tools keep working, then takes away what a sandboxed command must not
// do: read or write the hidden paths, write outside the writable roots, connect anywhere but the
// proxy, inspect or debug processes outside its own sandbox.
//
// Vocabulary as real profiles use it: Codex's codex-rs/core/src/seatbelt_base_policy.sbpl
// (`process-info* (target same-sandbox)`, the /dev/null and /dev/ttys rules), Chromium's
// sandbox/policy/mac/common.sb (/dev/dtracehelper, `network-outbound` also governing Unix-socket
// connects), and profiles that pair `mach-priv-task-port` (task_for_pid) with `(target same-sandbox)`.
// In SBPL the last matching rule wins, so each deny below re-narrows the allow before it.
import path from 'node:path';

export interface MacosSandboxOptions {
  /** Neither readable nor writable (secrets, credentials), even inside a writable root. */
  readonly hidden: readonly string[];
  /** Read-only even though under a writable root (e.g. .git/hooks, the agent's own config). */
  readonly readOnlyInWritable: readonly string[];
  readonly writable: readonly string[];
  readonly tmpDir: string;
  /** Outbound connections go only to localhost on this port; without it, none at all. */
  readonly proxyPort?: number;
}

// Devices that ordinary programs open for writing.
const WRITABLE_DEVICES = ['/dev/null', '/dev/zero', '/dev/tty', '/dev/dtracehelper', '/dev/ptmx', '/dev/stdout', '/dev/stderr'];

/** An SBPL string literal: `"` and `\` escaped; a NUL or line break refused, as it could end the rule or the profile early. */
export function sbplString(value: string): string {
  if (/[\0\n\r]/.test(value)) throw new Error(`sandbox profile: path contains a NUL or line break: ${JSON.stringify(value)}`);
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** An absolute path with no trailing slash (Seatbelt compares against the kernel's path; a relative one would match nothing). */
function absolute(p: string): string {
  sbplString(p); // refuse NUL/line breaks before anything else looks at the path
  if (!path.posix.isAbsolute(p)) throw new Error(`sandbox profile: path is not absolute: ${JSON.stringify(p)}`);
  const normal = path.posix.normalize(p);
  return normal.length > 1 ? normal.replace(/\/+$/, '') : normal;
}

// /tmp, /var and /etc are symlinks into /private, and Seatbelt matches the resolved path. Every rule
// names both spellings: a denial of /tmp/x must also deny /private/tmp/x (fail closed), and os.tmpdir()
// (/var/folders/...) must stay writable.
const PRIVATE_ALIASES = ['/tmp', '/var', '/etc'];
function bothSpellings(p: string): string[] {
  for (const alias of PRIVATE_ALIASES) {
    if (p === alias || p.startsWith(`${alias}/`)) return [p, `/private${p}`];
    if (p === `/private${alias}` || p.startsWith(`/private${alias}/`)) return [p, p.slice('/private'.length)];
  }
  return [p];
}

const subpaths = (paths: readonly string[]) => paths.map((p) => `(subpath ${sbplString(p)})`);

/** The profile text for `sandbox-exec -p`. Throws on a path it cannot express safely. */
export function macosSandboxProfile(opts: MacosSandboxOptions): string {
  const hidden = opts.hidden.map(absolute).flatMap(bothSpellings);
  const readOnly = opts.readOnlyInWritable.map(absolute).flatMap(bothSpellings);
  const writable = [...opts.writable, opts.tmpDir].map(absolute).flatMap(bothSpellings);
  const port = opts.proxyPort;
  if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535))
    throw new Error(`sandbox profile: bad proxy port ${port}`);

  const lines = [
    '(version 1)',
    '(allow default)',
    '',
    '; writes only under the writable roots, the temp dir and the usual devices',
    '(deny file-write*)',
    `(allow file-write*\n  ${[...subpaths(writable), ...WRITABLE_DEVICES.map((d) => `(literal ${sbplString(d)})`), '(subpath "/dev/fd")', '(regex #"^/dev/ttys[0-9]+$")'].join('\n  ')})`,
  ];
  if (readOnly.length) lines.push('', '; read-only inside the writable roots', `(deny file-write*\n  ${subpaths(readOnly).join('\n  ')})`);
  if (hidden.length)
    lines.push(
      '',
      '; hidden: neither read nor written (subpath also matches the path itself, so files too)',
      `(deny file-read* file-write*\n  ${subpaths(hidden).join('\n  ')})`,
    );
  lines.push(
    '',
    '; network: nothing out (TCP, UDP or Unix sockets) but the proxy',
    '(deny network-outbound)',
    ...(port === undefined ? [] : [`(allow network-outbound (remote ip "localhost:${port}"))`]),
    '',
    '; no inspecting, debugging or signalling processes outside this sandbox',
    '(deny process-info*)',
    '(allow process-info* (target same-sandbox))',
    '(deny mach-priv-task-port)',
    '(allow mach-priv-task-port (target same-sandbox))',
    '(deny signal)',
    '(allow signal (target same-sandbox))',
    '',
  );
  return lines.join('\n');
}
