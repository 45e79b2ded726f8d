// StreamingRedactor: for every chunking, the concatenated output equals redactSecrets() of the
// whole text, and no emitted prefix ever contains (part of) a planted secret. A seeded PRNG of our
// own drives the randomized part so it runs without extra dependencies (a fixed seed, and one fresh
// seed per run: helpers/seeds.ts); the fast-check version of the same property is in
// streaming-redactor.property.test.ts.
import assert from 'node:assert/strict';
import { StreamingRedactor, loadSecretRules, redactSecrets, type FlushScheduler, type SecretRuleSet } from '../../src/engine/secrets';
import { prng } from './helpers/prng';
import { runSeeds, withSeed } from './helpers/seeds';
import { ruleMatchPlants } from './helpers/workloads';

const rules: SecretRuleSet = loadSecretRules();

/** A scheduler whose clock only moves when the test says so. */
class FakeScheduler implements FlushScheduler {
  now = 0;
  readonly delays: number[] = [];
  private next = 1;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();
  set(fn: () => void, ms: number): unknown {
    this.delays.push(ms);
    const id = this.next++;
    this.pending.set(id, { at: this.now + ms, fn });
    return id;
  }
  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  get armed(): number {
    return this.pending.size;
  }
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.pending].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.now = due[1].at;
      due[1].fn();
    }
    this.now = until;
  }
}

/** Feeds `chunks` and checks, after every emit, that the output so far is a prefix of the batch result without any planted secret. */
function stream(chunks: readonly string[], opts: { expected: string; secrets: readonly string[]; pauses?: (i: number) => number }): string {
  const clock = new FakeScheduler();
  let out = '';
  const check = (what: string): void => {
    assert.ok(
      opts.expected.startsWith(out),
      `${what}: emitted text is not a prefix of the batch redaction\n  emitted:  ${JSON.stringify(out.slice(-120))}\n  expected: ${JSON.stringify(opts.expected.slice(Math.max(0, out.length - 120), out.length + 40))}`,
    );
    for (const s of opts.secrets) assert.ok(!out.includes(s), `${what}: a planted secret was emitted: ${JSON.stringify(s)}`);
  };
  const r = new StreamingRedactor(
    rules,
    (safe) => {
      out += safe;
      check('emit');
    },
    { scheduler: clock },
  );
  chunks.forEach((c, i) => {
    r.write(c);
    const pause = opts.pauses?.(i) ?? 0;
    if (pause > 0) clock.advance(pause);
  });
  r.close();
  check('close');
  assert.ok(
    clock.delays.every((d) => d <= 50),
    'the flush timer is armed for at most 50 ms',
  );
  return out;
}

// ---------------------------------------------------------------- generators

/** Every rule's match examples, with the secret values the full rule set finds in them. */
const PLANTS = ruleMatchPlants(rules);

const FILLERS = [
  'const total = items.reduce((sum, item) => sum + item.price, 0);',
  '2024-05-01T12:00:00Z INFO request id=7f3a path=/api/v1/items?page=2 status=200 duration_ms=14',
  'The token is used to authenticate; rotate the password every 90 days.',
  'password reset flow: see docs/auth.md',
  'if (token === undefined) throw new Error("missing token");',
  'export GITHUB_TOKEN=$GITHUB_TOKEN',
  'api_key = os.getenv("API_KEY")',
  'headers: { Authorization: `Bearer ${token}` }',
  '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----',
  '--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,3 +1,4 @@',
  'sk- prefixed keys, ghp_ tokens and AKIA ids are detected; eyJ starts a JWT.',
  'https://example.com/path?x=1&y=two#frag',
  'naïve café — 東京 🙂 İstanbul \u212Aelvin',
  '| key | value |\n|-----|-------|\n| a   | b     |',
  'xoxb- hooks.slack.com AIza -----BEGIN RSA PUBLIC KEY-----',
  'max_tokens: 4096\ntokenizer = AutoTokenizer.from_pretrained(name)',
  '\r\n',
  '    ',
];

