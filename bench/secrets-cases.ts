// The cases of issue 16 ("Secrets: mask every occurrence, mask known values, catch secrets by context"),
// generated deterministically (a seeded PRNG per case, no network), beside the planted corpus of
// bench/redaction-corpus.ts. Four kinds of case, each one file piped through `bulwark redact`:
//   - `second-copy`: one secret value written twice or more in a file: once in a recognisable context
//     (`NAME="…"`, a JSON field, a YAML key) and again bare (a log line that prints it, `echo VALUE` and
//     its output, a JSON fixture repeating it, a URL query parameter), before or after the first copy.
//     Every copy is a planted span.
//   - `known-value`: values of arbitrary shape (passphrases, hex, base64, words with symbols, UUIDs; no
//     provider format) held in the workspace's .env, in credential files of the home directory
//     (~/.aws/credentials, ~/.npmrc `_authToken=`, ~/.git-credentials) and in secret-named environment
//     variables, and an output (a log, a shell transcript) that prints them bare.
//   - `context`: secrets a detector can only know by their context or their embedding: `Key=…` in a
//     log line, `<secret>…</secret>` in Jenkins credentials XML, JSON keys ending in Key/Secret/Token/
//     Password, `jdbc:…;password=…`, `mongodb+srv://user:pass@`, `https://user:pass@host`, Azure
//     `AccountKey=`, Slack webhook URLs, Shopify `shpat_`, Stripe `rk_live_`, Tailscale `tskey-`, a
//     SendGrid-shaped token glued to a longer word, and an obviously fake but well-formed `sk_live_`
//     token of A's (a secret by format: it must be masked).
//   - `placeholder`: documentation placeholders that must NOT be masked (`your_api_key_here`, `xxx…`,
//     `<TOKEN>`, `${VAR}`, …) in the contexts that would hold a secret; masking one is a false positive.
// Token bodies come from the PRNG in each format's alphabet and length; every literal is built from parts
// so this file holds no real-looking credential.
//
// Split (fixed before any rule change, issue 16): a case whose id's SHA-256 has a first byte below
// HELD_OUT_BELOW (77 of 256, about 30 %) is `held_out`, every other case `dev`. The held-out cases are
// never looked at when tuning rules: tune on `dev` only (BULWARK_BENCH_DEBUG prints dev cases only and the
// per-sub-kind detail is printed for dev only); `held_out` is the figure that says whether a change
// generalises (target: 0 verbatim survivors after `bulwark redact`). Do not change the ids, the rule or
// the threshold to move a case between the splits.
import { createHash } from 'node:crypto';
import { ALNUM, B64, DIGITS, Gen, HEX, LOWER, UPPER, URLSAFE, fillerLine, prng } from './redaction-corpus';

export const HELD_OUT_BELOW = 77;
export type Split = 'dev' | 'held_out';
export const splitOf = (id: string): Split => (createHash('sha256').update(id).digest()[0]! < HELD_OUT_BELOW ? 'held_out' : 'dev');

export type CaseKind = 'second-copy' | 'known-value' | 'context' | 'placeholder';

export interface CaseSpan {
  readonly start: number;
  readonly end: number;
  /** What the span is within its kind (`bare:log:after`, `jenkins-xml`, `home:npmrc`, …). */
  readonly sub: string;
  /** false: a placeholder that must stay (a false positive if masked). */
  readonly secret: boolean;
}

export interface SecretCase {
  readonly id: string;
  readonly kind: CaseKind;
  readonly split: Split;
  /** The file piped through `bulwark redact` (its name only says what it is). */
  readonly path: string;
  readonly content: string;
  readonly spans: readonly CaseSpan[];
  /** Files of the temporary workspace (the CLI's working directory), e.g. `.env`. */
  readonly workspace: Record<string, string>;
  /** Files of the temporary home directory (HOME), e.g. `.aws/credentials`. */
  readonly home: Record<string, string>;
  /** Environment variables of the CLI process (besides PATH and HOME). */
  readonly env: Record<string, string>;
}

