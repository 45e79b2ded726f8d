#!/usr/bin/env bash
# `npm start`: try Bulwark in a browser. Builds the extension, packages the .vsix, installs it into code-server
# (VS Code 1.139.1, offline), creates a demo workspace and serves it on http://127.0.0.1:8080 in the foreground.
# Ctrl-C stops it. Env: BULWARK_DEMO_PORT (default 8080).
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bootstrap.sh
source scripts/bootstrap.sh

PORT=${BULWARK_DEMO_PORT:-8080}
H=$BW_E2E/demo-home            # HOME, user data and extensions of the demo code-server (kept between runs)
WS=$BW_E2E/demo-workspace
VSIX=$BW_E2E/bulwark.vsix

if node -e 'const s=require("net").connect(+process.argv[1],"127.0.0.1");s.on("connect",()=>process.exit(0));s.on("error",()=>process.exit(1))' "$PORT"; then
  bw_log "port $PORT is already in use on 127.0.0.1; choose another with BULWARK_DEMO_PORT=<port> npm start"
  exit 1
fi

bw_log "build: node esbuild.mjs"
node esbuild.mjs
bw_log "package: vsce package --no-dependencies -o .e2e/bulwark.vsix"
bw_package_vsix "$VSIX" >"$BW_E2E/logs/demo-vsce.log" 2>&1 || { tail -n 30 "$BW_E2E/logs/demo-vsce.log"; exit 1; }

mkdir -p "$H/ext"
bw_cs_write_user_settings "$H/ud"
bw_log "install the .vsix into code-server"
HOME=$H "$BW_CS" --user-data-dir "$H/ud" --extensions-dir "$H/ext" --install-extension "$VSIX" --force </dev/null

# Demo workspace: files Bulwark protects (SOUL.md, AGENTS.md, .vscode/settings.json, .env) next to ordinary ones.
# Existing files are left alone, so edits made during a demo survive a restart.
demo_file() { # demo_file REL CONTENT
  local f="$WS/$1"
  mkdir -p "$(dirname "$f")"
  [ -e "$f" ] || printf '%s' "$2" >"$f"
}
demo_file README.md '# Bulwark demo workspace

Open a file and run **Bulwark: Explain Protection of Current File** from the command palette (F1).
Try it on SOUL.md, AGENTS.md, .vscode/settings.json, .env and src/app.ts.
'
demo_file SOUL.md '# Soul

Who this agent is and what it values. Agents must not rewrite their own identity.
'
demo_file AGENTS.md '# Agent instructions

- Run `npm test` before proposing a change.
- Never commit secrets.
'
demo_file .vscode/settings.json '{
  "editor.tabSize": 2
}
'
demo_file src/app.ts 'export function greet(name: string): string {
  return `Hello, ${name}!`;
}
'
demo_file .env '# fake value for the demo, not a real secret
DEMO_API_KEY=demo-not-a-real-key-0000000000
'

bw_log "Bulwark demo: open http://127.0.0.1:$PORT/?folder=$WS   (Ctrl-C stops it)"
HOME=$H exec "$BW_CS" --bind-addr "127.0.0.1:$PORT" "${BW_CS_FLAGS[@]}" \
  --user-data-dir "$H/ud" --extensions-dir "$H/ext" "$WS" </dev/null
