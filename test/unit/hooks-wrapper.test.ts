// The hook wrapper (<stateDir>/bin/bulwark-hook) run for real with /bin/sh: whatever goes wrong with
// the hook program ends as the client's deny, and a working program's answer passes through intact.
// Stand-in programs are used only to inject failures; the last test runs the real dist/cli.js.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentId } from '../../src/engine/agents/types';
import {
  FAILURE_LOG,
  renderPosixWrapper,
  renderPowerShellWrapper,
  shQuote,
  wrapperCommand,
  wrapperTiming,
} from '../../src/node/hooks/wrapper';
import { makeTempDir, repoRoot } from './helpers/repo';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `command` the way clients do (`sh -c`), with `input` on stdin. */
function runShell(command: string, input: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 30000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn('/bin/sh', ['-c', command], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the wrapper did not finish in ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** Whether a process still runs (a zombie waiting to be reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('hook wrapper (sh)', function () {
  this.timeout(30000);
  let tmp: string;
  let stateDir: string;

  /** Writes a stand-in hook program and a wrapper that runs it with this Node; returns the wrapper path. */
  function wrapperFor(program: string | undefined, opts: { node?: string; name?: string } = {}): string {
    const dir = fs.mkdtempSync(path.join(tmp, 'w-'));
    const cli = path.join(dir, 'cli.js');
    if (program !== undefined) fs.writeFileSync(cli, program);
    const wrapper = path.join(dir, opts.name ?? 'bulwark-hook');
    const node = opts.node === 'NOT_EXECUTABLE' ? notExecutable : (opts.node ?? process.execPath);
    fs.writeFileSync(wrapper, renderPosixWrapper({ node, cli, stateDir }), { mode: 0o755 });
    return wrapper;
  }
  const call = (wrapper: string, agent: AgentId | string, timeout = 60) => `${shQuote(wrapper)} ${agent} ${timeout} || exit 2`;

  let notExecutable: string;
  before(() => {
    tmp = makeTempDir('bulwark-wrapper-');
    stateDir = path.join(tmp, 'state');
    fs.mkdirSync(stateDir, { mode: 0o700 });
    notExecutable = path.join(tmp, 'not-executable-node');
    fs.writeFileSync(notExecutable, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('passes the program an exact copy of stdin and its arguments, and its answer through unchanged (exit 0)', async () => {
    const seen = path.join(tmp, 'seen.json');
    const w = wrapperFor(`const c=[];process.stdin.on('data',d=>c.push(d));process.stdin.on('end',()=>{
      require('fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ argv: process.argv.slice(2), stdin: Buffer.concat(c).toString('base64'), electron: process.env.ELECTRON_RUN_AS_NODE }));
      process.stdout.write('{"decision":"allow"}\\n'); process.stderr.write('note\\n');});`);
    const input = JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'x'.repeat(300000) } }) + '\n';
    const r = await runShell(call(w, 'gemini', 30), input);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{"decision":"allow"}\n');
    assert.equal(r.stderr, 'note\n');
    const got = JSON.parse(fs.readFileSync(seen, 'utf8'));
    assert.equal(Buffer.from(got.stdin, 'base64').toString('utf8'), input, 'stdin reaches the program byte for byte');
    const { programDeadlineMs } = wrapperTiming(30);
    assert.deepEqual(got.argv, ['hook', '--agent', 'gemini', '--state-dir', stateDir, '--deadline-ms', String(programDeadlineMs)]);
    assert.equal(got.electron, '1', 'an Electron binary chosen as node must act as Node');
  });

  it('passes a named policy on to the program, and refuses one it does not know', async () => {
    const seen = path.join(tmp, 'seen-policy.json');
    const w = wrapperFor(`require('fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify(process.argv.slice(2)))`);
    const r = await runShell(`${shQuote(w)} vscode 60 permissive || exit 2`, '{}');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(fs.readFileSync(seen, 'utf8')).slice(-2), ['--policy', 'permissive']);
    const bad = await runShell(`${shQuote(w)} vscode 60 /tmp/my-policy.yaml || exit 2`, '{}');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /names no known policy/);
    assert.throws(
      () => wrapperCommand('claude', 60, '/s/bin/bulwark-hook', 'linux', { policy: 'lax' as never }),
      /must be one of default, permissive, strict/,
    );
    assert.equal(
      wrapperCommand('claude', 60, '/s/bin/bulwark-hook', 'linux', { policy: 'strict' }),
      `'/s/bin/bulwark-hook' claude 60 strict || exit 2`,
    );
  });

  it('passes --no-sandbox and --allow-net hosts on to the program as given, and refuses a host a shell would read', async () => {
    const seen = path.join(tmp, 'seen-sandbox.json');
    const w = wrapperFor(`require('fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify(process.argv.slice(2)))`);
    const command = wrapperCommand('claude', 60, w, 'linux', {
      policy: 'permissive',
      sandbox: false,
      allowNet: ['registry.npmjs.org:443', '*.example.com'],
    });
    assert.equal(
      command,
      `${shQuote(w)} claude 60 permissive no-sandbox 'allow-net=registry.npmjs.org:443' 'allow-net=*.example.com' || exit 2`,
    );
    // A file named like the pattern must not change what arrives (the wrapper does not expand `*`).
    fs.writeFileSync(path.join(tmp, '--allow-net=x.example.com'), '');
    const r = await runShell(`cd ${shQuote(tmp)} && ${command}`, '{}');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(fs.readFileSync(seen, 'utf8')).slice(-5), [
      '--policy',
      'permissive',
      '--no-sandbox',
      '--allow-net=registry.npmjs.org:443',
      '--allow-net=*.example.com',
    ]);
    for (const bad of [`'allow-net=a;touch x'`, `'allow-net=$(id)'`, 'allow-net=', 'sandbox-off']) {
      const b = await runShell(`${shQuote(w)} claude 60 ${bad} || exit 2`, '{}');
      assert.equal(b.code, 2, bad);
      assert.match(b.stderr, /characters a host cannot have|option it does not know/, bad);
    }
    assert.throws(() => wrapperCommand('claude', 60, w, 'linux', { allowNet: ['a b'] }), /--allow-net takes HOST/);
  });

  it("does not let the agent's environment load code into the program (NODE_OPTIONS, NODE_PATH)", async () => {
    const marker = path.join(tmp, 'injected');
    const evil = path.join(tmp, 'evil.js');
    fs.writeFileSync(
      evil,
      `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x'); process.stdout.write('{"decision":"allow"}'); process.exit(0);`,
    );
    const w = wrapperFor(`process.stdin.resume();process.stdin.on('end',()=>{process.stderr.write('Blocked\\n');process.exit(2);});`);
    const r = await runShell(call(w, 'gemini'), '{}', { ...process.env, NODE_OPTIONS: `--require ${evil}`, NODE_PATH: tmp });
    assert.equal(r.code, 2, r.stdout);
    assert.equal(fs.existsSync(marker), false, 'the --require in NODE_OPTIONS never ran');
  });

  it('passes a deny on exit 2 through with its reason', async () => {
    const w = wrapperFor(
      `process.stdin.resume();process.stdin.on('end',()=>{process.stderr.write('Blocked: ~/.ssh is fully blocked (rule deny.home.ssh)\\n');process.exit(2);});`,
    );
    const r = await runShell(call(w, 'claude'), '{}');
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'Blocked: ~/.ssh is fully blocked (rule deny.home.ssh)\n');
  });

  const failures: { name: string; program?: string; node?: string; why: RegExp }[] = [
    {
      name: 'the program throws',
      program: `process.stdin.resume();process.stdin.on('end',()=>{throw new Error('boom: ' + 'SECRET_FROM_INPUT')})`,
      why: /exit status 1: it crashed/,
    },
    { name: 'the program exits 1', program: 'process.exit(1)', why: /exit status 1/ },
    { name: 'the program exits 3', program: 'process.exit(3)', why: /exit status 3/ },
    { name: 'the program has a syntax error (an older Node)', program: 'const = ;', why: /exit status 1/ },
    { name: 'the program kills itself', program: `process.kill(process.pid, 'SIGKILL')`, why: /killed by signal 9/ },
    { name: 'the program is missing', program: undefined, why: /the hook program .*cli\.js is missing/ },
    {
      name: 'the node path is wrong',
      program: 'process.exit(0)',
      node: '/nonexistent/bin/node',
      why: /Node was not found at \/nonexistent\/bin\/node/,
    },
    {
      name: 'the node path is not executable',
      program: 'process.exit(0)',
      node: 'NOT_EXECUTABLE',
      why: /Node at .*not-executable-node is not executable/,
    },
  ];
  for (const f of failures) {
    it(`${f.name}: exit 2 with a one-line reason for claude, codex, gemini and vscode`, async () => {
      const w = wrapperFor(f.program, { node: f.node });
      for (const agent of ['claude', 'codex', 'gemini', 'vscode'] as const) {
        const r = await runShell(call(w, agent), '{"tool_input":{"command":"cat SECRET_FROM_INPUT"}}');
        assert.equal(r.code, 2, `${agent}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        const lines = r.stderr.split('\n').filter(Boolean);
        assert.equal(lines.length, 1, r.stderr);
        assert.match(lines[0]!, /^Bulwark: the hook program failed \(.*\), so this tool call is denied\. .*bulwark hooks status/);
        assert.match(lines[0]!, f.why);
        assert.doesNotMatch(r.stderr, /SECRET_FROM_INPUT/, "neither stdin nor the program's error text reaches the client");
      }
    });
    it(`${f.name}: copilot-cli gets its deny JSON on stdout with exit 0`, async () => {
      const w = wrapperFor(f.program, { node: f.node });
      const r = await runShell(call(w, 'copilot-cli'), '{"toolName":"bash"}');
      assert.equal(r.code, 0, r.stderr);
      const answer = JSON.parse(r.stdout);
      assert.equal(answer.permissionDecision, 'deny');
      assert.match(answer.permissionDecisionReason, f.why);
      assert.equal(answer.hookSpecificOutput.permissionDecision, 'deny');
      assert.equal(r.stdout.trim().split('\n').length, 1);
    });
  }

  it("keeps the failed program's stderr in a 0600 file in the state directory, not in the answer", async () => {
    const w = wrapperFor(`throw new Error('distinctive failure text')`);
    const r = await runShell(call(w, 'claude'), '{}');
    assert.equal(r.code, 2);
    const log = path.join(stateDir, FAILURE_LOG);
    assert.match(fs.readFileSync(log, 'utf8'), /distinctive failure text/);
    assert.equal(fs.statSync(log).mode & 0o777, 0o600);
    assert.doesNotMatch(r.stderr, /distinctive/);
  });

  it('a program that hangs is killed with its children by the watchdog before the client timeout, and denied', async () => {
    const pids = path.join(tmp, 'hang-pids');
    const w = wrapperFor(`const { spawn } = require('child_process');
      const child = spawn(process.execPath, ['-e', 'setInterval(()=>{},1000)'], { stdio: 'ignore' });
      require('fs').writeFileSync(${JSON.stringify(pids)}, JSON.stringify([process.pid, child.pid]));
      setInterval(() => {}, 1000);`);
    const timeout = 10;
    const r = await runShell(call(w, 'codex', timeout), '{}');
    const { watchdogSeconds } = wrapperTiming(timeout);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`no answer within ${watchdogSeconds} s`));
    assert.ok(r.ms < timeout * 1000, `answered in ${r.ms} ms, before the client's ${timeout} s timeout`);
    assert.ok(r.ms >= watchdogSeconds * 1000 - 100, `not before the watchdog (${r.ms} ms)`);
    const [program, grandchild] = JSON.parse(fs.readFileSync(pids, 'utf8')) as number[];
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(alive(program!), false, 'the program is gone');
    assert.equal(alive(grandchild!), false, 'its child is gone');
  });

  it('a program that ignores SIGTERM is killed anyway', async () => {
    const w = wrapperFor(`process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);`);
    const r = await runShell(call(w, 'copilot-cli', 10), '{}');
    assert.equal(r.code, 0);
    assert.match(JSON.parse(r.stdout).permissionDecisionReason, /no answer within 7 s/);
    assert.ok(r.ms < 10000, `${r.ms} ms`);
  });

  it('the client stopping the wrapper (SIGTERM) denies and takes the program down with it', async () => {
    const pidFile = path.join(tmp, 'term-pid');
    const w = wrapperFor(`require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`);
    const child = spawn('/bin/sh', [w, 'claude', '60'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.stdin.end('{}');
    for (let i = 0; i < 100 && !fs.existsSync(pidFile); i++) await new Promise((res) => setTimeout(res, 50));
    const programPid = Number(fs.readFileSync(pidFile, 'utf8'));
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((res) => child.on('close', res));
    assert.equal(code, 2);
    assert.match(stderr, /the client stopped the hook/);
    await new Promise((res) => setTimeout(res, 200));
    assert.equal(alive(programPid), false);
  });

  it('malformed hook commands (unknown agent, missing or too small timeout) are denied', async () => {
    const w = wrapperFor('process.exit(0)');
    for (const args of ['', 'claud 60', 'claude', 'claude abc', 'claude 5', 'claude 99999', '"claude;id" 60']) {
      const r = await runShell(`${shQuote(w)} ${args} || exit 2`, '{}');
      assert.equal(r.code, 2, args);
      assert.match(
        r.stderr,
        /Bulwark: the hook program failed \((the hook command names no known agent|the hook command has no valid timeout|the hook timeout is (below 10|above 3600) s)\)/,
        args,
      );
    }
  });

  it('the installed command still denies when the wrapper itself is missing or not executable', async () => {
    const gone = path.join(tmp, 'no-such-dir', 'bulwark-hook');
    const r = await runShell(wrapperCommand('claude', 60, gone, 'linux'), '{}');
    assert.equal(r.code, 2);
    const w = wrapperFor('process.exit(0)');
    fs.chmodSync(w, 0o644);
    const r2 = await runShell(wrapperCommand('gemini', 60, w, 'linux'), '{}');
    assert.equal(r2.code, 2);
  });

  it('removes its temporary files and leaves no process behind on the happy path', async () => {
    const tmpdir = fs.mkdtempSync(path.join(tmp, 'tmpdir-'));
    const w = wrapperFor(`process.stdin.resume();process.stdin.on('end',()=>process.stdout.write('{}'))`);
    // An unusual timeout, so that its watchdog's `sleep 38` is told apart from other runs on this machine.
    const r = await runShell(call(w, 'claude', 41), '{}', { ...process.env, TMPDIR: tmpdir });
    assert.equal(r.code, 0);
    assert.deepEqual(fs.readdirSync(tmpdir), []);
    // The watchdog's sleep is killed with it: none is left holding anything.
    const sleepers = spawnSync('pgrep', ['-f', '-x', 'sleep 38'], { encoding: 'utf8' }).stdout.trim();
    assert.equal(sleepers, '', 'no watchdog sleep left behind');
  });

  it('refuses paths with control characters and renders the Windows wrapper with the same intent', () => {
    assert.throws(() => renderPosixWrapper({ node: '/bin/node\n', cli: '/c.js', stateDir: '/s' }), /control character/);
    const ps1 = renderPowerShellWrapper({
      node: 'C:\\Program Files\\nodejs\\node.exe',
      cli: "C:\\Users\\o'b\\cli.js",
      stateDir: 'C:\\Users\\u\\.bulwark',
    });
    assert.match(ps1, /\$Cli = 'C:\\Users\\o''b\\cli\.js'/, 'single quotes are doubled in PowerShell literals');
    assert.match(ps1, /WaitForExit\(\$watchdogMs\)/);
    assert.match(ps1, /taskkill\.exe \/PID \$p\.Id \/T \/F/);
    assert.match(
      wrapperCommand('copilot-cli', 60, 'C:\\s\\bin\\bulwark-hook.ps1', 'win32'),
      /^powershell -NoProfile -ExecutionPolicy Bypass -File "C:\\s\\bin\\bulwark-hook\.ps1" copilot-cli 60$/,
    );
  });

  it('the real hook program answers through the wrapper (dist/cli.js)', async function () {
    const cli = path.join(repoRoot(), 'dist', 'cli.js');
    const help = spawnSync(process.execPath, [cli, 'hook', '--help'], { encoding: 'utf8' });
    if (!fs.existsSync(cli) || /unknown command/.test(help.stderr)) this.skip(); // the hook command is not built yet
    const dir = fs.mkdtempSync(path.join(tmp, 'real-'));
    const wrapper = path.join(dir, 'bulwark-hook');
    fs.writeFileSync(wrapper, renderPosixWrapper({ node: process.execPath, cli, stateDir }), { mode: 0o755 });
    const home = path.join(dir, 'home');
    fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
    fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'fake key');
    const payload = {
      session_id: 's1',
      cwd: dir,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: `cat ${home}/.ssh/id_rsa` },
      tool_use_id: 't1',
    };
    const r = await runShell(wrapperCommand('claude', 60, wrapper, 'linux'), JSON.stringify(payload), { ...process.env, HOME: home });
    const denied = r.code === 2 || /"permissionDecision"\s*:\s*"deny"/.test(r.stdout);
    assert.ok(denied, `the real program denies reading ~/.ssh/id_rsa: exit ${r.code}, ${r.stdout} ${r.stderr}`);
    assert.doesNotMatch(r.stderr + r.stdout, /the hook program failed/, "the answer is the program's, not the wrapper's failure deny");
  });
});
