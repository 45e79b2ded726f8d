// Breaks the installed hook on purpose, for the fail-closed runs. Each way is one that happens to users:
// Node moved or uninstalled, the program crashing, the program hanging past the client's hook timeout,
// the wrapper deleted. Whatever the client then gets from its hook, the tool must not run. The wrapper
// (<stateDir>/bin/bulwark-hook, written by `bulwark hooks install`) is edited in place.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { editWrapper, wrapperPath } = require('./harness');

const MISSING_NODE = '/nonexistent/bulwark-test/bin/node';
const q = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

const BREAKS = {
  /** The wrapper's Node does not exist (the wrapper answers "Node was not found"). */
  'node-missing': ({ stateDir }) => editWrapper(stateDir, /^NODE=.*$/m, `NODE=${q(MISSING_NODE)}`),
  /** The hook program throws (exit status 1, which Claude Code, Codex and Gemini CLI treat as "go on"). */
  'program-crash': ({ stateDir }) => editWrapper(stateDir, /^CLI=.*$/m, `CLI=${q(path.join(__dirname, 'broken-cli/crash.js'))}`),
  /** The hook program never answers (the wrapper's watchdog must deny before the client's timeout). */
  'program-hang': ({ stateDir }) => editWrapper(stateDir, /^CLI=.*$/m, `CLI=${q(path.join(__dirname, 'broken-cli/hang.js'))}`),
  /** The wrapper itself is gone (the installed command's `|| exit 2` must still block). */
  'wrapper-missing': ({ stateDir }) => fs.rmSync(wrapperPath(stateDir)),
};

/** A breakHook for runClient: applies `how` and notes it in the run's logs. */
function breakHook(how) {
  const apply = BREAKS[how];
  if (!apply) throw new Error(`unknown way to break the hook: ${how} (${Object.keys(BREAKS).join(', ')})`);
  const fn = (ctx) => {
    apply(ctx);
    fs.writeFileSync(path.join(ctx.logs, 'broken.txt'), `hook broken on purpose: ${how}\n`);
  };
  fn.how = how;
  return fn;
}

module.exports = { breakHook, BREAKS, MISSING_NODE };
