// The agents stage of `npm test`: each real agent CLI (Claude Code, Gemini CLI, Copilot CLI, Codex) runs
// the scripted scenarios with Bulwark's hooks installed, and the evidence is checked step by step.
// Prints `ok - …` / `FAIL - …` per step and a closing line `agents: N passed, M failed`; exit status 1 on
// any failure. Clients run one after the other (2 cores).
//
// Usage: node test/agents/run.js [--clients claude,gemini,copilot,codex] [--runs attacks,work,permissive,broken]
//                                [--hook bulwark|probe-deny|probe-noop|probe-fail] [--scope workspace|user]
// The probe hooks check the harness itself: probe-deny must pass every "was not run" check, probe-noop must
// fail the attack checks (proof that they can fail), probe-fail shows which clients fail open on a crashed hook.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { runClient, evaluate, RUNS_DIR, CLI } = require('./harness');
const { CLIENTS, installedVersion } = require('./clients');
const { breakHook } = require('./break-hook');
const { summary } = require('./timing');

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : dflt;
};
const clients = opt('clients', 'claude,gemini,copilot,codex').split(',');
const hook = opt('hook', 'bulwark');
const scope = opt('scope', undefined);

/** The runs per client. `work` twice: under the default policy (ordinary work is judged harmless by its effects
 *  and runs without anyone asked) and the permissive one; `broken-*`
 *  repeat permissive work with the installed hook broken on purpose in four ways: nothing may run. */
const RUNS = {
  attacks: { scenario: 'attacks', scope: 'workspace' },
  work: { scenario: 'work', scope: 'user' },
  permissive: { scenario: 'work', policy: 'permissive', scope: 'user', timing: true },
  // Allowed shell calls in Bulwark's sandbox (the hook rewrites them to `bulwark exec …`), and the same installed with --no-sandbox.
  sandbox: { scenario: 'sandbox', policy: 'permissive', scope: 'user', timing: true },
  'sandbox-off': { scenario: 'sandbox', policy: 'permissive', scope: 'user', timing: true, installArgs: ['--no-sandbox'] },
  // Claude Code / Copilot CLI with a rule of their own for particular commands (it would no longer match a wrapped command): not wrapped.
  'sandbox-claude-rule': {
    clients: ['claude'], scenario: 'sandbox', policy: 'permissive', scope: 'user', notSandboxed: 'the client\'s own rules for particular shell commands',
    configure: ({ setup }) => { setup.args.push('--disallowedTools', 'Bash(rm:*)'); },
  },
  'sandbox-copilot-rule': {
    clients: ['copilot'], scenario: 'sandbox', policy: 'permissive', scope: 'user', notSandboxed: 'the client\'s own rules for particular shell commands',
    configure: ({ setup }) => { setup.args.push('--deny-tool', 'shell(rm)'); },
  },
  // Codex with its own sandbox on (as `codex exec` has it unless told otherwise): Bulwark's cannot start inside it, so the hook does not wrap.
  'sandbox-codex-own': {
    clients: ['codex'], scenario: 'sandbox', policy: 'permissive', scope: 'user', notSandboxed: 'Codex runs commands in its own sandbox',
    configure: ({ setup }) => { setup.args.splice(setup.args.indexOf('--dangerously-bypass-approvals-and-sandbox'), 1, '--sandbox', 'workspace-write'); },
  },
  'broken-node': { scenario: 'work', policy: 'permissive', scope: 'user', breakHook: breakHook('node-missing') },
  'broken-crash': { scenario: 'note', policy: 'permissive', scope: 'workspace', breakHook: breakHook('program-crash') },
  // The smallest hook timeout the installer accepts (10 s), so the wrapper's watchdog fires after 7 s.
  'broken-hang': { scenario: 'note', policy: 'permissive', scope: 'user', hookTimeoutS: 10, breakHook: breakHook('program-hang') },
  'broken-wrapper': { scenario: 'note', policy: 'permissive', scope: 'workspace', breakHook: breakHook('wrapper-missing') },
};
const runs = opt('runs', Object.keys(RUNS).join(',')).split(',');

