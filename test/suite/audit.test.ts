// Extension-host tests of the audit log surfaces: Check Action records its decisions, and
// "Bulwark: Verify Audit Chain" reports an intact log and the first broken entry of a tampered copy.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';

const CHECK = 'bulwark.checkAction';
const VERIFY = 'bulwark.verifyAuditChain';
const SHOW = 'bulwark.showAuditLog';

interface Report {
  ok: boolean;
  checked: number;
  firstBroken?: { seq: number; line: number; kind: string; message: string };
}

const note = (...args: unknown[]): void => Mocha.reporters.Base.consoleLog(...args);

function lines(file: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

suite('Bulwark audit log', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-audit-suite-'));
  const logFile = path.join(dir, 'audit.jsonl');
  const config = () => vscode.workspace.getConfiguration('bulwark');
  let previous: string | undefined;

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension('bulwark.bulwark');
    assert.ok(ext, 'the extension is installed');
    await ext.activate();
    previous = config().inspect<string>('audit.logFile')?.globalValue;
    await config().update('audit.logFile', logFile, vscode.ConfigurationTarget.Global);
  });
  suiteTeardown(async () => {
    await config().update('audit.logFile', previous, vscode.ConfigurationTarget.Global);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('checkAction appends its decision to the audit log', async () => {
    const home = os.homedir();
    const blocked = await vscode.commands.executeCommand<{ decision: string; rules: string[] }>(CHECK, {
      type: 'read_file',
      payload: { path: path.join(home, '.ssh', 'id_rsa') },
      sessionId: 'suite-audit',
    });
    assert.equal(blocked.decision, 'block');
    const allowed = await vscode.commands.executeCommand<{ decision: string }>(CHECK, {
      type: 'read_file',
      payload: { path: path.join(dir, 'notes.txt') },
      sessionId: 'suite-audit',
      cwd: dir,
    });
    assert.ok(fs.existsSync(logFile), 'the log file exists');
    const entries = lines(logFile).filter((e) => e.session === 'suite-audit');
    note(
      `    ${entries.length} entries for session suite-audit; decisions: ${entries.map((e) => (e.details as { decision?: { decision?: string } })?.decision?.decision).join(', ')}`,
    );
    assert.ok(entries.length >= 2, `at least two entries, got ${entries.length}`);
    const decisions = entries.map((e) => (e.details as { decision?: { decision?: string; rules?: string[] } }).decision);
    assert.ok(
      decisions.some((d) => d?.decision === 'block'),
      'the block is recorded',
    );
    assert.ok(
      decisions.some((d) => d?.decision === allowed.decision),
      `the ${allowed.decision} is recorded`,
    );
    for (const e of entries) {
      assert.equal(typeof e.hash, 'string');
      assert.equal(typeof e.prev_hash, 'string');
      assert.equal(e.action_type, 'read_file');
    }
  });

  test('a decision that cannot be recorded is blocked and says why (fail closed)', async () => {
    await config().update('audit.logFile', '/proc/bulwark-no-such-dir/audit.jsonl', vscode.ConfigurationTarget.Global);
    try {
      const d = await vscode.commands.executeCommand<{ decision: string; rules: string[]; reason: string }>(CHECK, {
        type: 'read_file',
        payload: { path: path.join(dir, 'notes.txt') },
        sessionId: 'suite-audit-broken',
        cwd: dir,
      });
      assert.equal(d.decision, 'block', d.reason);
      assert.ok(d.rules.includes('audit.write_failed'), JSON.stringify(d.rules));
      assert.match(d.reason, /audit/i);
    } finally {
      await config().update('audit.logFile', logFile, vscode.ConfigurationTarget.Global);
    }
  });

  test('Verify Audit Chain on an intact log reports ok and the number of entries', async () => {
    const n = lines(logFile).length;
    const r = await vscode.commands.executeCommand<Report>(VERIFY);
    note(`    intact: ${JSON.stringify(r)}`);
    assert.ok(r, 'a report');
    assert.equal(r.ok, true);
    assert.equal(r.checked, n);
    assert.equal(r.firstBroken, undefined);
  });

  test('Verify Audit Chain on a tampered log reports the first broken entry', async () => {
    // A few more entries, so the tampered one is in the middle.
    for (let i = 0; i < 2; i++)
      await vscode.commands.executeCommand(CHECK, {
        type: 'read_file',
        payload: { path: path.join(dir, `f${i}.txt`) },
        sessionId: 'suite-audit',
        cwd: dir,
      });
    const raw = fs.readFileSync(logFile, 'utf8').split('\n');
    const target = 2; // the second entry (line 2)
    const entry = JSON.parse(raw[target - 1]!) as { seq: number; session: string };
    raw[target - 1] = raw[target - 1]!.replace(`"session":${JSON.stringify(entry.session)}`, '"session":"someone-else"');
    assert.notEqual(raw.join('\n'), fs.readFileSync(logFile, 'utf8'), 'the log was changed');
    fs.writeFileSync(logFile, raw.join('\n'));
    const r = await vscode.commands.executeCommand<Report>(VERIFY);
    note(`    tampered: ${JSON.stringify(r)}`);
    assert.equal(r.ok, false);
    assert.ok(r.firstBroken, 'the first broken entry is named');
    assert.equal(r.firstBroken.seq, entry.seq);
    assert.equal(r.firstBroken.line, target);
    assert.match(r.firstBroken.kind, /hash/);
    assert.equal(r.checked, target - 1);
    // Every later decision is still recorded (the break stays visible to later verifications).
    const after = await vscode.commands.executeCommand<{ decision: string; rules: string[] }>(CHECK, {
      type: 'read_file',
      payload: { path: path.join(dir, 'g.txt') },
      sessionId: 'suite-audit',
      cwd: dir,
    });
    note(`    after tampering: ${JSON.stringify(after)}`);
  });

  test('Show Audit Log opens one webview panel and reveals it when run again', async () => {
    await vscode.commands.executeCommand(SHOW);
    await vscode.commands.executeCommand(SHOW);
    const panels = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.label === 'Bulwark Audit Log');
    const end = Date.now() + 5000;
    while (panels().length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    note(
      `    tabs: ${vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .map((t) => t.label)
        .join(', ')}`,
    );
    assert.equal(panels().length, 1, 'one panel');
    await vscode.window.tabGroups.close(panels());
  });
});
