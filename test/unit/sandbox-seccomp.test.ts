// The seccomp filter: its decisions read instruction by instruction for both architectures, then the
// real kernel enforcing it under real bubblewrap (as root and as an unprivileged user).
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { seccompFilter } from '../../src/node/sandbox/seccomp';

// Numbers typed here again on purpose, from /usr/include/x86_64-linux-gnu/asm/unistd_64.h and
// /usr/include/asm-generic/unistd.h, so a wrong entry in the filter's own table fails these tests.
const NR = {
  x64: {
    read: 0,
    write: 1,
    openat: 257,
    execve: 59,
    getpid: 39,
    wait4: 61,
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    kexec_load: 246,
    kexec_file_load: 320,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    keyctl: 250,
    add_key: 248,
    request_key: 249,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    move_mount: 429,
    open_tree: 428,
    fsopen: 430,
    fsmount: 432,
    fsconfig: 431,
    fspick: 433,
    mount_setattr: 442,
    setns: 308,
    unshare: 272,
    clone: 56,
    clone3: 435,
  },
  arm64: {
    read: 63,
    write: 64,
    openat: 56,
    execve: 221,
    getpid: 172,
    wait4: 260,
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    kexec_load: 104,
    kexec_file_load: 294,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    keyctl: 219,
    add_key: 217,
    request_key: 218,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    move_mount: 429,
    open_tree: 428,
    fsopen: 430,
    fsmount: 432,
    fsconfig: 431,
    fspick: 433,
    mount_setattr: 442,
    setns: 268,
    unshare: 97,
    clone: 220,
    clone3: 435,
  },
} as const;
type Arch = keyof typeof NR;
type Syscall = keyof typeof NR.x64;
const AUDIT_ARCH = { x64: 0xc000003e, arm64: 0xc00000b7, i386: 0x40000003, arm: 0x40000028 } as const;

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const KILL_PROCESS = 0x80000000;
const CLONE_NEWUSER = 0x10000000;
const SIGCHLD = 17;

const DENIED: readonly Syscall[] = [
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'kexec_load',
  'kexec_file_load',
  'init_module',
  'finit_module',
  'delete_module',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'keyctl',
  'add_key',
  'request_key',
  'mount',
  'umount2',
  'pivot_root',
  'move_mount',
  'open_tree',
  'fsopen',
  'fsmount',
  'fsconfig',
  'fspick',
  'mount_setattr',
  'setns',
];

/**
 * Runs a classic-BPF seccomp program on one struct seccomp_data, as the kernel would, and returns the
 * action. Knows only the instructions a seccomp filter of this shape needs and throws on anything else,
 * on a jump out of the program and on falling off its end.
 */
function runFilter(program: Buffer, call: { arch: number; nr: number; args?: readonly number[] }): number {
  const data = Buffer.alloc(64); // int nr; u32 arch; u64 instruction_pointer; u64 args[6]
  data.writeInt32LE(call.nr | 0, 0);
  data.writeUInt32LE(call.arch, 4);
  (call.args ?? []).forEach((a, i) => data.writeBigUInt64LE(BigInt.asUintN(64, BigInt(a)), 16 + 8 * i));
  const count = program.length / 8;
  let accumulator = 0;
  for (let pc = 0; pc < count;) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    switch (code) {
      case 0x20: // BPF_LD | BPF_W | BPF_ABS
        assert.ok(k % 4 === 0 && k + 4 <= 64, `load at ${k}`);
        accumulator = data.readUInt32LE(k);
        pc += 1;
        break;
      case 0x15:
        pc += 1 + (accumulator === k ? jt : jf);
        break; // BPF_JMP | BPF_JEQ | BPF_K
      case 0x45:
        pc += 1 + ((accumulator & k) !== 0 ? jt : jf);
        break; // BPF_JMP | BPF_JSET | BPF_K
      case 0x06:
        return k; // BPF_RET | BPF_K
      default:
        throw new Error(`unexpected opcode 0x${code.toString(16)} at ${pc}`);
    }
  }
  throw new Error('the program ran off its end without returning');
}

