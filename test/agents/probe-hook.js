// A stand-in hook for checking the harness itself (run.js --hook probe-deny|probe-noop|probe-fail):
//   deny  answers every pre-tool call with the client's own deny format (the harness must see nothing run),
//   noop  answers nothing (the tools run: the attack checks must FAIL, which proves they can),
//   fail  exits 1 like a crashed hook (measured: Claude Code, Codex and Gemini CLI then run the tool).
//   rewrite:<shape>  answers a shell call with its command replaced (REWRITTEN_COMMAND) in one candidate
//         answer shape (REWRITE_SHAPES), to find out which shapes each client applies (rewrite-probe.js);
//         rewrite-wrap:<shape> keeps the original inside `bash -c '…'` after the replacement's own marker;
//         rewrite-outside:<shape> runs a program outside the project by absolute path (this Node), as Bulwark's wrapper does.
// Usage: node probe-hook.js <claude|gemini|copilot-cli|codex> <deny|noop|fail|rewrite:SHAPE> <payloads.jsonl> [event]
'use strict';
const fs = require('node:fs');

const [agent, mode, payloadLog, eventArg] = process.argv.slice(2);

/** What a rewritten shell call runs instead: it leaves its own marker, so what ran is seen on disk too. */
const REWRITTEN_COMMAND = 'touch rewritten.marker && echo REWRITTEN-RAN';

/** The rewrite as Bulwark makes it: the original command inside another program's `bash -c '…'`. */
const wrapped = (original) => `touch rewritten.marker && bash -c '${original.replace(/'/g, `'\\''`)}'`;

/** A replacement that names a program outside the project by its absolute path, as Bulwark's wrapper does (this Node). */
const outsidePath = () => `'${process.execPath}' -e 'require("fs").writeFileSync("rewritten.marker", "")' && echo REWRITTEN-RAN`;

/** Candidate answers that replace a tool's input (`input`: the whole new input), by shape name. */
const REWRITE_SHAPES = {
  // Claude Code / Codex / Copilot CLI's PascalCase events: hookSpecificOutput.updatedInput.
  'updated-input': (event, input) => ({ hookSpecificOutput: { hookEventName: event, updatedInput: input } }),
  'updated-input-allow': (event, input) => ({ hookSpecificOutput: { hookEventName: event, permissionDecision: 'allow', updatedInput: input } }),
  // Copilot CLI's camelCase events (the Copilot SDK's onPreToolUse output names modifiedArgs).
  'modified-args': (event, input) => ({ modifiedArgs: input }),
  'modified-args-allow': (event, input) => ({ permissionDecision: 'allow', modifiedArgs: input }),
  'top-updated-input-allow': (event, input) => ({ permissionDecision: 'allow', updatedInput: input }),
  // Gemini CLI's BeforeTool: hookSpecificOutput.tool_input merges over the model's arguments.
  'tool-input': (event, input) => ({ hookSpecificOutput: { hookEventName: event, tool_input: input } }),
  'tool-input-allow': (event, input) => ({ decision: 'allow', hookSpecificOutput: { hookEventName: event, tool_input: input } }),
};
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  let call = {};
  try { call = JSON.parse(input); } catch { /* recorded as text below */ }
  const event = call.hook_event_name || call.hookEventName || eventArg || 'unknown';
  // The payload only: hooks inherit the agent's environment (API keys), which is never recorded.
  if (payloadLog) fs.appendFileSync(payloadLog, JSON.stringify({ agent, mode, event, payload: call.constructor === Object ? call : input }) + '\n');
  if (mode === 'fail') process.exit(1);
  if (/^rewrite(-wrap|-outside)?:/.test(mode)) {
    const shape = REWRITE_SHAPES[mode.slice(mode.indexOf(':') + 1)];
    let input = call.tool_input ?? call.toolArgs;
    if (typeof input === 'string') { try { input = JSON.parse(input); } catch { /* not a shell call */ } }
    if (!shape) { process.stderr.write(`probe-hook: unknown rewrite shape ${mode}\n`); process.exit(2); }
    // Only the shell tools' calls (their input has a command string); everything else runs as it is.
    if (!/^(pre|before)/i.test(event) || !input || typeof input.command !== 'string') process.exit(0);
    const command = mode.startsWith('rewrite-wrap:') ? wrapped(input.command) : mode.startsWith('rewrite-outside:') ? outsidePath() : REWRITTEN_COMMAND;
    process.stdout.write(JSON.stringify(shape(event, { ...input, command })));
    process.exit(0);
  }
  if (mode !== 'deny' || !/^(pre|before)/i.test(event)) process.exit(0);
  const reason = `probe-hook: denied ${event} (rule probe.deny_all): the harness checks that a denied tool does not run.`;
  const answer = agent === 'gemini' ? { decision: 'deny', reason }
    : agent === 'copilot-cli' ? { permissionDecision: 'deny', permissionDecisionReason: reason }
      : { hookSpecificOutput: { hookEventName: event, permissionDecision: 'deny', permissionDecisionReason: reason } };
  process.stdout.write(JSON.stringify(answer));
});