const MORE_WORDS = ['maple', 'orbit', 'canyon', 'velvet', 'copper', 'harbor', 'lantern', 'meadow', 'quartz', 'saddle', 'thistle', 'walnut',
  'ember', 'falcon', 'glacier', 'hollow', 'juniper', 'kettle', 'lilac', 'marble', 'nectar', 'otter', 'pepper', 'raven', 'sparrow', 'tundra'];
const SYMBOLS = '!#%&*+=?@^~';

/** Values of arbitrary shape (no provider format), each at least 12 characters. */
function arbitraryValue(g: Gen, shape: string): string {
  const w = () => g.pick(MORE_WORDS);
  const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
  switch (shape) {
    case 'passphrase': return [w(), w(), w(), w()].join(g.pick(['-', '.', '_'])) + g.chars(DIGITS, 2);
    case 'passphrase-spaces': return [w(), w(), w(), w()].join(' ');
    case 'hex': return g.chars(HEX, g.pick([32, 40, 64]));
    case 'base64': return g.b64of(g.pick([18, 24, 32]));
    case 'words-symbols': return cap(w()) + g.pick([...SYMBOLS]) + g.chars(DIGITS, 4) + cap(w()) + g.pick([...SYMBOLS]);
    case 'uuid': return g.uuid();
    default: return g.chars(ALNUM, g.range(16, 28));
  }
}
const SHAPES = ['passphrase', 'passphrase-spaces', 'hex', 'base64', 'words-symbols', 'uuid', 'alnum'];
const URL_SHAPES = ['passphrase', 'hex', 'alnum', 'uuid']; // usable in a URL as they are

class Builder {
  text = '';
  readonly spans: CaseSpan[] = [];
  line(s: string): void { this.text += s + '\n'; }
  /** Appends `parts` (strings, and [value, sub, secret?] for a planted span) as one line. */
  put(...parts: Array<string | [string, string, boolean?]>): void {
    for (const p of parts) {
      if (typeof p === 'string') this.text += p;
      else {
        this.spans.push({ start: this.text.length, end: this.text.length + p[0].length, sub: p[1], secret: p[2] ?? true });
        this.text += p[0];
      }
    }
    this.text += '\n';
  }
  filler(g: Gen, ext: string, n: number): void { for (let i = 0; i < n; i++) this.line(fillerLine(g, ext, g.int(1000))); }
}

// ---------------------------------------------------------------- second copies

/** Secret families for the recognisable first copy: [family, env name, value]. */
function secondCopyValue(g: Gen): [string, string, string] {
  return g.pick<() => [string, string, string]>([
    () => ['github-pat', 'GITHUB_TOKEN', 'ghp' + '_' + g.chars(ALNUM, 36)],
    () => ['npm-token', 'NPM_TOKEN', 'npm' + '_' + g.chars(ALNUM, 36)],
    () => ['gitlab-pat', 'GITLAB_TOKEN', 'glpat' + '-' + g.chars(URLSAFE, 20)],
    () => ['slack-bot', 'SLACK_BOT_TOKEN', ['xoxb', g.chars(DIGITS, 12), g.chars(DIGITS, 13), g.chars(ALNUM, 24)].join('-')],
    () => ['aws-secret', 'AWS_SECRET_ACCESS_KEY', g.chars(B64, 40)],
    () => ['stripe-secret', 'STRIPE_SECRET_KEY', 'sk' + '_live_' + g.chars(ALNUM, 24)],
    () => ['openai-project', 'OPENAI_API_KEY', 'sk-' + 'proj-' + g.chars(URLSAFE, 74) + 'T3Blbk' + 'FJ' + g.chars(URLSAFE, 74)],
    () => ['sendgrid', 'SENDGRID_API_KEY', 'SG' + '.' + g.chars(URLSAFE, 22) + '.' + g.chars(URLSAFE, 43)],
    () => ['password', 'DB_PASSWORD', arbitraryValue(g, g.pick(['alnum', 'words-symbols', 'passphrase']))],
    () => ['hex-secret', 'API_SECRET', g.chars(HEX, 64)],
    () => ['api-key', 'API_KEY', g.chars(ALNUM, 32)],
  ])();
}

