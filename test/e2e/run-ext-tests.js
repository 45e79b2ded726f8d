// Runs the extension-host mocha suite inside code-server.
//
// Opens the workbench with the `payload` that @vscode/test-web uses (extensionDevelopmentPath + extensionTestsPath),
// waits for the test runner's exit code and exits with 0 (all passed) or 1.
// Env: CS_URL, CS_FOLDER, EXT_DEV_PATH, EXT_TESTS_PATH, BULWARK_MOCHA_OUT, E2E_SHOTS, BULWARK_E2E_TIMEOUT (s).
'use strict';
const { launchBrowser, closeBrowser } = require('./browser');
const fs = require('node:fs');
const path = require('node:path');

const BASE = process.env.CS_URL || 'http://127.0.0.1:8765';
const AUTHORITY = new URL(BASE).host; // code-server's remote authority is the page's host:port
const EXT = process.env.EXT_DEV_PATH || path.resolve(__dirname, '../..');
const TESTS = process.env.EXT_TESTS_PATH || path.join(EXT, 'out/test/suite/index.js');
const FOLDER = process.env.CS_FOLDER || path.join(EXT, '.e2e/workspace');
const SHOTS = process.env.E2E_SHOTS || path.join(EXT, '.e2e/shots');
const MOCHA_OUT = process.env.BULWARK_MOCHA_OUT;
const TIMEOUT_MS = Number(process.env.BULWARK_E2E_TIMEOUT || 300) * 1000 - 15000;

const t0 = Date.now();
const log = (...a) => console.log(`[ext-host ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

async function main() {
  fs.mkdirSync(SHOTS, { recursive: true });
  if (!fs.existsSync(TESTS)) throw new Error(`compiled suite not found: ${TESTS} (run node esbuild.mjs --tests)`);
  const browser = await launchBrowser(log);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let resolveExit;
  const exited = new Promise((r) => { resolveExit = r; });
  await page.exposeFunction('codeAutomationExit', (code) => resolveExit(code));
  page.on('pageerror', (e) => log('pageerror', e.message));
  page.on('console', (m) => {
    const text = m.text();
    if (m.type() === 'error' && !/ECONNREFUSED 127\.0\.0\.1:9|%c/.test(text)) log('[browser error]', text.slice(0, 500));
  });

  // A built workbench honours extensionDevelopmentPath/extensionTestsPath only with developmentOptions.enableSmokeTestDriver,
  // and code-server rejects --enable-smoke-test-driver: flip it in the <meta> config before the workbench reads it.
  // (Rewriting the HTML with page.route() makes Chromium block the WebSocket: ERR_BLOCKED_BY_LOCAL_NETWORK_ACCESS_CHECKS.)
  await page.addInitScript(() => {
    new MutationObserver((_m, obs) => {
      const el = document.getElementById('vscode-workbench-web-configuration');
      if (el && el.getAttribute('data-settings')) {
        const cfg = JSON.parse(el.getAttribute('data-settings'));
        cfg.developmentOptions = { ...(cfg.developmentOptions || {}), enableSmokeTestDriver: true };
        el.setAttribute('data-settings', JSON.stringify(cfg));
        obs.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  });
  const payload = [
    ['extensionDevelopmentPath', `vscode-remote://${AUTHORITY}${EXT}`],
    ['extensionTestsPath', `vscode-remote://${AUTHORITY}${TESTS}`],
  ];
  const url = `${BASE}/?folder=${encodeURIComponent(FOLDER)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  log('open workbench, folder', FOLDER);
  await page.goto(url);

  let timer;
  const timeout = new Promise((r) => { timer = setTimeout(() => r('timeout'), TIMEOUT_MS); });
  const code = await Promise.race([exited, timeout]);
  clearTimeout(timer);
  await page.screenshot({ path: path.join(SHOTS, 'ext-host-final.png') }).catch(() => {});
  if (MOCHA_OUT && fs.existsSync(MOCHA_OUT)) process.stdout.write(fs.readFileSync(MOCHA_OUT, 'utf8'));
  else log('no mocha output at', MOCHA_OUT);
  log(code === 'timeout' ? `TIMEOUT after ${TIMEOUT_MS / 1000}s waiting for the extension-host tests` : `extension-host test exit code ${code}`);
  return code === 0 ? 0 : 1;
}

main()
  .catch((e) => { console.error('[ext-host] FAILED', e); return 1; })
  .then(async (rc) => { await closeBrowser(); process.exit(rc); });
