#!/usr/bin/env bash
# The real agent CLIs guarded by Bulwark's hooks (the `agents` stage of npm test; also `bash test/agents/run.sh`).
# Installs the pinned clients into .e2e/agents on first use, builds dist/ unless BULWARK_AGENTS_SKIP_BUILD=1
# (scripts/test.sh has just built it), then runs test/agents/run.js with the given arguments.
# Prints one closing line `agents: N passed, M failed`; exit status non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

summary() { echo "agents: $1 passed, $2 failed"; }
# shellcheck source=../../scripts/bootstrap.sh
source scripts/bootstrap.sh || { summary 0 1; exit 1; }
bw_ensure_agent_clients || { echo "agents: the agent CLIs could not be installed (see .e2e/logs/agent-*-install.log)"; summary 0 1; exit 1; }
if [ "${BULWARK_AGENTS_SKIP_BUILD:-}" != 1 ]; then
  node esbuild.mjs >/dev/null || { echo "agents: build failed (node esbuild.mjs)"; summary 0 1; exit 1; }
fi
# Everything (driver, model server, clients, hooks) runs in a network namespace with loopback only, so no
# client, hook or tool can reach another host whatever it tries (bubblewrap comes with the bootstrap).
# No PID namespace: the sandbox the hooks wrap shell commands in (bulwark exec) is a bwrap of its own, which
# reads /proc for its own process id; under an outer --unshare-pid that /proc is the host's (a fresh one cannot
# be mounted in this container) and the inner bwrap fails. harness.js stops each run's hook server instead.
if bwrap --dev-bind / / --unshare-net --die-with-parent -- true 2>/dev/null; then
  BULWARK_AGENTS_NETNS=1 exec bwrap --dev-bind / / --unshare-net --die-with-parent -- node test/agents/run.js "$@"
fi
echo "agents: note: bubblewrap cannot create a network namespace here; the clients run with this machine's network (offline settings only)"
exec node test/agents/run.js "$@"
