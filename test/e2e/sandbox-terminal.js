// UI check of "Bulwark: Open Sandboxed Terminal" (called from drive.js): the command opens a terminal
// named "Bulwark sandbox" whose shell runs in the OS sandbox; `echo` typed into it shows its answer on
// the terminal's screen. The answer (hi-42) differs from the typed line (hi-$((6*7))), so the check
// sees the shell's output, not the echo of the keystrokes.
'use strict';

/** The visible text of the active terminal (xterm's DOM rows; without a GPU xterm renders to the DOM). */
async function terminalScreen(page) {
  const rows = page.locator('.terminal-wrapper.active .xterm-rows, .xterm .xterm-rows').first();
  return ((await rows.innerText({ timeout: 500 }).catch(() => '')) || '').replace(/\u00a0/g, ' ');
}

/** setUserSetting: drive.js's writer of the user settings file (xterm must render to the DOM to be read). */
async function sandboxTerminalChecks({ page, check, shot, runCommand, sleep, setUserSetting }) {
  await check('Open Sandboxed Terminal: a "Bulwark sandbox" terminal opens and `echo` typed in it shows its answer', async () => {
    // xterm renders to the DOM (readable here) only without GPU acceleration; code-server applies the
    // changed settings file reliably on a window reload.
    setUserSetting('terminal.integrated.gpuAcceleration', 'off');
    await runCommand('Developer: Reload Window');
    await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
    await page.locator('.statusbar-item', { hasText: 'Bulwark:' }).first().waitFor({ state: 'visible', timeout: 60000 });
    await sleep(1000);
    await runCommand('Bulwark: Open Sandboxed Terminal', 'Bulwark: Open Sandboxed');
    await page.locator('.terminal-tabs-entry, .single-terminal-tab, .terminal-tab', { hasText: 'Bulwark sandbox' }).first()
      .or(page.locator('.panel .title-label, .panel .action-label', { hasText: 'Bulwark sandbox' }).first())
      .waitFor({ state: 'visible', timeout: 30000 });
    const banner = async () => ((await terminalScreen(page)).includes('Bulwark sandbox') ? true : undefined);
    for (let i = 0; i < 100 && !(await banner()); i++) await sleep(200);
    if (!(await banner())) throw new Error(`the terminal shows no Bulwark banner: ${JSON.stringify((await terminalScreen(page)).slice(0, 300))}`);
    await page.locator('.terminal-wrapper.active .xterm, .xterm').first().click();
    await sleep(500); // the shell's prompt
    await page.keyboard.type('echo hi-$((6*7))');
    await page.keyboard.press('Enter');
    let screen = '';
    for (let i = 0; i < 75; i++) {
      screen = await terminalScreen(page);
      if (/^hi-42\s*$/m.test(screen)) break;
      await sleep(200);
    }
    await shot('sandboxed-terminal');
    if (!/^hi-42\s*$/m.test(screen)) throw new Error(`no line "hi-42" on the terminal screen: ${JSON.stringify(screen.slice(-600))}`);
    await runCommand('Terminal: Kill the Active Terminal Instance', 'Terminal: Kill the Active Terminal').catch(() => {});
    return JSON.stringify(screen.split('\n').filter((l) => l.trim()).slice(0, 3).join(' | ').slice(0, 200));
  });
}

module.exports = { sandboxTerminalChecks };
