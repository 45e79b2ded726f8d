// Issue 16, part 3 (context rules) and the embedded-token half of part 1, over the whole bundled rule set:
// distinctive provider prefixes inside a longer word, well-formed tokens with a repetitive body, log / JSON /
// XML / connection-string contexts, and placeholders that must stay in clear. Token-shaped data is never one literal.
import assert from 'node:assert/strict';
import { findSecrets, loadSecretRules, redactSecrets } from '../../src/engine/secrets';

const rules = loadSecretRules();
const join = (...parts: string[]): string => parts.join('');
const rep = (c: string, n: number): string => c.repeat(n);
const ALNUM = 'Kq8mX2vT9rB4nW7kC1pD6sF3hJ0Lz5Yg';
const body = (n: number): string => rep(ALNUM, Math.ceil(n / ALNUM.length)).slice(0, n);

/** The rule ids that cover `value` in `text` (after overlap resolution), and whether the value is gone. */
function masked(text: string, value: string): { ids: string[]; gone: boolean } {
  const start = text.indexOf(value);
  assert.ok(start >= 0, `${value} not in ${text}`);
  const ids = findSecrets(rules, text)
    .filter((f) => f.start <= start && f.end >= start + value.length)
    .map((f) => f.ruleId);
  return { ids, gone: !redactSecrets(rules, text).text.includes(value) };
}

describe('secret context rules: provider tokens inside a longer word', () => {
  const cases: [string, string, string][] = [
    ['github-pat-classic', 'xghp_', join('ghp_', body(36))],
    ['github-oauth-token', '1', join('gho_', body(36))],
    ['github-server-to-server-token', 'Z', join('ghs_', body(36))],
    ['github-user-to-server-token', 'q', join('ghu_', body(36))],
    ['github-fine-grained-pat', 'X', join('github_pat_', body(82))],
    ['gitlab-pat', 'a', join('glpat-', body(20))],
    ['stripe-live-secret-key', 'a', join('sk_live_', body(24))],
    ['stripe-restricted-key', 'a', join('rk_live_', body(24))],
    ['slack-bot-token', 'ar', join('xoxb-', '123456789012-', '123456789012-', body(24))],
    ['sendgrid-api-key', 'som', join('SG.', body(22), '.', body(43))],
    ['npm-access-token', 'x', join('npm_', body(36))],
    ['aws-access-key-id', 'X', join('AKIA', 'QWERTYUI', 'OPASDF23')],
    ['anthropic-api-key', 'x', join('sk-ant-api03-', body(95))],
    ['shopify-access-token', 'x', join('shpat_', '0a1b2c3d4e5f6a7b', '8c9d0e1f2a3b4c5d')],
  ];
  for (const [id, before, token] of cases) {
    it(`${id}: masked with a letter or digit directly before it`, () => {
      const text = `2024-05-02 INFO value=${before}${token} done`;
      const r = masked(text, token);
      assert.ok(r.ids.includes(id), `${id} not among ${r.ids.join(', ')} in ${text}`);
      assert.ok(r.gone, text);
    });
  }

  it('keeps the word boundary where the prefix is short or a word (rk_test_, ASIA)', () => {
    assert.deepEqual(
      findSecrets(rules, join('fork_test_', body(24)))
        .map((f) => f.ruleId)
        .filter((i) => i === 'stripe-restricted-key'),
      [],
    );
    assert.deepEqual(
      findSecrets(rules, join('EURASIA', 'QWERTYUI', 'OPASDF23'))
        .map((f) => f.ruleId)
        .filter((i) => i === 'aws-access-key-id'),
      [],
    );
  });
});

describe('secret context rules: a well-formed token with a repetitive body is masked', () => {
  const cases: [string, string][] = [
    ['stripe-live-secret-key', join('sk_live_', rep('A', 24))],
    ['github-pat-classic', join('ghp_', rep('A', 36))],
    ['npm-access-token', join('npm_', rep('A', 36))],
    ['aws-access-key-id', join('AKIA', rep('A', 16))],
    ['sendgrid-api-key', join('SG.', rep('A', 22), '.', rep('A', 43))],
    ['gitlab-pat', join('glpat-', rep('A', 20))],
    ['slack-bot-token', join('xoxb-', rep('1', 12), '-', rep('1', 12), '-', rep('A', 24))],
    ['anthropic-api-key', join('sk-ant-api03-', rep('A', 95))],
  ];
  for (const [id, token] of cases) {
    it(`${id}: ${token.slice(0, 12)}…`, () => {
      const text = `config.secret = "${token}"`;
      const r = masked(text, token);
      assert.ok(r.ids.includes(id), `${id} not among ${r.ids.join(', ')}`);
      assert.ok(r.gone);
    });
  }

  it('masks a PEM private key block whatever its body', () => {
    const pem = join('-----BEGIN RSA ', 'PRIVATE KEY-----\n', rep('A', 64), '\n-----END RSA ', 'PRIVATE KEY-----');
    assert.equal(redactSecrets(rules, pem).text, '[REDACTED:pem-rsa-private-key]');
  });
});

