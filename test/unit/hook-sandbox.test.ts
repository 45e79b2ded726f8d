// Allowed shell calls rewritten to run in Bulwark's OS sandbox: the quoting (checked by a real shell),
// each client's answer form, the data in security/agents/ (every `sandbox` example), which commands are
// not wrapped and why, and `bulwark hook` itself (dist/cli.js, a real process) whose rewritten command is
// then run as the client would run it (bash -c), inside the real sandbox when this machine has one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  BUILTIN_TOOL_MAPS,
  SandboxRewriteError,
  claudeCommandRules,
  cliCommandRules,
  codexOwnSandbox,
  httpHostPort,
  mapToolCall,
  parseHookCall,
  rewriteAnswer,
  rewriteTarget,
  rewrittenInput,
  sandboxHosts,
  sandboxedCommand,
  singleQuote,
  toolMapsFor,
  type AgentId,
  type SandboxExecTarget,
} from '../../src/engine/agents';
import { probeSandbox } from '../../src/node/sandbox/probe';
import { makeTempDir, repoRoot } from './helpers/repo';

const CLI = path.join(repoRoot(), 'dist', 'cli.js');

const HOSTILE = [
  `it's`,
  `'`,
  `''`,
  `'\\''`,
  `a"b"c`,
  `$(id)`,
  '`id`',
  '${HOME}',
  `back\\slash\\`,
  "\\'",
  'line1\nline2\n',
  '\r\n\t',
  `*`,
  `~/x`,
  `!!`,
  `a;b|c&d`,
  `$'\\x41'`,
  `é ✓ 中`,
  ' leading and trailing ',
  '-c',
  '--',
  '',
];