describe('seccomp filter: its decisions', () => {
  it('exists for x64 and arm64 only, as whole 8-byte instructions', () => {
    for (const arch of ['x64', 'arm64']) {
      const program = seccompFilter(arch)!;
      assert.ok(program.length > 0 && program.length % 8 === 0, arch);
    }
    for (const arch of ['ia32', 'arm', 'riscv64', 'ppc64', 's390x', 'loong64']) assert.equal(seccompFilter(arch), undefined, arch);
    assert.deepEqual(seccompFilter(), seccompFilter(process.arch));
  });

  for (const arch of ['x64', 'arm64'] as const) {
    describe(arch, () => {
      const program = seccompFilter(arch)!;
      const nr = NR[arch];
      const decide = (name: Syscall, args?: number[]) => runFilter(program, { arch: AUDIT_ARCH[arch], nr: nr[name], args });

      it('refuses each denied system call with EPERM', () => {
        for (const name of DENIED) assert.equal(decide(name), EPERM, name);
      });

      it('allows ordinary system calls', () => {
        for (const name of ['read', 'write', 'openat', 'execve', 'getpid', 'wait4'] as const) assert.equal(decide(name), ALLOW, name);
      });

      it('refuses clone and unshare only when they ask for a new user namespace', () => {
        assert.equal(decide('clone', [CLONE_NEWUSER | SIGCHLD]), EPERM);
        assert.equal(decide('unshare', [CLONE_NEWUSER]), EPERM);
        assert.equal(decide('unshare', [CLONE_NEWUSER | 0x00020000]), EPERM); // with CLONE_NEWNS
        assert.equal(decide('clone', [SIGCHLD]), ALLOW); // fork
        assert.equal(decide('clone', [0x003d0f00]), ALLOW); // pthread_create's flags
        assert.equal(decide('unshare', [0x00020000]), ALLOW); // CLONE_NEWNS alone: the kernel's capability check decides
      });

      it('answers clone3 with ENOSYS whatever its arguments, so libc falls back to clone', () => {
        assert.equal(decide('clone3'), ENOSYS);
        assert.equal(decide('clone3', [0x7fff0000, 88]), ENOSYS);
      });

      it('kills a process calling through a foreign ABI, even for a harmless call', () => {
        for (const foreign of Object.entries(AUDIT_ARCH).filter(([a]) => a !== arch)) {
          assert.equal(runFilter(program, { arch: foreign[1], nr: nr.getpid }), KILL_PROCESS, foreign[0]);
        }
      });
    });
  }

  it('refuses the x32 ABI on x64 with EPERM', () => {
    const program = seccompFilter('x64')!;
    for (const n of [NR.x64.getpid, NR.x64.read, NR.x64.ptrace])
      assert.equal(runFilter(program, { arch: AUDIT_ARCH.x64, nr: 0x40000000 | n }), EPERM, String(n));
  });
});

// --- the real kernel, under real bubblewrap ------------------------------------------------------

function onPath(tool: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, tool);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      /* next */
    }
  }
  return undefined;
}

// One probe per line of output: a child per probe (so one probe's effect, such as a successful unshare,
// cannot change the next one's answer) makes the call with perl's syscall() and prints "ok" or the errno.
// A probe marked as forking is a raw clone: its child leaves at once.
const PROBE_SCRIPT = String.raw`
use POSIX ();
$| = 1;
my $getpid = shift @ARGV;
for my $spec (@ARGV) {
  my ($label, $forks, $nr, @args) = split /,/, $spec;
  ($nr, @args) = map { /^0x/ ? oct($_) : $_ + 0 } ($nr, @args);
  my $probe = fork();
  if ($probe == 0) {
    my $parent = syscall($getpid);
    $! = 0;
    my $r = syscall($nr, @args);
    my $errno = $! + 0;
    POSIX::_exit(0) if $forks && $r == 0 && syscall($getpid) != $parent;
    waitpid($r, 0) if $forks && $r > 0;
    print "$label ", ($r >= 0 ? "ok" : $errno), "\n";
    POSIX::_exit(0);
  }
  waitpid($probe, 0);
}
`;