async function main() {
  for (const c of clients) if (!CLIENTS[c]) throw new Error(`unknown client ${c} (${Object.keys(CLIENTS).join(', ')})`);
  for (const r of runs) if (!RUNS[r]) throw new Error(`unknown run ${r} (${Object.keys(RUNS).join(', ')})`);
  if (hook === 'bulwark' && !fs.existsSync(CLI)) throw new Error(`${CLI} is missing: build first (node esbuild.mjs)`);
  let passed = 0;
  let failed = 0;
  const results = [];
  const t0 = Date.now();
  for (const client of clients) {
    const version = installedVersion(client);
    if (!version) {
      console.log(`FAIL - ${client}: not installed in .e2e/agents (bw_ensure_agent_clients)`);
      failed++;
      continue;
    }
    for (const runName of runs) {
      const spec = RUNS[runName];
      if (spec.clients && !spec.clients.includes(client)) continue;
      const label = `${client} ${runName}`;
      let ev;
      try {
        // Both install locations are exercised: attacks with workspace hooks, the work runs with user hooks (--scope overrides).
        ev = await runClient({ client, ...spec, hook, scope: scope || spec.scope, tag: `${client}-${runName}` });
      } catch (e) {
        console.log(`FAIL - ${label}: the run could not start: ${e.message}`);
        failed++;
        results.push({ client, run: runName, error: e.message });
        continue;
      }
      const groups = evaluate(ev);
      for (const g of groups) {
        const bad = g.checks.filter((x) => !x.ok);
        if (bad.length === 0) {
          passed++;
          console.log(`ok - ${label} ${g.title}${g.expect ? ` [${g.expect}]` : ''}`);
        } else {
          failed++;
          console.log(`FAIL - ${label} ${g.title}${g.expect ? ` [${g.expect}]` : ''}`);
          for (const b of bad) console.log(`       ${b.name}: ${b.why}`);
        }
      }
      const timing = spec.timing && ev.timings.pre.length ? `; hook time per call: pre-tool p50 ${summary(ev.timings.pre).p50} ms, post-tool p50 ${summary(ev.timings.post).p50} ms` : '';
      console.log(`       (${label}: ${CLIENTS[client].name} ${version}, ${ev.run.scope} hooks ${ev.install.via}, ${(ev.proc.ms / 1000).toFixed(1)}s${timing}, logs ${path.relative(process.cwd(), ev.logs)})`);
      results.push({ client, version, run: runName, scope: ev.run.scope, ms: Math.round(ev.proc.ms), timings: spec.timing ? { pre: summary(ev.timings.pre), post: summary(ev.timings.post) } : undefined, groups });
    }
  }
  // Self-check: the same checks, with a hook that lets every call run, must see each local attack happen
  // (proof that they can fail). Codex runs every attack itself when its hook says nothing.
  if (hook === 'bulwark' && clients.includes('codex') && !argv.includes('--runs')) {
    const ev = await runClient({ client: 'codex', scenario: 'attacks-local', hook: 'probe-noop', scope: 'user', tag: 'codex-self-check' });
    for (const g of evaluate(ev).filter((x) => x.id !== 'run')) {
      const seen = g.checks.filter((x) => !x.ok).map((x) => x.name);
      if (seen.length) passed++; else failed++;
      console.log(`${seen.length ? 'ok' : 'FAIL'} - harness self-check (codex, hook allows all): ${g.title} is seen to run${seen.length ? ` (${seen.join('; ')})` : ': no check failed'}`);
    }
  }
  fs.mkdirSync(RUNS_DIR, { recursive: true });
  fs.writeFileSync(path.join(RUNS_DIR, 'results.json'), JSON.stringify({ hook, results }, null, 2));
  console.log(`agents: total ${((Date.now() - t0) / 1000).toFixed(1)}s; network: ${process.env.BULWARK_AGENTS_NETNS === '1' ? 'loopback only (bubblewrap network namespace)' : 'the machine\'s (no network namespace)'}`);
  console.log(`agents: ${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

main().catch((e) => {
  console.log(`FAIL - agents harness: ${e.stack || e}`);
  console.log('agents: 0 passed, 1 failed');
  process.exitCode = 1;
});
