// UI checks of the hook bridge (called from drive.js): `node dist/cli.js hook --agent vscode` gets a
// recorded VS Code PreToolUse payload on stdin, as Copilot agent mode would run it, and the Bulwark
// extension running in code-server decides it over its local socket.
//   (i)  reading a protected file (.env) → deny, and the decision came through the socket: the
//        extension's output channel logged it and its audit log holds it under the bridge's action id
//   (ii) writing .vscode/settings.json needs Tier 3 → the modal (naming the agent) appears in the
//        browser; Approve → the hook allows; Deny → the hook denies
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'dist/cli.js');
const AGENT_NAME = 'Copilot agent mode in VS Code';

/** Runs the hook once with `payload` on stdin; resolves { code, stdout, stderr, ms }. */
function runHook(payload, stateDir, timeoutMs = 90000) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    // Only what the hook needs: no inherited environment values reach it.
    const env = { PATH: process.env.PATH, HOME: path.dirname(stateDir), BULWARK_STATE_DIR: stateDir };
    const child = spawn(process.execPath, [CLI, 'hook', '--agent', 'vscode', '--deadline-ms', '60000'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`the hook did not exit within ${timeoutMs} ms`)); }, timeoutMs);
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr, ms: Date.now() - t0 }); });
    child.stdin.end(JSON.stringify(payload));
  });
}

/** VS Code's PreToolUse hook input (vscode-integration-facts.md §A3). */
function preToolUse(folder, sessionId, toolUseId, toolName, toolInput) {
  return {
    timestamp: new Date().toISOString(), cwd: folder, sessionId, hookEventName: 'PreToolUse',
    tool_name: toolName, tool_input: toolInput, tool_use_id: toolUseId,
    transcript_path: path.join(folder, '.transcript-not-read.json'),
  };
}

/** The decision in a VS Code hook answer: `deny` with its reason, or `allow` (exit 0, nothing on stdout). */
function verdictOf(r) {
  if (r.code !== 0) throw new Error(`the hook exited ${r.code}: ${r.stderr.trim().slice(0, 400)}`);
  if (r.stdout.trim() === '') return { decision: 'allow', reason: '' };
  const out = JSON.parse(r.stdout).hookSpecificOutput || {};
  return { decision: out.permissionDecision, reason: out.permissionDecisionReason || '' };
}

/** Log files under `dir` (the extension host's output channels) that contain `needle`. */
function logsContaining(dir, needle) {
  const found = [];
  const walk = (d) => {
    let entries = [];
    try { entries = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.log')) { try { if (fs.readFileSync(p, 'utf8').includes(needle)) found.push(p); } catch { /* rotated away */ } }
    }
  };
  walk(dir);
  return found;
}

