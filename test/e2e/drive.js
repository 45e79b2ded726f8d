// UI checks against the Bulwark .vsix installed in code-server, driven like a user would with Playwright + Debian chromium.
// No smoke-test-driver flag here, so notification toasts behave as they do for users.
// Prints `ok - <check>` / `FAIL - <check>: <why>` per check and a closing line `ui: N passed, M failed`. A check
// in which a step was tried again says so on its line (`ok - <check> (…) -- passed after N attempts at <step>`),
// and the line `ui retries: K passed only after a retry` before the closing line counts them.
// Env: CS_URL, CS_FOLDER (workspace folder), E2E_SHOTS (screenshots), E2E_RESULTS (JSON results).
'use strict';
const { launchBrowser, closeBrowser } = require('./browser');
const { hookBridgeChecks } = require('./hook-bridge');
const { sandboxTerminalChecks } = require('./sandbox-terminal');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const BASE = process.env.CS_URL || 'http://127.0.0.1:8765';
const FOLDER = process.env.CS_FOLDER || path.join(ROOT, '.e2e/workspace');
const SHOTS = process.env.E2E_SHOTS || path.join(ROOT, '.e2e/shots');
const RESULTS = process.env.E2E_RESULTS || path.join(ROOT, '.e2e/results');
const EXPLAIN_TITLE = 'Bulwark: Explain Protection of Current File';
const CHECK_TITLE = 'Bulwark: Check Action…';

const t0 = Date.now();
const log = (...a) => console.log(`[ui ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const results = [];
/** Steps of the running check that needed more than one attempt: { step, attempts }. */
let retriedSteps = [];
/** Records that `step` succeeded only at attempt `attempts` (> 1), for the running check's report line. */
function passedAfterRetry(step, attempts) {
  retriedSteps.push({ step, attempts });
  log(`${step}: succeeded at attempt ${attempts}`);
}
const retryNote = (steps) => steps.map((s) => `${s.attempts} attempts at ${s.step}`).join(', ');
let page;
let shotNo = 0;
async function shot(name) {
  if (!page) return;
  const file = path.join(SHOTS, `${String(++shotNo).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file }).catch(() => {});
}
/** Runs one check; a failure is recorded (with a screenshot) and the next check still runs. */
async function check(name, fn) {
  retriedSteps = [];
  try {
    const detail = await fn();
    const retried = retriedSteps;
    results.push({ name, ok: true, detail, ...(retried.length ? { passedAfterRetry: retried } : {}) });
    console.log(`ok - ${name}${detail ? ` (${detail})` : ''}${retried.length ? ` -- passed after ${retryNote(retried)}` : ''}`);
    return true;
  } catch (e) {
    const why = (e && e.message ? e.message : String(e)).split('\n')[0];
    const retried = retriedSteps;
    results.push({ name, ok: false, error: why, ...(retried.length ? { passedAfterRetry: retried } : {}) });
    console.log(`FAIL - ${name}: ${why}${retried.length ? ` (steps that needed a retry before: ${retryNote(retried)})` : ''}`);
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
  const input = page.locator('.quick-input-widget .quick-input-box input');
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('F1');
      await input.waitFor({ state: 'visible', timeout: 10000 });
      await input.fill('>' + filterText, { timeout: 10000 });
      await page.locator('.quick-input-widget .monaco-list-row').first().filter({ hasText: title }).waitFor({ timeout: 15000 });
      if (attempt > 1) passedAfterRetry(`opening ${JSON.stringify('>' + filterText)} in the command palette`, attempt);
      break;
    } catch (e) {
      // Right after a window reload (fresh clones, cold caches) the palette has once not taken input:
      // close it, put the focus back on the workbench and open it again; the log says so.
      if (attempt >= 3) throw e;
      log(`the command palette did not take ${JSON.stringify(filterText)} (attempt ${attempt}: ${String(e.message).split('\n')[0]}); trying again`);
      await page.keyboard.press('Escape').catch(() => {});
      await page.locator('.part.sidebar .title-label').first().click({ timeout: 5000 }).catch(() => {});
    }
  }
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
  try {
    return await waitToast(['Bulwark:', fileName], 15000);
  } catch {
    // Seen once in a fresh clone: no toast at all after the palette closed (the first .ts file opened
    // while the TypeScript extension started). Say what the window showed, then run the command once more.
    const toasts = (await page.locator('.notifications-toasts').innerText().catch(() => '')).replace(/\s+/g, ' ').trim();
    await runCommand('Notifications: Show Notifications').catch(() => {});
    const center = (await page.locator('.notifications-center').innerText({ timeout: 5000 }).catch(() => '')).replace(/\s+/g, ' ').trim();
    await page.keyboard.press('Escape').catch(() => {});
    log(`notification center: ${JSON.stringify(center.slice(0, 600))}`);
    const tab = (await page.locator('.tabs-container .tab.active').innerText().catch(() => '')).trim();
    log(`no Explain toast for ${fileName} after 15 s (active tab ${JSON.stringify(tab)}, toasts ${JSON.stringify(toasts)}); running the command again`);
    await runCommand(EXPLAIN_TITLE, 'Bulwark: Explain Protection');
    const text = await waitToast(['Bulwark:', fileName]);
    passedAfterRetry(`the Explain toast for ${fileName}`, 2);
    return text;
  }
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


