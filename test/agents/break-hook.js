// Breaks the installed hook program on purpose, for the fail-closed runs: the Node the hook command
// runs is replaced by a path that does not exist, as after a Node upgrade or uninstall. Whatever the
// client then gets from its hook, the tool must not run.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { CLIENTS } = require('./clients');

const MISSING_NODE = '/nonexistent/bulwark-test/bin/node';

function breakHookProgram({ client, home, project, logs }) {
  const c = CLIENTS[client];
  let changed = 0;
  for (const scope of ['user', 'workspace']) {
    const file = c.hookFile({ home, project, scope });
    if (!fs.existsSync(file)) continue;
    const text = fs.readFileSync(file, 'utf8');
    const broken = text.split(process.execPath).join(MISSING_NODE);
    if (broken !== text) {
      fs.writeFileSync(file, broken);
      changed++;
    }
  }
  if (changed === 0) throw new Error(`breakHookProgram: no installed hook command of ${client} runs ${process.execPath}`);
  fs.writeFileSync(path.join(logs, 'broken.txt'), `hook command's node replaced by ${MISSING_NODE}\n`);
}

module.exports = { breakHookProgram, MISSING_NODE };
