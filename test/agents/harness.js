// One run of one real agent CLI with hooks installed, against the scripted model server, and the
// evidence of what happened: the file system, the MCP server's call log, what the model was told (the
// model server's log) and what Bulwark recorded (its audit log, read through `bulwark audit`).
// Used by run.js (the `agents` stage of npm test) and by the bench (per-tool-call hook time).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFileSync, spawnSync } = require('node:child_process');
const { startModelServer, readModelLog } = require('./model-server');
const { CLIENTS, HOOK_TIMEOUT_S } = require('./clients');
const { SCENARIOS, plantWorld } = require('./scenarios');
const { wrapInstalledHooks, readTimings } = require('./timing');

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'dist/cli.js');
const RUNS_DIR = process.env.BULWARK_AGENT_RUNS || path.join(ROOT, '.e2e/agent-runs');
/** Planted in every client's environment: hooks inherit it, and Bulwark must never write it anywhere. */
const ENV_CANARY_NAME = 'BULWARK_TEST_ENV_CANARY';

/** `node dist/cli.js …` with the given arguments; { status, stdout, stderr }. */
function bulwark(args, opts = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, ...opts });
  return { status: r.status, stdout: r.stdout || '', stderr: (r.stderr || '') + (r.error ? String(r.error) : '') };
}

/**
 * Installs the hooks of one run. `hook`: 'bulwark' (the way a user does: `bulwark hooks install`, which writes
 * the wrapper <stateDir>/bin/bulwark-hook and the client's configuration; `policy` goes to its --policy), 'none',
 * or a probe (probe-deny | probe-noop | probe-fail, test/agents/probe-hook.js, written here where the client
 * reads hooks) that checks the harness itself. Returns how, and the configuration files written.
 */
function installHooks({ client, hook, scope, home, project, stateDir, policy, logs, hookTimeoutS = HOOK_TIMEOUT_S, installArgs = [] }) {
  const c = CLIENTS[client];
  if (hook === 'none') return { via: 'none (no hooks)', files: [] };
  if (hook === 'bulwark') {
    const args = ['hooks', 'install', '--agent', c.agent, '--scope', scope, '--home', home, '--workspace', project,
      '--state-dir', stateDir, '--timeout', String(hookTimeoutS), ...(policy ? ['--policy', policy] : []), ...installArgs, '--yes'];
    const r = bulwark(args, { env: userShellEnv(home) });
    fs.writeFileSync(path.join(logs, 'hooks-install.txt'), `$ bulwark ${args.join(' ')}\nexit ${r.status}\n${r.stdout}\n${r.stderr}`);
    if (r.status !== 0) throw new Error(`bulwark hooks install failed (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`);
    const manifest = JSON.parse(fs.readFileSync(path.join(stateDir, 'hooks-installed.json'), 'utf8'));
    return { via: `hooks install${policy ? ` --policy ${policy}` : ''}`, files: manifest.files.map((f) => f.file) };
  }
  const q = (x) => `'${x.replace(/'/g, `'\\''`)}'`;
  const mode = hook.replace(/^probe-/, '');
  const commandFor = (event) => [process.execPath, path.join(__dirname, 'probe-hook.js'), c.agent, mode, path.join(logs, 'hook-payloads.jsonl'), event].map(q).join(' ');
  const file = c.hookFile({ home, project, scope });
  c.writeHooks(file, commandFor);
  return { via: 'written by the harness', files: [file] };
}

/** The user's shell as `bulwark hooks` sees it: the client homes where the clients will look. */
const userShellEnv = (home) => ({ PATH: process.env.PATH, HOME: home, CODEX_HOME: path.join(home, '.codex'), COPILOT_HOME: path.join(home, '.copilot') });

/** `bulwark hooks status`: its exit status and the line about this client. */
function hooksStatus({ client, home, project, stateDir }) {
  const r = bulwark(['hooks', 'status', '--home', home, '--workspace', project, '--state-dir', stateDir], { env: userShellEnv(home) });
  const line = (r.stdout + r.stderr).split('\n').find((l) => l.trim().startsWith(`${CLIENTS[client].name}:`)) || '';
  return { status: r.status, line: line.trim(), guarded: /:\s*guarded\b/i.test(line) };
}

/** The installed hook wrapper (written by `bulwark hooks install`). */
const wrapperPath = (stateDir) => path.join(stateDir, 'bin', 'bulwark-hook');

/** Replaces `pattern` in the installed wrapper; throws if it is not there (the wrapper's format changed). */
function editWrapper(stateDir, pattern, replacement) {
  const file = wrapperPath(stateDir);
  const text = fs.readFileSync(file, 'utf8');
  if (!pattern.test(text)) throw new Error(`${file} has no match for ${pattern}: update test/agents to the wrapper's format`);
  fs.writeFileSync(file, text.replace(pattern, replacement));
}