// ---- audit log webview ------------------------------------------------------------------------------
const AUDIT_TITLE = 'Bulwark: Show Audit Log';
/** The audit panel's page inside the webview's two iframes. */
const auditFrame = () => page.frameLocator('iframe.webview').frameLocator('iframe#active-frame');
const auditText = async (sel) => ((await auditFrame().locator(sel).innerText({ timeout: 10000 })) || '').replace(/\s+/g, ' ').trim();
/** Number of entries the status line reports: "N entries" or "N of M entries" → [N, M]. */
async function auditCounts() {
  const t = await auditText('#counts');
  const m = /^(\d+)(?: of (\d+))? entries$/.exec(t);
  if (!m) throw new Error(`unexpected counts text ${JSON.stringify(t)}`);
  return [Number(m[1]), Number(m[2] ?? m[1])];
}
/** Closes the audit panel's editor tab (if open) with its close button. */
async function closeAuditTab() {
  const tab = page.locator('.tabs-container .tab', { hasText: 'Bulwark Audit Log' });
  if (!(await tab.count())) return;
  await tab.first().click();
  await page.keyboard.press('Control+W');
  await tab.first().waitFor({ state: 'detached', timeout: 10000 });
}
/** JSON with sorted keys: RFC 8785 for the plain strings, integers and objects the generator writes. */
function jcs(v) {
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}
/** Writes an n-entry audit log with a valid hash chain (no anchor database: the extension seals it on open). */
function generateAuditLog(file, n) {
  const crypto = require('node:crypto');
  fs.rmSync(path.dirname(file), { recursive: true, force: true }); // no anchor database from an earlier run
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w', 0o600);
  let prev = '0'.repeat(64);
  let chunk = [];
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');
  const events = ['ACTION_PROPOSED', 'ACTION_EVALUATED', 'ACTION_APPROVED'];
  for (let seq = 1; seq <= n; seq++) {
    const k = (seq - 1) % 3;
    const action = Math.floor((seq - 1) / 3);
    const blocked = action % 7 === 0;
    const details = k === 0
      ? { action_id: `a${action}`, args: { path: `/work/project/src/file-${action}.ts`, content: '…' } }
      : k === 1
        ? { action_id: `a${action}`, decision: { decision: blocked ? 'block' : 'allow', tier: blocked ? 0 : 1, min_tier: 0, level: 'unprotected', rules: blocked ? ['deny.generated'] : [], reason: blocked ? 'Blocked: generated rule.' : 'Allowed: no rule matched.' } }
        : { action_id: `a${action}`, tier: blocked ? 0 : 1, rules: [] };
    const body = { seq, id: crypto.randomUUID(), ts: new Date(t0 + seq * 1000).toISOString(), session: `gen-session-${action % 5}`, event: k === 2 && blocked ? 'ACTION_BLOCKED' : events[k], action_type: 'write_file', details, prev_hash: prev };
    const canon = jcs(body);
    const hash = crypto.createHash('sha256').update(canon).digest('hex');
    chunk.push(`${canon.slice(0, -1)},"hash":"${hash}"}\n`);
    prev = hash;
    if (chunk.length === 5000) { fs.writeSync(fd, chunk.join('')); chunk = []; }
  }
  if (chunk.length) fs.writeSync(fd, chunk.join(''));
  fs.closeSync(fd);
}
/** Sets a user setting in code-server's settings.json (test-e2e.sh: $E2E/home/ud/User/settings.json). */
function setUserSetting(key, value) {
  const file = path.join(path.dirname(FOLDER), 'home', 'ud', 'User', 'settings.json');
  const s = JSON.parse(fs.readFileSync(file, 'utf8'));
  s[key] = value;
  fs.writeFileSync(file, JSON.stringify(s, null, 2) + '\n');
}

