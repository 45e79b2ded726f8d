// The four agent CLIs as test/agents runs them: where the binary is, the offline environment and
// configuration that points each one at the scripted model server (telemetry, update checks and
// proxies off), and where each one reads its hook configuration (the formats of
// /work/shared/agent-clients/README.md, also what `bulwark hooks install` writes).
// Each client's own permission prompts are switched off, so Bulwark's hook is the only guard: a tool
// that did not run was stopped by the hook, not by the client. `hookFile`/`writeHooks` serve the probe
// hooks (harness self-checks); Bulwark's own hooks are written by `bulwark hooks install`.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const AGENTS_DIR = process.env.BW_AGENTS_DIR || path.join(ROOT, '.e2e/agents');
/** Hook timeout written into every client's configuration (seconds), as the installer's `--timeout 60`. */
const HOOK_TIMEOUT_S = 60;

const writeJson = (file, value) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
};
const readJson = (file) => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {});
/** Merges `hooks` into a JSON settings file, keeping what is there (the client's own settings). */
const mergeHooks = (file, hooks, extra = {}) => writeJson(file, { ...readJson(file), ...extra, hooks });

const CLIENTS = {
  claude: {
    agent: 'claude',
    name: 'Claude Code',
    package: '@anthropic-ai/claude-code',
    bin: path.join(AGENTS_DIR, 'claude/node_modules/.bin/claude'),
    /** Writes the client's own configuration; returns the command line and environment of one headless run. */
    setup({ home, project, serverUrl, mcpServer }) {
      const args = ['-p', 'do the task', '--output-format', 'json',
        // Pre-approves the tools the scenarios use, so Claude Code's own prompt never decides.
        '--allowedTools', 'Bash', 'Read', 'Edit', 'Write', 'WebFetch', 'mcp__notes__post_message'];
      if (mcpServer) {
        const file = path.join(home, 'mcp-notes.json');
        writeJson(file, { mcpServers: { notes: { type: 'stdio', command: mcpServer.command, args: mcpServer.args } } });
        args.push('--mcp-config', file, '--strict-mcp-config');
      }
      // No HTTP(S)_PROXY: with one set, Claude Code retried for ~170 s (the spike's trap).
      const env = { ANTHROPIC_BASE_URL: serverUrl, ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1', DISABLE_AUTOUPDATER: '1' };
      return { args, env };
    },
    hookFile: ({ home, project, scope }) => (scope === 'user' ? path.join(home, '.claude/settings.json') : path.join(project, '.claude/settings.json')),
    writeHooks(file, commandFor) {
      const entry = (event) => [{ matcher: '*', hooks: [{ type: 'command', command: commandFor(event), timeout: HOOK_TIMEOUT_S }] }];
      mergeHooks(file, { PreToolUse: entry('PreToolUse'), PostToolUse: entry('PostToolUse') });
    },
  },

  gemini: {
    agent: 'gemini',
    name: 'Gemini CLI',
    package: '@google/gemini-cli',
    bin: path.join(AGENTS_DIR, 'gemini/node_modules/.bin/gemini'),
    setup({ home, serverUrl, mcpServer }) {
      const settings = {
        security: { auth: { selectedType: 'gemini-api-key' } },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      };
      if (mcpServer) settings.mcpServers = { notes: { command: mcpServer.command, args: mcpServer.args, trust: true } };
      writeJson(path.join(home, '.gemini/settings.json'), settings);
      // GOOGLE_GEMINI_BASE_URL selects "gateway" auth against our server; the workspace is trusted so
      // that project-level .gemini/settings.json (workspace-scope hooks) is read at all.
      const env = { GOOGLE_GEMINI_BASE_URL: serverUrl, GEMINI_API_KEY: 'gemini-test-dummy', GEMINI_CLI_TRUST_WORKSPACE: 'true' };
      return { args: ['-p', 'do the task', '--output-format', 'json', '--yolo', '--include-directories', home], env };
    },
    hookFile: ({ home, project, scope }) => (scope === 'user' ? path.join(home, '.gemini/settings.json') : path.join(project, '.gemini/settings.json')),
    writeHooks(file, commandFor) {
      const entry = (event) => [{ matcher: '.*', hooks: [{ name: `bulwark-${event}`, type: 'command', command: commandFor(event), timeout: HOOK_TIMEOUT_S * 1000 }] }];
      mergeHooks(file, { BeforeTool: entry('BeforeTool'), AfterTool: entry('AfterTool') });
    },
  },

  copilot: {
    agent: 'copilot-cli',
    name: 'GitHub Copilot CLI',
    package: '@github/copilot',
    bin: path.join(AGENTS_DIR, 'copilot/node_modules/.bin/copilot'),
    setup({ home, serverUrl, mcpServer }) {
      const args = ['-p', 'do the task', '--output-format', 'json', '--no-auto-update'];
      if (mcpServer) {
        const file = path.join(home, 'mcp-notes.json');
        writeJson(file, { mcpServers: { notes: { type: 'local', command: mcpServer.command, args: mcpServer.args, tools: ['*'] } } });
        args.push('--additional-mcp-config', `@${file}`);
      }
      // BYOK against an OpenAI-compatible Chat Completions server; COPILOT_ALLOW_ALL skips its own prompts.
      const env = { COPILOT_HOME: path.join(home, '.copilot'), COPILOT_PROVIDER_BASE_URL: `${serverUrl}/v1`, COPILOT_PROVIDER_API_KEY: 'copilot-test-dummy',
        COPILOT_MODEL: 'gpt-4.1', COPILOT_ALLOW_ALL: 'true', COPILOT_OFFLINE: 'true', COPILOT_AUTO_UPDATE: 'false' };
      return { args, env };
    },
    hookFile: ({ home, project, scope }) => (scope === 'user' ? path.join(home, '.copilot/hooks/bulwark.json') : path.join(project, '.github/hooks/bulwark.json')),
    writeHooks(file, commandFor) {
      const entry = (event) => [{ type: 'command', bash: commandFor(event), timeoutSec: HOOK_TIMEOUT_S }];
      writeJson(file, { version: 1, hooks: { preToolUse: entry('preToolUse'), postToolUse: entry('postToolUse') } });
    },
  },

  codex: {
    agent: 'codex',
    name: 'OpenAI Codex CLI',
    package: '@openai/codex',
    bin: path.join(AGENTS_DIR, 'codex/node_modules/.bin/codex'),
    setup({ home, project, serverUrl, mcpServer }) {
      const toml = (s) => JSON.stringify(s);   // a JSON string is a valid TOML basic string
      const lines = [
        // gpt-5.5 is offered the freeform apply_patch tool (gpt-5.4 only has exec_command).
        'model = "gpt-5.5"',
        'model_provider = "scripted"',
        'check_for_update_on_startup = false',
        '[analytics]', 'enabled = false',
        '[feedback]', 'enabled = false',
        '[otel]', 'exporter = "none"',
        '[features]', 'plugins = false',
        '[model_providers.scripted]', 'name = "scripted"', `base_url = ${toml(`${serverUrl}/v1`)}`, 'env_key = "SCRIPTED_API_KEY"',
        'wire_api = "responses"', 'request_max_retries = 0', 'stream_max_retries = 0',
      ];
      // The user trusts the project, as Codex asks on first start: only then does it read the project's .codex/ (hooks.json).
      lines.push(`[projects.${toml(project)}]`, 'trust_level = "trusted"');
      if (mcpServer) lines.push('[mcp_servers.notes]', `command = ${toml(mcpServer.command)}`, `args = [${mcpServer.args.map(toml).join(', ')}]`);
      fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
      fs.writeFileSync(path.join(home, '.codex/config.toml'), lines.join('\n') + '\n');
      // Approvals and Codex's own sandbox off: Bulwark's hook is the guard under test. Hook trust: see hookTrustArgs.
      const args = ['exec', '--skip-git-repo-check', '--json', '--dangerously-bypass-approvals-and-sandbox'];
      return { args, env: { CODEX_HOME: path.join(home, '.codex'), SCRIPTED_API_KEY: 'codex-test-dummy' }, trailingArgs: ['do the task'] };
    },
    /** Codex runs hooks only once trusted; this invocation-scoped flag trusts them for the run. */
    hookTrustArgs: ['--dangerously-bypass-hook-trust'],
    hookFile: ({ home, project, scope }) => (scope === 'user' ? path.join(home, '.codex/hooks.json') : path.join(project, '.codex/hooks.json')),
    writeHooks(file, commandFor) {
      const entry = (event) => [{ matcher: '.*', hooks: [{ type: 'command', command: commandFor(event), timeout: HOOK_TIMEOUT_S }] }];
      mergeHooks(file, { PreToolUse: entry('PreToolUse'), PostToolUse: entry('PostToolUse') });
    },
  },
};

/** The installed version of a client (from its package.json), or undefined when it is not installed. */
function installedVersion(client) {
  const c = CLIENTS[client];
  try {
    return JSON.parse(fs.readFileSync(path.join(AGENTS_DIR, client, 'node_modules', c.package, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

module.exports = { CLIENTS, AGENTS_DIR, HOOK_TIMEOUT_S, installedVersion };