/** Runs a process in its own process group; on timeout the whole group is killed. */
function runProcess(cmd, args, { cwd, env, timeoutMs }) {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d) => { if (stdout.length < 4_000_000) stdout += d; });
    child.stderr.on('data', (d) => { if (stderr.length < 4_000_000) stderr += d; });
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    }, timeoutMs);
    const done = (status, error) => {
      clearTimeout(timer);
      resolve({ status, timedOut, error, stdout, stderr, ms: Number(process.hrtime.bigint() - t0) / 1e6 });
    };
    child.on('error', (e) => done(null, String(e)));
    child.on('close', (status) => done(status));
  });
}

/** The environment of one client run: a clean one (no proxies, no real credentials of this machine). */
function clientEnv(home, extra) {
  return {
    PATH: process.env.PATH,
    HOME: home,
    USER: process.env.USER || 'root',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    [ENV_CANARY_NAME]: `env-canary-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`,
    ...extra,
  };
}

function readJsonLines(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** All regular files under a directory (for the "no environment value written" check). */
function filesUnder(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath ?? e.path, e.name));
}

/** The hooks' own audit log when no extension has published one (src/cli/hook-local.ts auditLocation). */
function findAuditLog(stateDir) {
  const log = path.join(stateDir, 'audit/audit.jsonl');
  return fs.existsSync(log) ? log : undefined;
}

/**
 * One run. Options: client, scenario (key of SCENARIOS), policy (undefined = the hook's default),
 * hook ('bulwark' | 'probe-deny' | 'probe-noop' | 'probe-fail' | 'none'), scope ('user' | 'workspace'),
 * breakHook({ stateDir, home, project, client, logs }) (makes the installed hook program fail on purpose),
 * timing (wraps the installed hook commands in time-hook.sh: ev.timings), timeoutMs,
 * configure({ home, project, setup, install, logs }) (edits the client's arguments or files after the install),
 * installArgs (more `bulwark hooks install` arguments: --no-sandbox), notSandboxed (the start of the reason the
 * sandbox scenario's audit entries must give for not wrapping).
 * A run spec's `clients` limits it to those clients.
 * Returns the evidence; evaluate() turns it into checks.
 */