async function main() {
  fs.mkdirSync(SHOTS, { recursive: true });
  fs.mkdirSync(RESULTS, { recursive: true });
  seedWorkspace();
  // A fresh audit log for the UI checks, so the entry counts they assert do not depend on what the
  // extension-host suite recorded before.
  const uiLog = path.join(path.dirname(FOLDER), 'audit-ui', 'audit.jsonl');
  fs.rmSync(path.dirname(uiLog), { recursive: true, force: true });
  setUserSetting('bulwark.audit.logFile', uiLog);
  const browser = await launchBrowser(log);
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
  // ---- an agent's hook (bulwark hook --agent vscode) decided by this window over the local socket ----------
  await hookBridgeChecks({ page, check, shot, log, sleep, approvalDialog, folder: FOLDER, home: path.join(path.dirname(FOLDER), 'home'), auditLog: uiLog });
  // ---- the audit log webview (the two Check Action runs above were recorded) ----------------------------
  let logFile = '';
  const auditOpen = await check('Show Audit Log opens the webview with the recorded entries', async () => {
    await clearNotifications();
    await runCommand(AUDIT_TITLE, 'Bulwark: Show Audit');
    await auditFrame().locator('#list .rows .row[data-seq]').first().waitFor({ timeout: 30000 });
    const rows = await auditFrame().locator('#list .rows .row[data-seq]').count();
    const [n] = await auditCounts();
    logFile = await auditText('#log-file');
    await shot('audit-panel');
    if (rows < 2 || n < 2) throw new Error(`expected the Check Action entries, got ${rows} rows, counts ${n}`);
    if (!fs.existsSync(logFile)) throw new Error(`the panel names a log file that does not exist: ${JSON.stringify(logFile)}`);
    return `${n} entries, ${rows} rows rendered, log ${logFile}`;
  });
  if (auditOpen) {
    await check('the audit detail pane shows the decision and redacted arguments of a selected entry', async () => {
      await auditFrame().locator('#list .rows .row', { hasText: 'ACTION_BLOCKED' }).first().click();
      const detail = auditFrame().locator('#detail');
      await detail.locator('h3', { hasText: 'Decision' }).waitFor({ timeout: 10000 });
      const text = (await detail.innerText()).replace(/\s+/g, ' ');
      await shot('audit-detail');
      for (const needle of ['decision', 'block', 'tier', 'reason', 'arguments', 'settings.json']) if (!text.toLowerCase().includes(needle)) throw new Error(`detail pane lacks ${JSON.stringify(needle)}: ${text.slice(0, 400)}`);
      return JSON.stringify(text.slice(0, 200));
    });
    await check('typing a filter shrinks the audit list', async () => {
      const [before] = await auditCounts();
      await auditFrame().locator('#filter-text').fill('ACTION_BLOCKED');
      await auditFrame().locator('#counts', { hasText: ' of ' }).waitFor({ timeout: 10000 });
      const [after, total] = await auditCounts();
      const shown = await auditFrame().locator('#list .rows .row[data-seq]').allInnerTexts();
      await shot('audit-filtered');
      if (!(after < before && after >= 1)) throw new Error(`filtered ${after} of ${total}, before ${before}`);
      if (!shown.every((t) => t.includes('ACTION_BLOCKED'))) throw new Error(`a row without ACTION_BLOCKED is shown: ${JSON.stringify(shown)}`);
      await auditFrame().locator('#clear-filter').click();
      await auditFrame().locator('#counts', { hasText: ' of ' }).waitFor({ state: 'detached', timeout: 10000 }).catch(() => undefined);
      return `${before} → ${after} entries`;
    });
    await check('the Summary column keeps room in a 1400 px window (narrow lists drop columns, not the summary)', async () => {
      const width = async (sel) => (await auditFrame().locator(sel).first().boundingBox())?.width ?? 0;
      const summary = await width('.list-wrap > .row.header .summary');
      const list = await width('#list');
      if (summary < 150) throw new Error(`Summary column is ${summary.toFixed(0)} px wide in a ${list.toFixed(0)} px list`);
      return `Summary ${summary.toFixed(0)} px of a ${list.toFixed(0)} px list`;
    });
    await check('an audit panel open across a window reload comes back with its filter', async () => {
      await auditFrame().locator('#filter-text').fill('ACTION_BLOCKED');
      await auditFrame().locator('#counts', { hasText: ' of ' }).waitFor({ timeout: 10000 });
      const [filteredBefore] = await auditCounts();
      await sleep(300); // the page stores its state with the filter it sends
      await runCommand('Developer: Reload Window');
      await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
      await auditFrame().locator('#counts', { hasText: ' of ' }).waitFor({ timeout: 60000 });
      const [filteredAfter] = await auditCounts();
      const value = await auditFrame().locator('#filter-text').inputValue();
      await shot('audit-restored');
      if (value !== 'ACTION_BLOCKED' || filteredAfter !== filteredBefore) throw new Error(`restored filter ${JSON.stringify(value)}, ${filteredAfter} entries (before ${filteredBefore})`);
      await auditFrame().locator('#clear-filter').click();
      await auditFrame().locator('#counts', { hasText: ' of ' }).waitFor({ state: 'detached', timeout: 10000 }).catch(() => undefined);
      return `filter and ${filteredAfter} filtered entries restored`;
    });
    await check('Verify in the audit panel says the chain is intact', async () => {
      await auditFrame().locator('#verify').click();
      await auditFrame().locator('#chain-status.intact').waitFor({ timeout: 30000 });
      const t = await auditText('#chain-status');
      await shot('audit-verify-intact');
      if (!/intact: \d+ entries/.test(t)) throw new Error(`chain status: ${JSON.stringify(t)}`);
      return JSON.stringify(t);
    });
    await check('after one entry of the log is edited on disk, Verify marks it as the first broken entry', async () => {
      const lines = fs.readFileSync(logFile, 'utf8').split('\n');
      const target = 2;
      const before = lines[target - 1];
      lines[target - 1] = before.replace(/"session":"[^"]*"/, '"session":"rewritten-by-an-attacker"');
      if (lines[target - 1] === before) throw new Error('could not tamper with line 2');
      fs.writeFileSync(logFile, lines.join('\n'));
      await auditFrame().locator('#verify').click();
      await auditFrame().locator('#chain-status.broken').waitFor({ timeout: 30000 });
      const t = await auditText('#chain-status');
      const marked = auditFrame().locator('#list .rows .row.broken');
      await marked.first().waitFor({ timeout: 10000 });
      const seq = await marked.first().getAttribute('data-seq');
      await auditFrame().locator('#detail .badge.broken').waitFor({ timeout: 10000 });
      await shot('audit-verify-broken');
      if (seq !== String(target)) throw new Error(`marked row is seq ${seq}, expected ${target}`);
      if (!/broken at entry 2\b/.test(t) || !/hash/.test(t)) throw new Error(`chain status: ${JSON.stringify(t)}`);
      return JSON.stringify(t);
    });

    // ---- 100k entries: time to first rows (measured and printed, not asserted) ----
    const bigLog = path.join(path.dirname(FOLDER), 'audit-100k', 'audit.jsonl');
    await check('a generated 100k-entry log opens in the audit panel (time to first rows printed)', async () => {
      const tg = Date.now();
      generateAuditLog(bigLog, 100000);
      log(`generated ${bigLog}: 100000 entries, ${(fs.statSync(bigLog).size / 1e6).toFixed(1)} MB in ${Date.now() - tg} ms`);
      setUserSetting('bulwark.audit.logFile', bigLog);
      // code-server reads the changed settings file reliably on a window reload.
      await runCommand('Developer: Reload Window');
      await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
      await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'SOUL.md' }).first().waitFor({ timeout: 30000 });
      await page.locator('.statusbar-item', { hasText: 'Bulwark:' }).first().waitFor({ state: 'visible', timeout: 30000 });
      // The panel may be restored by the reload: close it so the measurement is of a fresh panel.
      await sleep(1500);
      await closeAuditTab();
      const t1 = Date.now();
      await runCommand(AUDIT_TITLE, 'Bulwark: Show Audit');
      await auditFrame().locator('#list .rows .row[data-seq]').first().waitFor({ timeout: 60000 });
      const fresh = Date.now() - t1;
      await auditFrame().locator('#counts', { hasText: /^100\d{3} entries$/ }).waitFor({ timeout: 60000 });
      const freshAll = Date.now() - t1;
      // Again, with the log already open in the extension host (the second open of the panel).
      await closeAuditTab();
      const t2 = Date.now();
      await runCommand(AUDIT_TITLE, 'Bulwark: Show Audit');
      await auditFrame().locator('#list .rows .row[data-seq]').first().waitFor({ timeout: 60000 });
      const again = Date.now() - t2;
      await auditFrame().locator('#counts', { hasText: /^100\d{3} entries$/ }).waitFor({ timeout: 60000 });
      const againAll = Date.now() - t2;
      await shot('audit-100k');
      // scroll to the end: the virtualised list fetches the last page
      await auditFrame().locator('#list').evaluate((el) => { el.scrollTop = el.scrollHeight; });
      await auditFrame().locator('#list .rows .row[data-seq="100000"]').waitFor({ timeout: 10000 });
      const rendered = await auditFrame().locator('#list .rows .row').count();
      await shot('audit-100k-scrolled-to-end');
      const figure = `100k entries (42.5 MB), measured from typing the command into the palette: first rows after ${fresh} ms, all entries loaded after ${freshAll} ms (first open after a window reload); second open: ${again} ms / ${againAll} ms; ${rendered} row elements in the DOM`;
      log(figure);
      try { fs.writeFileSync(path.join(RESULTS, 'audit-100k.txt'), figure + '\n'); } catch { /* */ }
      if (rendered > 200) throw new Error(`the list is not virtualised: ${rendered} row elements`);
      return figure;
    });
  }
  // ---- the sandboxed terminal (last: it reloads the window to switch the terminal renderer) ----------------
  await sandboxTerminalChecks({ page, check, shot, runCommand, sleep, setUserSetting });
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
    const onRetry = results.filter((r) => r.ok && r.passedAfterRetry).length;
    try { fs.writeFileSync(path.join(RESULTS, 'ui-checks.json'), JSON.stringify(results, null, 2)); } catch { /* results dir gone */ }
    console.log(`ui retries: ${onRetry} passed only after a retry`);
    console.log(`ui: ${passed} passed, ${failed} failed`);
    process.exit(failed || !results.length ? 1 : 0);
  });
