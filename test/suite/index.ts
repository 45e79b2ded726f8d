// Entry point of the extension-host test suite. VS Code (code-server, or desktop VS Code via
// @vscode/test-electron) loads the compiled out/test/suite/index.js through `extensionTestsPath`
// and awaits run(); a rejected promise marks the run as failed.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import Mocha from 'mocha';

export function run(): Promise<void> {
  // In code-server the extension host's stdout is not forwarded to the browser console, so the
  // reporter output is mirrored to a file that test/e2e/run-ext-tests.js prints and test-e2e.sh counts.
  const out = process.env.BULWARK_MOCHA_OUT || path.join(os.tmpdir(), 'bulwark-ext-host-mocha.txt');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, '');
  // The tests log their diagnostics through Base.consoleLog too, so they land in the same file.
  const consoleLog = Mocha.reporters.Base.consoleLog;
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => {
    fs.appendFileSync(out, util.format(...args) + '\n');
    consoleLog(...args);
  };
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 60_000, reporter: 'spec', forbidOnly: true });
  for (const f of fs.readdirSync(__dirname).sort()) {
    if (f.endsWith('.test.js')) mocha.addFile(path.join(__dirname, f));
  }
  return new Promise((resolve, reject) => {
    try {
      mocha.run((failures) => (failures ? reject(new Error(`${failures} extension-host test(s) failed`)) : resolve()));
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
