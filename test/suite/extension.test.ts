// Extension-host tests: run inside a real VS Code (code-server 4.139.1 = VS Code 1.139.1) with the
// extension loaded from source (extensionDevelopmentPath). Compiled by `node esbuild.mjs --tests`.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';

const EXTENSION_ID = 'bulwark.bulwark';
const EXPLAIN = 'bulwark.explainProtection';
const LEVELS = ['unprotected', 'write_tier1_min', 'escalate_tier2', 'approval_required', 'read_only', 'full_block'];

interface Explanation {
  path: string;
  level: string;
  rule?: string;
  reason: string;
}

async function waitFor(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Diagnostics next to the reporter output (the extension host's console is not captured; see index.ts). */
const note = (...args: unknown[]): void => Mocha.reporters.Base.consoleLog(...args);

function workspaceRoot(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'code-server opened a workspace folder');
  return folder.uri.fsPath;
}

/** Writes `rel` under the workspace (creating parent folders) unless it already exists. */
function ensureFile(rel: string, content: string): string {
  const abs = path.join(workspaceRoot(), rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  if (!fs.existsSync(abs)) fs.writeFileSync(abs, content);
  return abs;
}

async function explain(rel: string, content: string): Promise<Explanation> {
  const abs = ensureFile(rel, content);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(abs));
  await vscode.window.showTextDocument(doc, { preview: false });
  await waitFor(`editor open on ${rel}`, () => vscode.window.activeTextEditor?.document.uri.fsPath === abs);
  const result = await vscode.commands.executeCommand<Explanation | undefined>(EXPLAIN);
  assert.ok(result && typeof result === 'object', `${EXPLAIN} returned an object for ${rel}, got ${JSON.stringify(result)}`);
  note(`    ${rel} -> ${JSON.stringify(result)}`);
  return result;
}

function assertExplanation(result: Explanation, rel: string, level: string): void {
  assert.ok(LEVELS.includes(result.level), `level ${JSON.stringify(result.level)} is one of ${LEVELS.join(', ')}`);
  assert.equal(result.level, level, `protection level of ${rel}`);
  assert.equal(typeof result.path, 'string');
  assert.ok(result.path.replace(/\\/g, '/').endsWith(rel), `path ${JSON.stringify(result.path)} names ${rel}`);
  assert.equal(typeof result.reason, 'string');
  assert.ok(result.reason.length > 0, `a reason is given, got ${JSON.stringify(result.reason)}`);
  if (level === 'unprotected') {
    // no rule applies: the rule id may be absent
    assert.ok(
      result.rule === undefined || typeof result.rule === 'string',
      `rule is a string or absent, got ${JSON.stringify(result.rule)}`,
    );
  } else {
    assert.ok(
      typeof result.rule === 'string' && result.rule.length > 0,
      `a protected file names its rule id, got ${JSON.stringify(result.rule)}`,
    );
  }
}

suite('Bulwark in the VS Code extension host', () => {
  suiteSetup(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('the extension bulwark.bulwark is installed and activates', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `extension ${EXTENSION_ID} is present`);
    await ext.activate();
    assert.equal(ext.isActive, true);
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes(EXPLAIN), `${EXPLAIN} is registered`);
    note(`    VS Code ${vscode.version}, extension host node ${process.version} (ABI ${process.versions.modules})`);
  });

  test('SOUL.md is read_only', async () => {
    const r = await explain('SOUL.md', '# Soul\n\nThe agent identity file.\n');
    assertExplanation(r, 'SOUL.md', 'read_only');
  });

  test('.vscode/settings.json requires approval', async () => {
    const r = await explain('.vscode/settings.json', '{\n  "editor.tabSize": 2\n}\n');
    assertExplanation(r, '.vscode/settings.json', 'approval_required');
  });

  test('a plain source file (src/app.ts) is unprotected', async () => {
    const r = await explain('src/app.ts', 'export const answer = 42;\n');
    assertExplanation(r, 'src/app.ts', 'unprotected');
  });

  test('with no editor open the command fails cleanly (undefined or a clear error)', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await waitFor('no active editor', () => vscode.window.activeTextEditor === undefined);
    let result: unknown;
    let rejected: unknown;
    try {
      result = await vscode.commands.executeCommand(EXPLAIN);
    } catch (err) {
      rejected = err;
    }
    if (rejected !== undefined) {
      // a rejection is acceptable if it explains itself
      const msg = rejected instanceof Error ? rejected.message : String(rejected);
      note(`    rejected: ${msg}`);
      assert.ok(msg.trim().length > 0, 'the error has a message');
    } else {
      note(`    returned: ${JSON.stringify(result)}`);
      assert.equal(result, undefined, 'nothing to explain: the command returns undefined');
    }
    // the extension is still healthy afterwards
    const again = await explain('SOUL.md', '# Soul\n');
    assert.equal(again.level, 'read_only');
  });
});
