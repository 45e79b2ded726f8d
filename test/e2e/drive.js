// UI checks against the Bulwark .vsix installed in code-server, driven like a user would with Playwright + Debian chromium.
// No smoke-test-driver flag here, so notification toasts behave as they do for users.
// Prints `ok - <check>` / `FAIL - <check>: <why>` per check and a closing line `ui: N passed, M failed`.
// Env: CS_URL, CS_FOLDER (workspace folder), E2E_SHOTS (screenshots), E2E_RESULTS (JSON results).
'use strict';
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const BASE = process.env.CS_URL || 'http://127.0.0.1:8765';
const FOLDER = process.env.CS_FOLDER || path.join(ROOT, '.e2e/workspace');
const SHOTS = process.env.E2E_SHOTS || path.join(ROOT, '.e2e/shots');
const RESULTS = process.env.E2E_RESULTS || path.join(ROOT, '.e2e/results');
const EXPLAIN_TITLE = 'Bulwark: Explain Protection of Current File';
const CHECK_TITLE = 'Bulwark: Check Action…';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const t0 = Date.now();
const log = (...a) => console.log(`[ui ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const results = [];
let page;
let shotNo = 0;
async function shot(name) {
  if (!page) return;
  const file = path.join(SHOTS, `${String(++shotNo).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file }).catch(() => {});
}
/** Runs one check; a failure is recorded (with a screenshot) and the next check still runs. */
async function check(name, fn) {
  try {
    const detail = await fn();
    results.push({ name, ok: true, detail });
    console.log(`ok - ${name}${detail ? ` (${detail})` : ''}`);
    return true;
  } catch (e) {
    const why = (e && e.message ? e.message : String(e)).split('\n')[0];
    results.push({ name, ok: false, error: why });
    console.log(`FAIL - ${name}: ${why}`);
    await shot(`FAILED-${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`);
    await page?.keyboard.press('Escape').catch(() => {});
    return false;
  }
}

function seedWorkspace() {
  const files = {
    'SOUL.md': '# Soul\n\nWho the agent is. Agents must not rewrite this file.\n',
    'src/app.ts': 'export const answer = 42;\n',
  };
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(FOLDER, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    if (!fs.existsSync(abs)) fs.writeFileSync(abs, content);
  }
}

async function quickOpen(fileName) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(fileName);
  const first = page.locator('.quick-input-widget .monaco-list-row').first();
  await first.filter({ hasText: fileName }).waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: fileName }).waitFor({ timeout: 15000 });
}

async function runCommand(title, filterText = title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill('>' + filterText);
  await page.locator('.quick-input-widget .monaco-list-row').first().filter({ hasText: title }).waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden', timeout: 10000 });
}

/** Waits for a toast containing all `needles` and returns its text. */
async function waitToast(needles, timeout = 30000) {
  let toast = page.locator('.notifications-toasts .notification-list-item');
  for (const n of needles) toast = toast.filter({ hasText: n });
  await toast.first().waitFor({ state: 'visible', timeout });
  return (await toast.first().innerText()).replace(/\s+/g, ' ').trim();
}

async function clearNotifications() {
  await runCommand('Notifications: Clear All Notifications').catch(() => {});
}

/** Opens `fileName` with Quick Open, runs the Explain command from the palette and returns the toast text. */
async function explainThroughUi(fileName) {
  await clearNotifications();
  await quickOpen(fileName);
  await runCommand(EXPLAIN_TITLE, 'Bulwark: Explain Protection');
  return waitToast(['Bulwark:', fileName]);
}

/** Runs "Bulwark: Check Action…" from the palette and submits `json` in its input box. */
async function checkActionThroughPalette(json) {
  await clearNotifications();
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill('>' + CHECK_TITLE.replace('…', ''));
  await page.locator('.quick-input-widget .monaco-list-row').first().filter({ hasText: CHECK_TITLE }).waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
  // The same quick-input widget comes back as the command's input box.
  await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Bulwark: Check Action' }).waitFor({ state: 'visible', timeout: 15000 });
  await input.fill(json);
  await page.keyboard.press('Enter');
}

/** Waits for the approval modal and returns its text. */
async function approvalDialog() {
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.waitFor({ state: 'visible', timeout: 30000 });
  await dialog.getByRole('button', { name: 'Approve', exact: true }).waitFor({ timeout: 10000 });
  return { dialog, text: (await dialog.innerText()).replace(/\s+/g, ' ').trim() };
}

let browser;
async function closeBrowser() {
  const b = browser; browser = undefined;
  if (b) await b.close().catch(() => {});
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { log('got', sig); closeBrowser().finally(() => process.exit(1)); });
}

