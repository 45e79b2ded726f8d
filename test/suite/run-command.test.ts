// Extension-host tests of the sandbox surfaces: bulwark_run_command called through vscode.lm.invokeTool
// (the engine decides, the command runs in bubblewrap through the sandbox helper process, the audit log
// records it), the sandboxed terminal (keystrokes in through the Pseudoterminal, effects checked on
// disk) and Doctor. The workspace may be anywhere (under /tmp too: the sandbox binds it over its fresh /tmp).
import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { waitFor } from './wait';

const note = (...args: unknown[]): void => Mocha.reporters.Base.consoleLog(...args);
const PRIVATE_KEY = [
  '-----BEGIN OPENSSH',
  ' PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH',
  ' PRIVATE KEY-----\n',
].join('');

function lines(file: string): Record<string, unknown>[] {
  return fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];
}

async function invoke(input: object): Promise<Record<string, unknown>> {
  const r = await vscode.lm.invokeTool('bulwark_run_command', { input, toolInvocationToken: undefined });
  const text = r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
  note(`    bulwark_run_command -> ${text.slice(0, 400)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Processes of a sandboxed terminal's shell (`script -qfec "stty cols ...; exec SHELL -i"`). */
function terminalShells(): string[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return /^(\S*\/)?script\0-qfec\0stty cols/.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
      } catch {
        return false;
      }
    });
}

/** The text inside an output stream's untrusted-content block. */
function inner(wrapped: unknown): string {
  const t = String(wrapped);
  return t.slice(t.indexOf('\n---\n') + 5, t.lastIndexOf('\n<<<'));
}

suite('Bulwark sandbox (bulwark_run_command, sandboxed terminal, Doctor)', () => {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-run-command-suite-'));
  const logFile = path.join(logDir, 'audit.jsonl');
  const config = () => vscode.workspace.getConfiguration('bulwark');
  const tag = crypto.randomBytes(4).toString('hex');
  const sshDir = path.join(os.homedir(), '.ssh');
  const keyFile = path.join(sshDir, `id_ed25519_bulwark_suite_${tag}`);
  let sshDirMadeHere = false;
  let folder: string;
  let outside: string;
  const previous = new Map<string, unknown>();

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension('bulwark.bulwark');
    assert.ok(ext, 'the extension is installed');
    await ext.activate();
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert.ok(root, 'a workspace folder is open');
    const real = fs.realpathSync(root);
    folder = path.join(real, `run-command-suite-${tag}`);
    fs.mkdirSync(folder, { recursive: true });
    // Outside the workspace and outside /tmp (the sandbox mounts a fresh /tmp, where any write would
    // "succeed" unseen): /var/tmp is part of the read-only root inside, writable outside.
    outside = path.join('/var/tmp', `bulwark-run-command-outside-${tag}.txt`);
    // A fake credential where the protection tables hide SSH keys (deny.home.ssh), planted before the
    // sandbox plans (it hides what exists).
    sshDirMadeHere = !fs.existsSync(sshDir);
    fs.mkdirSync(sshDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(keyFile, PRIVATE_KEY, { mode: 0o600 });
    fs.writeFileSync(path.join(folder, 'read-key.sh'), `cat "${keyFile}"\n`);
    for (const k of ['audit.logFile', 'policy', 'ifc.policy']) previous.set(k, config().inspect(k)?.globalValue);
    await config().update('audit.logFile', logFile, vscode.ConfigurationTarget.Global);
    // Commands that run the project's scripts need Tier 2 under the default policy outside the sandbox (the
    // decision does not assume one); the permissive preset allows what stays inside the workspace. The permissive IFC policy: the file-tools suite has tainted the shared session.
    await config().update('policy', 'permissive', vscode.ConfigurationTarget.Global);
    await config().update('ifc.policy', 'permissive', vscode.ConfigurationTarget.Global);
    await waitFor('settings applied', () =>
      config().get('policy') === 'permissive' && config().get('ifc.policy') === 'permissive' && config().get('audit.logFile') === logFile
        ? true
        : undefined,
    );
  });
  suiteTeardown(async () => {
    for (const [k, v] of previous) await config().update(k, v, vscode.ConfigurationTarget.Global);
    fs.rmSync(keyFile, { force: true });
    if (sshDirMadeHere) fs.rmSync(sshDir, { recursive: true, force: true });
    fs.rmSync(outside, { force: true });
    fs.rmSync(folder, { recursive: true, force: true });
    fs.rmSync(logDir, { recursive: true, force: true });
  });

  test('the tool and both commands are registered', async () => {
    assert.ok(
      vscode.lm.tools.some((t) => t.name === 'bulwark_run_command'),
      vscode.lm.tools.map((t) => t.name).join(', '),
    );
    const commands = await vscode.commands.getCommands(true);
    for (const c of ['bulwark.doctor', 'bulwark.openSandboxedTerminal']) assert.ok(commands.includes(c), `${c} is registered`);
  });

  test('an allowed command runs sandboxed: its output comes back; writing outside the workspace and reading the planted key fail; the audit log has the execution', async () => {
    // Both scripts do what the analysis cannot see (it does not open them): the sandbox is what stops them.
    fs.writeFileSync(path.join(folder, 'write-outside.sh'), `echo x > ${outside}\n`);
    const r = await invoke({
      command:
        'echo "hello from $(pwd)"; bash read-key.sh; echo "key:$?"; bash write-outside.sh; echo "outside:$?"; echo made > inside.txt',
      cwd: folder,
    });
    assert.equal(r.status, 'exited', JSON.stringify(r));
    assert.equal(r.exit_code, 0);
    assert.equal(r.ok, true);
    const out = inner(r.stdout);
    assert.ok(out.startsWith(`hello from ${folder}\n`), out);
    assert.match(out, /key:1\n/, 'the key file cannot be read inside the sandbox');
    assert.match(out, /outside:[12]\n/, 'the write outside the workspace failed');
    assert.ok(!JSON.stringify(r).includes('PRIVATE KEY'));
    assert.equal(fs.existsSync(outside), false, 'nothing was written outside the workspace');
    assert.equal(fs.readFileSync(path.join(folder, 'inside.txt'), 'utf8'), 'made\n', 'the workspace is writable');
    assert.equal(fs.readFileSync(keyFile, 'utf8'), PRIVATE_KEY, 'control: outside the sandbox the key is there to read');
    const sandbox = r.sandbox as { mechanism: string; violations: unknown[] };
    assert.equal(sandbox.mechanism, 'bubblewrap');
    const executed = await waitFor('the execution in the audit log', () =>
      lines(logFile).find((e) => e.event === 'ACTION_EXECUTED' && e.action_type === 'execute_command'),
    );
    const d = executed.details as Record<string, unknown>;
    assert.equal(d.status, 'exited');
    assert.equal(d.exit_code, 0);
    assert.equal(d.mechanism, 'bubblewrap');
    assert.equal(typeof d.duration_ms, 'number');
    assert.ok(String(d.command).includes('read-key.sh'));
  });

  test('a command the engine refuses comes back { ok: false } with rule ids and does not run', async () => {
    const marker = path.join(folder, 'refused-marker');
    const r = await invoke({ command: `touch ${marker}; cat ~/.ssh/id_rsa`, cwd: folder });
    assert.equal(r.ok, false);
    assert.ok((r.rules as string[]).includes('deny.home.ssh'), JSON.stringify(r.rules));
    assert.match(String(r.reason), /nothing ran/);
    assert.equal(fs.existsSync(marker), false, 'the side effect is absent');
    const blocked = await waitFor('the block in the audit log', () =>
      lines(logFile).find((e) => e.event === 'ACTION_BLOCKED' && e.action_type === 'execute_command'),
    );
    assert.ok(
      ((blocked.details as { rules?: string[] }).rules ?? []).includes('deny.home.ssh') ||
        JSON.stringify(blocked).includes('deny.home.ssh'),
    );
  });

  test('the sandboxed terminal: typed lines run in the sandbox (workspace writable, the key hidden); closing it ends the shell', async () => {
    const before = new Set(terminalShells());
    const terminal = await vscode.commands.executeCommand<vscode.Terminal | undefined>('bulwark.openSandboxedTerminal');
    assert.ok(terminal, 'a terminal was opened');
    assert.equal(terminal.name, 'Bulwark sandbox');
    const marker = path.join(folder, 'terminal-marker');
    const keyCopy = path.join(folder, 'terminal-key');
    terminal.sendText(`echo "hi from $(tty)" > ${marker}; cat ${keyFile} > ${keyCopy} 2>&1; echo "status:$?" >> ${marker}`);
    const text = await waitFor(
      'the typed line to run',
      () => {
        const t = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '';
        return t.includes('status:') ? t : undefined;
      },
      30_000,
    );
    note(`    terminal wrote: ${JSON.stringify(text)}`);
    assert.match(text, /^hi from \/dev\/pts\/\d+\n/, 'the shell has a terminal inside the sandbox');
    assert.match(text, /status:1\n/);
    assert.ok(!fs.readFileSync(keyCopy, 'utf8').includes('PRIVATE KEY'), 'the key was hidden from the terminal');
    const ours = terminalShells().filter((p) => !before.has(p));
    assert.ok(ours.length > 0, "control: the terminal's `script` process runs");
    terminal.dispose();
    await waitFor('the sandboxed shell to end with its terminal', () =>
      ours.every((p) => !fs.existsSync(`/proc/${p}`)) ? true : undefined,
    );
  });

  test('Doctor reports the sandbox, what it enforces and the settings in effect', async () => {
    const report = await vscode.commands.executeCommand<string>('bulwark.doctor');
    note(`    doctor: ${report.split('\n').slice(0, 8).join(' | ')}`);
    assert.match(report, /# Bulwark Doctor/);
    assert.match(report, /\*\*Available:\*\* bubblewrap/);
    assert.match(report, /credential locations/);
    assert.match(report, /The helper .* started and answered/);
    assert.match(report, /bulwark\.sandbox\.unsandboxed \| `refuse`/);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  // Last: it taints the shared session with restricted data for good.
  test("the run tool shares the file tools' session: after the read tool returned restricted data, a command needs a human under the default IFC policy", async () => {
    await config().update('ifc.policy', 'default', vscode.ConfigurationTarget.Global);
    await waitFor('IFC default', () => (config().get('ifc.policy') === 'default' ? true : undefined));
    const sheet = path.join(folder, 'salary-2026.csv');
    fs.writeFileSync(sheet, 'name,salary\nana,1\n');
    const read = await vscode.lm.invokeTool('bulwark_read_file', { input: { path: sheet }, toolInvocationToken: undefined });
    assert.ok(read.content.some((p) => p instanceof vscode.LanguageModelTextPart && p.value.includes('"ok":true')));
    const marker = path.join(folder, 'after-taint-marker');
    const r = await invoke({ command: `touch ${marker}`, cwd: folder });
    assert.equal(r.ok, false, JSON.stringify(r));
    assert.ok(
      (r.rules as string[]).some((x) => x.startsWith('ifc.')),
      JSON.stringify(r.rules),
    );
    assert.equal(fs.existsSync(marker), false);
  });
});