function randomText(rand: () => number): { text: string; secrets: string[] } {
  const parts: string[] = [];
  const secrets: string[] = [];
  const pieces = 2 + Math.floor(rand() * 8);
  for (let i = 0; i < pieces; i++) {
    const roll = rand();
    if (roll < 0.45) {
      const p = PLANTS[Math.floor(rand() * PLANTS.length)]!;
      parts.push(p.text);
      secrets.push(...p.secrets);
    } else if (roll < 0.85) {
      parts.push(FILLERS[Math.floor(rand() * FILLERS.length)]!);
    } else {
      // Noise made of keyword fragments: exercises partial keywords and prefixes that die.
      const frags = [
        'gh',
        'ghp_',
        'xox',
        'sk-',
        'sk-ant-',
        'AKIA',
        'AIza',
        'eyJ',
        '-----',
        '-----BEGIN ',
        'password',
        '=',
        '"',
        "'",
        ':',
        ' ',
        '\n',
        'token',
        'Bearer ',
        '://',
        '@',
        'a1B2',
        'ZZ',
        '_',
      ];
      let s = '';
      const n = 1 + Math.floor(rand() * 12);
      for (let k = 0; k < n; k++) s += frags[Math.floor(rand() * frags.length)]!;
      parts.push(s);
    }
  }
  return { text: parts.join(rand() < 0.5 ? '\n' : '\n\n'), secrets };
}

function randomChunks(text: string, rand: () => number): string[] {
  const mode = Math.floor(rand() * 5);
  const maxLen = [1, 4, 16, 128, 4096][mode]!;
  const chunks: string[] = [];
  for (let i = 0; i < text.length;) {
    const n = 1 + Math.floor(rand() * maxLen);
    chunks.push(text.slice(i, i + n));
    i += n;
  }
  return chunks;
}

// ---------------------------------------------------------------- tests

describe('StreamingRedactor: randomized texts with planted secrets (seeded PRNG)', function () {
  this.timeout(120_000);

  it('has plants from every family of rules', () => {
    const families = new Set(PLANTS.map((p) => rules.rules.find((r) => r.id === p.rule)!.family));
    assert.ok(families.size >= 10, [...families].join(', '));
    assert.ok(PLANTS.length >= 400, `${PLANTS.length} plants`);
  });

  for (const s of runSeeds(0xb01a4c))
    it(`600 random texts × random chunkings: output equals batch redaction, and no prefix ever holds a planted secret (${s.fresh ? 'fresh' : 'fixed'} seed)`, () =>
      withSeed(s, (seed) => {
        const rand = prng(seed);
        let checked = 0;
        for (let n = 0; n < 600; n++) {
          const { text, secrets } = randomText(rand);
          const expected = redactSecrets(rules, text).text;
          for (const s of secrets)
            assert.ok(!expected.includes(s), `batch redaction left a planted secret in clear: ${JSON.stringify(s)}\n${text}`);
          const chunks = randomChunks(text, rand);
          // Random pauses let the flush timer fire between chunks.
          const out = stream(chunks, { expected, secrets, pauses: () => (rand() < 0.3 ? Math.floor(rand() * 200) : 0) });
          assert.equal(out, expected, `text #${n}`);
          checked++;
        }
        assert.equal(checked, 600);
      }));

  it('every rule example, one character per chunk with a long pause after each', () => {
    for (const p of PLANTS) {
      const text = `before ${p.text} after\n`;
      const expected = redactSecrets(rules, text).text;
      const out = stream([...text], { expected, secrets: p.secrets, pauses: () => 1000 });
      assert.equal(out, expected, p.rule);
    }
  });

  it('every rule example split at every position into two chunks', () => {
    for (const p of PLANTS.filter((_, i) => i % 3 === 0)) {
      const text = `x ${p.text}\n`;
      const expected = redactSecrets(rules, text).text;
      for (let cut = 1; cut < text.length; cut += Math.max(1, Math.floor(text.length / 40))) {
        assert.equal(stream([text.slice(0, cut), text.slice(cut)], { expected, secrets: p.secrets }), expected, `${p.rule} cut at ${cut}`);
      }
    }
  });
});

