// `bulwark redact` as a user runs it (node dist/cli.js redact): streaming stdin → stdout, the output
// equal to batch redaction, nothing of a secret ever on stdout, invalid UTF-8, large inputs.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findSecrets, loadSecretRules, redactSecrets } from '../../src/engine/secrets';
import { repoRoot } from './helpers/repo';

const CLI = path.join(repoRoot(), 'dist', 'cli.js');
const rules = loadSecretRules();
const join = (...parts: string[]): string => parts.join(''); // token-shaped test data is never one literal
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ghp = join('ghp_', 'Zk3q9LmN2pQ8rT5v', 'W7xY1aB4cD6eF0gHiJkL');
const akia = join('AKIA', 'QX7Z2LMB4RTY5N6P');
const pgUrl = join('postgres://app:', 'Xk29vLp0QmZt8wRb', '@db.internal:5432/app');
const jwt = join('eyJhbGciOiJIUzI1NiJ9', '.eyJzdWIiOiIxMjM0NTY3ODkwIn0', '.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk');
const pem = [
  join('-----BEGIN OPENSSH PRI', 'VATE KEY-----'),
  'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
  'QyNTUxOQAAACDcwqL4y9pBOWPxgGvKn3oh2p9Yv0J3CJ2kmf5yXHqU3QAAAJhPq1zWT6tc',
  'Wk9pQ3JxTnZ0dW1lbnRhcnlGaWxsZXJGb3JUaGVUZXN0T25seU5vdEFSZWFsS2V5QXRBbGw',
  join('-----END OPENSSH PRI', 'VATE KEY-----'),
].join('\n');

/** Pieces of `text` that must never reach stdout: every 8-character window of every secret the batch redactor finds. */
function secretWindows(text: string): string[] {
  const out = new Set<string>();
  for (const f of findSecrets(rules, text)) {
    const v = text.slice(f.start, f.end);
    for (let i = 0; i + 8 <= v.length; i++) out.add(v.slice(i, i + 8));
  }
  return [...out];
}