interface Probe {
  readonly label: string;
  readonly call: Syscall | number;
  readonly args: readonly (number | string)[];
  readonly forks?: boolean;
  /** Under the filter: "ok" or an errno. */
  readonly filtered: string;
  /** Without the filter, when the kernel's answer does not depend on its configuration: shows the probe can tell. */
  readonly unfiltered?: string;
}

const E = { EPERM: '1', ESRCH: '3', EBADF: '9', EFAULT: '14', EINVAL: '22', ENOSYS: '38', EOPNOTSUPP: '95' };

function probesFor(arch: Arch): Probe[] {
  const probes: Probe[] = [
    { label: 'ptrace-attach-missing-pid', call: 'ptrace', args: [16, 999999999, 0, 0], filtered: E.EPERM, unfiltered: E.ESRCH },
    { label: 'process_vm_readv-nothing', call: 'process_vm_readv', args: [1, 0, 0, 0, 0, 0], filtered: E.EPERM, unfiltered: 'ok' },
    { label: 'process_vm_writev-nothing', call: 'process_vm_writev', args: [1, 0, 0, 0, 0, 0], filtered: E.EPERM, unfiltered: 'ok' },
    { label: 'keyctl-unknown-op', call: 'keyctl', args: [9999], filtered: E.EPERM, unfiltered: E.EOPNOTSUPP },
    { label: 'add_key-null', call: 'add_key', args: [0, 0, 0, 0, 0], filtered: E.EPERM },
    { label: 'request_key-null', call: 'request_key', args: [0, 0, 0, 0], filtered: E.EPERM },
    { label: 'mount-bad-pointers', call: 'mount', args: [1, 1, 1, 0, 0], filtered: E.EPERM, unfiltered: E.EFAULT },
    { label: 'umount2-bad-pointer', call: 'umount2', args: [1, 0], filtered: E.EPERM },
    { label: 'pivot_root', call: 'pivot_root', args: [1, 1], filtered: E.EPERM },
    { label: 'open_tree', call: 'open_tree', args: [-1, 0, 0], filtered: E.EPERM },
    { label: 'move_mount', call: 'move_mount', args: [-1, 0, -1, 0, 0], filtered: E.EPERM },
    { label: 'fsopen', call: 'fsopen', args: [0, 0], filtered: E.EPERM },
    { label: 'fsmount', call: 'fsmount', args: [-1, 0, 0], filtered: E.EPERM },
    { label: 'fsconfig', call: 'fsconfig', args: [-1, 0, 0, 0, 0], filtered: E.EPERM },
    { label: 'fspick', call: 'fspick', args: [-1, 0, 0], filtered: E.EPERM },
    { label: 'mount_setattr', call: 'mount_setattr', args: [-1, 0, 0, 0, 0], filtered: E.EPERM },
    { label: 'setns-bad-fd', call: 'setns', args: [-1, 0], filtered: E.EPERM, unfiltered: E.EBADF },
    { label: 'bpf', call: 'bpf', args: [9999, 0, 0], filtered: E.EPERM },
    { label: 'perf_event_open', call: 'perf_event_open', args: [0, 0, -1, -1, 0], filtered: E.EPERM },
    { label: 'userfaultfd-user-mode', call: 'userfaultfd', args: [1], filtered: E.EPERM },
    { label: 'kexec_load', call: 'kexec_load', args: [0, 0, 0, 0], filtered: E.EPERM },
    { label: 'kexec_file_load', call: 'kexec_file_load', args: [-1, -1, 0, 0, 0], filtered: E.EPERM },
    { label: 'init_module', call: 'init_module', args: [0, 0, 0], filtered: E.EPERM },
    { label: 'finit_module', call: 'finit_module', args: [-1, 0, 0], filtered: E.EPERM },
    { label: 'delete_module', call: 'delete_module', args: [0, 0], filtered: E.EPERM },
    { label: 'unshare-newuser', call: 'unshare', args: ['0x10000000'], filtered: E.EPERM },
    { label: 'clone-newuser', call: 'clone', args: ['0x10000011', 0, 0, 0, 0], forks: true, filtered: E.EPERM },
    { label: 'clone3', call: 'clone3', args: [0, 0], filtered: E.ENOSYS, unfiltered: E.EINVAL },
    // what must still work
    { label: 'unshare-nothing', call: 'unshare', args: [0], filtered: 'ok', unfiltered: 'ok' },
    { label: 'clone-fork', call: 'clone', args: [SIGCHLD, 0, 0, 0, 0], forks: true, filtered: 'ok', unfiltered: 'ok' },
    { label: 'getpid', call: 'getpid', args: [], filtered: 'ok', unfiltered: 'ok' },
  ];
  // x32 getpid: the kernel's answer depends on CONFIG_X86_X32_ABI, the filter's does not
  if (arch === 'x64') probes.push({ label: 'x32-getpid', call: 0x40000000 | NR.x64.getpid, args: [], filtered: E.EPERM });
  return probes;
}

