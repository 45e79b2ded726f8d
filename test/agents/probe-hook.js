// A stand-in hook for checking the harness itself (run.js --hook probe-deny|probe-noop|probe-fail):
//   deny  answers every pre-tool call with the client's own deny format (the harness must see nothing run),
//   noop  answers nothing (the tools run: the attack checks must FAIL, which proves they can),
//   fail  exits 1 like a crashed hook (measured: Claude Code, Codex and Gemini CLI then run the tool).
// Usage: node probe-hook.js <claude|gemini|copilot-cli|codex> <deny|noop|fail> <payloads.jsonl> [event]
'use strict';
const fs = require('node:fs');

const [agent, mode, payloadLog, eventArg] = process.argv.slice(2);
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
  if (mode !== 'deny' || !/^(pre|before)/i.test(event)) process.exit(0);
  const reason = `probe-hook: denied ${event} (rule probe.deny_all): the harness checks that a denied tool does not run.`;
  const answer = agent === 'gemini' ? { decision: 'deny', reason }
    : agent === 'copilot-cli' ? { permissionDecision: 'deny', permissionDecisionReason: reason }
      : { hookSpecificOutput: { hookEventName: event, permissionDecision: 'deny', permissionDecisionReason: reason } };
  process.stdout.write(JSON.stringify(answer));
});
