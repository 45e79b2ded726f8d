// The hook wrapper: the one command every client's hook configuration runs. Measured with the real
// clients, a hook that exits 1 (Node missing, a crash, a syntax error on an old Node) or outlives the
// client's hook timeout lets Claude Code, Codex and Gemini CLI run the tool anyway. So the clients
// never run the hook program directly: they run this small script, which runs the program under its
// own watchdog and turns every failure into that client's deny. It never echoes stdin or the
// environment (hooks inherit the agent's API keys).
import type { AgentId } from '../../engine/agents/types';
import { AGENT_IDS } from '../../engine/agents/types';

export const WRAPPER_NAME = 'bulwark-hook';
/** Where the program's stderr of the last failed run goes (0600, in the state dir agents cannot read). */
export const FAILURE_LOG = 'hook-failure.log';

/** Client hook timeouts accepted by the installer, in seconds (the watchdog needs a few of them). */
export const MIN_CLIENT_TIMEOUT_S = 10;
export const MAX_CLIENT_TIMEOUT_S = 3600;
export const DEFAULT_CLIENT_TIMEOUT_S = 60;

/** Built-in Shield policies the installed command may name (a file path is not accepted here). */
export const HOOK_POLICIES = ['default', 'permissive', 'strict'] as const;
export type HookPolicy = (typeof HOOK_POLICIES)[number];

/** What else the installed command may tell the hook program: sandboxing off, and hosts every sandboxed command may reach. */
export interface HookOptions {
  readonly policy?: HookPolicy;
  /** false: allowed shell calls run as the agent wrote them (`bulwark hook --no-sandbox`). */
  readonly sandbox?: boolean;
  readonly allowNet?: readonly string[];
}

