// Which real agent CLIs apply a pre-tool hook's rewritten tool input, in which answer shape, and what
// their own permission rules do with it. Each case runs one client once: the model proposes one shell
// call (`touch original.marker && echo ORIGINAL-RAN`), the probe hook (probe-hook.js rewrite:<shape>)
// answers with the command replaced by `touch rewritten.marker && echo REWRITTEN-RAN`, and the case
// reports what ran (marker files) and what the model was told. Evidence for test/agents/README.md.
//
// Usage (inside the loopback-only namespace, as run.sh does):
//   bwrap --dev-bind / / --unshare-net --unshare-pid --die-with-parent -- node test/agents/rewrite-probe.js [--clients claude,…] [--cases id,…]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { runClient, RUNS_DIR } = require('./harness');

const readJson = (f) => (fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, 'utf8')) : {});
const writeJson = (f, v) => { fs.mkdirSync(path.dirname(f), { recursive: true }); fs.writeFileSync(f, JSON.stringify(v, null, 2) + '\n'); };

/** Claude Code's --allowedTools list without its blanket `Bash`, plus the given rules. */
const claudeAllowed = (rules) => ({ setup }) => {
  const i = setup.args.indexOf('Bash');
  setup.args.splice(i, 1, ...rules);
};
/** Adds permission rules to Claude Code's user settings (where the user-scope hooks are). */
const claudeSettings = (permissions) => ({ home }) => {
  const file = path.join(home, '.claude/settings.json');
  writeJson(file, { ...readJson(file), permissions });
};
/** Copilot CLI's hook file with Claude-style event keys (PreToolUse/PostToolUse), which switch it to Claude-style I/O. */
const copilotPascal = ({ project }) => {
  const file = path.join(project, '.github/hooks/bulwark.json');
  const c = readJson(file);
  c.hooks = { PreToolUse: c.hooks.preToolUse, PostToolUse: c.hooks.postToolUse };
  writeJson(file, c);
};

/** Codex with its own sandbox and approvals as `codex exec` has them by default, instead of both switched off. */
const codexOwnSandbox = (mode) => ({ setup }) => {
  setup.args.splice(setup.args.indexOf('--dangerously-bypass-approvals-and-sandbox'), 1, '--sandbox', mode);
};
/** Copilot CLI with one of its own tool rules on the command line. */
const copilotArgs = (...extra) => ({ setup }) => { setup.args.push(...extra); };

