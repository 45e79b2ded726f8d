// Extension-host tests of "Bulwark: Download Classifier Model" against a real HTTP server on
// 127.0.0.1 that serves a tiny model folder this test writes (test/unit/helpers/tiny-classifier.ts).
// The palette's QuickPick is not driven here; its refusal of unpinned entries is a unit test.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { writeTinyClassifier } from '../unit/helpers/tiny-classifier';
import { sleep, waitFor } from './wait';

const EXTENSION_ID = 'bulwark.bulwark';
const DOWNLOAD = 'bulwark.downloadClassifierModel';
const CHECK = 'bulwark.checkAction';
const MODEL_DIR = 'classifier.modelDir';
const THRESHOLD = 'classifier.threshold';

type DownloadResult = { ok: true; dir: string } | { ok: false; error: string };
interface Decision {
  decision: string;
  tier: number;
  rules: string[];
  reason: string;
}

const note = (...args: unknown[]): void => Mocha.reporters.Base.consoleLog(...args);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const globalValue = (key: string) => vscode.workspace.getConfiguration('bulwark').inspect(key)?.globalValue;

async function setSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('bulwark').update(key, value, vscode.ConfigurationTarget.Global);
  await waitFor(`bulwark.${key} = ${JSON.stringify(value)}`, () =>
    JSON.stringify(globalValue(key)) === JSON.stringify(value) ? true : undefined,
  );
}

async function download(arg: unknown): Promise<DownloadResult> {
  const r = await vscode.commands.executeCommand<DownloadResult>(DOWNLOAD, arg);
  assert.ok(r && typeof r === 'object' && typeof r.ok === 'boolean', `${DOWNLOAD} returned a result, got ${JSON.stringify(r)}`);
  note(`    download -> ${JSON.stringify(r).slice(0, 400)}`);
  return r;
}

