// The seccomp filter for commands run under bubblewrap: a classic-BPF program (the raw array of
// struct sock_filter that `bwrap --seccomp FD` / `--add-seccomp-fd FD` reads) that refuses the system
// calls a sandboxed command has no business making: debugging and reading other processes, loading
// kernel code, kernel keyrings, mounting, joining or creating user namespaces. Everything else is
// allowed; the file system and network confinement is bwrap's, not this filter's.

// System call numbers. x86_64: the kernel's arch/x86/entry/syscalls/syscall_64.tbl; arm64 uses the
// generic table, include/uapi/asm-generic/unistd.h. Checked against /usr/include/x86_64-linux-gnu/asm/unistd_64.h
// and /usr/include/asm-generic/unistd.h (linux-libc-dev).
const SYSCALLS = {
  x64: {
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
type SyscallName = keyof typeof SYSCALLS.x64;

/** Refused with EPERM whatever their arguments. fspick and mount_setattr complete the new mount API. */
const ALWAYS_DENIED: readonly SyscallName[] = [
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

// <linux/audit.h>: the ABI a system call was made through (seccomp_data.arch).
const AUDIT_ARCH = { x64: 0xc000003e, arm64: 0xc00000b7 } as const;
// On x86_64 the x32 ABI enters the same table with this bit set in the number.
const X32_SYSCALL_BIT = 0x40000000;
const CLONE_NEWUSER = 0x10000000;

// <linux/seccomp.h>: offsets in struct seccomp_data { int nr; u32 arch; u64 instruction_pointer; u64 args[6]; }.
// args[0]'s low 32 bits sit at offset 16 on little-endian (both supported arches); the clone/unshare
// flag we test is in those bits.
const DATA_NR = 0;
const DATA_ARCH = 4;
const DATA_ARG0_LOW = 16;

const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const ENOSYS = 38;

// <linux/bpf_common.h> / <linux/filter.h> opcodes.
const BPF_LD_W_ABS = 0x00 | 0x00 | 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_JEQ_K = 0x05 | 0x10 | 0x00; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JSET_K = 0x05 | 0x40 | 0x00; // BPF_JMP | BPF_JSET | BPF_K
const BPF_RET_K = 0x06 | 0x00; // BPF_RET | BPF_K

/** 0 = fall through to the next instruction; a string = jump to that label (forward only, as BPF requires). */
type Target = 0 | string;
interface Instruction {
  code: number;
  jt: Target;
  jf: Target;
  k: number;
}

/** A few lines of assembler so the program reads as its logic, with labels instead of hand-counted offsets. */
class BpfProgram {
  private readonly code: Instruction[] = [];
  private readonly labels = new Map<string, number>();

  label(name: string): this {
    if (this.labels.has(name)) throw new Error(`seccomp: label ${name} defined twice`);
    this.labels.set(name, this.code.length);
    return this;
  }
  load(offset: number): this {
    return this.push(BPF_LD_W_ABS, 0, 0, offset);
  }
  jumpIfEqual(k: number, whenTrue: Target, whenFalse: Target = 0): this {
    return this.push(BPF_JEQ_K, whenTrue, whenFalse, k);
  }
  jumpIfAnyBit(k: number, whenTrue: Target, whenFalse: Target = 0): this {
    return this.push(BPF_JSET_K, whenTrue, whenFalse, k);
  }
  ret(value: number): this {
    return this.push(BPF_RET_K, 0, 0, value);
  }

  /** The raw struct sock_filter array: u16 code, u8 jt, u8 jf, u32 k, little-endian. */
  assemble(): Buffer {
    const out = Buffer.alloc(this.code.length * 8);
    this.code.forEach((insn, i) => {
      out.writeUInt16LE(insn.code, i * 8);
      out.writeUInt8(this.offset(insn.jt, i), i * 8 + 2);
      out.writeUInt8(this.offset(insn.jf, i), i * 8 + 3);
      out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
    });
    return out;
  }

  private push(code: number, jt: Target, jf: Target, k: number): this {
    this.code.push({ code, jt, jf, k });
    return this;
  }
  private offset(target: Target, at: number): number {
    if (target === 0) return 0;
    const to = this.labels.get(target);
    if (to === undefined) throw new Error(`seccomp: undefined label ${target}`);
    const offset = to - (at + 1);
    if (offset < 0 || offset > 255) throw new Error(`seccomp: jump to ${target} out of range (${offset})`);
    return offset;
  }
}

/**
 * The filter for `arch` (a `process.arch` value) as bwrap's `--seccomp` reads it, or undefined when
 * there is no table for that architecture (only x64 and arm64 have one; the caller must say so rather
 * than run unfiltered silently).
 *
 * - a system call through another ABI than the table's (e.g. int 0x80 on x86_64): the process is killed;
 * - x86_64's x32 ABI: EPERM;
 * - the ALWAYS_DENIED calls: EPERM;
 * - clone and unshare asking for a new user namespace: EPERM (inside one a process gets every
 *   capability over it, which opens the kernel surface the rest of this filter closes);
 * - clone3: ENOSYS, since its flags live in memory the filter cannot read; libc then falls back to clone;
 * - anything else is allowed.
 */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  if (arch !== 'x64' && arch !== 'arm64') return undefined;
  const nr = SYSCALLS[arch];
  const p = new BpfProgram();
  p.load(DATA_ARCH).jumpIfEqual(AUDIT_ARCH[arch], 0, 'kill');
  p.load(DATA_NR);
  if (arch === 'x64') p.jumpIfAnyBit(X32_SYSCALL_BIT, 'eperm');
  p.jumpIfEqual(nr.clone3, 'enosys');
  p.jumpIfEqual(nr.clone, 'flags');
  p.jumpIfEqual(nr.unshare, 'flags');
  for (const name of ALWAYS_DENIED) p.jumpIfEqual(nr[name], 'eperm');
  p.ret(SECCOMP_RET_ALLOW);
  p.label('flags').load(DATA_ARG0_LOW).jumpIfAnyBit(CLONE_NEWUSER, 'eperm', 'allow');
  p.label('allow').ret(SECCOMP_RET_ALLOW);
  p.label('eperm').ret(SECCOMP_RET_ERRNO | EPERM);
  p.label('enosys').ret(SECCOMP_RET_ERRNO | ENOSYS);
  p.label('kill').ret(SECCOMP_RET_KILL_PROCESS);
  return p.assemble();
}