// A 64-bit x86_64 ELF that makes getpid through the i386 ABI (int 0x80) and exits 0 if it survives.
function i386CallElf(): Buffer {
  const code = Buffer.from([
    0xb8,
    20,
    0,
    0,
    0, // mov eax, 20 (i386 getpid)
    0xcd,
    0x80, // int 0x80
    0x31,
    0xff, // xor edi, edi
    0xb8,
    60,
    0,
    0,
    0, // mov eax, 60 (exit)
    0x0f,
    0x05, // syscall
  ]);
  const base = 0x400000;
  const entry = 64 + 56;
  const header = Buffer.alloc(entry);
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]).copy(header, 0); // ELF, 64-bit, little-endian, version 1
  header.writeUInt16LE(2, 16); // ET_EXEC
  header.writeUInt16LE(0x3e, 18); // EM_X86_64
  header.writeUInt32LE(1, 20);
  header.writeBigUInt64LE(BigInt(base + entry), 24);
  header.writeBigUInt64LE(64n, 32); // program headers right after this header
  header.writeUInt16LE(64, 52);
  header.writeUInt16LE(56, 54);
  header.writeUInt16LE(1, 56);
  header.writeUInt32LE(1, 64); // PT_LOAD
  header.writeUInt32LE(5, 68); // R + X
  header.writeBigUInt64LE(BigInt(base), 80);
  header.writeBigUInt64LE(BigInt(base), 88);
  header.writeBigUInt64LE(BigInt(entry + code.length), 96);
  header.writeBigUInt64LE(BigInt(entry + code.length), 104);
  header.writeBigUInt64LE(0x1000n, 112);
  return Buffer.concat([header, code]);
}

