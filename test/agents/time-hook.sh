#!/bin/bash
# Times one hook call as the client sees it: from this process's start to the hook command's exit.
# Usage (as a hook command): time-hook.sh LOG PHASE sh -c 'ORIGINAL HOOK COMMAND'
# stdin, stdout, stderr and the exit status pass through unchanged; one JSON line goes to LOG.
log=$1 phase=$2
shift 2
t0=$EPOCHREALTIME
"$@"
rc=$?
t1=$EPOCHREALTIME
printf '{"phase":"%s","start":%s,"end":%s,"rc":%d}\n' "$phase" "$t0" "$t1" "$rc" >>"$log"
exit "$rc"