function secondCopyCase(g: Gen, id: string): Omit<SecretCase, 'split'> {
  const [family, name, v] = secondCopyValue(g);
  const camel = name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  const [ext, path, first] = g.pick<[string, string, () => Array<string | [string, string]>]>([
    ['.env', 'deploy.env', () => [`${name}="`, [v, `first:env:${family}`], '"']],
    ['.log', 'app.log', () => [`${g.ts(3)} DEBUG config ${name}="`, [v, `first:env:${family}`], '"']],
    ['.json', 'settings.json', () => [`  "${camel}": "`, [v, `first:json:${family}`], '",']],
    ['.yaml', 'values.yaml', () => [`  ${name.toLowerCase()}: `, [v, `first:yaml:${family}`]]],
  ]);
  const bare = g.pick([1, 2, 3]);
  const b = new Builder();
  const forms = Array.from({ length: bare }, () => g.pick(['log', 'echo', 'json-fixture', 'url-param']));
  const firstAt = g.int(bare + 1); // bare copies before the first recognisable one, then after it
  const bareCopy = (form: string, where: string): void => {
    const sub = `bare:${form}:${where}`;
    b.filler(g, ext, g.range(2, 8));
    switch (form) {
      case 'log': b.put(`${g.ts(g.int(99))} INFO  ${g.word()} client ready, credential `, [v, sub], ` (${g.int(90)} ms)`); break;
      case 'echo': b.put('$ echo ', [v, sub]); b.put([v, sub]); break;
      case 'json-fixture': b.put('  "expected": ["', [v, sub], `", "${g.word()}"],`); break;
      default: b.put(`${g.ts(g.int(99))} GET https://api.example.com/v1/${g.word()}s?page=${g.int(9)}&sig=`, [v, sub], `&limit=${g.int(100)} 200`);
    }
  };
  forms.forEach((f, i) => {
    if (i === firstAt) { b.filler(g, ext, g.range(2, 8)); b.put(...first()); }
    bareCopy(f, i < firstAt ? 'before' : 'after');
  });
  if (firstAt === bare) { b.filler(g, ext, g.range(2, 8)); b.put(...first()); }
  b.filler(g, ext, g.range(3, 10));
  return { id, kind: 'second-copy', path, content: b.text, spans: b.spans, workspace: {}, home: {}, env: {} };
}

// ---------------------------------------------------------------- known values

const ENV_NAMES = ['DB_PASSWORD', 'SESSION_SECRET', 'JWT_SIGNING_KEY', 'ADMIN_PASS', 'SMTP_PASS', 'WEBHOOK_SALT', 'APP_KEY', 'CRYPT_SEED',
  'LICENSE_CODE', 'INTERNAL_AUTH', 'REDIS_AUTH', 'BACKUP_PASSPHRASE'];
const PROCESS_ENV_NAMES = ['DEPLOY_TOKEN', 'SERVICE_PASSWORD', 'CI_SECRET', 'SIGNING_KEY'];

