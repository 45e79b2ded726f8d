// `npm run test:electron`: the extension-host suite (out/test/suite) in desktop VS Code via @vscode/test-electron.
//
// test-electron downloads VS Code from update.code.visualstudio.com. Where that host is unreachable (machines
// that can reach only the npm registry and apt, such as our CI), this prints why and exits non-zero:
// the same suite runs in code-server (VS Code 1.139.1) as part of `npm test` / `npm run test:e2e`.
// Env: VSCODE_VERSION (default "stable"). Not part of CI.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const CACHE = path.join(ROOT, '.e2e', 'vscode-test');

function build() {
  for (const args of [['esbuild.mjs'], ['esbuild.mjs', '--tests']]) {
    const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} failed`);
  }
}

const DOWNLOAD_ERROR = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|fetch failed|socket hang up|timed? ?out|getaddrinfo|update\.code\.visualstudio\.com|Failed to (get|download|fetch)|Error downloading|certificate/i;

async function main() {
  build();
  const { runTests } = require('@vscode/test-electron');
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-electron-ws-'));
  const mochaOut = path.join(ROOT, '.e2e', 'results', 'electron-mocha.txt');
  try {
    const code = await runTests({
      version: process.env.VSCODE_VERSION || 'stable',
      cachePath: CACHE,
      timeout: 30000,
      extensionDevelopmentPath: ROOT,
      extensionTestsPath: path.join(ROOT, 'out', 'test', 'suite', 'index.js'),
      extensionTestsEnv: { BULWARK_MOCHA_OUT: mochaOut },
      launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust', '--skip-welcome', '--skip-release-notes'],
    });
    return code;
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code === 0 ? 0 : 1),
  (err) => {
    const msg = err && (err.stack || err.message) ? String(err.stack || err.message) : String(err);
    const cause = err && err.cause ? String(err.cause.message || err.cause) : '';
    if (DOWNLOAD_ERROR.test(msg + ' ' + cause)) {
      const why = `${(err.message || msg).split('\n')[0]}${cause ? `; ${cause}` : ''}`;
      console.error(`test:electron: cannot download VS Code on this machine (${why}): only the npm registry and apt are reachable here. `
        + 'The same extension-host suite runs in code-server (VS Code 1.139.1) as part of `npm test` (or `npm run test:e2e`).');
    } else {
      console.error('test:electron: FAILED', msg);
    }
    process.exit(1);
  },
);