describe('sandbox rewrite: quoting', () => {
  let tmp: string;
  before(() => {
    tmp = makeTempDir();
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('single-quotes any text so a shell reads back exactly that text', () => {
    const script = HOSTILE.map((t) => `printf '%s\\0' ${singleQuote(t)}`).join('\n');
    const r = spawnSync('bash', ['-c', script]);
    assert.equal(r.status, 0, r.stderr.toString());
    assert.deepEqual(r.stdout.toString().split('\0').slice(0, -1), HOSTILE);
    const sh = spawnSync('/bin/sh', ['-c', script]);
    assert.deepEqual(sh.stdout.toString().split('\0').slice(0, -1), HOSTILE);
  });

  it('refuses a NUL, which no program can be given', () => {
    assert.throws(() => singleQuote('cat a\0b'), SandboxRewriteError);
    assert.throws(() => sandboxedCommand(target(), 'echo \0'), /NUL/);
  });

  it("the wrapper command line gives `bulwark exec` each path and the agent's command as one argument, unchanged", () => {
    // A stand-in for dist/cli.js that prints the arguments it got.
    const argvPrinter = path.join(tmp, `cli it's.js`);
    fs.writeFileSync(argvPrinter, 'process.stdout.write(JSON.stringify(process.argv.slice(2)))');
    const ws = path.join(tmp, 'work $(x) space');
    for (const command of [...HOSTILE.filter((t) => t !== ''), `echo "it's" > out.txt`, `cat <<'EOF'\n$HOME\nEOF`]) {
      const line = sandboxedCommand(
        {
          node: process.execPath,
          cli: argvPrinter,
          cwd: ws,
          workspaces: [ws, '/a b'],
          allowNet: ['*.example.com', 'x.org:8443'],
          timeoutS: 7,
        },
        command,
      );
      const r = spawnSync('bash', ['-c', line]);
      assert.equal(r.status, 0, r.stderr.toString());
      assert.deepEqual(JSON.parse(r.stdout.toString()), [
        'exec',
        '--cwd',
        ws,
        '--workspace',
        ws,
        '--workspace',
        '/a b',
        '--allow-net',
        '*.example.com',
        '--allow-net',
        'x.org:8443',
        '--timeout',
        '7',
        '--',
        'bash',
        '-c',
        command,
      ]);
    }
  });

  it("passes a state directory, the compile cache and Electron's run-as-Node switch as environment, drops NODE_OPTIONS/NODE_PATH, and refuses relative paths", () => {
    const printer = path.join(tmp, 'env.js');
    fs.writeFileSync(
      printer,
      'process.stdout.write(JSON.stringify([process.env.BULWARK_STATE_DIR, process.env.ELECTRON_RUN_AS_NODE, process.env.NODE_COMPILE_CACHE, process.env.NODE_OPTIONS, process.env.NODE_PATH]))',
    );
    const line = sandboxedCommand(
      {
        ...target(),
        node: process.execPath,
        cli: printer,
        electron: true,
        stateDir: '/s t/.bulwark',
        compileCache: '/s t/.bulwark/cache/node-compile',
      },
      'true',
    );
    // An agent's environment that would load code into `bulwark exec` (which runs outside the sandbox) has no effect.
    const evil = path.join(tmp, 'evil.js');
    fs.writeFileSync(evil, 'process.stdout.write("EVIL"); process.exit(0)');
    const out = spawnSync('bash', ['-c', line], {
      env: { PATH: process.env.PATH, NODE_OPTIONS: `--require ${evil}`, NODE_PATH: tmp },
    }).stdout.toString();
    assert.deepEqual(JSON.parse(out), ['/s t/.bulwark', '1', '/s t/.bulwark/cache/node-compile', '', '']);
    assert.throws(() => sandboxedCommand({ ...target(), cli: 'dist/cli.js' }, 'ls'), /not absolute/);
    assert.throws(() => sandboxedCommand({ ...target(), workspaces: [] }, 'ls'), /no workspace/);
  });
});

describe("sandbox rewrite: each client's answer", () => {
  const call = (agent: AgentId, payload: unknown, event?: string) => parseHookCall(payload, agent, event);
  const answerFor = (agent: AgentId, payload: Record<string, unknown>, event?: string) => {
    const c = call(agent, payload, event);
    const maps = toolMapsFor(c.agent);
    const mapping = mapToolCall(
      maps.find((m) => m.tools.some((t) => t.names.includes(c.toolName!)))!,
      c.toolName!,
      c.toolInput,
      c.cwd,
    );
    const t = rewriteTarget(BUILTIN_TOOL_MAPS[c.agent], maps, c.dialect, c.toolName!, c.toolInput, mapping);
    return t && { target: t, answer: JSON.parse(rewriteAnswer(t.form, c.event, rewrittenInput(c.toolInput, t.field, 'WRAPPED')).stdout) };
  };

  it('Claude Code: hookSpecificOutput.updatedInput without a permission decision (its own permission checks stay), timeout ms → seconds', () => {
    const r = answerFor('claude', {
      session_id: 's',
      cwd: '/w',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls', description: 'd', timeout: 120001 },
    })!;
    assert.deepEqual(r.target, { form: 'updated_input', field: 'command', command: 'ls', timeoutS: 121 });
    assert.deepEqual(r.answer, {
      hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { command: 'WRAPPED', description: 'd', timeout: 120001 } },
    });
  });

  it('Codex: updatedInput with permissionDecision "allow" (it ignores one without), the command as one string', () => {
    const r = answerFor('codex', {
      session_id: 's',
      cwd: '/w',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: ['bash', '-lc', 'ls -la'] },
    })!;
    assert.equal(r.target.command, `bash -lc 'ls -la'`);
    assert.deepEqual(r.answer, {
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: 'WRAPPED' } },
    });
  });

  it('Copilot CLI: modifiedArgs with camelCase events (toolArgs as a JSON string too), updatedInput with PascalCase ones, each with "allow" (its path approval)', () => {
    const camel = answerFor(
      'copilot-cli',
      { sessionId: 's', cwd: '/w', toolName: 'bash', toolArgs: JSON.stringify({ command: 'ls', description: 'd', mode: 'sync' }) },
      'preToolUse',
    )!;
    assert.deepEqual(camel.answer, { permissionDecision: 'allow', modifiedArgs: { command: 'WRAPPED', description: 'd', mode: 'sync' } });
    const pascal = answerFor('copilot-cli', {
      session_id: 's',
      cwd: '/w',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
    })!;
    assert.deepEqual(pascal.answer, {
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: 'WRAPPED' } },
    });
  });

  it('Gemini CLI: hookSpecificOutput.tool_input on BeforeTool', () => {
    const r = answerFor('gemini', {
      session_id: 's',
      cwd: '/w',
      hook_event_name: 'BeforeTool',
      tool_name: 'run_shell_command',
      tool_input: { command: 'ls', dir_path: 'src' },
    })!;
    assert.deepEqual(r.answer, {
      hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: { command: 'WRAPPED', dir_path: 'src' } },
    });
  });

  it('no rewrite where it was not seen to work (VS Code), for tools that are not a shell, or a call that is not one command', () => {
    assert.equal(
      answerFor('vscode', { hookEventName: 'PreToolUse', cwd: '/w', tool_name: 'run_in_terminal', tool_input: { command: 'ls' } }),
      undefined,
    );
    assert.equal(
      answerFor('claude', {
        session_id: 's',
        cwd: '/w',
        hook_event_name: 'PreToolUse',
        tool_name: 'Read',
        tool_input: { file_path: '/w/a' },
      }),
      undefined,
    );
    assert.equal(
      answerFor('claude', { session_id: 's', cwd: '/w', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 7 } }),
      undefined,
    );
  });

  it('every `sandbox` example in security/agents/ rewrites its input to exactly `rewritten` ($EXEC: the exec prefix)', () => {
    const t = target();
    const exec = sandboxedCommand(t, 'X').replace(/ -- bash -c 'X'$/, '');
    let seen = 0;
    for (const map of Object.values(BUILTIN_TOOL_MAPS)) {
      for (const rule of map.tools) {
        if (!rule.sandbox) continue;
        assert.ok(map.rewrite, `${map.agent} marks a sandbox tool but takes no rewrite`);
        for (const ex of (rule.sandbox as unknown as { examples: { input: unknown; rewritten: Record<string, unknown> }[] }).examples) {
          const mapping = mapToolCall(map, rule.names[0]!, ex.input);
          const dialect = Object.keys(map.rewrite!)[0] as 'claude';
          const rt = rewriteTarget(map, [map], dialect, rule.names[0]!, ex.input, mapping);
          assert.ok(rt, `${map.agent}: ${JSON.stringify(ex.input)} is not rewritable`);
          const got = rewrittenInput(
            ex.input,
            rt.field,
            sandboxedCommand({ ...t, ...(rt.timeoutS ? { timeoutS: rt.timeoutS } : {}) }, rt.command),
          );
          const want = { ...ex.rewritten, [rt.field]: String(ex.rewritten[rt.field]).replace('$EXEC', exec) };
          assert.deepEqual(got, want, `${map.agent}: ${JSON.stringify(ex.input)}`);
          seen++;
        }
      }
    }
    assert.ok(seen >= 5, `only ${seen} examples`);
  });
});