interface Run {
  child: ChildProcessWithoutNullStreams;
  /** stdout so far (decoded as a whole, so a split character is never counted twice). */
  stdout(): string;
  /** Every state stdout has been in, one per 'data' event. */
  snapshots: string[];
  waitFor(pred: (out: string) => boolean, ms?: number): Promise<void>;
  write(data: string | Buffer): Promise<void>;
  end(): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

const live = new Set<ChildProcessWithoutNullStreams>();

function startRedact(args: string[] = [], { snapshots: record = true, nodeArgs = [] as string[] } = {}): Run {
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'redact', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  live.add(child);
  child.on('close', () => live.delete(child));
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const snapshots: string[] = [];
  const waiters: Array<() => void> = [];
  const stdout = () => Buffer.concat(out).toString('utf8');
  child.stdout.on('data', (d: Buffer) => {
    out.push(d);
    if (record) snapshots.push(stdout());
    for (const w of waiters.splice(0)) w();
  });
  child.stderr.on('data', (d: Buffer) => err.push(d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    stdout,
    snapshots,
    async waitFor(pred, ms = 5000) {
      const deadline = Date.now() + ms;
      while (!pred(stdout())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for stdout; got ${JSON.stringify(stdout().slice(-200))}`);
        await Promise.race([new Promise<void>((r) => waiters.push(r)), sleep(50)]);
      }
    },
    write(data) {
      return new Promise((resolve, reject) => child.stdin.write(data, (e) => (e ? reject(e) : resolve())));
    },
    async end() {
      child.stdin.end();
      const code = await exited;
      return { code, stdout: stdout(), stderr: Buffer.concat(err).toString('utf8') };
    },
  };
}

describe('bulwark redact (dist/cli.js)', function () {
  this.timeout(60000);
  afterEach(() => {
    for (const c of live) c.kill();
  }); // a failed test leaves no process that keeps mocha alive
  before(function () {
    if (!fs.existsSync(CLI)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` before the unit tests');
  });

  const sample = [
    'const intro = "starting the deploy service";\n',
    `GITHUB_TOKEN=${ghp}\n`,
    `2025-01-07T10:00:01Z INFO aws key in use: ${akia} for bucket logs\n`,
    `DATABASE_URL=${pgUrl}\n`,
    `curl -H "Authorization: Bearer ${jwt}" https://api.acme.io/v1/items\n`,
    `id_ed25519:\n${pem}\n`,
    'done: 42 files, 0 errors\n',
  ].join('');

  it('the sample has the planted secrets (test sanity)', () => {
    const found = findSecrets(rules, sample).map((f) => sample.slice(f.start, f.end));
    for (const s of [ghp, akia, jwt, pem])
      assert.ok(
        found.some((v) => v.includes(s) || s.includes(v)),
        `not found: ${s.slice(0, 12)}…`,
      );
    assert.ok(found.some((v) => pgUrl.includes(v)));
  });

  it('chunks with pauses across secret boundaries: output equals batch redaction, nothing of a secret is ever on stdout', async () => {
    const r = startRedact();
    // Split inside every secret (and the PEM block between its lines), and pause between pieces so
    // the redactor's flush timer runs while a secret is half-written.
    const cuts = new Set<number>();
    for (const s of [ghp, akia, pgUrl, jwt, pem]) {
      const at = sample.indexOf(s);
      for (const k of [1, 4, 9, Math.floor(s.length / 2), s.length - 1]) cuts.add(at + k);
    }
    const pemAt = sample.indexOf(pem);
    for (let i = pem.indexOf('\n'); i >= 0; i = pem.indexOf('\n', i + 1)) cuts.add(pemAt + i + 1);
    const points = [0, ...[...cuts].sort((a, b) => a - b), sample.length];
    for (let i = 0; i + 1 < points.length; i++) {
      await r.write(sample.slice(points[i], points[i + 1]));
      if (i % 3 === 0) await sleep(70); // longer than the 50 ms flush timer
    }
    await sleep(120);
    const beforeEof = r.stdout();
    const { code, stdout, stderr } = await r.end();
    assert.equal(code, 0, stderr);
    assert.equal(stdout, redactSecrets(rules, sample).text);
    assert.ok(beforeEof.length > 0 && stdout.startsWith(beforeEof));
    const windows = secretWindows(sample);
    assert.ok(windows.length > 50);
    for (const snap of [...r.snapshots, stdout])
      for (const w of windows) assert.ok(!snap.includes(w), `secret piece ${JSON.stringify(w)} on stdout`);
    // Everything after the PEM block's END line was settled before EOF (only the last line's tail may be held).
    assert.ok(beforeEof.includes('[REDACTED:pem-openssh-private-key]'), beforeEof.slice(-200));
  });

  it('streams: text before a secret is on stdout before stdin is closed, and before the secret is complete', async () => {
    const r = startRedact();
    const head = 'build step 1 of 3 ok\nexport const region = "eu-west-1";\nGITHUB_TOKEN=';
    await r.write(head + ghp.slice(0, 10));
    // The key and separator are released; only the possible secret is held.
    await r.waitFor((o) => o.includes('build step 1 of 3 ok\nexport const region = "eu-west-1";\n'));
    assert.ok(!r.stdout().includes(ghp.slice(0, 8)), r.stdout());
    await r.write(ghp.slice(10) + '\nnext line\n');
    await r.waitFor((o) => o.includes('[REDACTED:github-pat-classic]\nnext line\n'));
    const { code, stdout } = await r.end();
    assert.equal(code, 0);
    assert.equal(stdout, redactSecrets(rules, `${head}${ghp}\nnext line\n`).text);
  });

  it('a PEM block arriving one line at a time is redacted whole (and to the end when END never comes)', async () => {
    const r = startRedact();
    const text = `key file:\n${pem}\nafter the key\n`;
    for (const line of text.split(/(?<=\n)/)) {
      await r.write(line);
      await sleep(60);
    }
    await r.waitFor((o) => o.includes('after the key'));
    const partial = r.stdout();
    assert.ok(partial.startsWith('key file:\n[REDACTED:pem-openssh-private-key]\nafter the key'), partial);
    const { stdout } = await r.end();
    assert.equal(stdout, redactSecrets(rules, text).text);

    const cut = `key file:\n${pem.split('\n').slice(0, 3).join('\n')}\n`;
    const r2 = startRedact();
    for (const line of cut.split(/(?<=\n)/)) {
      await r2.write(line);
      await sleep(30);
    }
    await r2.waitFor((o) => o === 'key file:\n');
    await sleep(150); // past the flush timer: time never releases part of a key
    assert.equal(r2.stdout(), 'key file:\n', 'an open PEM block is held until END or EOF');
    const done = await r2.end();
    assert.equal(done.stdout, 'key file:\n[REDACTED:pem-openssh-private-key]');
    for (const w of secretWindows(cut)) assert.ok(!done.stdout.includes(w));
  });

  it('invalid UTF-8: each invalid sequence becomes U+FFFD, the rest is redacted, the count is on stderr, exit 0', async () => {
    const r = startRedact(['--report']);
    const e = Buffer.from('café ', 'utf8'); // a multi-byte character split across writes is joined, not replaced
    await r.write(Buffer.concat([Buffer.from('line one '), e.subarray(0, 4)]));
    await sleep(20);
    await r.write(Buffer.concat([e.subarray(4), Buffer.from([0xff, 0x20, 0xc3]), Buffer.from(` ok\nGITHUB_TOKEN=${ghp}\n`)]));
    await r.write(Buffer.from('already clean \ufffd [REDACTED:jwt] text\n', 'utf8')); // a real U+FFFD and an old placeholder are not counted
    await r.write(Buffer.from([0xe2, 0x82])); // truncated at EOF
    const { code, stdout, stderr } = await r.end();
    assert.equal(code, 0, stderr);
    const decoded = `line one café \ufffd \ufffd ok\nGITHUB_TOKEN=${ghp}\nalready clean \ufffd [REDACTED:jwt] text\n\ufffd`;
    assert.equal(stdout, redactSecrets(rules, decoded).text);
    assert.ok(!stdout.includes(ghp.slice(4, 12)));
    assert.match(stderr, /not valid UTF-8: 3 invalid sequence\(s\) replaced by U\+FFFD/);
    const summary = JSON.parse(stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
    assert.deepEqual(summary, {
      redacted: 1,
      rules: { 'github-pat-classic': 1 },
      bytes_in: summary.bytes_in,
      invalid_utf8: 3,
      complete: true,
    });
    assert.ok(!stderr.includes(ghp.slice(4, 12)), 'the report never contains a secret');
  });

  it('valid input writes nothing on stderr; a byte-order mark is kept; usage errors exit 2', () => {
    const input = `\ufeffhello ${akia}\n`;
    const r = spawnSync(process.execPath, [CLI, 'redact'], { input: Buffer.from(input, 'utf8') });
    assert.equal(r.status, 0);
    assert.equal(r.stderr.toString(), '');
    assert.equal(r.stdout.toString('utf8'), '\ufeffhello [REDACTED:aws-access-key-id]\n');
    const bad = spawnSync(process.execPath, [CLI, 'redact', '--nope'], { input: '' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr.toString(), /unknown option --nope/);
    const empty = spawnSync(process.execPath, [CLI, 'redact'], { input: '' });
    assert.equal(empty.status, 0);
    assert.equal(empty.stdout.length, 0);
  });

  it('a closed stdout (`| head`) ends quietly', () => {
    const r = spawnSync(
      'sh',
      ['-c', `yes "log line with ${akia} in it" | head -c 3000000 | "${process.execPath}" "${CLI}" redact | head -c 100 > /dev/null`],
      { encoding: 'utf8' },
    );
    assert.equal(r.stderr, '');
  });

  it('20 MB streams through in a 48 MB heap: output equals batch redaction, the first output comes long before EOF', async () => {
    const lines: string[] = [];
    let size = 0;
    for (let i = 0; size < 20_000_000; i++) {
      const l =
        i % 997 === 0
          ? `${i} GITHUB_TOKEN=${ghp}\n`
          : i % 1499 === 0
            ? `${i} aws ${akia} request id ${i * 7}\n`
            : `2025-01-07T10:${String(i % 60).padStart(2, '0')}:00Z INFO request ${i} served in ${i % 250} ms path=/api/v1/items/${i % 1000}\n`;
      lines.push(l);
      size += l.length;
    }
    const input = lines.join('');
    const expected = redactSecrets(rules, input).text;
    // Bounded memory: a 48 MB V8 heap is enough to stream 20 MB (the redactor holds only a short
    // tail), and too small to hold the input as a string with a lower-cased copy.
    const r = startRedact([], { snapshots: false, nodeArgs: ['--max-old-space-size=48'] });
    let firstOutputAt = -1;
    let written = 0;
    r.child.stdout.once('data', () => {
      firstOutputAt = written;
    });
    const piece = 64 * 1024;
    for (let at = 0; at < input.length; at += piece) {
      const ok = r.child.stdin.write(input.slice(at, at + piece));
      written += piece;
      if (!ok) await new Promise((res) => r.child.stdin.once('drain', res));
    }
    const { code, stdout, stderr } = await r.end();
    assert.equal(code, 0, stderr);
    assert.ok(firstOutputAt >= 0 && firstOutputAt < 2_000_000, `first output after ${firstOutputAt} bytes of input`);
    assert.equal(stdout.length, expected.length);
    assert.ok(stdout === expected, 'output differs from batch redaction');
    assert.ok(!stdout.includes(ghp.slice(4, 12)) && !stdout.includes(akia.slice(4, 12)));
  });
});