function knownValueCase(g: Gen, id: string, i: number): Omit<SecretCase, 'split'> {
  const values: Array<[string, string]> = []; // [value, sub]
  const envLines = [`# ${g.word()} service`, `${g.word().toUpperCase()}_HOST=${g.word()}.internal`];
  const names = [...ENV_NAMES].sort(() => g.rnd() - 0.5).slice(0, g.range(2, 4));
  for (const n of names) {
    const shape = g.pick(SHAPES);
    const v = arbitraryValue(g, shape);
    values.push([v, `env-file:${shape}`]);
    envLines.push(g.pick([`${n}=${shape === 'passphrase-spaces' ? `"${v}"` : v}`, `${n}="${v}"`, `export ${n}='${v}'`]));
  }
  const home: Record<string, string> = {};
  const user = g.word();
  switch (i % 3) {
    case 0: {
      const v = g.chars(B64, 40);
      home['.aws/credentials'] = `[default]\naws_access_key_id = ${'AKIA' + g.chars(UPPER + '234567', 16)}\naws_secret_access_key = ${v}\nregion = eu-west-1\n`;
      values.push([v, 'home:aws-credentials']);
      break;
    }
    case 1: {
      const v = arbitraryValue(g, g.pick(['base64', 'uuid', 'hex']));
      const registry = `npm.${g.word()}.example.com`;
      home['.npmrc'] = `registry=https://${registry}/\n//${registry}/:_authToken=${v}\nalways-auth=true\n`;
      values.push([v, 'home:npmrc']);
      break;
    }
    default: {
      const v = arbitraryValue(g, g.pick(URL_SHAPES));
      home['.git-credentials'] = `https://${user}:${v}@github.com\n`;
      values.push([v, 'home:git-credentials']);
    }
  }
  const envName = g.pick(PROCESS_ENV_NAMES);
  const envValue = arbitraryValue(g, g.pick(SHAPES.filter((s) => s !== 'passphrase-spaces')));
  values.push([envValue, 'environment']);
  const [ext, path] = g.pick<[string, string]>([['.log', 'output.log'], ['.md', 'terminal.txt']]);
  const b = new Builder();
  for (const [v, sub] of values) {
    for (let k = g.range(1, 2); k > 0; k--) {
      b.filler(g, ext, g.range(2, 6));
      g.pick<() => void>([
        () => b.put(`${g.ts(g.int(99))} INFO  connecting to ${g.word()}.internal as ${user} with `, [v, sub]),
        () => b.put(`${g.ts(g.int(99))} ERROR auth failed: '`, [v, sub], `' rejected by ${g.word()}`),
        () => { b.line('$ printenv | sort | tail -1'); b.put([v, sub]); },
        () => b.put('{"level":"debug","msg":"call","args":["', [v, sub], `", ${g.int(99)}]}`),
        () => b.put(`  File "app/${g.word()}.py", line ${g.int(300)}, in connect: open(host, "`, [v, sub], '")'),
      ])();
    }
  }
  b.filler(g, ext, g.range(2, 6));
  return { id, kind: 'known-value', path, content: b.text, spans: b.spans, workspace: { '.env': envLines.join('\n') + '\n' }, home, env: { [envName]: envValue } };
}

// ---------------------------------------------------------------- context

export const CONTEXT_SUBS = ['log-key', 'jenkins-xml', 'json-key-suffix', 'jdbc-password', 'mongodb-srv', 'basic-auth-url', 'azure-account-key',
  'slack-webhook', 'shopify', 'stripe-restricted', 'tailscale', 'embedded-sendgrid', 'fake-well-formed'] as const;