describe('secret context rules: contexts', () => {
  const v = join('Zq8LmX2vT9', 'rB4nW7kC1p');
  const cases: [string, string][] = [
    ['generic-log-secret', `2024-05-02T10:01:22Z INFO client Key=${v} loaded`],
    ['generic-log-secret', `[worker] loaded key ${v}`],
    // `key: value` is an assignment to a name ending in key as well; that rule is listed first.
    ['generic-json-key-secret', `[worker] loaded key: ${v}`],
    ['generic-log-secret', `export API_KEY ${v}`],
    ['generic-log-secret', `DEBUG using api key ${v}`],
    ['generic-json-key-secret', `{"stripeKey": "${v}"}`],
    ['generic-json-key-secret', `{"sentryKey": "${v}"}`],
    ['generic-secret-quoted', `{"godaddySecret": "${v}"}`],
    ['generic-secret-quoted', `{"clientSecret": "${v}"}`],
    ['generic-token-quoted', `{"refresh_token": "${v}"}`],
    ['generic-xml-secret', `<secret>${v}</secret>`],
    ['generic-xml-secret', `<apiToken>${v}</apiToken>`],
    ['generic-xml-secret', `<passphrase>${v}</passphrase>`],
    ['jdbc-url-password', `jdbc:sqlserver://db:1433;databaseName=app;user=sa;password=${v};`],
    ['jdbc-url-password', `jdbc:h2:file:/data/app;USER=sa;PASSWORD=${v}`],
    ['jdbc-oracle-password', `jdbc:oracle:thin:app/${v}@db:1521:ORCL`],
    ['mysql-url-password', `jdbc:mysql://root:${v}@db:3306/app`],
    ['connection-string-password', `Server=tcp:db,1433;Database=app;User ID=sa;Password=${v};`],
    ['mongodb-url-password', `mongodb+srv://app:${v}@cluster0.mongodb.net/app`],
    ['postgres-url-password', `postgresql://app:${v}@db:5432/app`],
    ['redis-url-password', `redis://:${v}@cache:6379/0`],
    ['amqp-url-password', `amqp://app:${v}@mq:5672/`],
    ['url-credentials', `https://deploy:${v}@git.internal/app.git`],
  ];
  // Issue 16 §3 widened: the forms real files have (XML name/value pairs, glued password keys, k8s env lists,
  // .pgpass, properties keys, upper-case log names), with the value each form holds.
  const azureKey = join(body(86), '==');
  const forms: [string, string, string][] = [
    ['generic-xml-add-key-secret', `<property name="hibernate.connection.password" value="${v}"/>`, v],
    ['generic-xml-add-key-secret', `<entry key="db.password">${v}</entry>`, v],
    ['generic-xml-add-key-secret', `<add key="PartnerKey" value="${v}" />`, v],
    ['generic-password-glued', `ROOTPASS='${v}'`, v],
    ['generic-password-glued', `const dbPass = '${v}';`, v],
    ['generic-password-glued', `message.billingPwd:${v}`, v],
    ['generic-env-list-value', `        - name: RABBITMQ_PASS\n          value: "${v}"`, v],
    ['azure-storage-account-key', `  storageKey: "${azureKey}"`, azureKey],
    ['pgpass-password', `db-1.app.internal:5432:app:app_svc:${v}`, v],
    ['generic-properties-key-token', `gpr.key=${v}`, v],
    ['generic-properties-key-token', `policy.webhook-key: ${v}`, v],
    ['generic-token-quoted', '{"mailgun.auth.token":"copper.juniper.velvet.lantern42"}', 'copper.juniper.velvet.lantern42'],
    ['generic-log-secret', `AUTHTOKEN /${v}`, `/${v}`],
    // Issue 16: secret-named contexts with lower floors (short, low-entropy, digit-free or symbol-holding values).
    [
      'generic-log-secret',
      `level=info msg="calling upload" KEY=${join('Jao6Ha^M', '%LFnOCE')} duration=612ms`,
      join('Jao6Ha^M', '%LFnOCE'),
    ],
    ['generic-line-start-secret-name', `TOKEN ${v}`, v],
    [
      'generic-line-start-secret-name',
      `ok\nCLIENT_SECRET ${join('YstMzPdF-CbJ', '-X-JyQLVpp_DIJYA')}`,
      join('YstMzPdF-CbJ', '-X-JyQLVpp_DIJYA'),
    ],
    ['generic-json-key-secret', `{'KEY': '${join('cb6f972c2822e7', '2bda72b8831b5')}'}`, join('cb6f972c2822e7', '2bda72b8831b5')],
    [
      'generic-json-key-secret',
      `[mailgun]\nMailgunKey = ${join('661e26ea63897de8', '34f49374fde769e7')}`,
      join('661e26ea63897de8', '34f49374fde769e7'),
    ],
    ['generic-env-key', `export SMTP_KEY=${join('Mwz5tIlqF', 'nw7sS#6')}`, join('Mwz5tIlqF', 'nw7sS#6')],
    ['generic-token-unquoted', `  WEBHOOK_ACCESS_TOKEN: ${join('Maple=9967', 'Maple%')}`, join('Maple=9967', 'Maple%')],
  ];
  for (const [id, text, value] of forms) {
    it(`${id}: ${text.replace(value, '…')}`, () => {
      const r = masked(text, value);
      assert.ok(r.ids.includes(id), `${id} not among [${r.ids.join(', ')}]`);
      assert.ok(r.gone);
    });
  }
  for (const [id, text] of cases) {
    it(`${id}: ${text.replace(v, '…')}`, () => {
      const r = masked(text, v);
      assert.ok(r.ids.includes(id), `${id} not among [${r.ids.join(', ')}]`);
      assert.ok(r.gone);
    });
  }
});

