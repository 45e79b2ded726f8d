#!/usr/bin/env bash
# `npm run check`: the fast gate — build, type check, lint, formatting, unit tests (and the case corpus), stopping at the first
# failure. scripts/test.sh runs it first and skips the slow stages (the agent CLIs, code-server) when it fails.
# Set BULWARK_CHECK_BOOTSTRAPPED=1 when the caller has already sourced scripts/bootstrap.sh.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

say() { printf '[check %s] %s\n' "$(date +%T)" "$*"; }
if [ "${BULWARK_CHECK_BOOTSTRAPPED:-}" != 1 ]; then
  # shellcheck source=bootstrap.sh
  source scripts/bootstrap.sh || { say "toolchain bootstrap failed"; exit 1; }
fi

step() { # step NAME cmd...: run it; on failure say which step failed and stop
  local name=$1 t=$SECONDS; shift
  say "$name: $*"
  if "$@"; then say "$name: ok ($((SECONDS - t))s)"; return 0; fi
  say "$name: FAILED ($((SECONDS - t))s) -- check stops here"
  exit 1
}

rm -rf dist out   # no stale bundles: every later step checks what this run built
step build node esbuild.mjs
step "type check" npx --no-install tsc --noEmit -p .
step lint npx --no-install eslint --max-warnings 0 .
step format npx --no-install prettier --check --log-level warn .   # npm run format fixes it
step "unit tests" bash -c 'node esbuild.mjs --tests && npx --no-install mocha --config .mocharc.json --forbid-only'
say "all steps passed"
