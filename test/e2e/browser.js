// Debian's chromium for the e2e drivers: the flags this machine needs (its closed network refuses
// background connections), one browser per process, closed on exit and on signals.
'use strict';
const { chromium } = require('playwright-core');

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let browser;

async function closeBrowser() {
  const b = browser; browser = undefined;
  if (b) await b.close().catch(() => {});
}

/** Launches chromium and makes SIGINT/SIGTERM/SIGHUP close it before the process exits. */
async function launchBrowser(log) {
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => { log('got', sig); closeBrowser().finally(() => process.exit(1)); });
  }
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  return browser;
}

module.exports = { launchBrowser, closeBrowser };