describe('sandbox rewrite: which commands are wrapped', () => {
  const facts = (o: Partial<Parameters<typeof sandboxHosts>[0]>) => ({
    commands: [],
    network: false,
    urls: [],
    logins: [],
    sinks: [],
    ...o,
  });

  it('no network: wrapped with none; http(s) URLs: wrapped with their hosts and ports', () => {
    assert.deepEqual(sandboxHosts(facts({ commands: ['ls'] })), { hosts: [] });
    assert.deepEqual(
      sandboxHosts(
        facts({ commands: ['curl'], network: true, urls: ['https://Example.com/x?k=1', 'http://a.org:8080/', 'https://example.com/y'] }),
      ),
      { hosts: ['example.com:443', 'a.org:8080'] },
    );
    assert.equal(httpHostPort('https://user:pw@[2001:db8::1]:8443/p'), '[2001:db8::1]:8443');
    assert.equal(httpHostPort('ftp://x.org/'), undefined);
    assert.equal(httpHostPort('https://x.org:99999/'), undefined);
  });

  it('network without a named host, ssh logins, listeners and other schemes are not wrapped, and say why without quoting the target', () => {
    const npm = sandboxHosts(facts({ commands: ['npm'], network: true }));
    assert.match((npm as { notSandboxed: string }).notSandboxed, /uses the network \(npm\) and Bulwark cannot name the hosts/);
    // A named URL beside unnamed network use (`npm install && curl https://x`): npm's registry is not x.
    const mixed = sandboxHosts(facts({ commands: ['npm', 'curl'], network: true, unnamedNetwork: true, urls: ['https://x.example/'] }));
    assert.match((mixed as { notSandboxed: string }).notSandboxed, /cannot name the hosts/);
    assert.match(
      (sandboxHosts(facts({ commands: ['ssh'], network: true, urls: ['git@h'], logins: ['git@h'] })) as { notSandboxed: string })
        .notSandboxed,
      /over ssh/,
    );
    assert.match(
      (sandboxHosts(facts({ commands: ['python3'], network: true, sinks: ['http.server'] })) as { notSandboxed: string }).notSandboxed,
      /listens/,
    );
    const ftp = (
      sandboxHosts(facts({ commands: ['curl'], network: true, urls: ['ftp://h/f?token=sk_live_abc'] })) as { notSandboxed: string }
    ).notSandboxed;
    assert.match(ftp, /a ftp:\/\/ address/);
    assert.ok(!ftp.includes('sk_live_abc'));
  });

  it('Codex: wrapped only where its own sandbox is evidently off (flags, -c, config.toml and its profiles); unknown counts as on', () => {
    const off = (argv: string[] | undefined, toml?: string) => !codexOwnSandbox(argv, toml).on;
    assert.ok(off(['exec', '--json', '--dangerously-bypass-approvals-and-sandbox', 'do it']));
    assert.ok(off(['--yolo']));
    assert.ok(off(['exec', '--sandbox', 'danger-full-access']));
    assert.ok(off(['exec', '-s=danger-full-access']));
    assert.ok(off(['exec', '-c', 'sandbox_mode="danger-full-access"']));
    assert.ok(off(['exec'], 'model = "x"\nsandbox_mode = "danger-full-access"\n[profiles.safe]\nsandbox_mode = "read-only"\n'));
    assert.ok(!off(['exec', '--profile', 'safe'], 'sandbox_mode = "danger-full-access"\n[profiles.safe]\nsandbox_mode = "read-only"\n'));
    assert.ok(!off(['exec', '--sandbox', 'workspace-write'], 'sandbox_mode = "danger-full-access"\n'));
    assert.ok(!off(['exec', '--full-auto']));
    assert.ok(!off(['exec'], '[projects."/p"]\nsandbox_mode = "danger-full-access"\n'));
    assert.ok(!off(['exec']));
    assert.match(codexOwnSandbox(undefined, undefined).why, /could not be found/);
  });

  it("rules for particular shell commands on Claude Code's or Copilot CLI's command line are found; blanket ones are not", () => {
    assert.deepEqual(cliCommandRules('claude', ['-p', 'task', '--allowedTools', 'Bash', 'Read', '--output-format', 'json']), []);
    assert.deepEqual(
      cliCommandRules('claude', ['-p', 'x', '--disallowedTools', 'Bash(git push:*)', 'Edit', '--allowed-tools=Bash(npm test)']),
      ['--disallowedTools Bash(git push:*)', '--allowed-tools Bash(npm test)'],
    );
    assert.deepEqual(cliCommandRules('copilot-cli', ['-p', 'x', '--deny-tool', 'shell(rm)', '--allow-tool', 'write']), [
      '--deny-tool shell(rm)',
    ]);
    assert.deepEqual(cliCommandRules('copilot-cli', ['--allow-all-tools']), []);
  });

  it('Claude Code settings with rules for particular Bash commands are found (allow, ask, deny); others are not', () => {
    assert.deepEqual(
      claudeCommandRules({ permissions: { allow: ['Bash(npm test:*)', 'Read'], deny: ['Bash(git push:*)'], ask: ['WebFetch'] } }),
      ['allow: Bash(npm test:*)', 'deny: Bash(git push:*)'],
    );
    assert.deepEqual(claudeCommandRules({ permissions: { allow: ['Bash', 'Edit'] } }), []);
    assert.deepEqual(claudeCommandRules({ hooks: {} }), []);
    assert.deepEqual(claudeCommandRules(null), []);
  });
});