describe('StreamingRedactor: flush timer (fake scheduler)', () => {
  const ghp = ['gh', 'p_', 'Zk3q9LmN2pQ8rT5vW7xY1aB4cD6eF0gHiJkL'].join('');

  it('releases safe text at once, well within 50 ms, and arms the timer for at most 50 ms', () => {
    const clock = new FakeScheduler();
    const out: string[] = [];
    const r = new StreamingRedactor(rules, (s) => out.push(s), { scheduler: clock });
    r.write('Hello, world. The build passed in 12 s.\n');
    assert.equal(out.join(''), 'Hello, world. The build passed in 12 s.\n', 'emitted synchronously, at t = 0');
    r.write('Deploying to the gh');
    assert.equal(out.join(''), 'Hello, world. The build passed in 12 s.\nDeploying to the ', '"gh" could start a GitHub token: held');
    assert.equal(clock.armed, 1);
    assert.ok(clock.delays.every((d) => d <= 50));
    clock.advance(50);
    assert.equal(
      out.join(''),
      'Hello, world. The build passed in 12 s.\nDeploying to the ',
      'the timer does not release a possible token prefix',
    );
    r.write('ost town.\n');
    assert.equal(out.join(''), 'Hello, world. The build passed in 12 s.\nDeploying to the ghost town.\n');
    r.close();
  });

  it('never flushes a partial secret, however long the pauses', () => {
    const clock = new FakeScheduler();
    let out = '';
    const r = new StreamingRedactor(
      rules,
      (s) => {
        out += s;
      },
      { scheduler: clock },
    );
    r.write('deploy with ');
    for (const ch of ghp) {
      r.write(ch);
      clock.advance(10_000);
      assert.equal(out, 'deploy with ', 'nothing of the token is released');
    }
    r.write('\nnext line\n');
    assert.equal(out, 'deploy with [REDACTED:github-pat-classic]\nnext line\n');
    r.close();
    assert.equal(out, 'deploy with [REDACTED:github-pat-classic]\nnext line\n');
    // Under a secret-looking key the key itself may be held too (it can be part of a match), never the value.
    out = '';
    const r2 = new StreamingRedactor(
      rules,
      (s) => {
        out += s;
      },
      { scheduler: clock },
    );
    r2.write('token: ');
    for (const ch of ghp) {
      r2.write(ch);
      clock.advance(10_000);
      assert.ok('token: '.startsWith(out), `held: ${JSON.stringify(out)}`);
    }
    r2.close();
    assert.equal(out, 'token: [REDACTED:github-pat-classic]');
  });

  it('a generic assignment split across chunks is held until it is decided', () => {
    const clock = new FakeScheduler();
    let out = '';
    const r = new StreamingRedactor(
      rules,
      (s) => {
        out += s;
      },
      { scheduler: clock },
    );
    const text = 'config:\n  password = "Tr0ub4dor&3xQ"\n  user = "svc"\n';
    for (const ch of text) {
      r.write(ch);
      clock.advance(100);
      assert.ok(!/Tr0|r0u|ub4/.test(out), `part of the password emitted: ${JSON.stringify(out)}`);
    }
    r.close();
    assert.equal(out, redactSecrets(rules, text).text);
    assert.match(out, /password = "\[REDACTED:generic-password-quoted\]"/);
  });

  it('an unquoted value cut by a chunk is held from its start only (the hold-back search starts in the last run a secret can consist of)', () => {
    const rule = rules.rules.find((x) => x.id === 'generic-token-unquoted')!;
    assert.ok(rule.secretStart && Number.isFinite(rule.secretTail), 'a bounded secret tail');
    assert.equal(rule.secretChars.table[32], 0, 'a space is not part of the value');
    const clock = new FakeScheduler();
    let out = '';
    const r = new StreamingRedactor(
      rules,
      (s) => {
        out += s;
      },
      { scheduler: clock },
    );
    const head = `${'log line '.repeat(200)}\nTOKEN=`;
    r.write(head + 'Zq8vN2x');
    clock.advance(100);
    assert.equal(out, head, 'everything before the value is out, none of the value');
    r.write('Lw4mR7tY1kP3s\n');
    r.close();
    assert.equal(out, redactSecrets(rules, `${head}Zq8vN2xLw4mR7tY1kP3s\n`).text);
    assert.match(out, /TOKEN=\[REDACTED:generic-token-unquoted\]/);
  });

  it('a PEM BEGIN holds everything until END; close() without END redacts to the end', () => {
    const clock = new FakeScheduler();
    let out = '';
    const r = new StreamingRedactor(
      rules,
      (s) => {
        out += s;
      },
      { scheduler: clock },
    );
    const begin = ['-----BEGIN RSA PRI', 'VATE KEY-----\n'].join('');
    r.write(`key follows:\n${begin}`);
    clock.advance(1000);
    assert.equal(out, 'key follows:\n');
    r.write('MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n');
    clock.advance(1000);
    assert.equal(out, 'key follows:\n', 'the body is held');
    r.close();
    assert.equal(out, 'key follows:\n[REDACTED:pem-rsa-private-key]');
  });

  it('close() flushes a pending secret with redaction', () => {
    let out = '';
    const r = new StreamingRedactor(
      rules,
      (s) => {
        out += s;
      },
      { scheduler: new FakeScheduler() },
    );
    r.write(`export GITHUB_TOKEN=${ghp}`);
    assert.ok('export GITHUB_TOKEN='.startsWith(out), `only text before the token: ${JSON.stringify(out)}`);
    r.close();
    assert.equal(out, 'export GITHUB_TOKEN=[REDACTED:github-pat-classic]');
    assert.throws(() => r.write('more'), /after close/);
  });

  it('refuses a flush delay above 50 ms', () => {
    assert.throws(() => new StreamingRedactor(rules, () => undefined, { flushDelayMs: 80 }), RangeError);
  });

  it('uses the real timer by default and stays within 50 ms', async () => {
    let out = '';
    const r = new StreamingRedactor(rules, (s) => {
      out += s;
    });
    r.write('plain text, then a partial ');
    r.write('xox');
    await new Promise((resolve) => setTimeout(resolve, 70));
    assert.equal(out, 'plain text, then a partial ');
    r.close();
    assert.equal(out, 'plain text, then a partial xox');
  });
});

