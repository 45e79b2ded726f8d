// Extension-host tests of the Shield wiring: settings → engine, the public check command, policy
// diagnostics and the Tier 2 OpenAI-compatible back end against a real HTTP server on 127.0.0.1.
// Tier 3 is not triggered here: modals are refused while extension tests run (drive.js covers it).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import type { BulwarkTestApi } from '../../src/vscode/extension';
import { writeTinyClassifier } from '../unit/helpers/tiny-classifier';
import { LmChatBackend, parseLmSelector } from '../../src/vscode/lm-backend';
import { waitFor } from './wait';

const EXTENSION_ID = 'bulwark.bulwark';
const CHECK = 'bulwark.checkAction';

interface Decision {
  decision: 'allow' | 'block' | 'escalate';
  tier: number;
  minTier: number;
  level: string;
  rules: string[];
  reason: string;
  confidence?: number;
}

const note = (...args: unknown[]): void => Mocha.reporters.Base.consoleLog(...args);

function workspaceRoot(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'code-server opened a workspace folder');
  return folder.uri.fsPath;
}

/** A user (global) setting, changed for one test and restored in teardown. */
const touched = new Set<string>();
async function setSetting(key: string, value: unknown): Promise<void> {
  touched.add(key);
  await vscode.workspace.getConfiguration('bulwark').update(key, value, vscode.ConfigurationTarget.Global);
  await waitFor(`bulwark.${key} = ${JSON.stringify(value)}`, () => {
    const v = vscode.workspace.getConfiguration('bulwark').inspect(key)?.globalValue;
    return JSON.stringify(v) === JSON.stringify(value) ? true : undefined;
  });
}

async function check(action: Record<string, unknown>): Promise<Decision> {
  const r = await vscode.commands.executeCommand<Decision>(CHECK, { sessionId: `ext-test-${Date.now()}-${Math.random()}`, ...action });
  assert.ok(r && typeof r === 'object', `${CHECK} returned a decision, got ${JSON.stringify(r)}`);
  note(`    ${String(action.type)} -> ${r.decision} tier ${r.tier} [${r.rules.join(', ')}] ${r.reason.slice(0, 300)}`);
  return r;
}

