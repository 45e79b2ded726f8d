// The download command's request validation, the known-model refusal, and runModelDownload's folder
// rules (a real HTTP server on 127.0.0.1 serving a tiny model the test writes), and a caller's request
// the user declines.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  DOWNLOAD_NOT_CONFIRMED,
  MODEL_FILE_NAMES,
  UNPINNED_LABEL,
  afterUserConfirms,
  knownModelChoice,
  knownModelRequest,
  modelFolderName,
  parseDownloadRequest,
  progressMessage,
  runModelDownload,
  type DownloadQuestion,
  type ModelDownloadRequest,
  type RequestProgress,
} from '../../src/node/classifier/download-request';
import { KNOWN_MODELS, hubBaseUrl, isPinned, type KnownModel } from '../../src/node/classifier/model-download';
import { makeTempDir } from './helpers/repo';
import { writeTinyClassifier } from './helpers/tiny-classifier';

const H = (c: string) => c.repeat(64);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const FILES = [
  { name: 'model.onnx', sha256: H('a') },
  { name: 'tokenizer.json', sha256: H('b') },
  { name: 'config.json', sha256: H('c'), remotePath: 'onnx/config.json' },
];
const ABS = path.resolve('/tmp/bulwark-models/x');

function rejects(arg: unknown, re: RegExp): void {
  const r = parseDownloadRequest(arg);
  assert.equal(r.ok, false, `${JSON.stringify(arg)} is refused`);
  if (!r.ok) {
    assert.match(r.error, /^invalid download request: /);
    assert.match(r.error, re);
  }
}