describe('seccomp filter: enforced by the kernel under bubblewrap', function () {
  this.timeout(60000);
  const bwrap = onPath('bwrap');
  const setpriv = onPath('setpriv');
  const arch = process.arch === 'x64' || process.arch === 'arm64' ? process.arch : undefined;
  let dir = '';
  let filterFile = '';
  let probeFile = '';

  before(function () {
    if (!bwrap) {
      console.log('      skipped: bwrap is not installed (CI installs it)');
      this.skip();
    }
    if (!arch) {
      console.log(`      skipped: no seccomp filter for ${process.arch}`);
      this.skip();
    }
    // Readable by the unprivileged user too: the directory (mkdtemp makes it 0700) and the files in it.
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-seccomp-')));
    fs.chmodSync(dir, 0o755);
    filterFile = path.join(dir, 'filter.bpf');
    fs.writeFileSync(filterFile, seccompFilter(arch)!, { mode: 0o644 });
    probeFile = path.join(dir, 'probe.pl');
    fs.writeFileSync(probeFile, PROBE_SCRIPT, { mode: 0o644 });
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  // As root only when we are root; as nobody whenever we can switch to it.
  const users: { name: string; prefix: string[] }[] = [{ name: 'as the current user', prefix: [] }];
  if (process.getuid?.() === 0 && setpriv)
    users.push({ name: 'as an unprivileged user', prefix: [setpriv, '--reuid=65534', '--regid=65534', '--clear-groups'] });

  for (const user of users) {
    describe(user.name, () => {
      /** bwrap with the filter on fd 3 (a fresh descriptor each time: bwrap reads it to its end). */
      function sandboxed(command: readonly string[], o: { filter?: boolean } = {}): SpawnSyncReturns<string> {
        const filter = o.filter !== false;
        const fd = filter ? fs.openSync(filterFile, 'r') : undefined;
        try {
          const args = [
            ...user.prefix,
            bwrap!,
            '--ro-bind',
            '/',
            '/',
            '--dev',
            '/dev',
            '--proc',
            '/proc',
            '--unshare-all',
            '--unshare-user',
            '--die-with-parent',
            ...(filter ? ['--seccomp', '3'] : []),
            '--',
            ...command,
          ];
          return spawnSync(args[0]!, args.slice(1), {
            encoding: 'utf8',
            timeout: 30000,
            stdio: ['ignore', 'pipe', 'pipe', fd ?? 'ignore'],
          });
        } finally {
          if (fd !== undefined) fs.closeSync(fd);
        }
      }
      function probe(filter: boolean): Map<string, string> {
        const specs = probesFor(arch!).map((p) =>
          [p.label, p.forks ? 1 : 0, typeof p.call === 'number' ? p.call : NR[arch!][p.call], ...p.args].join(','),
        );
        const r = sandboxed(['perl', probeFile, String(NR[arch!].getpid), ...specs], { filter });
        assert.equal(r.status, 0, r.stderr);
        return new Map(
          r.stdout
            .trim()
            .split('\n')
            .map((line) => line.split(' ') as [string, string]),
        );
      }

      it('the probes themselves: without the filter the kernel answers otherwise where it can be told', () => {
        const answers = probe(false);
        for (const p of probesFor(arch!)) if (p.unfiltered !== undefined) assert.equal(answers.get(p.label), p.unfiltered, p.label);
      });

      it('refuses the denied calls with EPERM, clone3 with ENOSYS, and lets fork and unshare(0) through', () => {
        const answers = probe(true);
        for (const p of probesFor(arch!)) assert.equal(answers.get(p.label), p.filtered, p.label);
      });

      it('unshare -U fails; unshare --help works', () => {
        const refused = sandboxed(['unshare', '-U', 'true']);
        assert.notEqual(refused.status, 0);
        assert.match(refused.stderr, /Operation not permitted/);
        const help = sandboxed(['unshare', '--help']);
        assert.equal(help.status, 0, help.stderr);
        assert.match(help.stdout, /--user/);
      });

      it('ordinary commands still work: sh, ls, git, node (threads and child processes), a background job', () => {
        const cases: [string[], RegExp][] = [
          [['sh', '-c', 'echo ok'], /^ok$/m],
          [['ls', '/'], /\busr\b/],
          [['git', '--version'], /^git version/],
          [
            [
              process.execPath,
              '-e',
              "require('child_process').execFileSync('true'); new (require('worker_threads').Worker)('0', { eval: true }).on('exit', () => console.log('node ok'))",
            ],
            /^node ok$/m,
          ],
          [['sh', '-c', 'true & wait; echo forked'], /^forked$/m],
        ];
        for (const [command, expected] of cases) {
          const r = sandboxed(command);
          assert.equal(r.status, 0, `${command.join(' ')}: ${r.stderr}`);
          assert.match(r.stdout, expected, command.join(' '));
        }
      });

      it('kills a process that calls through the i386 ABI (x86_64)', function () {
        if (arch !== 'x64') {
          console.log('        skipped: the foreign-ABI probe is x86_64 code; the decision tests cover arm64');
          this.skip();
        }
        const elf = path.join(dir, 'i386-call');
        if (!fs.existsSync(elf)) fs.writeFileSync(elf, i386CallElf(), { mode: 0o755 });
        const unfiltered = sandboxed([elf], { filter: false });
        if (unfiltered.status !== 0) {
          console.log('        skipped: this kernel runs no i386 system calls (no IA32 emulation)');
          this.skip();
        }
        const filtered = sandboxed([elf]);
        assert.equal(filtered.status, 128 + os.constants.signals.SIGSYS, filtered.stderr);
      });
    });
  }
});
