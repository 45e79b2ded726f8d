// Issue 16 (1, 2): a secret found once is masked everywhere (every copy in the same text, the rest of a
// stream, later outputs that share the session's registry), and known values are masked by value,
// whatever their shape. Real rules, real redactors; the registry keeps no value in clear.
import assert from 'node:assert/strict';
import { KnownValues, StreamingRedactor, knownValueSkipReason, loadSecretRules, redactSecrets } from '../../src/engine/secrets';
import { prng } from './helpers/prng';

const rules = loadSecretRules();
// Provider-format tokens, split so that this file holds no literal a scanner would flag.
const GITHUB = 'ghp_' + 'R7u2Kq9Zt4Lm8Xc1Vb6Nw3Hy5Pj0Sd2Fg7Ae';
const SLACK = 'xoxb-' + '482913570264-7730184652915-aZ3kQ9mN2pL8rT5vW7';

function stream(chunks: readonly string[], known?: KnownValues): { out: string; emitted: string[] } {
  const emitted: string[] = [];
  const r = new StreamingRedactor(rules, (t) => emitted.push(t), {
    scheduler: { set: () => 0, clear: () => undefined },
    ...(known ? { knownValues: known } : {}),
  });
  for (const c of chunks) r.write(c);
  r.close();
  return { out: emitted.join(''), emitted };
}

describe('value masking: a secret found once is masked everywhere', () => {
  it('masks the bare copy beside the one a detector recognises, under the same rule id', () => {
    const pass = 'Tr0ub4dor-x9Qz-Lm2v';
    const text = `db:\n  password: "${pass}"\nconnecting as admin with ${pass}\nretry: ${pass}; part ${pass.slice(0, 9)}\n`;
    const alone = redactSecrets(rules, `connecting as admin with ${pass}\n`);
    assert.equal(alone.findings.length, 0, 'control: the bare copy alone is no secret to a detector');
    const r = redactSecrets(rules, text);
    assert.ok(!r.text.includes(pass), r.text);
    const ids = r.findings.map((f) => f.ruleId);
    assert.equal(ids.length, 3, r.text);
    assert.equal(new Set(ids).size, 1, `one rule id names every copy: ${ids.join(', ')}`);
    assert.ok(r.text.includes(`part ${pass.slice(0, 9)}`), 'a part of the value is not the value');
    assert.ok(!redactSecrets(rules, text).text.includes(GITHUB));
  });

  it('a stream masks every copy after the first detection, and a later stream sharing the session registry masks a bare copy', () => {
    const known = new KnownValues();
    const first = stream([`export SLACK_TOKEN=${SLACK}\n`, `echo ${SLACK.slice(0, 20)}`, `${SLACK.slice(20)} done\n`], known);
    assert.ok(!first.out.includes(SLACK), first.out);
    assert.ok(
      first.emitted.every((e) => !e.includes(SLACK.slice(0, 12))),
      'no emitted piece holds the start of the value',
    );
    // The later tool output: the bare value has no context a detector needs.
    const later = stream(['result: ', SLACK.slice(0, 9), SLACK.slice(9), '\n'], known);
    assert.equal(later.out, 'result: [REDACTED:slack-bot-token]\n');
    // Control: without the session's registry the bare value is not recognised.
    assert.ok(stream([`result: ${SLACK}\n`]).out.includes('REDACTED'), 'a Slack bot token is recognised by its own format anyway');
    const bare = 'Zq8Rt5Lm2Xv9Kp4Wn7Bc3Hd6Jf1Gs0Ay';
    assert.equal(
      redactSecrets(rules, `value ${bare}\n`).text,
      `value ${bare}\n`,
      'control: a random string alone is no secret to a detector',
    );
  });

  it('never releases part of a known value, however the stream is cut (seeded chunkings)', () => {
    const value = 'Kx9!vQ2#mZ7@pL4$wR8%tN3^';
    const known = new KnownValues();
    assert.equal(known.add(value, 'known-value.env-file'), true);
    const text = `line one\nthe value ${value} appears, then ${value}${value} twice\nend\n`;
    const rnd = prng(16);
    for (let run = 0; run < 300; run++) {
      const chunks: string[] = [];
      for (let at = 0; at < text.length;) {
        const n = 1 + Math.floor(rnd() * 12);
        chunks.push(text.slice(at, at + n));
        at += n;
      }
      const { out, emitted } = stream(chunks, known);
      assert.equal(
        out,
        'line one\nthe value [REDACTED:known-value.env-file] appears, then [REDACTED:known-value.env-file][REDACTED:known-value.env-file] twice\nend\n',
      );
      let so = '';
      for (const e of emitted) {
        so += e;
        assert.ok(!so.includes(value.slice(0, 3)), `run ${run}: the start of the value was released: ${JSON.stringify(so)}`);
      }
    }
  });
});

describe('value masking: the known-values registry', () => {
  it('skips values that are too short, only digits, plain words or common, by a documented rule', () => {
    for (const [v, why] of [
      ['3000', /shorter/],
      ['12345678901', /only digits/],
      ['postgres', /plain lower-case word|common/],
      ['localhost', /plain lower-case word|common/],
      ['aaaaaaaaaaaa', /plain lower-case word|entropy/],
      ['Development', /common/],
      [' padded-secret-value', /white space/],
    ] as const) {
      assert.match(knownValueSkipReason(v) ?? '(kept)', why, v);
    }
    for (const v of ['s3cr3t-pass', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'local-token-123456', 'correcthorsebatterystaple'])
      assert.equal(knownValueSkipReason(v), undefined, v);
  });

  it('keeps no value in clear, finds each occurrence (the longest where two start together) and refuses duplicates', () => {
    const k = new KnownValues();
    assert.equal(k.add('s3cr3t-pass', 'known-value.env-file'), true);
    assert.equal(k.add('s3cr3t-pass', 'known-value.other'), false);
    assert.equal(k.add('s3cr3t-password-long', 'known-value.aws'), true);
    assert.ok(
      !JSON.stringify([...(k as unknown as { byWindow: Map<number, unknown> }).byWindow]).includes('s3cr3t'),
      'only hashes are kept',
    );
    assert.deepEqual(k.find('a s3cr3t-pass b s3cr3t-password-long c'), [
      { start: 2, end: 13, ruleId: 'known-value.env-file' },
      { start: 16, end: 36, ruleId: 'known-value.aws' },
    ]);
    assert.deepEqual(k.find('s3cr3t-pas'), [], 'a prefix is not the value');
  });

  it('a known value is masked by redactSecrets whatever its shape, and the surrounding text is kept', () => {
    const k = new KnownValues();
    k.add('correcthorsebatterystaple', 'known-value.env-file');
    assert.equal(
      redactSecrets(rules, 'login with correcthorsebatterystaple now', k).text,
      'login with [REDACTED:known-value.env-file] now',
    );
  });
});