const CASES = [
  { id: 'claude-updated', client: 'claude', shape: 'updated-input' },
  { id: 'claude-updated-allow', client: 'claude', shape: 'updated-input-allow' },
  // Does the rewrite escape Claude Code's own permission rules?
  { id: 'claude-updated-bash-not-allowed', client: 'claude', shape: 'updated-input', configure: claudeAllowed([]) },
  { id: 'claude-updated-allow-bash-not-allowed', client: 'claude', shape: 'updated-input-allow', configure: claudeAllowed([]) },
  { id: 'claude-updated-only-original-allowed', client: 'claude', shape: 'updated-input', configure: claudeAllowed(['Bash(touch original.marker)', 'Bash(echo ORIGINAL-RAN)']) },
  { id: 'claude-updated-allow-only-original-allowed', client: 'claude', shape: 'updated-input-allow', configure: claudeAllowed(['Bash(touch original.marker)', 'Bash(echo ORIGINAL-RAN)']) },
  { id: 'claude-updated-allow-rewritten-denied', client: 'claude', shape: 'updated-input-allow', configure: claudeSettings({ deny: ['Bash(touch rewritten.marker)'] }) },
  { id: 'claude-updated-allow-original-denied', client: 'claude', shape: 'updated-input-allow', configure: claudeSettings({ deny: ['Bash(touch original.marker)'] }) },
  { id: 'claude-updated-allow-rewritten-ask', client: 'claude', shape: 'updated-input-allow', configure: claudeSettings({ ask: ['Bash(touch rewritten.marker)'] }) },
  { id: 'claude-updated-rewritten-denied', client: 'claude', shape: 'updated-input', configure: claudeSettings({ deny: ['Bash(touch rewritten.marker)'] }) },
  // The rewrite as Bulwark makes it (the original inside `bash -c '…'`): do the user's rules on the original still hold?
  { id: 'claude-wrap-original-denied', client: 'claude', shape: 'updated-input', wrap: true, configure: claudeSettings({ deny: ['Bash(touch original.marker)'] }) },
  { id: 'claude-wrap-allow-original-denied', client: 'claude', shape: 'updated-input-allow', wrap: true, configure: claudeSettings({ deny: ['Bash(touch original.marker)'] }) },
  { id: 'claude-wrap-allow-original-ask', client: 'claude', shape: 'updated-input-allow', wrap: true, configure: claudeSettings({ ask: ['Bash(touch original.marker)'] }) },
  { id: 'claude-wrap-bash-allowed', client: 'claude', shape: 'updated-input', wrap: true },
  { id: 'claude-wrap-only-original-allowed', client: 'claude', shape: 'updated-input', wrap: true, configure: claudeAllowed(['Bash(touch original.marker)', 'Bash(echo ORIGINAL-RAN)']) },
  // Controls: the same rules with a hook that changes nothing.
  { id: 'claude-noop-original-denied', client: 'claude', hook: 'probe-noop', configure: claudeSettings({ deny: ['Bash(touch original.marker)'] }) },
  { id: 'claude-noop-original-ask', client: 'claude', hook: 'probe-noop', configure: claudeSettings({ ask: ['Bash(touch original.marker)'] }) },
  { id: 'claude-noop-only-original-allowed', client: 'claude', hook: 'probe-noop', configure: claudeAllowed(['Bash(touch original.marker)', 'Bash(echo ORIGINAL-RAN)']) },
  { id: 'copilot-modified-args', client: 'copilot', shape: 'modified-args' },
  { id: 'copilot-modified-args-allow', client: 'copilot', shape: 'modified-args-allow' },
  { id: 'copilot-top-updated-input-allow', client: 'copilot', shape: 'top-updated-input-allow' },
  { id: 'copilot-updated-input-allow', client: 'copilot', shape: 'updated-input-allow' },
  // Bulwark's wrapper names this Node and dist/cli.js by absolute path, outside the project.
  { id: 'copilot-outside-modified-args', client: 'copilot', shape: 'modified-args', outside: true },
  { id: 'copilot-outside-modified-args-allow', client: 'copilot', shape: 'modified-args-allow', outside: true },
  { id: 'copilot-outside-modified-args-allow-deny-echo', client: 'copilot', shape: 'modified-args-allow', outside: true, configure: copilotArgs('--deny-tool', 'shell(echo)') },
  { id: 'copilot-pascal-outside-updated', client: 'copilot', shape: 'updated-input', outside: true, scope: 'workspace', configure: copilotPascal },
  { id: 'copilot-pascal-outside-updated-allow', client: 'copilot', shape: 'updated-input-allow', outside: true, scope: 'workspace', configure: copilotPascal },
  { id: 'claude-outside-updated', client: 'claude', shape: 'updated-input', outside: true },
  { id: 'gemini-outside-tool-input', client: 'gemini', shape: 'tool-input', outside: true },
  { id: 'codex-outside-updated-allow', client: 'codex', shape: 'updated-input-allow', outside: true },
  { id: 'copilot-pascal-updated', client: 'copilot', shape: 'updated-input', scope: 'workspace', configure: copilotPascal },
  { id: 'copilot-pascal-updated-allow', client: 'copilot', shape: 'updated-input-allow', scope: 'workspace', configure: copilotPascal },
  { id: 'copilot-noop-deny-echo', client: 'copilot', hook: 'probe-noop', configure: copilotArgs('--deny-tool', 'shell(echo)') },
  { id: 'copilot-wrap-modified-args-deny-echo', client: 'copilot', shape: 'modified-args', wrap: true, configure: copilotArgs('--deny-tool', 'shell(echo)') },
  { id: 'gemini-tool-input', client: 'gemini', shape: 'tool-input' },
  { id: 'gemini-tool-input-allow', client: 'gemini', shape: 'tool-input-allow' },
  { id: 'gemini-updated-input-allow', client: 'gemini', shape: 'updated-input-allow' },
  { id: 'codex-updated', client: 'codex', shape: 'updated-input' },
  { id: 'codex-updated-allow', client: 'codex', shape: 'updated-input-allow' },
  { id: 'codex-noop-own-sandbox', client: 'codex', hook: 'probe-noop', configure: codexOwnSandbox('workspace-write') },
  { id: 'codex-updated-allow-own-sandbox', client: 'codex', shape: 'updated-input-allow', configure: codexOwnSandbox('workspace-write') },
];

async function main() {
  const argv = process.argv.slice(2);
  const opt = (name) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1].split(',') : undefined; };
  const clients = opt('clients');
  const ids = opt('cases');
  const rows = [];
  for (const c of CASES.filter((x) => (!clients || clients.includes(x.client)) && (!ids || ids.includes(x.id)))) {
    const ev = await runClient({ client: c.client, scenario: 'rewrite-probe', hook: c.hook || `probe-rewrite${c.wrap ? '-wrap' : c.outside ? '-outside' : ''}:${c.shape}`, scope: c.scope || 'user', configure: c.configure, tag: `rewrite-${c.id}`, timeoutMs: 90_000 });
    const ran = ['original', 'rewritten'].filter((m) => fs.existsSync(path.join(ev.world.project, `${m}.marker`)));
    const told = (ev.results[0] ?? '(no tool result)').replace(/\s+/g, ' ').slice(0, 220);
    const row = { id: c.id, shape: c.shape, ran: ran.join('+') || 'nothing', told, exit: ev.proc.status, logs: path.relative(process.cwd(), ev.logs) };
    rows.push(row);
    console.log(`${row.id}: ran ${row.ran}; model told: ${row.told}`);
  }
  fs.writeFileSync(path.join(RUNS_DIR, 'rewrite-probe.json'), JSON.stringify(rows, null, 2));
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