describe('StreamingRedactor: details', () => {
  it('two secrets in one chunk and one secret across many chunks', () => {
    const a = ['AKIA', 'QX7Z2LMB4RTY5N6P'].join('');
    const b = ['xoxb-', '482913570264-7730184652915-', 'aZ3kQ9mN2pL8rT5vW7xY1bC4'].join('');
    const text = `ids: ${a} and ${b} (rotated)\n`;
    const expected = redactSecrets(rules, text).text;
    assert.equal(expected, 'ids: [REDACTED:aws-access-key-id] and [REDACTED:slack-bot-token] (rotated)\n');
    assert.equal(stream([text], { expected, secrets: [a, b] }), expected);
    assert.equal(stream(text.match(/.{1,3}/gs)!, { expected, secrets: [a, b] }), expected);
  });

  it('does not split a surrogate pair between emits', () => {
    const parts: string[] = [];
    const r = new StreamingRedactor(rules, (s) => parts.push(s), { scheduler: new FakeScheduler() });
    const text = 'ok 🙂 done 🎉';
    for (let i = 0; i < text.length; i++) r.write(text[i]!);
    r.close();
    assert.equal(parts.join(''), text);
    for (const p of parts) assert.ok(!/[\uD800-\uDBFF]$/.test(p), `emit ends inside a surrogate pair: ${JSON.stringify(p)}`);
  });

  it('keeps its buffer small on a long stream without secrets', () => {
    const r = new StreamingRedactor(rules, () => undefined, { scheduler: new FakeScheduler() });
    const line = 'INFO processed batch of 128 records in 42 ms (queue depth 7)\n';
    for (let i = 0; i < 5000; i++) r.write(line);
    assert.ok(r.pendingLength < 64, `pending ${r.pendingLength}`);
    r.close();
  });
});
