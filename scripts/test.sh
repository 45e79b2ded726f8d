#!/usr/bin/env bash
# THE test command (`npm test`, also what CI runs through .ci/run). Works on a fresh clone: the bootstrap installs
# the toolchain (Node 24, apt packages, node_modules, code-server) first.
# Stages: check (scripts/check.sh = `npm run check`: build, type check, lint, formatting, unit tests, stopping at its first
#   failure) | agents (test/agents/run.sh: the real agent CLIs with Bulwark's hooks) | e2e (test/e2e/test-e2e.sh).
#   The slow stages run only when the check passed (fail fast); agents and e2e both run even if one of them fails.
# The last line is the summary `tests: N passed, M failed` (mocha unit + agents + e2e counts; a stage that fails without
# reporting test counts, e.g. the build, the type check or lint, counts as one failure). Exit status is non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

T0=$SECONDS
say() { printf '[test %s] %s\n' "$(date +%T)" "$*"; }
summary() { echo "tests: $1 passed, $2 failed"; }

# shellcheck source=bootstrap.sh
if ! source scripts/bootstrap.sh; then
  say "toolchain bootstrap failed"
  summary 0 1
  exit 1
fi
LOGS=$BW_E2E/logs
mkdir -p "$LOGS"

PASS=0 FAIL=0
STAGES=()
RETRIED=0
# stage_result NAME RC PASSED FAILED SECONDS [RETRIED]   (PASSED/FAILED "-": the stage counts no tests; RETRIED: how many
# of the passed ones passed only after a retry)
stage_result() {
  local name=$1 rc=$2 p=$3 f=$4 r=${6:-0} st=ok counts=''
  [ "$rc" = 0 ] || st=FAILED
  if [ "$p" != - ]; then
    counts=", $p passed"
    [ "$r" = 0 ] || counts="$counts ($r only after a retry)"
    counts="$counts, $f failed"
  else p=0 f=0; fi
  RETRIED=$((RETRIED + r))
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; counts="$counts (counted as 1 failure)"; fi
  PASS=$((PASS + p)) FAIL=$((FAIL + f))
  STAGES+=("$name $st")
  say "$name: $st$counts ($5s)"
}

# --- check: build, type check, lint, unit tests (scripts/check.sh, `npm run check`; stops at its first failure) ---------
say "check: bash scripts/check.sh (build, type check, lint, formatting, unit tests)"
t=$SECONDS
BULWARK_CHECK_BOOTSTRAPPED=1 bash scripts/check.sh 2>&1 | tee "$LOGS/unit.txt"
check_rc=${PIPESTATUS[0]}
p=$(sed 's/\x1b\[[0-9;]*m//g' "$LOGS/unit.txt" | grep -oE '^ *[0-9]+ passing' | grep -oE '[0-9]+' | tail -n1)
f=$(sed 's/\x1b\[[0-9;]*m//g' "$LOGS/unit.txt" | grep -oE '^ *[0-9]+ failing' | grep -oE '[0-9]+' | tail -n1)
stage_result check "$check_rc" "${p:-0}" "${f:-0}" $((SECONDS - t))

# A stage that runs a suite script needing dist/ and closes with `NAME: N passed, M failed` (and may say before it
# `NAME retries: K passed only after a retry`).
suite_stage() { # suite_stage NAME SKIP_BUILD_VAR SCRIPT
  local name=$1 skip_var=$2 script=$3 t=$SECONDS rc line p f r
  say "$name: bash $script"
  if [ "$check_rc" = 0 ]; then
    env "$skip_var=1" bash "$script" 2>&1 | tee "$LOGS/$name.txt"
    rc=${PIPESTATUS[0]}
  else
    # Fail fast: the slow stages wait until the build, types, lint and unit tests pass (`npm run check`).
    echo "$name: skipped, the check stage failed (run npm run check)" | tee "$LOGS/$name.txt"; rc=1
  fi
  line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed\$" "$LOGS/$name.txt" | tail -n1)
  p=$(sed -E "s/^$name: ([0-9]+) passed.*/\1/" <<<"$line")
  f=$(sed -E 's/.*, ([0-9]+) failed$/\1/' <<<"$line")
  r=$(grep -E "^$name retries: [0-9]+ passed only after a retry\$" "$LOGS/$name.txt" | tail -n1 | sed -E 's/.*: ([0-9]+) passed.*/\1/')
  stage_result "$name" "$rc" "${p:-0}" "${f:-0}" $((SECONDS - t)) "${r:-0}"
}

# --- agents: the four real agent CLIs (pinned, from npm) with Bulwark's hooks, against a scripted model server -----
suite_stage agents BULWARK_AGENTS_SKIP_BUILD test/agents/run.sh

# --- e2e: the extension in code-server (extension-host suite + UI through the installed .vsix) ---------------------
suite_stage e2e BULWARK_E2E_SKIP_BUILD test/e2e/test-e2e.sh

stages=$(printf '%s, ' "${STAGES[@]}")
say "stages: ${stages%, } -- total $((SECONDS - T0))s; $RETRIED passed only after a retry"
summary "$PASS" "$FAIL"
[ "$FAIL" = 0 ]
