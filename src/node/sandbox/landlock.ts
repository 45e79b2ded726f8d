// Landlock, the kernel's own file-system sandbox, as a second layer under bubblewrap's mounts: inside the
// sandbox, before the command starts, writes are restricted to the writable roots, the private /tmp and
// /dev, whatever the mounts say (a mistake in the plan, a writable tmpfs such as /run). Node cannot make
// the three system calls itself and we ship no native code, so a few lines of Perl (perl-base is part of
// every Debian and Ubuntu system) make them and then exec the command. Numbers and layouts are the
// kernel's (include/uapi/linux/landlock.h): landlock_create_ruleset 444, landlock_add_rule 445,
// landlock_restrict_self 446 on x86_64 and arm64 alike.
import { spawnSync } from 'node:child_process';
import { findOnPath } from '../find-on-path';

/** prctl(2) on each architecture (no_new_privs must be set before landlock_restrict_self). */
const PRCTL: Record<string, number> = { x64: 157, arm64: 167 };

/**
 * argv: prctl-number, then the writable directories or files, `--`, then the command. Exit 125 with one
 * line on stderr when any step fails: the command never runs without the layer it was promised.
 */
export const LANDLOCK_SCRIPT = String.raw`
my $prctl = shift @ARGV;
my @paths; while (@ARGV && $ARGV[0] ne '--') { push @paths, shift @ARGV } shift @ARGV;
sub fail { print STDERR "bulwark sandbox: Landlock could not be set up ($_[0]: $!); the command was not run\n"; exit 125 }
my $abi = syscall(444, 0, 0, 1);
fail('no Landlock in this kernel') if $abi < 1;
my $dir = (1<<1)|(1<<4)|(1<<5)|(1<<6)|(1<<7)|(1<<8)|(1<<9)|(1<<10)|(1<<11)|(1<<12);
$dir |= (1<<13) if $abi >= 2;
my $file = (1<<1);
if ($abi >= 3) { $dir |= (1<<14); $file |= (1<<14) }
my $attr = pack('Q', $dir);
my $rs = syscall(444, $attr, length($attr), 0);
fail('landlock_create_ruleset') if $rs < 0;
for my $p (@paths) {
  next unless -e $p;
  sysopen(my $fh, $p, 0x200000 | 0x80000) or fail("open $p");
  my $rule = pack('Ql', (-d $p ? $dir : $file), fileno($fh));
  fail("landlock_add_rule $p") if syscall(445, $rs, 1, $rule, 0) < 0;
  close($fh);
}
fail('prctl(PR_SET_NO_NEW_PRIVS)') if syscall($prctl + 0, 38, 1, 0, 0, 0) < 0;
fail('landlock_restrict_self') if syscall(446, $rs, 0) < 0;
exec { $ARGV[0] } @ARGV or do { print STDERR "bulwark sandbox: $ARGV[0]: $!\n"; exit 127 };
`;

export interface LandlockSupport {
  readonly available: boolean;
  /** The kernel's Landlock ABI version (1 = Linux 5.13). */
  readonly abi?: number;
  readonly perl?: string;
  readonly reason?: string;
}

let cached: LandlockSupport | undefined;

/** Whether this kernel has Landlock and perl is there to call it (asked once per process). */
export function landlockSupport(): LandlockSupport {
  if (cached) return cached;
  if (process.platform !== 'linux') return (cached = { available: false, reason: 'Landlock is Linux only' });
  if (PRCTL[process.arch] === undefined) return (cached = { available: false, reason: `no Landlock call numbers for ${process.arch}` });
  const perl = findOnPath('perl');
  if (!perl) return (cached = { available: false, reason: 'perl is not installed (it calls Landlock for Bulwark)' });
  const r = spawnSync(perl, ['-e', 'my $v = syscall(444, 0, 0, 1); print $v > 0 ? $v : 0'], { timeout: 5000, encoding: 'utf8' });
  const abi = Number(r.stdout);
  if (r.status !== 0 || !(abi > 0))
    return (cached = { available: false, perl, reason: 'this kernel has no Landlock (Linux 5.13 or later, enabled in the lsm= list)' });
  return (cached = { available: true, abi, perl });
}

/** The argv that applies Landlock and then runs `command`: writes only below `writable`. */
export function landlockWrapped(perl: string, writable: readonly string[], command: readonly string[]): string[] {
  return [perl, '-e', LANDLOCK_SCRIPT, String(PRCTL[process.arch]), ...writable, '--', ...command];
}