describe('bulwark hook rewrites allowed shell calls (dist/cli.js, in-process, a policy that allows every command)', function () {
  this.timeout(120000);
  let tmp: string, home: string, ws: string, state: string, sandboxHere: boolean, allowAll: string;
  const KEY = 'BULWARKKEY-not-a-real-key-7f3a9c';
  before(async () => {
    if (!fs.existsSync(CLI)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` first');
    tmp = makeTempDir();
    home = path.join(tmp, 'home');
    ws = path.join(tmp, 'ws');
    state = path.join(home, '.bulwark');
    fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
    fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${KEY}\n-----END OPENSSH PRIVATE KEY-----\n`);
    fs.mkdirSync(ws, { recursive: true });
    // A script the engine does not open: `bash show.sh` runs the project's code (the permissive preset allows that too).
    fs.writeFileSync(path.join(ws, 'show.sh'), 'cat ~/.ssh/id_rsa\n');
    sandboxHere = (await probeSandbox()).available;
    // The wrapper's mechanics are tested on any command (network included), so the policy is the test's own:
    // every preset reviews network commands. Protection still refuses what it refuses.
    allowAll = path.join(tmp, 'allow-every-command.yaml');
    fs.writeFileSync(
      allowAll,
      "version: 1\nname: allow-every-command\ndescription: The wrapper tests' policy.\nallow:\n  - name: allow_every_command\n    action_types: [execute_command]\n",
    );
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const hook = (agent: string, payload: unknown, extra: string[] = [], env: NodeJS.ProcessEnv = {}, event?: string) => {
    const r = spawnSync(
      process.execPath,
      [
        CLI,
        'hook',
        '--agent',
        agent,
        '--state-dir',
        state,
        '--no-server',
        '--policy',
        allowAll,
        ...(event ? ['--event', event] : []),
        ...extra,
      ],
      { input: JSON.stringify(payload), cwd: ws, env: { PATH: process.env.PATH, HOME: home, ...env }, timeout: 60000 },
    );
    return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };
  const claudeBash = (command: string, extra: Record<string, unknown> = {}) => ({
    session_id: 's',
    cwd: ws,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command, ...extra },
    tool_use_id: 't',
  });
  /** Runs a command as the client does (bash -c, in the project), with the test's HOME. */
  const runAsClient = (command: string) => {
    const r = spawnSync('bash', ['-c', command], { cwd: ws, env: { PATH: process.env.PATH, HOME: home }, timeout: 60000 });
    return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };

  it("under the default policy the project's own code runs without anyone asked when the hook sandboxes it, and needs a review when it does not", function () {
    if (!sandboxHere) this.skip();
    const defaultHook = (extra: string[]) => {
      const r = spawnSync(
        process.execPath,
        [CLI, 'hook', '--agent', 'claude', '--state-dir', state, '--no-server', '--policy', 'default', ...extra],
        { input: JSON.stringify(claudeBash('make test')), cwd: ws, env: { PATH: process.env.PATH, HOME: home }, timeout: 60000 },
      );
      return JSON.parse(r.stdout.toString()).hookSpecificOutput;
    };
    const sandboxed = defaultHook([]);
    assert.equal(sandboxed.permissionDecision, undefined, JSON.stringify(sandboxed));
    assert.match(sandboxed.updatedInput.command, / exec --cwd .* -- bash -c 'make test'$/);
    const outside = defaultHook(['--no-sandbox']);
    assert.equal(outside.permissionDecision, 'deny');
    assert.match(outside.permissionDecisionReason, /runs code of the project; would run outside any sandbox/);
  });

  it('a search over a folder with a .env is allowed when sandboxed, on the condition that the sandbox hides the .env (`--hide`), and it does', function () {
    if (!sandboxHere) this.skip();
    const env = path.join(ws, '.env');
    fs.writeFileSync(env, 'HIDEME_TOKEN=hidden-value-3c1e\n');
    try {
      const r = spawnSync(
        process.execPath,
        [CLI, 'hook', '--agent', 'claude', '--state-dir', state, '--no-server', '--policy', 'default'],
        { input: JSON.stringify(claudeBash('grep -r HIDEME .')), cwd: ws, env: { PATH: process.env.PATH, HOME: home }, timeout: 60000 },
      );
      const out = JSON.parse(r.stdout.toString()).hookSpecificOutput;
      assert.equal(out.permissionDecision, undefined, JSON.stringify(out));
      assert.ok(out.updatedInput.command.includes(` --hide '${env}' `), out.updatedInput.command);
      const ran = runAsClient(out.updatedInput.command);
      assert.doesNotMatch(ran.stdout, /hidden-value/, 'the search ran and did not see the .env');
      assert.equal(runAsClient('grep -r HIDEME .').stdout.includes('hidden-value'), true, 'control: unsandboxed the search reads it');
      const refused = spawnSync(
        process.execPath,
        [CLI, 'hook', '--agent', 'claude', '--state-dir', state, '--no-server', '--policy', 'default', '--no-sandbox'],
        { input: JSON.stringify(claudeBash('grep -r HIDEME .')), cwd: ws, env: { PATH: process.env.PATH, HOME: home }, timeout: 60000 },
      );
      const denied = JSON.parse(refused.stdout.toString()).hookSpecificOutput;
      assert.equal(denied.permissionDecision, 'deny', 'without the sandbox the search stays refused');
      assert.match(denied.permissionDecisionReason, /deny\.any\.env_file/);
    } finally {
      fs.rmSync(env, { force: true });
    }
  });

  it('each client gets the rewrite in its own form; the rewritten command runs `bulwark exec` with this Node and dist/cli.js', function () {
    if (!sandboxHere) this.skip();
    const claude = JSON.parse(hook('claude', claudeBash('ls', { timeout: 30000 })).stdout).hookSpecificOutput;
    assert.equal(claude.permissionDecision, undefined);
    assert.equal(
      claude.updatedInput.command,
      `NODE_OPTIONS= NODE_PATH= NODE_COMPILE_CACHE='${state}/cache/node-compile' '${process.execPath}' '${CLI}' exec --cwd '${ws}' --workspace '${ws}' --timeout 30 -- bash -c 'ls'`,
    );
    assert.equal(claude.updatedInput.timeout, 30000);
    // Codex: only under a Codex process whose own sandbox is off (a shell named `codex` stands in for it here).
    assert.equal(hook('codex', { ...claudeBash('ls'), tool_input: { command: 'ls' } }).stdout, '');
    const codexBin = path.join(tmp, 'bin', 'codex');
    fs.mkdirSync(path.dirname(codexBin), { recursive: true });
    fs.symlinkSync('/bin/bash', codexBin);
    const hookLine = [process.execPath, CLI, 'hook', '--agent', 'codex', '--state-dir', state, '--no-server', '--policy', 'permissive']
      .map((a) => `'${a}'`)
      .join(' ');
    const underCodex = (flag: string) =>
      spawnSync(codexBin, ['-c', `${hookLine}; true`, flag], {
        input: JSON.stringify({ ...claudeBash('ls'), tool_input: { command: 'ls' } }),
        cwd: ws,
        env: { PATH: process.env.PATH, HOME: home },
      }).stdout.toString();
    const codex = JSON.parse(underCodex('--dangerously-bypass-approvals-and-sandbox')).hookSpecificOutput;
    assert.equal(codex.permissionDecision, 'allow');
    assert.match(codex.updatedInput.command, / exec --cwd .* -- bash -c 'ls'$/);
    assert.equal(underCodex('--full-auto'), '');
    const gemini = JSON.parse(
      hook('gemini', {
        session_id: 'g',
        cwd: ws,
        hook_event_name: 'BeforeTool',
        tool_name: 'run_shell_command',
        tool_input: { command: 'ls' },
      }).stdout,
    );
    assert.match(gemini.hookSpecificOutput.tool_input.command, / -- bash -c 'ls'$/);
    const copilot = JSON.parse(
      hook(
        'copilot-cli',
        { sessionId: 'c', cwd: ws, toolName: 'bash', toolArgs: { command: 'ls', description: 'd' } },
        [],
        {},
        'preToolUse',
      ).stdout,
    );
    assert.equal(copilot.permissionDecision, 'allow');
    assert.equal(copilot.modifiedArgs.description, 'd');
    assert.match(copilot.modifiedArgs.command, / -- bash -c 'ls'$/);
  });

  it('an allowed command that reads the key through a script runs in the sandbox: the key never comes out', function () {
    if (!sandboxHere) this.skip();
    // Control: run as the model wrote it, the script prints the key.
    assert.match(runAsClient('bash show.sh').stdout, new RegExp(KEY));
    const a = hook('claude', claudeBash('bash show.sh'));
    assert.equal(a.code, 0, a.stderr);
    const r = runAsClient(JSON.parse(a.stdout).hookSpecificOutput.updatedInput.command);
    assert.notEqual(r.code, 0);
    assert.ok(!(r.stdout + r.stderr).includes(KEY), 'the key came out of the sandbox');
  });

  it('ordinary commands work through the wrapper: output, exit status, a file written in the project, hostile quoting', function () {
    if (!sandboxHere) this.skip();
    const wrapped = (c: string) => JSON.parse(hook('claude', claudeBash(c)).stdout).hookSpecificOutput.updatedInput.command as string;
    assert.equal(runAsClient(wrapped(`echo "it's" > out.txt && cat out.txt`)).stdout, `it's\n`);
    assert.equal(fs.readFileSync(path.join(ws, 'out.txt'), 'utf8'), `it's\n`);
    assert.equal(runAsClient(wrapped('ls')).stdout.split('\n').includes('show.sh'), true);
    assert.equal(runAsClient(wrapped('exit 3')).code, 3);
    const odd = `printf '%s|' 'a'\\''b' "$(echo x)" \\$HOME $'l1\\nl2'`;
    assert.equal(runAsClient(wrapped(odd)).stdout, runAsClient(odd).stdout.replace(home, home));
  });

  it('--no-sandbox answers as before (silence); a command that needs unnamed network is not wrapped and says why, in the audit entry too', () => {
    assert.deepEqual(hook('claude', claudeBash('ls'), ['--no-sandbox']), { code: 0, stdout: '', stderr: '' });
    const npm = hook('claude', claudeBash('npm install'));
    assert.equal(npm.stdout, '');
    if (sandboxHere) assert.match(npm.stderr, /runs without Bulwark's sandbox: the command uses the network \(npm\)/);
    const log = fs.readFileSync(path.join(state, 'audit', 'audit.jsonl'), 'utf8');
    assert.match(log, /not sandboxed: wrapping is off \(--no-sandbox\)/);
    assert.match(log, sandboxHere ? /not sandboxed: the command uses the network \(npm\)/ : /not sandboxed: no OS sandbox here/);
    if (sandboxHere) assert.match(log, /sandboxed \(bubblewrap; writable: /);
  });

  it("a deny is unchanged (the client's own deny, no rewrite) and never echoes the secret", () => {
    const secret = 'ghp_R7u2Kq9Zt4Lm8Xc1Vb6Nw3Hy5Pj0Sd2Fg7Ae';
    const r = JSON.parse(hook('claude', claudeBash(`cat ~/.ssh/id_rsa; echo ${secret}`)).stdout).hookSpecificOutput;
    assert.equal(r.permissionDecision, 'deny');
    assert.equal(r.updatedInput, undefined);
    assert.ok(!JSON.stringify(r).includes(secret));
  });

  it('Claude Code settings with rules for particular Bash commands: not wrapped (they would no longer match), and it says which', function () {
    if (!sandboxHere) this.skip();
    const project = path.join(ws, '.claude');
    fs.mkdirSync(project, { recursive: true });
    fs.writeFileSync(path.join(project, 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash(git push:*)'] } }));
    try {
      const r = hook('claude', claudeBash('ls'));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /Claude Code's own rules for particular Bash commands \(.*settings\.json: deny: Bash\(git push:\*\)\)/);
      fs.writeFileSync(path.join(project, 'settings.json'), '{ not json');
      assert.match(hook('claude', claudeBash('ls')).stderr, /is not valid JSON/);
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
    // The same rules on Claude Code's command line (a shell named `claude` stands in for it).
    const claudeBin = path.join(tmp, 'bin', 'claude');
    fs.mkdirSync(path.dirname(claudeBin), { recursive: true });
    fs.symlinkSync('/bin/bash', claudeBin);
    const hookLine = [process.execPath, CLI, 'hook', '--agent', 'claude', '--state-dir', state, '--no-server', '--policy', 'permissive']
      .map((a) => `'${a}'`)
      .join(' ');
    const underClaude = (...flags: string[]) =>
      spawnSync(claudeBin, ['-c', `${hookLine}; true`, ...flags], {
        input: JSON.stringify(claudeBash('ls')),
        cwd: ws,
        env: { PATH: process.env.PATH, HOME: home },
      });
    const ruled = underClaude('--disallowedTools', 'Bash(git push:*)');
    assert.equal(ruled.stdout.toString(), '');
    assert.match(
      ruled.stderr.toString(),
      /own rules for particular shell commands on its command line \(--disallowedTools Bash\(git push:\*\)\)/,
    );
    assert.match(
      JSON.parse(underClaude('--allowedTools', 'Bash', 'Read').stdout.toString()).hookSpecificOutput.updatedInput.command,
      / exec /,
    );
  });

  it('--allow-net hosts are added to the ones the command names; a bad one is refused like any bad flag', function () {
    if (!sandboxHere) this.skip();
    const cmd = JSON.parse(hook('claude', claudeBash('curl -s https://example.com/a'), ['--allow-net', 'registry.npmjs.org:443']).stdout)
      .hookSpecificOutput.updatedInput.command;
    assert.match(cmd, /--allow-net 'example\.com:443' --allow-net 'registry\.npmjs\.org:443' /);
    const bad = hook('claude', claudeBash('ls'), ['--allow-net', 'a b']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--allow-net takes HOST/);
  });
});

function target(): SandboxExecTarget {
  return { node: '/usr/bin/node', cli: '/opt/bulwark/dist/cli.js', cwd: '/home/u/p', workspaces: ['/home/u/p'], allowNet: [] };
}