function auditEntries(logFile) {
  if (!fs.existsSync(logFile)) return [];
  return fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/**
 * ctx: { page, check, shot, log, sleep, approvalDialog, folder, home (code-server's HOME), auditLog (the extension's log file) }
 */
async function hookBridgeChecks(ctx) {
  const { check, shot, log, sleep, approvalDialog, folder, home, auditLog } = ctx;
  const stateDir = path.join(home, '.bulwark');
  const session = `e2e-${process.pid}`;

  const published = await check('the extension publishes its hook bridge (bridge.json 0600 in a 0700 directory, a live pid, a 0600 socket)', async () => {
    const file = path.join(stateDir, 'bridge.json');
    for (let i = 0; i < 60 && !fs.existsSync(file); i++) await sleep(500);
    const info = JSON.parse(fs.readFileSync(file, 'utf8'));
    const mode = (p) => (fs.statSync(p).mode & 0o777).toString(8);
    if (mode(stateDir) !== '700' || mode(file) !== '600') throw new Error(`modes: directory ${mode(stateDir)}, bridge.json ${mode(file)}`);
    process.kill(info.pid, 0); // throws if no such process
    if (!fs.statSync(info.socket).isSocket() || mode(info.socket) !== '600') throw new Error(`socket ${info.socket} (mode ${mode(info.socket)})`);
    if (!info.audit || info.audit.logFile !== auditLog) throw new Error(`bridge.json names the audit log ${JSON.stringify(info.audit)}, the extension writes ${auditLog}`);
    return `pid ${info.pid}, ${path.basename(info.socket)}`;
  });
  if (!published) return;

  const envFile = path.join(folder, '.env');
  fs.writeFileSync(envFile, 'DATABASE_PASSWORD=e2e-not-a-real-secret\n');
  await check('hook --agent vscode: reading .env is denied by the extension over its socket (output channel and audit log say so)', async () => {
    const r = await runHook(preToolUse(folder, session, 'call_read_env', 'readFile', { filePath: envFile }), stateDir);
    const v = verdictOf(r);
    if (v.decision !== 'deny') throw new Error(`hook answered ${v.decision}: ${r.stdout.slice(0, 400)}`);
    if (!/\.env/.test(v.reason)) throw new Error(`the reason does not name .env: ${v.reason.slice(0, 300)}`);
    // Through the socket: the extension host logged the bridged decision ...
    let logs = [];
    for (let i = 0; i < 20 && logs.length === 0; i++) { logs = logsContaining(path.join(home, 'ud', 'logs'), 'hook bridge: vscode read_file → block'); if (!logs.length) await sleep(500); }
    if (!logs.length) throw new Error('no Bulwark output channel log mentions the bridged decision');
    // ... and recorded it in its audit log under the agent's session, with the bridge's action id (`<tool_use_id>#<8 hex>`).
    const blocked = auditEntries(auditLog).find((e) => e.event === 'ACTION_BLOCKED' && e.session === `vscode:${session}` && /^call_read_env#[0-9a-f]{8}$/.test(String(e.details.action_id)));
    if (!blocked) throw new Error(`no ACTION_BLOCKED for session vscode:${session} with the bridge's action id in ${auditLog}`);
    return `deny in ${r.ms} ms, rules ${JSON.stringify(blocked.details.rules)}, logged in ${path.relative(home, logs[0])}`;
  });

  const settingsFile = path.join(folder, '.vscode', 'settings.json');
  const before = fs.existsSync(settingsFile) ? fs.readFileSync(settingsFile, 'utf8') : null;
  const writeSettings = (id) => preToolUse(folder, session, id, 'createFile', { filePath: settingsFile, content: '{ "editor.tabSize": 2 }' });
  for (const [button, expected] of [['Approve', 'allow'], ['Deny', 'deny']]) {
    await check(`hook --agent vscode: a .vscode/settings.json write opens the modal naming the agent; ${button} → the hook answers ${expected}`, async () => {
      const pending = runHook(writeSettings(`call_settings_${button.toLowerCase()}`), stateDir);
      let hookDone;
      pending.then((r) => { hookDone = r; }, (e) => { hookDone = e; });
      const { dialog, text } = await approvalDialog();
      await shot(`hook-approval-modal-${button.toLowerCase()}`);
      for (const needle of ['Bulwark: approve write_file?', `asked by ${AGENT_NAME}`, '.vscode/settings.json', `vscode:${session}`]) {
        if (!text.includes(needle)) throw new Error(`the modal does not show ${JSON.stringify(needle)}: ${JSON.stringify(text.slice(0, 600))}`);
      }
      if (hookDone) throw new Error(`the hook answered before anyone clicked: ${JSON.stringify(hookDone.stdout ?? String(hookDone))}`);
      await dialog.getByRole('button', { name: button, exact: true }).click();
      const r = await pending;
      const v = verdictOf(r);
      if (v.decision !== expected) throw new Error(`hook answered ${v.decision} (${v.reason.slice(0, 300)})`);
      if (expected === 'deny' && !/denied by you|tier3\.denied/.test(v.reason)) throw new Error(`the deny reason does not say the user denied it: ${v.reason.slice(0, 300)}`);
      const now = fs.existsSync(settingsFile) ? fs.readFileSync(settingsFile, 'utf8') : null;
      if (now !== before) throw new Error('the hook call changed .vscode/settings.json (deciding must not run the tool)');
      await sleep(300);
      return `${expected} after ${r.ms} ms (the modal was answered by the click)`;
    });
  }
  log('hook bridge checks done');
}

module.exports = { hookBridgeChecks };