describe('secret context rules: placeholders stay in clear', () => {
  const texts = [
    'INFO Key=your_api_key_here loaded',
    'API_KEY xxxxxxxxxxxxxxxxxxxxxxxx',
    'key: <TOKEN>',
    'key: ${API_KEY}',
    'key: {{ secret }}',
    '{"stripeKey": "your_stripe_key_here"}',
    '{"stripeKey": "${STRIPE_KEY}"}',
    '{"stripeKey": "{{ stripe_key }}"}',
    '<secret>{{ jenkins_secret }}</secret>',
    '<password>${env.NEXUS_PASSWORD}</password>',
    join('ghp_', rep('x', 36)),
    join('sk_live_', rep('x', 24)),
    join('SG.', rep('x', 22), '.', rep('x', 43)),
    'jdbc:oracle:thin:app/${DB_PASSWORD}@db:1521/app',
    'gpg: key 4AEE18F83AFDEB23: public key "Archive Signing Key" imported',
    'git clone https://USERNAME:TOKEN@git.example.com/app.git',
    '<add key="ClearTextPassword" value="TODO" />',
    '<property name="password" value="${jdbc.password}"/>',
    'ROOTPASS=${ROOT_PASS}',
    'localhost:5432:app:app:<password>',
    '  - name: DB_PASSWORD\n    value: "${DB_PASSWORD}"',
    join('SLACK_WEBHOOK_URL=https://hooks.slack.com/services/', 'T00000000/B00000000/', rep('X', 24)),
    '  storageKey: "<storage-account-key>"',
    'gpr.key=your_github_token_here',
    // Issue 16: the secret-named contexts with lower floors keep placeholders, references and code in clear.
    'TOKEN your_api_key_here',
    'CLIENT_SECRET <CLIENT_SECRET>',
    'PASSWORD changeme',
    'KEY $(cat /run/secrets/key)',
    'SMTP_KEY=xxxxxxxxxxxxxxxx',
    'SMTP_KEY=${SMTP_KEY}',
    '[mail]\nMailgunKey = your_mailgun_key_here',
    '[mail]\nMailgunKey = {{ mailgun_key }}',
    '  WEBHOOK_ACCESS_TOKEN: ${WEBHOOK_TOKEN}',
    '  - name: DB_PASSWORD\n    value: "changeme"',
    'key = "id"',
    'const apiKey = process.env.MAILGUN_API_KEY;',
    'password: string;',
    'const k = getKey();',
    'token: Token;',
    'type K = keyof T;',
    'primaryKey: true,',
    "foreignKey = 'user_id'",
    'mailgun_key = mailgunKeyFromVault2',
    'signingKey: Uint8Array',
  ];
  for (const text of texts) {
    it(text, () =>
      assert.deepEqual(
        findSecrets(rules, text).map((f) => `${f.ruleId}: ${text.slice(f.start, f.end)}`),
        [],
      ),
    );
  }
});