describe('download command: request validation', () => {
  it('accepts https anywhere and http to loopback; normalises the base URL, hashes and destDir', () => {
    const r = parseDownloadRequest({
      baseUrl: 'https://example.com/org/model/resolve/abc',
      files: [...FILES, { name: 'tokenizer_config.json', sha256: H('D') }],
      destDir: `${ABS}/../x/`,
    });
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.equal(r.value.baseUrl, 'https://example.com/org/model/resolve/abc/');
    assert.equal(r.value.destDir, ABS);
    assert.equal(r.value.files[3]!.sha256, H('d'));
    assert.deepEqual(r.value.files[2], { name: 'config.json', sha256: H('c'), remotePath: 'onnx/config.json' });
    for (const baseUrl of ['http://127.0.0.1:8080/m/', 'http://localhost/m/', 'http://[::1]:9/']) {
      assert.ok(parseDownloadRequest({ baseUrl, files: FILES }).ok, baseUrl);
    }
    const named = parseDownloadRequest({ baseUrl: 'https://h/', files: FILES, name: 'my-model_2.onnx' });
    assert.ok(named.ok && named.value.name === 'my-model_2.onnx' && named.value.destDir === undefined);
  });

  it('refuses a malformed argument with a message that says what is wrong', () => {
    rejects(null, /expected \{ baseUrl/);
    rejects([FILES], /an array/);
    rejects('https://h/', /expected \{ baseUrl/);
    rejects({ baseUrl: 'https://h/', files: FILES, destdir: ABS }, /unknown field "destdir"/);
    rejects({ files: FILES }, /baseUrl must be an http\(s\) URL, got nothing/);
    rejects({ baseUrl: 'not a url', files: FILES }, /is not a URL/);
  });

  it('plain http only to 127.0.0.1 / localhost; no other schemes, credentials, query or fragment', () => {
    rejects({ baseUrl: 'http://example.com/m/', files: FILES }, /plain http is allowed only to 127\.0\.0\.1 or localhost; use https/);
    rejects({ baseUrl: 'http://10.0.0.1/m/', files: FILES }, /plain http/);
    rejects({ baseUrl: 'http://127.0.0.1.nip.io/m/', files: FILES }, /plain http/);
    rejects({ baseUrl: 'file:///tmp/models/', files: FILES }, /must be https .* not file:/);
    rejects({ baseUrl: 'ftp://h/', files: FILES }, /not ftp:/);
    rejects({ baseUrl: 'https://user:pw@h/', files: FILES }, /user name or password/);
    rejects({ baseUrl: 'https://h/m/?token=1', files: FILES }, /query or fragment/);
  });

  it('every file needs a 64-hex SHA-256', () => {
    rejects(
      { baseUrl: 'https://h/', files: [{ ...FILES[0], sha256: 'TO-BE-PINNED' }, FILES[1], FILES[2]] },
      /files\[0\]\.sha256 of model\.onnx must be its SHA-256 as 64 hex digits, got "TO-BE-PINNED"/,
    );
    rejects({ baseUrl: 'https://h/', files: [{ name: 'model.onnx', sha256: H('a').slice(1) }, FILES[1], FILES[2]] }, /64 hex digits/);
    rejects({ baseUrl: 'https://h/', files: [{ name: 'model.onnx', sha256: H('g') }, FILES[1], FILES[2]] }, /64 hex digits/);
    rejects({ baseUrl: 'https://h/', files: [{ name: 'model.onnx' }, FILES[1], FILES[2]] }, /got nothing/);
  });

  it('only the file names of a model folder, each once, and the ones the loader needs', () => {
    for (const name of [
      '../model.onnx',
      'a/model.onnx',
      '.bashrc',
      'tasks.json',
      'settings.json',
      'authorized_keys',
      'model.onnx ',
      'MODEL.ONNX',
      '',
      7,
    ]) {
      rejects(
        { baseUrl: 'https://h/', files: [...FILES, { name, sha256: H('e') }] },
        /is not a model file name; Bulwark writes only model\.onnx/,
      );
    }
    rejects({ baseUrl: 'https://h/', files: [...FILES, { ...FILES[0] }] }, /model\.onnx is listed twice/);
    rejects({ baseUrl: 'https://h/', files: [FILES[0], FILES[1]] }, /files must include config\.json/);
    rejects({ baseUrl: 'https://h/', files: [] }, /non-empty array/);
    rejects({ baseUrl: 'https://h/', files: 'model.onnx' }, /non-empty array/);
    rejects({ baseUrl: 'https://h/', files: [...FILES, { name: 'vocab.txt', sha256: H('e'), bytes: 3 }] }, /unknown field "bytes"/);
    rejects({ baseUrl: 'https://h/', files: [...FILES, 'vocab.txt'] }, /files\[3\] must be an object/);
    rejects({ baseUrl: 'https://h/', files: [...FILES, ...MODEL_FILE_NAMES.map((name) => ({ name, sha256: H('e') }))] }, /at most/);
  });

  it('size, when given, is a whole number of bytes and is kept', () => {
    const r = parseDownloadRequest({ baseUrl: 'https://h/', files: [{ ...FILES[0], size: 1_014 }, FILES[1], { ...FILES[2], size: 0 }] });
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.equal(r.value.files[0]!.size, 1_014);
    assert.equal(r.value.files[1]!.size, undefined);
    assert.equal(r.value.files[2]!.size, 0);
    for (const size of [-1, 1.5, '1014', Number.NaN, 2 ** 60, null]) {
      rejects(
        { baseUrl: 'https://h/', files: [{ ...FILES[0], size }, FILES[1], FILES[2]] },
        /files\[0\]\.size of model\.onnx must be its size in bytes/,
      );
    }
  });

  it('remotePath stays relative to baseUrl', () => {
    for (const remotePath of [
      '../../etc/passwd',
      'onnx/../../x',
      'onnx/%2e%2e/x',
      '/etc/passwd',
      'https://evil.example/m',
      'onnx\\model.onnx',
      'onnx//model.onnx',
      'onnx/model.onnx?x',
      'bad%zz',
      '',
    ]) {
      rejects({ baseUrl: 'https://h/', files: [{ ...FILES[0], remotePath }, FILES[1], FILES[2]] }, /files\[0\]\.remotePath of model\.onnx/);
    }
  });

  it('destDir must be absolute; name must be a plain folder name', () => {
    for (const destDir of ['models/x', './x', '~/models', '', 3]) rejects({ baseUrl: 'https://h/', files: FILES, destDir }, /destDir/);
    rejects({ baseUrl: 'https://h/', files: FILES, destDir: `${ABS}\0` }, /NUL/);
    for (const name of ['../x', '.hidden', 'a/b', '', 'x'.repeat(65)])
      rejects({ baseUrl: 'https://h/', files: FILES, name }, /name .* must be a folder name/);
  });

  it('the default folder name: the given name, else derived from the hashes (stable, order-independent)', () => {
    const r = (files: unknown, name?: string) => {
      const p = parseDownloadRequest({ baseUrl: 'https://h/', files, ...(name ? { name } : {}) });
      assert.ok(p.ok);
      return p.value;
    };
    assert.equal(modelFolderName(r(FILES, 'mine')), 'mine');
    const a = modelFolderName(r(FILES));
    assert.match(a, /^custom-[0-9a-f]{12}$/);
    assert.equal(modelFolderName(r([...FILES].reverse())), a);
    assert.notEqual(modelFolderName(r([{ ...FILES[0], sha256: H('f') }, FILES[1], FILES[2]])), a);
  });
});

describe('download command: known models', () => {
  it('an entry whose hashes are not pinned is labelled and refused, with the way out', () => {
    // Every shipped entry is pinned now; an entry with a placeholder hash or a branch for a revision stands in.
    const unpinned: KnownModel[] = [
      ...KNOWN_MODELS.filter((m) => !isPinned(m)),
      { ...KNOWN_MODELS[0]!, files: KNOWN_MODELS[0]!.files.map((f, i) => (i === 0 ? { ...f, sha256: 'TO-BE-PINNED' } : f)) },
      { ...KNOWN_MODELS[0]!, revision: 'main' },
    ];
    assert.ok(unpinned.length >= 2);
    for (const m of unpinned) {
      const c = knownModelChoice(m);
      assert.equal(c.pinned, false);
      assert.ok(c.label.endsWith(UNPINNED_LABEL), c.label);
      assert.equal(UNPINNED_LABEL, '(hashes not pinned — cannot be verified)');
      const r = knownModelRequest(m);
      assert.equal(r.ok, false);
      if (!r.ok) {
        assert.match(r.error, /refuses to download/);
        assert.match(r.error, /not pinned/);
        assert.match(r.error, /bulwark\.classifier\.modelDir/);
        assert.ok(r.error.includes(`https://huggingface.co/${m.repo}`), r.error);
      }
    }
  });

  it('a pinned entry becomes a request into models/<id> from the hub', () => {
    const m: KnownModel = {
      ...KNOWN_MODELS[0]!,
      revision: 'abc123'.repeat(7).slice(0, 40),
      files: KNOWN_MODELS[0]!.files.map((f, i) => ({ ...f, sha256: String(i).repeat(64) })),
    };
    assert.equal(knownModelChoice(m).label, m.id);
    const r = knownModelRequest(m);
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.equal(r.value.baseUrl, hubBaseUrl(m));
    assert.equal(r.value.name, m.id);
    assert.equal(modelFolderName(r.value), m.id);
    assert.deepEqual(
      r.value.files.map((f) => f.remotePath),
      m.files.map((f) => f.remotePath),
    );
  });
});

describe('download command: runModelDownload (HTTP server on 127.0.0.1)', function () {
  this.timeout(30_000);
  let root: string;
  let src: string;
  let server: http.Server;
  let base: string;
  const names = ['model.onnx', 'tokenizer.json', 'config.json', 'tokenizer_config.json'];
  const hashes = new Map<string, string>();
  /** Every URL the server was asked for. */
  const served: string[] = [];

  before(async () => {
    root = makeTempDir('bulwark-download-cmd-');
    src = writeTinyClassifier(path.join(root, 'src'));
    for (const n of names) hashes.set(n, sha256(fs.readFileSync(path.join(src, n))));
    server = http.createServer((req, res) => {
      const url = req.url ?? '';
      served.push(url);
      const m = /^\/(good|notamodel)\/onnx\/([\w.]+)$/.exec(url);
      if (!m || !names.includes(m[2]!)) {
        res.writeHead(404).end();
        return;
      }
      // /notamodel/ serves a config.json without id2label: hashes can be pinned to it, but the loader refuses it.
      const body =
        m[1] === 'notamodel' && m[2] === 'config.json' ? Buffer.from('{"model_type":"bert"}') : fs.readFileSync(path.join(src, m[2]!));
      res.writeHead(200, { 'content-length': String(body.length) }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    fs.rmSync(root, { recursive: true, force: true });
  });

  const request = (extra: Record<string, unknown> = {}, route = 'good'): ModelDownloadRequest => {
    const p = parseDownloadRequest({
      baseUrl: `${base}/${route}/`,
      files: names.map((name) => ({ name, remotePath: `onnx/${name}`, sha256: hashes.get(name) })),
      ...extra,
    });
    assert.ok(p.ok, !p.ok ? p.error : '');
    return p.value;
  };
  const ls = (d: string) => (fs.existsSync(d) ? fs.readdirSync(d).sort() : undefined);

  it('downloads into a new folder, verifies, loads the model, reports progress per file', async () => {
    const dest = path.join(root, 'new', 'deeper');
    const seen: RequestProgress[] = [];
    const r = await runModelDownload(request({ destDir: dest }), { onProgress: (p) => seen.push(p) });
    assert.deepEqual(r, { ok: true, dir: dest });
    assert.deepEqual(ls(dest), [...names].sort());
    for (const n of names) assert.equal(sha256(fs.readFileSync(path.join(dest, n))), hashes.get(n));
    assert.deepEqual([...new Set(seen.map((p) => p.file))], names);
    assert.ok(seen.every((p) => p.count === names.length && p.fraction >= 0 && p.fraction <= 1));
    const last = seen.filter((p) => p.file === 'model.onnx').at(-1)!;
    assert.equal(last.received, last.total);
    assert.match(progressMessage(last), /^model\.onnx \(1\/4\): [\d.]+ KB of [\d.]+ KB$/);
  });

  it('without destDir: <modelsRoot>/<name>, and a second download of the same model may replace it', async () => {
    const modelsRoot = path.join(root, 'storage', 'models');
    const r1 = await runModelDownload(request({ name: 'tiny' }), { modelsRoot });
    assert.deepEqual(r1, { ok: true, dir: path.join(modelsRoot, 'tiny') });
    const r2 = await runModelDownload(request({ name: 'tiny' }), { modelsRoot });
    assert.deepEqual(r2, r1);
    const r3 = await runModelDownload(request(), {});
    assert.equal(r3.ok, false);
    if (!r3.ok) assert.match(r3.error, /no destDir was given/);
  });

  it('refuses a destDir that already holds files, and a destDir that is a file', async () => {
    const full = path.join(root, 'full');
    fs.mkdirSync(full);
    fs.writeFileSync(path.join(full, 'notes.txt'), 'mine');
    const r = await runModelDownload(request({ destDir: full }));
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.error, /is not empty \(notes\.txt\).*never replaces files it did not write/);
    assert.deepEqual(ls(full), ['notes.txt']);
    const file = path.join(root, 'a-file');
    fs.writeFileSync(file, 'x');
    const f = await runModelDownload(request({ destDir: file }));
    assert.ok(!f.ok && /is not a folder/.test(f.error));
  });

  it('a hash mismatch names the file and both hashes, leaves nothing, and removes the folders it created', async () => {
    const dest = path.join(root, 'mismatch', 'm');
    const req = request({ destDir: dest });
    const wrong = 'f'.repeat(64);
    const r = await runModelDownload({ ...req, files: req.files.map((f) => (f.name === 'tokenizer.json' ? { ...f, sha256: wrong } : f)) });
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.cancelled, false);
      assert.match(r.error, /SHA-256 mismatch for tokenizer\.json/);
      assert.ok(r.error.includes(wrong) && r.error.includes(hashes.get('tokenizer.json')!), r.error);
    }
    assert.equal(ls(path.join(root, 'mismatch')), undefined, 'the folders this call created are gone');
    // An existing empty folder stays, empty.
    const empty = path.join(root, 'empty');
    fs.mkdirSync(empty);
    const r2 = await runModelDownload({
      ...req,
      destDir: empty,
      files: req.files.map((f) => (f.name === 'config.json' ? { ...f, sha256: wrong } : f)),
    });
    assert.equal(r2.ok, false);
    assert.deepEqual(ls(empty), []);
  });

  it('files whose hashes match but that do not load are removed (the folder would make Tier 1 block)', async () => {
    const notModelHashes: Record<string, string> = {
      ...Object.fromEntries(hashes),
      'config.json': sha256(Buffer.from('{"model_type":"bert"}')),
    };
    const dest = path.join(root, 'notamodel');
    const p = parseDownloadRequest({
      baseUrl: `${base}/notamodel/`,
      destDir: dest,
      files: names.map((name) => ({ name, remotePath: `onnx/${name}`, sha256: notModelHashes[name] })),
    });
    assert.ok(p.ok);
    const r = await runModelDownload(p.value);
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.error, /hashes match, but they are not a model Bulwark can load, so they were removed: .*config\.json/);
    assert.equal(ls(dest), undefined);
  });

  it('cancel: an aborted signal leaves nothing and says cancelled', async () => {
    const dest = path.join(root, 'cancelled');
    const ac = new AbortController();
    const r = await runModelDownload(request({ destDir: dest }), {
      signal: ac.signal,
      onProgress: (p) => {
        if (p.received > 0) ac.abort();
      },
    });
    assert.deepEqual(r, { ok: false, error: 'the download was cancelled', cancelled: true });
    assert.equal(ls(dest), undefined);
  });

  it("a caller's request the user declines: asked once, naming the files and the source; nothing is fetched or written", async () => {
    const dest = path.join(root, 'declined');
    const r = request({ destDir: dest });
    for (const answer of [false, undefined, 'Download and Use']) {
      // no, dismissed, anything but an explicit true
      const asked: DownloadQuestion[] = [];
      let ran = 0;
      const before = served.length;
      const result = await afterUserConfirms(
        r,
        async (q) => {
          asked.push(q);
          return answer as boolean;
        },
        (req) => {
          ran++;
          return runModelDownload(req);
        },
      );
      assert.deepEqual(result, { confirmed: false, error: DOWNLOAD_NOT_CONFIRMED }, String(answer));
      assert.equal(asked.length, 1);
      assert.equal(asked[0]!.message, 'Bulwark: replace the Tier 1 classifier model?');
      for (const n of [...names, `${base}/good/`]) assert.ok(asked[0]!.detail.includes(n), `the question names ${n}: ${asked[0]!.detail}`);
      assert.equal(ran, 0);
      assert.deepEqual(served.slice(before), [], 'nothing was fetched');
      assert.equal(ls(dest), undefined, 'no folder, no file');
    }
  });

  it('the same request, confirmed: downloaded from the server into the folder', async () => {
    const dest = path.join(root, 'confirmed');
    const before = served.length;
    const result = await afterUserConfirms(
      request({ destDir: dest }),
      async (q) => q.yes === 'Download and Use',
      (req) => runModelDownload(req),
    );
    assert.deepEqual(result, { confirmed: true, result: { ok: true, dir: dest } });
    assert.deepEqual(served.slice(before).sort(), names.map((n) => `/good/onnx/${n}`).sort());
    assert.deepEqual(ls(dest), [...names].sort());
  });

  it('one download per folder at a time', async () => {
    const dest = path.join(root, 'busy');
    const [a, b] = await Promise.all([runModelDownload(request({ destDir: dest })), runModelDownload(request({ destDir: dest }))]);
    assert.equal(a.ok, true);
    assert.ok(!b.ok && /already running/.test(b.error), JSON.stringify(b));
  });
});