function contextCase(g: Gen, id: string, sub: (typeof CONTEXT_SUBS)[number]): Omit<SecretCase, 'split'> {
  const b = new Builder();
  const ts = () => g.ts(g.int(99));
  const u = () => g.word() + g.pick(['', '_svc', 'bot', '-ro']);
  const host = () => `${g.word()}-${g.int(9)}.${g.word()}.internal`;
  const spec: Record<typeof sub, [string, string, () => void]> = {
    'log-key': ['.log', 'gateway.log', () => b.put(`${ts()} INFO  upstream=${g.word()} Key=`, [g.chars(g.pick([ALNUM, HEX, URLSAFE]), g.range(24, 40)), sub], ` status=${g.pick([200, 401, 403])}`)],
    'jenkins-xml': ['.xml', 'credentials.xml', () => {
      b.line('    <org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl>');
      b.line(`      <scope>GLOBAL</scope>\n      <id>${g.word()}-${g.word()}</id>\n      <description>${g.word()} ${g.word()}</description>`);
      b.put('      <secret>', [g.pick([`{AQAAABAAAA${g.pick(['Ag', 'Aw', 'BA'])}${g.b64of(g.pick([48, 72]))}}`, g.chars(ALNUM, 32), arbitraryValue(g, 'words-symbols')]), sub], '</secret>');
      b.line('    </org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl>');
    }],
    'json-key-suffix': ['.json', 'config.json', () => {
      const key = g.pick(['godaddy', 'mailgun', 'twilio', 'sentry', 'smtp', 'partner', 'legacy', 'cdn']) + g.pick(['Key', 'Secret', 'Token', 'Password', 'ApiKey', 'AccessToken']);
      b.put(`  "${key}": "`, [arbitraryValue(g, g.pick(['alnum', 'hex', 'base64', 'words-symbols'])), sub], '",');
    }],
    'jdbc-password': ['.properties', 'datasource.properties', () => g.pick([
      () => b.put(`spring.datasource.url=jdbc:sqlserver://${host()}:1433;databaseName=${g.word()};user=${u()};password=`, [arbitraryValue(g, g.pick(['alnum', 'words-symbols'])), sub], ';encrypt=true'),
      () => b.put(`db.url=jdbc:mysql://${host()}:3306/${g.word()}?user=${u()}&password=`, [arbitraryValue(g, g.pick(['alnum', 'passphrase'])), sub], '&useSSL=true'),
    ])()],
    'mongodb-srv': ['.log', 'worker.log', () => b.put(`${ts()} INFO  connecting to mongodb+srv://${u()}:`, [arbitraryValue(g, g.pick(URL_SHAPES)), sub], `@cluster0.${g.chars(LOWER + DIGITS, 5)}.mongodb.net/${g.word()}?retryWrites=true`)],
    'basic-auth-url': ['.log', 'ci.log', () => b.put(`+ git clone https://${u()}:`, [arbitraryValue(g, g.pick(URL_SHAPES)), sub], `@git.${g.word()}.example.com/${g.word()}/${g.word()}.git`)],
    'azure-account-key': ['.md', 'azure.txt', () => b.put(`DefaultEndpointsProtocol=https;AccountName=${g.word()}${g.chars(LOWER + DIGITS, 6)};AccountKey=`, [g.b64of(64), sub], ';EndpointSuffix=core.windows.net')],
    'slack-webhook': ['.yaml', 'alerts.yaml', () => b.put(`  ${g.pick(['url', 'endpoint', 'notify'])}: `, [['https://hooks', 'slack', 'com/services/'].join('.') + `T${g.chars(UPPER + DIGITS, 8)}/B${g.chars(UPPER + DIGITS, 10)}/${g.chars(ALNUM, 24)}`, sub])],
    shopify: ['.log', 'shop.log', () => b.put(`${ts()} DEBUG shop=${g.word()}.myshopify.com access `, ['shpat' + '_' + g.chars(HEX, 32), sub])],
    'stripe-restricted': ['.log', 'billing.log', () => b.put(`${ts()} INFO  billing client with `, ['rk' + '_live_' + g.chars(ALNUM, g.pick([24, 99])), sub], ' ready')],
    tailscale: ['.md', 'setup.sh', () => b.put('tailscale up --authkey=', [`tskey-${g.pick(['auth', 'api'])}-k${g.chars(ALNUM, 10)}CNTRL-${g.chars(ALNUM, 33)}`, sub], ' --ssh')],
    'embedded-sendgrid': ['.log', 'mail.log', () => { const lead = `${ts()} DEBUG header=som`; b.put(lead, ['SG' + '.' + g.chars(URLSAFE, 22) + '.' + g.chars(URLSAFE, 43), sub], ` len=${g.int(99)}`); }],
    'fake-well-formed': ['.env', 'test.env', () => b.put('STRIPE_SECRET_KEY=', ['sk' + '_live_' + 'A'.repeat(g.pick([24, 32])), sub])],
  };
  const [ext, path, one] = spec[sub];
  if (ext === '.xml') b.line("<?xml version='1.1' encoding='UTF-8'?>\n<list>");
  for (let k = g.range(2, 3); k > 0; k--) { if (ext !== '.xml') b.filler(g, ext, g.range(2, 8)); one(); }
  if (ext === '.xml') b.line('</list>');
  else b.filler(g, ext, g.range(2, 6));
  return { id, kind: 'context', path, content: b.text, spans: b.spans, workspace: {}, home: {}, env: {} };
}