async function main() {
  fs.mkdirSync(SHOTS, { recursive: true });
  fs.mkdirSync(RESULTS, { recursive: true });
  seedWorkspace();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  log('chromium', browser.version());
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => log('pageerror', e.message));

  const workbench = await check('workbench opens the workspace', async () => {
    await page.goto(`${BASE}/?folder=${encodeURIComponent(FOLDER)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'SOUL.md' }).first().waitFor({ timeout: 30000 });
    await sleep(1000);
    await shot('workbench');
  });
  if (!workbench) return;

  await check('command palette lists "Bulwark: Explain Protection of Current File"', async () => {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill('>Bulwark');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: EXPLAIN_TITLE }).first().waitFor({ timeout: 15000 });
    await shot('palette');
    await page.keyboard.press('Escape');
  });

  let soulToast = '';
  await check('Explain Protection on SOUL.md shows a Bulwark toast', async () => {
    soulToast = await explainThroughUi('SOUL.md');
    await sleep(600); // let the toast finish sliding in
    await shot('explain-soul');
    return JSON.stringify(soulToast);
  });
  await check('the SOUL.md toast names SOUL.md and says read_only', async () => {
    if (!soulToast.includes('SOUL.md')) throw new Error(`toast does not name SOUL.md: ${JSON.stringify(soulToast)}`);
    if (!/\bread_only\b/.test(soulToast)) throw new Error(`toast does not say read_only: ${JSON.stringify(soulToast)}`);
  });

  await check('Explain Protection on src/app.ts says unprotected', async () => {
    const text = await explainThroughUi('app.ts');
    await sleep(600);
    await shot('explain-app');
    if (!/\bunprotected\b/.test(text)) throw new Error(`toast does not say unprotected: ${JSON.stringify(text)}`);
    return JSON.stringify(text);
  });

  await check('the status bar shows the policy and "heuristics only"', async () => {
    const item = page.locator('.statusbar-item', { hasText: 'Bulwark:' }).first();
    await item.waitFor({ state: 'visible', timeout: 30000 });
    const text = (await item.innerText()).replace(/\s+/g, ' ').trim();
    await shot('status-bar');
    if (!text.includes('heuristics only')) throw new Error(`status bar item does not say heuristics only: ${JSON.stringify(text)}`);
    if (!text.includes('Bulwark: default')) throw new Error(`status bar item does not name the default policy: ${JSON.stringify(text)}`);
    return JSON.stringify(text);
  });

  // A write to .vscode/settings.json needs your approval (Tier 3); with no Tier 2 evaluator and
  // bulwark.tier2.onUnavailable = escalate (set by test-e2e.sh) the modal asks.
  const settingsFile = path.join(FOLDER, '.vscode', 'settings.json');
  const action = JSON.stringify({ type: 'write_file', payload: { path: settingsFile, content: '{}' } });

  let denyDialog;
  await check('Check Action… on a .vscode/settings.json write opens the approval modal with every tier\'s reason', async () => {
    await checkActionThroughPalette(action);
    const { dialog, text } = await approvalDialog();
    denyDialog = dialog;
    await shot('approval-modal');
    for (const needle of ['Bulwark: approve write_file?', '.vscode/settings.json', 'Tier 0', 'Tier 2', 'Approve', 'Deny']) {
      if (!text.includes(needle)) throw new Error(`the modal does not show ${JSON.stringify(needle)}: ${JSON.stringify(text.slice(0, 800))}`);
    }
    return JSON.stringify(text.slice(0, 300));
  });
  await check('Deny in the modal: the notification says blocked at Tier 3', async () => {
    if (!denyDialog) throw new Error('no modal to answer');
    await denyDialog.getByRole('button', { name: 'Deny', exact: true }).click();
    const text = await waitToast(['Blocked at Tier 3']);
    await sleep(600);
    await shot('denied-at-tier3');
    if (!/BLOCK at Tier 3/.test(text)) throw new Error(`toast: ${JSON.stringify(text)}`);
    return JSON.stringify(text);
  });
  await check('Approve in the modal: the notification says allowed at Tier 3', async () => {
    await checkActionThroughPalette(action);
    const { dialog } = await approvalDialog();
    await dialog.getByRole('button', { name: 'Approve', exact: true }).click();
    const text = await waitToast(['Allowed at Tier 3']);
    await sleep(600);
    await shot('approved-at-tier3');
    if (!/ALLOW at Tier 3/.test(text)) throw new Error(`toast: ${JSON.stringify(text)}`);
    if (fs.existsSync(settingsFile) && fs.readFileSync(settingsFile, 'utf8') === '{}') throw new Error('the check executed the write');
    return JSON.stringify(text);
  });
}

main()
  .catch((e) => {
    results.push({ name: 'drive.js ran to the end', ok: false, error: e && e.message });
    console.log(`FAIL - drive.js ran to the end: ${e && e.stack}`);
  })
  .then(async () => {
    await closeBrowser();
    const passed = results.filter((r) => r.ok).length;
    const failed = results.length - passed;
    try { fs.writeFileSync(path.join(RESULTS, 'ui-checks.json'), JSON.stringify(results, null, 2)); } catch { /* results dir gone */ }
    console.log(`ui: ${passed} passed, ${failed} failed`);
    process.exit(failed || !results.length ? 1 : 0);
  });