/** An `--allow-net` entry the installed command may carry: HOST[:PORT] (a name, `*.` + name, IPv4, or [IPv6]); nothing a shell would expand but `*`. */
export const ALLOW_NET_ENTRY =
  /^(?:(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/** The watchdog kills the program this long before the client's own timeout would fire. */
const WATCHDOG_MARGIN_S = 3;
/** The program is told to answer this long before the watchdog fires, so a slow tier still ends as its own deny. */
const PROGRAM_MARGIN_S = 2;

export interface WrapperTarget {
  /** Absolute path of the Node (or Electron, run with ELECTRON_RUN_AS_NODE=1) executable. */
  readonly node: string;
  /** Absolute path of dist/cli.js. */
  readonly cli: string;
  /** Absolute Bulwark state directory (passed to the program as --state-dir). */
  readonly stateDir: string;
}

export interface WrapperTiming {
  readonly watchdogSeconds: number;
  readonly programDeadlineMs: number;
}

/** Seconds after which the wrapper kills the program, and the budget the program is given, for a client timeout. */
export function wrapperTiming(clientTimeoutSeconds: number): WrapperTiming {
  checkClientTimeout(clientTimeoutSeconds);
  const watchdogSeconds = clientTimeoutSeconds - WATCHDOG_MARGIN_S;
  return { watchdogSeconds, programDeadlineMs: (watchdogSeconds - PROGRAM_MARGIN_S) * 1000 };
}

export function checkClientTimeout(seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < MIN_CLIENT_TIMEOUT_S || seconds > MAX_CLIENT_TIMEOUT_S) {
    throw new Error(
      `the hook timeout must be a whole number of seconds from ${MIN_CLIENT_TIMEOUT_S} to ${MAX_CLIENT_TIMEOUT_S}, got ${seconds}`,
    );
  }
}

/** The single-quoted POSIX shell form of a string. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A PowerShell single-quoted string literal. */
function psQuote(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** Text safe inside a JSON string literal and on one line. */
function jsonInner(s: string): string {
  return JSON.stringify(s.replace(/[\r\n]+/g, ' ')).slice(1, -1);
}

function checkTarget(t: WrapperTarget): void {
  for (const [name, v] of [
    ['node', t.node],
    ['cli', t.cli],
    ['stateDir', t.stateDir],
  ] as const) {
    if (typeof v !== 'string' || v.length === 0) throw new Error(`the wrapper needs the ${name} path`);
    if (/[\0\r\n]/.test(v)) throw new Error(`the ${name} path contains a control character: ${JSON.stringify(v)}`);
  }
}

/** What the model is told to do, and the user how to fix it; appended to every failure reason. */
const WHAT_TO_DO =
  "Do not retry this action another way; tell the user that Bulwark's hook is broken. To fix it, run `bulwark hooks status` (or Bulwark: Show Status in VS Code) and install the hooks again.";

/**
 * The POSIX sh wrapper, installed at <stateDir>/bin/bulwark-hook (0755) and called as
 *   bulwark-hook AGENT CLIENT_TIMEOUT_SECONDS [POLICY]   (the client's hook JSON on stdin)
 * Exit 0 or 2 from the program passes its stdout/stderr through unchanged; anything else (127: Node
 * not found, 126: not executable, 1: a crash or an old Node, the watchdog, a signal) becomes the
 * client's deny: exit 2 with one line on stderr, or for Copilot CLI (which drops stderr on exit 2)
 * its deny JSON on stdout with exit 0.
 */
export function renderPosixWrapper(t: WrapperTarget): string {
  checkTarget(t);
  const agents = AGENT_IDS.join('|');
  return `#!/bin/sh
# Bulwark hook wrapper. Generated by \`bulwark hooks install\` and rewritten on every install:
# do not edit (\`bulwark hooks status\` reports a changed copy as tampered).
# Usage: bulwark-hook AGENT CLIENT_TIMEOUT_SECONDS [POLICY] [no-sandbox] [allow-net=HOST]...   (the client's hook JSON on stdin)
# Some clients run the tool when a hook exits 1 or times out, so every failure of the hook program
# here ends as that client's deny. Neither stdin nor the environment is ever printed.
NODE=${shQuote(t.node)}
CLI=${shQuote(t.cli)}
STATE_DIR=${shQuote(t.stateDir)}
NODE_JSON=${shQuote(jsonInner(t.node))}
CLI_JSON=${shQuote(jsonInner(t.cli))}
FAILURE_LOG_JSON=${shQuote(jsonInner(`${t.stateDir}/${FAILURE_LOG}`))}
WHAT_TO_DO=${shQuote(jsonInner(WHAT_TO_DO))}

agent=\${1-}
timeout_s=\${2-}
if [ $# -ge 2 ]; then shift 2; else set --; fi
policy=
hook_opts=
tmp=
pid=
watchdog=

# No word of this script is a file pattern (an --allow-net host may start with *.).
set -f
# The shell's own messages ("Killed", "Terminated" when it reaps a job) must not reach the client:
# its stderr goes to /dev/null and this script writes to the client's stderr through fd 4 only.
exec 4>&2 2>/dev/null

# deny WHY: the client's deny, with WHY (JSON-safe text) as the reason. Never returns.
deny() {
  [ -n "$tmp" ] && rm -rf "$tmp"
  reason="Bulwark: the hook program failed ($1), so this tool call is denied. $WHAT_TO_DO"
  if [ "$agent" = copilot-cli ]; then
    # Copilot CLI reads the top-level fields; the hookSpecificOutput copy is for a client that maps
    # this entry to the Claude-style dialect (VS Code reads .github/hooks too).
    printf '{"permissionDecision":"deny","permissionDecisionReason":"%s","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"%s"}}\\n' "$reason" "$reason"
    exit 0
  fi
  printf '%s\\n' "$reason" >&4
  exit 2
}

case $agent in
  ${agents}) ;;
  *) agent=unknown; deny "the hook command names no known agent" ;;
esac
case $timeout_s in
  ''|*[!0-9]*) deny "the hook command has no valid timeout" ;;
esac
for opt in "$@"; do
  case $opt in
    ${HOOK_POLICIES.join('|')}) policy=$opt ;;
    no-sandbox) hook_opts="$hook_opts --no-sandbox" ;;
    allow-net=*)
      host=\${opt#allow-net=}
      case $host in
        ''|*[!]A-Za-z0-9.:*[-]*) deny "the hook command names an --allow-net host with characters a host cannot have" ;;
      esac
      hook_opts="$hook_opts --allow-net=$host" ;;
    /*|*.y*ml|*.json) deny "the hook command names no known policy" ;;
    *) deny "the hook command has an option it does not know" ;;
  esac
done
[ "$timeout_s" -ge ${MIN_CLIENT_TIMEOUT_S} ] || deny "the hook timeout is below ${MIN_CLIENT_TIMEOUT_S} s"
[ "$timeout_s" -le ${MAX_CLIENT_TIMEOUT_S} ] || deny "the hook timeout is above ${MAX_CLIENT_TIMEOUT_S} s"
watchdog_s=$((timeout_s - ${WATCHDOG_MARGIN_S}))
deadline_ms=$(((watchdog_s - ${PROGRAM_MARGIN_S}) * 1000))

[ -f "$NODE" ] || deny "Node was not found at $NODE_JSON"
[ -x "$NODE" ] || deny "Node at $NODE_JSON is not executable"
[ -f "$CLI" ] || deny "the hook program $CLI_JSON is missing"

tmp=$(mktemp -d "\${TMPDIR:-/tmp}/bulwark-hook.XXXXXX") || { tmp=; deny "no temporary directory could be created"; }
trap 'rm -rf "$tmp"' EXIT
# The client stopping the hook (its own timeout, or it exits) takes the program down at once.
trap 'stop_all; deny "the client stopped the hook"' HUP INT TERM
stop_all() {
  [ -n "$watchdog" ] && kill "$watchdog"
  if [ -n "$pid" ]; then pkill -KILL -P "$pid"; kill -KILL "$pid"; wait "$pid"; fi
}

# Hooks inherit the agent's environment: nothing in it may load code into the hook program.
unset NODE_OPTIONS NODE_PATH
# Node keeps the compiled program in Bulwark's own state (agents cannot write it): a hook call then
# starts in well under 100 ms instead of compiling the whole CLI bundle each time.
NODE_COMPILE_CACHE="$STATE_DIR/cache/node-compile"; export NODE_COMPILE_CACHE
# A background job gets /dev/null as stdin unless told otherwise: hand it the client's stdin on fd 3.
exec 3<&0
ELECTRON_RUN_AS_NODE=1 "$NODE" "$CLI" hook --agent "$agent" --state-dir "$STATE_DIR" --deadline-ms "$deadline_ms" \${policy:+--policy "$policy"} $hook_opts <&3 >"$tmp/out" 2>"$tmp/err" 4>&- &
pid=$!
exec 3<&-

# Watchdog: after watchdog_s, mark the run timed out and kill the program (its children first).
# Its output goes nowhere: a leftover process must never hold the client's stdout open.
(
  trap 'kill "$sleeper"; exit 0' TERM
  sleep "$watchdog_s" & sleeper=$!
  wait "$sleeper" || exit 0
  : >"$tmp/timed-out"
  pkill -TERM -P "$pid"
  kill -TERM "$pid"
  sleep 1
  pkill -KILL -P "$pid"
  kill -KILL "$pid"
) </dev/null >/dev/null 2>&1 3<&- 4>&- &
watchdog=$!

wait "$pid"
rc=$?
kill "$watchdog"
wait "$watchdog"
watchdog=
pid=

if [ ! -e "$tmp/timed-out" ] && { [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ]; }; then
  cat "$tmp/out"
  [ -s "$tmp/err" ] && cat "$tmp/err" >&4
  exit "$rc"
fi

# Keep the program's stderr for the user (it may quote the tool input, so it goes to a 0600 file in
# the state directory agents cannot read, never to the client).
( umask 077; { date; echo "agent $agent, exit status $rc"; dd bs=4096 count=1 <"$tmp/err"; } >"$STATE_DIR/${FAILURE_LOG}" )

if [ -e "$tmp/timed-out" ]; then deny "no answer within $watchdog_s s"; fi
case $rc in
  126) deny "Node at $NODE_JSON could not be executed" ;;
  127) deny "Node was not found at $NODE_JSON" ;;
  1) deny "exit status 1: it crashed, or this Node cannot run $CLI_JSON; details in $FAILURE_LOG_JSON" ;;
esac
if [ "$rc" -gt 128 ]; then deny "killed by signal $((rc - 128))"; fi
deny "exit status $rc; details in $FAILURE_LOG_JSON"
`;
}

/**
 * The Windows equivalent (PowerShell 5.1+), installed at <stateDir>\bin\bulwark-hook.ps1 and called as
 *   powershell -NoProfile -ExecutionPolicy Bypass -File <ps1> AGENT CLIENT_TIMEOUT_SECONDS
 * Same intent as the sh wrapper: stdin passed through, a watchdog that kills the process tree, and
 * every failure as the client's deny. Not exercised by the tests (no Windows here).
 */
export function renderPowerShellWrapper(t: WrapperTarget): string {
  checkTarget(t);
  return `# Bulwark hook wrapper (Windows). Generated by \`bulwark hooks install\`; rewritten on every install: do not edit.
# Usage: powershell -NoProfile -ExecutionPolicy Bypass -File bulwark-hook.ps1 AGENT CLIENT_TIMEOUT_SECONDS [POLICY] [no-sandbox] [allow-net=HOST]...
# Every failure of the hook program ends as the client's deny. Neither stdin nor the environment is printed.
$ErrorActionPreference = 'Stop'
$Node = ${psQuote(t.node)}
$Cli = ${psQuote(t.cli)}
$StateDir = ${psQuote(t.stateDir)}
$WhatToDo = ${psQuote(WHAT_TO_DO)}
$Agent = if ($args.Count -ge 1) { [string]$args[0] } else { '' }
$TimeoutArg = if ($args.Count -ge 2) { [string]$args[1] } else { '' }
$Policy = ''
$HookOpts = ''

function Deny([string]$Why) {
  $reason = "Bulwark: the hook program failed ($Why), so this tool call is denied. $WhatToDo"
  if ($Agent -eq 'copilot-cli') {
    $hso = @{ hookEventName = 'PreToolUse'; permissionDecision = 'deny'; permissionDecisionReason = $reason }
    [Console]::Out.WriteLine((@{ permissionDecision = 'deny'; permissionDecisionReason = $reason; hookSpecificOutput = $hso } | ConvertTo-Json -Compress))
    exit 0
  }
  [Console]::Error.WriteLine($reason)
  exit 2
}

try {
  if (@(${AGENT_IDS.map((a) => psQuote(a)).join(', ')}) -notcontains $Agent) { $Agent = 'unknown'; Deny 'the hook command names no known agent' }
  $timeout = 0
  if (-not [int]::TryParse($TimeoutArg, [ref]$timeout) -or $timeout -lt ${MIN_CLIENT_TIMEOUT_S}) { Deny 'the hook command has no valid timeout' }
  foreach ($opt in @($args | Select-Object -Skip 2)) {
    $o = [string]$opt
    if (@(${HOOK_POLICIES.map((p) => psQuote(p)).join(', ')}) -contains $o) { $Policy = $o }
    elseif ($o -eq 'no-sandbox') { $HookOpts += ' --no-sandbox' }
    elseif ($o -match '^allow-net=[A-Za-z0-9.:*\[\]-]+$') { $HookOpts += ' --allow-net=' + $o.Substring(10) }
    elseif ($o -match '^/|\.ya?ml$|\.json$') { Deny 'the hook command names no known policy' }
    else { Deny 'the hook command has an option it does not know' }
  }
  $watchdogMs = ($timeout - ${WATCHDOG_MARGIN_S}) * 1000
  $deadlineMs = $watchdogMs - ${PROGRAM_MARGIN_S * 1000}
  if (-not (Test-Path -LiteralPath $Node -PathType Leaf)) { Deny "Node was not found at $Node" }
  if (-not (Test-Path -LiteralPath $Cli -PathType Leaf)) { Deny "the hook program $Cli is missing" }

  $psi = New-Object System.Diagnostics.ProcessStartInfo
  $psi.FileName = $Node
  $psi.Arguments = '"' + $Cli + '" hook --agent ' + $Agent + ' --state-dir "' + $StateDir + '" --deadline-ms ' + $deadlineMs
  if ($Policy -ne '') { $psi.Arguments += ' --policy ' + $Policy }
  $psi.Arguments += $HookOpts
  $psi.UseShellExecute = $false
  $psi.RedirectStandardInput = $true
  $psi.RedirectStandardOutput = $true
  $psi.RedirectStandardError = $true
  $psi.EnvironmentVariables['ELECTRON_RUN_AS_NODE'] = '1'
  [void]$psi.EnvironmentVariables.Remove('NODE_OPTIONS')
  [void]$psi.EnvironmentVariables.Remove('NODE_PATH')
  $psi.EnvironmentVariables['NODE_COMPILE_CACHE'] = (Join-Path $StateDir 'cache\node-compile')
  $p = [System.Diagnostics.Process]::Start($psi)
  $outTask = $p.StandardOutput.ReadToEndAsync()
  $errTask = $p.StandardError.ReadToEndAsync()
  $stdin = [Console]::OpenStandardInput()
  $stdin.CopyTo($p.StandardInput.BaseStream)
  $p.StandardInput.Close()
  if (-not $p.WaitForExit($watchdogMs)) {
    & taskkill.exe /PID $p.Id /T /F 2>$null | Out-Null
    Deny "no answer within $([int]($watchdogMs / 1000)) s"
  }
  $p.WaitForExit()
  $rc = $p.ExitCode
  if ($rc -eq 0 -or $rc -eq 2) {
    [Console]::Out.Write($outTask.Result)
    if ($errTask.Result) { [Console]::Error.Write($errTask.Result) }
    exit $rc
  }
  $log = Join-Path $StateDir '${FAILURE_LOG}'
  $err = $errTask.Result
  if ($err.Length -gt 4096) { $err = $err.Substring(0, 4096) }
  try { Set-Content -LiteralPath $log -Value ("$(Get-Date) agent $Agent, exit status $rc" + [Environment]::NewLine + $err) } catch { }
  if ($rc -eq 1) { Deny "exit status 1: it crashed, or this Node cannot run $Cli; details in $log" }
  Deny "exit status $rc; details in $log"
} catch {
  Deny 'the wrapper could not run the hook program'
}
`;
}

export type WrapperPlatform = 'linux' | 'darwin' | 'win32';

/** The file the clients' configurations call, under <stateDir>/bin. */
export function wrapperFileName(platform: WrapperPlatform): string {
  return platform === 'win32' ? `${WRAPPER_NAME}.ps1` : WRAPPER_NAME;
}

export function renderWrapper(t: WrapperTarget, platform: WrapperPlatform): string {
  return platform === 'win32' ? renderPowerShellWrapper(t) : renderPosixWrapper(t);
}

/**
 * The command string written into a client's configuration. A missing or unreadable wrapper would
 * itself make the shell exit 127/126, which some clients treat as "go on", hence the `|| exit 2`:
 * the command as a whole can only succeed through the wrapper. (Windows: PowerShell's exit status for
 * a missing -File is not guarded; untested here.)
 * It is stable for an (agent, timeout) pair, so re-installing does not change it (Codex trusts a hook by its hash).
 */
export function wrapperCommand(
  agent: AgentId,
  clientTimeoutSeconds: number,
  wrapperPath: string,
  platform: WrapperPlatform,
  options: HookOptions = {},
): string {
  checkClientTimeout(clientTimeoutSeconds);
  const { policy, sandbox = true, allowNet = [] } = options;
  if (policy !== undefined && !(HOOK_POLICIES as readonly string[]).includes(policy))
    throw new Error(`the hook policy must be one of ${HOOK_POLICIES.join(', ')}, got \`${policy}\``);
  for (const h of allowNet)
    if (!ALLOW_NET_ENTRY.test(h))
      throw new Error(`--allow-net takes HOST[:PORT] (a name, *.name, an IPv4 address or [IPv6]), got \`${h}\``);
  // Hosts are quoted: `*.example.com` must reach the wrapper as written.
  const quote = platform === 'win32' ? (s: string) => s : shQuote;
  const words = [
    agent,
    String(clientTimeoutSeconds),
    ...(policy ? [policy] : []),
    ...(sandbox ? [] : ['no-sandbox']),
    ...allowNet.map((h) => quote(`allow-net=${h}`)),
  ];
  const args = words.join(' ');
  if (platform === 'win32') {
    return `powershell -NoProfile -ExecutionPolicy Bypass -File "${wrapperPath}" ${args}`;
  }
  return `${shQuote(wrapperPath)} ${args} || exit 2`;
}