// ---------------------------------------------------------------- placeholders

function placeholderCase(g: Gen, id: string): Omit<SecretCase, 'split'> {
  const b = new Builder();
  const x = (n: number) => 'x'.repeat(n);
  const lines: Array<() => void> = [
    () => b.put('API_KEY=', ['your_api_key_here', 'your_api_key_here', false]),
    () => b.put('OPENAI_API_KEY="', ['your-openai-api-key', 'your-key', false], '"'),
    () => b.put('  "apiKey": "', ['<TOKEN>', '<TOKEN>', false], '",'),
    () => b.put('Authorization: Bearer ', ['<TOKEN>', '<TOKEN>', false]),
    () => b.put('GITHUB_TOKEN=', [x(g.pick([16, 32, 40])), 'xxx', false]),
    () => b.put('  password: ', [x(12), 'xxx', false]),
    () => b.put('password=', ['${DB_PASSWORD}', '${VAR}', false]),
    () => b.put('  token: "', ['${' + g.pick(['NPM_TOKEN', 'GH_TOKEN', 'SLACK_TOKEN']) + '}', '${VAR}', false], '"'),
    () => b.put('DefaultEndpointsProtocol=https;AccountName=myaccount;AccountKey=', ['<your-account-key>', '<your-key>', false], ';EndpointSuffix=core.windows.net'),
    () => b.put('export AWS_SECRET_ACCESS_KEY=', ['YOUR_SECRET_ACCESS_KEY', 'your_key', false]),
    () => b.put('db.url=jdbc:postgresql://localhost:5432/app?user=app&password=', ['<password>', '<password>', false]),
    () => b.put('mongodb+srv://user:', ['<password>', '<password>', false], '@cluster0.example.mongodb.net/test'),
  ];
  const order = lines.map((_, i) => i).sort(() => g.rnd() - 0.5).slice(0, g.range(4, 6));
  for (const i of order) { b.filler(g, '.md', g.range(1, 4)); lines[i]!(); }
  b.filler(g, '.md', g.range(1, 4));
  return { id, kind: 'placeholder', path: g.pick(['README.md', '.env.example', 'docs/setup.md']), content: b.text, spans: b.spans, workspace: {}, home: {}, env: {} };
}

/** Every case, by kind; each case from its own PRNG seeded by its id, so adding cases changes no other. */
export function buildSecretCases(counts: Partial<Record<CaseKind, number>> = {}): SecretCase[] {
  const n = { 'second-copy': 44, 'known-value': 30, context: 52, placeholder: 20, ...counts };
  const genFor = (id: string) => new Gen(prng(createHash('sha256').update(`bulwark-issue16:${id}`).digest().readUInt32LE(0)));
  const out: SecretCase[] = [];
  const add = (c: Omit<SecretCase, 'split'>) => out.push({ ...c, split: splitOf(c.id) });
  for (let i = 0; i < n['second-copy']; i++) add(secondCopyCase(genFor(`second-copy-${i}`), `second-copy-${i}`));
  for (let i = 0; i < n['known-value']; i++) add(knownValueCase(genFor(`known-value-${i}`), `known-value-${i}`, i));
  for (let i = 0; i < n.context; i++) {
    const sub = CONTEXT_SUBS[i % CONTEXT_SUBS.length]!;
    add(contextCase(genFor(`context-${sub}-${i}`), `context-${sub}-${i}`, sub));
  }
  for (let i = 0; i < n.placeholder; i++) add(placeholderCase(genFor(`placeholder-${i}`), `placeholder-${i}`));
  return out;
}