suite('Bulwark Shield in the VS Code extension host', () => {
  let api: BulwarkTestApi;
  const cleanupFiles: string[] = [];

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension<BulwarkTestApi | undefined>(EXTENSION_ID);
    assert.ok(ext, `extension ${EXTENSION_ID} is present`);
    const exports = await ext.activate();
    assert.ok(exports && typeof exports.setTier2ApiKey === 'function', 'the extension exports its test hook in test mode');
    api = exports;
  });

  teardown(async () => {
    for (const key of touched) await vscode.workspace.getConfiguration('bulwark').update(key, undefined, vscode.ConfigurationTarget.Global);
    touched.clear();
    await api.setTier2ApiKey(undefined);
    for (const f of cleanupFiles.splice(0)) fs.rmSync(f, { recursive: true, force: true });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('the check command is registered and returns a decision object', async () => {
    const commands = await vscode.commands.getCommands(true);
    for (const c of [CHECK, 'bulwark.setTier2ApiKey', 'bulwark.clearTier2ApiKey', 'bulwark.showStatus'])
      assert.ok(commands.includes(c), `${c} is registered`);
    const bad = await vscode.commands.executeCommand<Decision>(CHECK, { type: 'read_file' });
    assert.equal(bad.decision, 'block', 'an action without a payload is blocked, not thrown');
  });

  test('read_file ~/.ssh/id_rsa is blocked by deny.home.ssh', async () => {
    const r = await check({ type: 'read_file', payload: { path: '~/.ssh/id_rsa' } });
    assert.equal(r.decision, 'block');
    assert.ok(r.rules.includes('deny.home.ssh'), `rules ${JSON.stringify(r.rules)} include deny.home.ssh`);
    for (const k of ['decision', 'tier', 'minTier', 'level', 'rules', 'reason']) assert.ok(k in r, `the decision has ${k}`);
  });

  test('a write that needs Tier 2 with no evaluator and onUnavailable=block is blocked (tier2.not_configured)', async () => {
    await setSetting('tier2.backend', 'none');
    await setSetting('tier2.onUnavailable', 'block');
    // An agent instruction file: its writes need a Tier 2 review (an ordinary source file is now an edit the policy allows).
    const r = await check({
      type: 'write_file',
      payload: { path: path.join(workspaceRoot(), 'src', 'x', 'AGENTS.md'), content: 'export const x = 1;\n' },
    });
    assert.equal(r.decision, 'block');
    assert.ok(r.rules.includes('tier2.not_configured'), `rules ${JSON.stringify(r.rules)} include tier2.not_configured`);
  });

  test('the OpenAI back end without an API key is "not configured", and the reason says so', async () => {
    await setSetting('tier2.backend', 'openai');
    await setSetting('tier2.baseUrl', 'http://127.0.0.1:9/v1');
    const r = await check({
      type: 'write_file',
      payload: { path: path.join(workspaceRoot(), 'src', 'nokey', 'AGENTS.md'), content: 'export {};\n' },
    });
    assert.equal(r.decision, 'block');
    assert.ok(r.rules.includes('tier2.not_configured'), `rules ${JSON.stringify(r.rules)}`);
    assert.match(r.reason, /API key/);
  });

  test('a broken bulwark.policy file blocks every non-read action with file:line:column; reads still pass', async () => {
    const file = path.join(os.tmpdir(), `bulwark-broken-policy-${process.pid}-${Date.now()}.yaml`);
    fs.writeFileSync(file, 'version: 1\nverify:\n  - name: w\n    action_types: [write_file]\n    tier_override: seven\n');
    cleanupFiles.push(file);
    await setSetting('policy', file);
    const w = await check({ type: 'write_file', payload: { path: path.join(workspaceRoot(), 'src', 'y.ts'), content: 'x' } });
    assert.equal(w.decision, 'block');
    assert.equal(w.tier, 0);
    assert.ok(w.rules.includes('policy.invalid'), `rules ${JSON.stringify(w.rules)} include policy.invalid`);
    assert.ok(w.reason.includes(`${file}:5:20`), `the reason names ${file}:5:20: ${w.reason}`);
    const cmd = await check({ type: 'execute_command', payload: { command: 'ls' }, cwd: workspaceRoot() });
    assert.equal(cmd.decision, 'block');
    const r = await check({ type: 'read_file', payload: { path: path.join(workspaceRoot(), 'README.md') } });
    assert.notEqual(r.decision, 'block', `a read is not blocked by the invalid policy: ${r.reason}`);
    // Fixed again: the setting goes back and writes are judged by the default policy again.
    await vscode.workspace.getConfiguration('bulwark').update('policy', undefined, vscode.ConfigurationTarget.Global);
    await waitFor('bulwark.policy reset', () =>
      vscode.workspace.getConfiguration('bulwark').inspect('policy')?.globalValue === undefined ? true : undefined,
    );
    const again = await check({ type: 'write_file', payload: { path: path.join(workspaceRoot(), 'src', 'y.ts'), content: 'x' } });
    assert.ok(!again.rules.includes('policy.invalid'), `after the reset the policy is valid again: ${again.reason}`);
  });

  test('a broken .bulwark/policy.yaml gets a diagnostic at its line and column', async () => {
    const dir = vscode.Uri.file(path.join(workspaceRoot(), '.bulwark'));
    const uri = vscode.Uri.joinPath(dir, 'policy.yaml');
    cleanupFiles.push(dir.fsPath);
    await vscode.workspace.fs.writeFile(
      uri,
      Buffer.from('version: 1\nverify:\n  - name: w\n    action_types: [write_file]\n    tier_override: seven\n'),
    );
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
    const diags = await waitFor('diagnostics for .bulwark/policy.yaml', () => {
      const d = vscode.languages.getDiagnostics(uri).filter((x) => x.source === 'Bulwark');
      return d.length ? d : undefined;
    });
    note(`    diagnostics: ${diags.map((d) => `${d.range.start.line + 1}:${d.range.start.character + 1} ${d.message}`).join(' | ')}`);
    assert.equal(diags[0]!.range.start.line, 4, 'line 5 (0-based 4)');
    assert.equal(diags[0]!.range.start.character, 19, 'column 20 (0-based 19)');
    assert.match(diags[0]!.message, /tier_override/);
    assert.equal(diags[0]!.severity, vscode.DiagnosticSeverity.Error);
    // The engine reads the same file: a workspace policy that does not load blocks non-read actions.
    const w = await check({ type: 'write_file', payload: { path: path.join(workspaceRoot(), 'src', 'z.ts'), content: 'x' } });
    assert.ok(w.rules.includes('policy.invalid'), `the broken workspace policy blocks writes: ${w.reason}`);
    // Fixing the text clears the diagnostic.
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, new vscode.Range(4, 19, 4, 24), '2');
    assert.ok(await vscode.workspace.applyEdit(edit));
    await waitFor('diagnostics cleared', () =>
      vscode.languages.getDiagnostics(uri).filter((x) => x.source === 'Bulwark').length === 0 ? true : undefined,
    );
    await doc.save();
  });

  test('the Tier 1 classifier from bulwark.classifier.modelDir loads on first use and its threshold is applied', async () => {
    const dir = writeTinyClassifier(path.join(os.tmpdir(), `bulwark-tiny-classifier-${process.pid}-${Date.now()}`));
    cleanupFiles.push(dir);
    // Scores about 0.87 on the tiny test model; no heuristic rule matches it.
    const suspicious = { type: 'memory_write', payload: { content: 'system system prompt prompt override override reveal reveal' } };
    await setSetting('classifier.modelDir', dir);
    await setSetting('classifier.threshold', 0.8);
    const blocked = await check(suspicious);
    assert.equal(blocked.decision, 'block');
    assert.equal(blocked.tier, 1);
    assert.ok(blocked.rules.includes('tier1.classifier.injection'), `rules ${JSON.stringify(blocked.rules)}`);
    const benign = await check({ type: 'memory_write', payload: { content: 'please summarise the quarterly sales report' } });
    assert.deepEqual([benign.decision, benign.tier], ['allow', 1], benign.reason);
    // Above the score: the classifier only escalates, and Tier 2 (not configured) blocks.
    await setSetting('classifier.threshold', 0.95);
    const escalated = await check(suspicious);
    assert.ok(
      escalated.rules.includes('tier1.classifier.injection') && escalated.rules.includes('tier2.not_configured'),
      `rules ${JSON.stringify(escalated.rules)}`,
    );
    assert.equal(escalated.tier, 2);
  });

  test('a configured classifier that does not load blocks at Tier 1 and says why (fail closed)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-empty-model-'));
    cleanupFiles.push(dir);
    await setSetting('classifier.modelDir', dir);
    await setSetting('classifier.threshold', 0.5);
    const r = await check({ type: 'memory_write', payload: { content: 'system system prompt prompt override override reveal reveal' } });
    assert.deepEqual([r.decision, r.tier], ['block', 1], r.reason);
    assert.ok(r.rules.includes('tier1.classifier_error'), `rules ${JSON.stringify(r.rules)}`);
    assert.match(r.reason, /failed to load/);
  });

  test('the vscode.lm back end: selector parsing, "not configured" without a model, unreachable when nothing matches', async () => {
    assert.deepEqual(parseLmSelector('copilot/gpt-4o-mini'), { vendor: 'copilot', family: 'gpt-4o-mini' });
    assert.deepEqual(parseLmSelector('//org/model:7b'), { id: 'org/model:7b' });
    assert.equal(parseLmSelector('  '), undefined);
    const write = {
      type: 'write_file',
      payload: { path: path.join(workspaceRoot(), 'src', `lm-${Date.now()}`, 'AGENTS.md'), content: 'export {};\n' },
    };
    await setSetting('tier2.backend', 'vscode-lm');
    const none = await check(write);
    assert.equal(none.decision, 'block');
    assert.ok(none.rules.includes('tier2.not_configured'), `rules ${JSON.stringify(none.rules)}`);
    assert.match(none.reason, /bulwark\.tier2\.lmModel/);
    await setSetting('tier2.lmModel', 'bulwark-test-no-such-vendor/none');
    const missing = await check(write);
    assert.equal(missing.decision, 'block');
    assert.ok(missing.rules.includes('tier2.unreachable'), `rules ${JSON.stringify(missing.rules)}`);
    assert.match(missing.reason, /no VS Code language model matches/);
    // An aborted request rejects at once, without asking any model.
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await assert.rejects(new LmChatBackend({ vendor: 'x' }, 'x').complete('s', 'u', controller.signal), /stop/);
  });

  suite('Tier 2 through an OpenAI-compatible server on 127.0.0.1', () => {
    let server: http.Server;
    let baseUrl: string;
    const seen: { system: string; user: string; auth?: string; model?: string }[] = [];

    suiteSetup(async () => {
      server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
            res.writeHead(404).end();
            return;
          }
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            model: string;
            messages: { role: string; content: string }[];
          };
          const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
          const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
          seen.push({ system, user, auth: req.headers.authorization, model: body.model });
          const canary = /Canary: ([0-9a-f]{64})/i.exec(system)?.[1] ?? '';
          const answer = JSON.stringify({
            decision: 'ALLOW',
            confidence: 0.93,
            reasoning: 'A small source file edit inside the workspace.',
            canary,
          });
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              id: 'chatcmpl-test',
              object: 'chat.completion',
              created: Math.floor(Date.now() / 1000),
              model: body.model,
              choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
            }),
          );
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    suiteTeardown(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    test('the evaluator answers ALLOW with the canary and the write is allowed at Tier 2', async () => {
      await api.setTier2ApiKey('sk-bulwark-ext-test');
      await setSetting('tier2.backend', 'openai');
      await setSetting('tier2.baseUrl', baseUrl);
      await setSetting('tier2.model', 'evaluator-under-test');
      const file = path.join(workspaceRoot(), 'src', `tier2-${Date.now()}`, 'AGENTS.md');
      const r = await check({ type: 'write_file', payload: { path: file, content: 'export const answer = 42;\n' } });
      assert.equal(r.decision, 'allow', r.reason);
      assert.equal(r.tier, 2);
      assert.ok(r.rules.includes('tier2.allow'), `rules ${JSON.stringify(r.rules)} include tier2.allow`);
      assert.equal(seen.length, 1, 'one request reached the evaluator');
      const s = seen[0]!;
      assert.equal(s.auth, 'Bearer sk-bulwark-ext-test', 'the key from SecretStorage is sent');
      assert.equal(s.model, 'evaluator-under-test');
      assert.match(s.system, /Canary: [0-9a-f]{64}/, 'the system prompt carries the workspace canary');
      const canary = /Canary: ([0-9a-f]{64})/.exec(s.system)![1]!;
      assert.ok(!s.user.includes(canary), 'the user message never carries the canary');
      assert.ok(s.user.includes('export const answer = 42;'), 'the action is sent as data');
      // The same action again within the cache TTL: answered from the verdict cache, no new request.
      const cached = await check({ type: 'write_file', payload: { path: file, content: 'export const answer = 42;\n' } });
      assert.equal(cached.decision, 'allow');
      assert.equal(seen.length, 1, 'the cached verdict costs no request');
      assert.match(cached.reason, /cached/);
    });
  });
});