async function runClient(opts) {
  const { client, scenario: scenarioId, policy, hook = 'bulwark', breakHook, timeoutMs = 120_000 } = opts;
  const c = CLIENTS[client];
  const scope = opts.scope && (c.scopes || ['user', 'workspace']).includes(opts.scope) ? opts.scope : (c.scopes || ['workspace'])[0];
  const scenario = SCENARIOS[scenarioId];
  const tag = opts.tag || `${client}-${scenarioId}${policy ? `-${policy}` : ''}${breakHook ? '-broken' : ''}`;
  const dir = path.join(RUNS_DIR, tag);
  fs.rmSync(dir, { recursive: true, force: true });
  const home = path.join(dir, 'home');
  const project = path.join(dir, 'project');
  const logs = path.join(dir, 'logs');
  const stateDir = path.join(home, '.bulwark');
  for (const d of [home, project, logs]) fs.mkdirSync(d, { recursive: true });

  const world = plantWorld({ home, project });
  if (scenario.plant) scenario.plant(world);
  const installArgs = opts.installArgs || [];
  const run = { client, scenario: scenarioId, policy: policy || 'default', hook, scope, broken: Boolean(breakHook), breakHow: breakHook && breakHook.how, notSandboxed: installArgs.includes('--no-sandbox') ? 'wrapping is off' : opts.notSandboxed, tag, dir };
  // The model's turns: each scenario step is its call under test, after any client-side turns it needs.
  const steps = [];
  const stepTurn = scenario.steps.map((s) => {
    const calls = [].concat(s.call[client](world));
    steps.push(...calls);
    return steps.length - 1;
  });
  const serverLog = path.join(logs, 'model-server.jsonl');
  const mcpLog = path.join(logs, 'mcp-calls.jsonl');
  const timingLog = path.join(logs, 'hook-timing.jsonl');
  const server = await startModelServer({ scenario: { steps, final: 'done' }, logFile: serverLog });
  let proc;
  let install;
  let statusAfterInstall;
  let statusAfterBreak;
  try {
    const mcpServer = scenario.mcp ? { command: process.execPath, args: [path.join(__dirname, 'mcp-server.js'), mcpLog] } : undefined;
    const setup = c.setup({ home, project, serverUrl: server.url, mcpServer });
    install = installHooks({ client, hook, scope, home, project, stateDir, policy, logs, hookTimeoutS: opts.hookTimeoutS, installArgs });
    if (hook === 'bulwark') statusAfterInstall = hooksStatus({ client, home, project, stateDir });
    if (breakHook) {
      breakHook({ stateDir, home, project, client, logs });
      statusAfterBreak = hooksStatus({ client, home, project, stateDir });
    }
    // A run's own changes to the client's configuration (rewrite-probe.js: permission rules, hook event keys).
    if (opts.configure) opts.configure({ home, project, setup, install, logs });
    if (opts.timing && wrapInstalledHooks({ files: install.files, timingLog }) === 0) throw new Error('timing: no installed hook command to wrap');
    const env = clientEnv(home, setup.env);
    const args = [...setup.args, ...(c.hookTrustArgs || []), ...(setup.trailingArgs || [])];
    fs.writeFileSync(path.join(logs, 'command.txt'), `cd ${project}\n${c.bin} ${args.join(' ')}\nenv: ${Object.keys(env).join(' ')}\n`);
    proc = await runProcess(c.bin, args, { cwd: project, env, timeoutMs });
    fs.writeFileSync(path.join(logs, 'client-stdout.txt'), proc.stdout);
    fs.writeFileSync(path.join(logs, 'client-stderr.txt'), proc.stderr);
    run.envCanary = env[ENV_CANARY_NAME];
    run.envSecrets = [env[ENV_CANARY_NAME], ...Object.entries(setup.env).filter(([k]) => /KEY|TOKEN/.test(k)).map(([, v]) => v)];
  } finally {
    await server.close();
    stopHookServer(stateDir);
  }

  const entries = readModelLog(serverLog);
  const requests = entries.filter((e) => e.kind === 'request' && e.proto);
  // What the model was told: the tool results of the request that carries the most of them (step i ↔ result i).
  const results = requests.reduce((best, r) => (r.toolResults.length > best.length ? r.toolResults : best), []);
  const proposedTurns = new Set(entries.filter((e) => e.kind === 'reply' && e.step !== null).map((e) => e.step));
  const auditLog = hook === 'bulwark' ? findAuditLog(stateDir) : undefined;
  const ev = {
    run, world, steps, install, proc, logs, statusAfterInstall, statusAfterBreak,
    requests,
    proxyRequests: entries.filter((e) => e.kind === 'proxy-refused'),
    finalAnswered: entries.some((e) => e.kind === 'reply' && e.offersTools && e.step === null),
    results: stepTurn.map((t) => results[t] && results[t].text),
    proposed: new Set(stepTurn.map((t, i) => (proposedTurns.has(t) ? i : -1))),
    allRequestText: fs.existsSync(serverLog) ? fs.readFileSync(serverLog, 'utf8') : '',
    // Tool results the model got, except those for calls whose own input holds `secret` (a denial may
    // echo the command back: Codex's "Command blocked … Command: curl …?k=<secret>" only repeats the model).
    resultTextWithout: (secret) => results.filter((r, t) => !JSON.stringify(steps[t] || {}).includes(secret)).map((r) => r.text).join('\n'),
    mcpCalls: readJsonLines(mcpLog),
    timings: readTimings(timingLog),
    stateDir,
    auditLog,
    audit: auditLog ? readAudit(auditLog) : undefined,
  };
  return ev;
}