suite('Bulwark: Download Classifier Model (HTTP server on 127.0.0.1)', () => {
  const names = ['model.onnx', 'tokenizer.json', 'config.json', 'tokenizer_config.json'];
  const hashes = new Map<string, string>();
  const saved = new Map<string, unknown>();
  let root: string;
  let src: string;
  let server: http.Server;
  let baseUrl: string;
  const requests: string[] = [];

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `extension ${EXTENSION_ID} is present`);
    await ext.activate();
    for (const key of [MODEL_DIR, THRESHOLD]) saved.set(key, globalValue(key));
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-download-cmd-')));
    src = writeTinyClassifier(path.join(root, 'served'));
    for (const n of names) hashes.set(n, sha256(fs.readFileSync(path.join(src, n))));
    // /hub/onnx/<name>: the real files. /tampered/onnx/config.json: other bytes than the pinned hash.
    server = http.createServer((req, res) => {
      const url = req.url ?? '';
      requests.push(url);
      const m = /^\/(hub|tampered)\/onnx\/([\w.]+)$/.exec(url);
      if (!m || !names.includes(m[2]!)) {
        res.writeHead(404).end('not found');
        return;
      }
      let body = fs.readFileSync(path.join(src, m[2]!));
      if (m[1] === 'tampered' && m[2] === 'config.json') body = Buffer.from(body.toString('utf8').replace('"INJECTION"', '"SAFE_TOO"'));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  teardown(async () => {
    for (const [key, value] of saved)
      await vscode.workspace.getConfiguration('bulwark').update(key, value, vscode.ConfigurationTarget.Global);
    requests.length = 0;
  });

  suiteTeardown(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(root, { recursive: true, force: true });
  });

  const manifest = (route: string) => names.map((name) => ({ name, remotePath: `${route}/onnx/${name}`, sha256: hashes.get(name)! }));

  test('the command is registered and contributed to the palette', async () => {
    assert.ok((await vscode.commands.getCommands(true)).includes(DOWNLOAD), `${DOWNLOAD} is registered`);
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const contributed = (
      ext.packageJSON as { contributes: { commands: { command: string; title: string; category: string }[] } }
    ).contributes.commands.find((c) => c.command === DOWNLOAD);
    assert.deepEqual(contributed && [contributed.category, contributed.title], ['Bulwark', 'Download Classifier Model']);
  });

  test('downloads and verifies every file, points bulwark.classifier.modelDir at the folder, and Tier 1 runs the classifier', async () => {
    const dest = path.join(root, 'downloaded', 'tiny');
    const r = await download({ baseUrl, files: manifest('hub'), destDir: dest });
    assert.deepEqual(r, { ok: true, dir: dest });
    assert.deepEqual(fs.readdirSync(dest).sort(), [...names].sort(), 'exactly the model files, no temporary files');
    for (const n of names) assert.equal(sha256(fs.readFileSync(path.join(dest, n))), hashes.get(n), `${n} has the pinned hash`);
    assert.deepEqual([...requests].sort(), names.map((n) => `/hub/onnx/${n}`).sort(), 'each file was fetched once from the server');
    assert.equal(globalValue(MODEL_DIR), dest, 'bulwark.classifier.modelDir (user settings) now points at the folder');

    // The classifier case of shield.test.ts: scores about 0.87 on the tiny model; no heuristic rule matches it.
    await setSetting(THRESHOLD, 0.8);
    const action = {
      type: 'memory_write',
      payload: { content: 'system system prompt prompt override override reveal reveal' },
      sessionId: `download-test-${Date.now()}`,
    };
    const d = await vscode.commands.executeCommand<Decision>(CHECK, action);
    note(`    ${action.type} -> ${d.decision} tier ${d.tier} [${d.rules.join(', ')}] ${d.reason.slice(0, 300)}`);
    assert.deepEqual([d.decision, d.tier], ['block', 1], d.reason);
    assert.ok(d.rules.includes('tier1.classifier.injection'), `rules ${JSON.stringify(d.rules)} include tier1.classifier.injection`);
  });

  test('a file whose bytes do not match its pinned hash: ok false, both hashes named, nothing left, setting unchanged', async () => {
    await setSetting(MODEL_DIR, src); // a working model the failed download must not replace
    const dest = fs.mkdtempSync(path.join(root, 'tampered-'));
    const tampered = sha256(Buffer.from(fs.readFileSync(path.join(src, 'config.json'), 'utf8').replace('"INJECTION"', '"SAFE_TOO"')));
    assert.notEqual(tampered, hashes.get('config.json'));
    const r = await download({ baseUrl, files: manifest('tampered'), destDir: dest });
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.match(r.error, /SHA-256 mismatch for config\.json/);
      assert.ok(r.error.includes(hashes.get('config.json')!), `the error names the expected hash: ${r.error}`);
      assert.ok(r.error.includes(tampered), `the error names the actual hash: ${r.error}`);
    }
    assert.deepEqual(fs.readdirSync(dest), [], 'no file (and no partial file) is left in destDir');
    await sleep(200);
    assert.equal(globalValue(MODEL_DIR), src, 'bulwark.classifier.modelDir is unchanged');
  });

  test('an invalid argument is refused with a clear error, before anything is fetched or changed', async () => {
    const before = globalValue(MODEL_DIR);
    const cases: [unknown, RegExp][] = [
      [{ baseUrl: 'http://example.com/', files: manifest('hub') }, /plain http is allowed only to 127\.0\.0\.1 or localhost/],
      [{ baseUrl, files: manifest('hub'), destDir: 'relative/dir' }, /destDir "relative\/dir" is not an absolute path/],
      [{ baseUrl, files: manifest('hub').map((f) => ({ ...f, sha256: 'TO-BE-PINNED' })) }, /must be its SHA-256 as 64 hex digits/],
      [{ baseUrl, files: [...manifest('hub'), { name: '../../.bashrc', sha256: 'a'.repeat(64) }] }, /is not a model file name/],
      ['https://example.com/', /expected \{ baseUrl/],
    ];
    for (const [arg, re] of cases) {
      const r = await download(arg);
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(r.error, re);
    }
    assert.deepEqual(requests, [], 'nothing was fetched');
    assert.equal(globalValue(MODEL_DIR), before, 'the setting is unchanged');
  });
});
