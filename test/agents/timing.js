// What Bulwark's hook adds to a real agent run, per tool call: each installed hook command is wrapped
// in time-hook.sh (start of the hook process → its answer, as the client waits for it), and the same
// scenario also runs without hooks, for the client's whole wall time.
//   measureHookOverhead({ client, repeats }) → figures (used by the agents stage and by the bench)
//   node test/agents/timing.js [--clients claude,gemini,copilot,codex] [--repeats 3]
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const SHIM = path.join(__dirname, 'time-hook.sh');
const PRE = /^(PreToolUse|BeforeTool|preToolUse)$/;
const POST = /^(PostToolUse|AfterTool|postToolUse)$/;
const q = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Wraps every pre/post-tool hook command in the given hook configuration files (the ones the install wrote)
 * in the timing shim. Returns the number of commands wrapped.
 */
function wrapInstalledHooks({ files, timingLog }) {
  let wrapped = 0;
  for (const file of files) {
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    const hooks = config.hooks || {};
    for (const [event, entries] of Object.entries(hooks)) {
      const phase = PRE.test(event) ? 'pre' : POST.test(event) ? 'post' : undefined;
      if (!phase || !Array.isArray(entries)) continue;
      // Claude/Gemini/Codex nest { matcher, hooks: [...] }; Copilot CLI lists the commands directly.
      const commands = entries.flatMap((e) => (Array.isArray(e.hooks) ? e.hooks : [e]));
      for (const h of commands) {
        const key = typeof h.command === 'string' ? 'command' : typeof h.bash === 'string' ? 'bash' : undefined;
        if (!key) continue;
        h[key] = `${q(SHIM)} ${q(timingLog)} ${phase} sh -c ${q(h[key])}`;
        wrapped++;
      }
    }
    fs.writeFileSync(file, JSON.stringify(config, null, 2) + '\n');
  }
  return wrapped;
}

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

/** Per-call durations (ms) from a timing log, by phase. */
function readTimings(timingLog) {
  const rows = fs.existsSync(timingLog) ? fs.readFileSync(timingLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
  const ms = (phase) => rows.filter((r) => r.phase === phase).map((r) => (r.end - r.start) * 1000).sort((a, b) => a - b);
  return { pre: ms('pre'), post: ms('post') };
}

/** p50/p90/max of durations, rounded to 0.1 ms. */
function summary(sorted) {
  const r = (x) => Math.round(x * 10) / 10;
  return { n: sorted.length, p50: r(percentile(sorted, 50)), p90: r(percentile(sorted, 90)), max: r(sorted[sorted.length - 1] ?? NaN) };
}

/**
 * Hook time per tool call in one client run (the `work` scenario under the permissive policy: three tool
 * calls that all run), and the client's wall time with and without hooks. `repeats` runs of each, alternating.
 */
async function measureHookOverhead({ client, repeats = 3, scenario = 'work', policy = 'permissive' }) {
  const { runClient } = require('./harness');
  const withHooks = [];
  const without = [];
  const pre = [];
  const post = [];
  let toolCalls = 0;
  for (let i = 0; i < repeats; i++) {
    const ev = await runClient({ client, scenario, policy, hook: 'bulwark', timing: true, tag: `${client}-timing` });
    if (ev.timings.pre.length === 0) throw new Error(`${client}: no hook call was timed (hooks not installed where the client reads them?)`);
    withHooks.push(ev.proc.ms);
    pre.push(...ev.timings.pre);
    post.push(...ev.timings.post);
    toolCalls += ev.results.filter((r) => r !== undefined).length;
    const bare = await runClient({ client, scenario, policy, hook: 'none', tag: `${client}-timing-nohooks` });
    without.push(bare.proc.ms);
  }
  const sum = (a) => a.reduce((x, y) => x + y, 0);
  const med = (a) => percentile([...a].sort((x, y) => x - y), 50);
  return {
    client,
    toolCalls: toolCalls / repeats,
    preToolHookMs: summary(pre.sort((a, b) => a - b)),
    postToolHookMs: summary(post.sort((a, b) => a - b)),
    /** Hook processes' time per tool call (pre + post), summed over the run and divided by its tool calls. */
    hookMsPerToolCall: Math.round(((sum(pre) + sum(post)) / Math.max(1, toolCalls)) * 10) / 10,
    clientWallMs: { withHooks: Math.round(med(withHooks)), withoutHooks: Math.round(med(without)) },
    /** (median wall time with hooks − without) / tool calls: what a user waits for, per tool call. */
    addedWallMsPerToolCall: Math.round(((med(withHooks) - med(without)) / Math.max(1, toolCalls / repeats)) * 10) / 10,
  };
}

function formatOverhead(f) {
  return `${f.client}: hook per tool call ${f.hookMsPerToolCall} ms (pre-tool p50 ${f.preToolHookMs.p50} ms, p90 ${f.preToolHookMs.p90} ms; post-tool p50 ${f.postToolHookMs.p50} ms; n=${f.preToolHookMs.n}+${f.postToolHookMs.n}); `
    + `client run ${f.clientWallMs.withHooks} ms with hooks vs ${f.clientWallMs.withoutHooks} ms without, +${f.addedWallMsPerToolCall} ms per tool call (${f.toolCalls} tool calls)`;
}

module.exports = { wrapInstalledHooks, readTimings, summary, measureHookOverhead, formatOverhead };

if (require.main === module) {
  const argv = process.argv.slice(2);
  const opt = (name, dflt) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : dflt; };
  (async () => {
    const all = [];
    for (const client of opt('clients', 'claude,gemini,copilot,codex').split(',')) {
      const f = await measureHookOverhead({ client, repeats: Number(opt('repeats', '3')) });
      all.push(f);
      console.log(formatOverhead(f));
    }
    if (argv.includes('--json')) console.log(JSON.stringify(all));
  })().catch((e) => { console.error(e); process.exitCode = 1; });
}