/** Stops the hooks' own server this run started (its pid from <stateDir>/bridge.json, checked against its command line). */
function stopHookServer(stateDir) {
  let pid;
  try { pid = JSON.parse(fs.readFileSync(path.join(stateDir, 'bridge.json'), 'utf8')).pid; } catch { return; }
  let cmdline = '';
  try { cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { return; }
  if (Number.isInteger(pid) && cmdline.includes('hook-server') && cmdline.includes(stateDir)) {
    try { process.kill(pid, 'SIGTERM'); } catch { /* already gone */ }
  }
}

/** The audit log as `bulwark audit query` returns it, and whether `bulwark audit verify` holds. */
function readAudit(logFile) {
  const q = bulwark(['audit', 'query', '--log', logFile]);
  const entries = q.status === 0 ? q.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
  const v = bulwark(['audit', 'verify', '--log', logFile, '--db', path.join(path.dirname(logFile), 'bulwark.db')]);
  return { entries, queryStatus: q.status, queryError: q.stderr.trim(), verifyStatus: v.status, verifyOutput: (v.stdout + v.stderr).trim() };
}

const check = (name, ok, why) => ({ name, ok: Boolean(ok), why: ok ? undefined : why });
const short = (s, n = 240) => (s.length > n ? `${s.slice(0, n)}…` : s).replace(/\s+/g, ' ');

/** Turns a run's evidence into named checks: per step, then for the run as a whole. */
function evaluate(ev) {
  const { run } = ev;
  const scenario = SCENARIOS[run.scenario];
  const decisions = ev.audit ? ev.audit.entries.filter((e) => e.event === 'ACTION_EVALUATED') : [];
  const out = [];
  scenario.steps.forEach((step, i) => {
    const expect = step.expect(run);
    const told = ev.results[i] ?? '';
    const checks = [check('the model proposed it and got a tool result', ev.proposed.has(i) && ev.results[i] !== undefined,
      `proposed: ${ev.proposed.has(i)}, tool results: ${ev.results.length}`)];
    const d = decisions[i] && decisions[i].details && decisions[i].details.decision;
    if (run.hook === 'bulwark' && !run.broken) {
      checks.push(check(`the audit log has its decision (${expect})`, d && (expect === 'allow' ? d.decision === 'allow' : d.decision !== 'allow'),
        d ? `decision ${d.decision} (${d.rules.join(', ')}): ${short(d.reason)}` : `no ACTION_EVALUATED #${i + 1} (${decisions.length} in the log)`));
      if (expect === 'deny' && d) {
        const ids = d.rules.flatMap((r) => [r, r.split('.').pop()]);
        checks.push(check('the model was told which rule denied it', ids.some((id) => told.includes(id)), `rules ${d.rules.join(', ')}; tool result: ${short(told)}`));
        checks.push(check('the model was told what to do instead', /do not retry|ask the user|tell the user|instead/i.test(told), `tool result: ${short(told)}`));
        if (step.rule) checks.push(check(`the deciding rule is the expected one (${step.rule})`, d.rules.some((r) => step.rule.test(r)), `rules ${d.rules.join(', ')}`));
      }
    } else if (run.broken && run.breakHow !== 'wrapper-missing') {
      checks.push(check('the model was told the hook failed and what to do', /Bulwark: the hook program failed/.test(told) && /Do not retry/.test(told), `tool result: ${short(told)}`));
    } else if (expect === 'deny') {
      // The clients' own words for a hook's refusal (Claude "hook error", Gemini "blocked", Copilot "Denied", Codex "blocked").
      checks.push(check('the model was told it was denied', /\b(denied|blocked)\b|hook error/i.test(told), `tool result: ${short(told)}`));
    }
    checks.push(...step.checks(ev, told, run));
    out.push({ id: step.id, title: step.title, expect, checks });
  });

  const runChecks = [
    check('the client finished the scenario (the model gave its final answer)', ev.finalAnswered && !ev.proc.timedOut,
      `exit ${ev.proc.status}${ev.proc.timedOut ? ' (timed out)' : ''}; stderr: ${short(ev.proc.stderr, 300)}`),
    check('no request tried another host through a proxy', ev.proxyRequests.length === 0, ev.proxyRequests.map((p) => p.url).join(', ')),
  ];
  if (ev.statusAfterInstall) {
    runChecks.push(check('bulwark hooks status: guarded after the install', ev.statusAfterInstall.guarded && ev.statusAfterInstall.status === 0,
      `exit ${ev.statusAfterInstall.status}: ${ev.statusAfterInstall.line || '(no line for this client)'}`));
  }
  if (ev.statusAfterBreak) {
    runChecks.push(check('bulwark hooks status: no longer guarded once broken', !ev.statusAfterBreak.guarded && ev.statusAfterBreak.status !== 0,
      `exit ${ev.statusAfterBreak.status}: ${ev.statusAfterBreak.line}`));
  }
  if (run.hook === 'bulwark' && !run.broken) {
    const a = ev.audit;
    runChecks.push(check('the audit log exists', a && a.queryStatus === 0, a ? a.queryError : `no audit log under ${ev.stateDir}`));
    if (a) {
      runChecks.push(check('one decision per tool call', decisions.length === scenario.steps.length, `${decisions.length} decisions for ${scenario.steps.length} tool calls`));
      runChecks.push(check('bulwark audit verify: chain intact', a.verifyStatus === 0, short(a.verifyOutput, 400)));
    }
  }
  if (run.hook === 'bulwark') {
    const leaked = filesUnder(ev.stateDir).filter((f) => {
      const text = fs.readFileSync(f, 'latin1');
      return run.envSecrets.some((s) => s && text.includes(s));
    });
    runChecks.push(check('no environment value written to Bulwark\'s state (audit log, state db)', leaked.length === 0, leaked.join(', ')));
  }
  out.push({ id: 'run', title: 'the run', checks: runChecks });
  return out;
}

module.exports = { runClient, evaluate, installHooks, hooksStatus, editWrapper, wrapperPath, bulwark, RUNS_DIR, CLI, filesUnder };
