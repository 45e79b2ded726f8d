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
//   - `context` again, class by class (CONTEXT_FORM_SUBS), with the variations real files have: quoting,
//     separators, key-name styles, file formats, other drivers and credential files, passwords with
//     symbols; and `placeholder` again in those contexts (placeholderFormCase).
//   - `context` once more (MORE_CONTEXT_SUBS) in formats those do not generate: HTTP request dumps, secrets
//     as command-line arguments, application config files, structured log lines; and `placeholder` in them.
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

const MORE_WORDS = [
  'maple',
  'orbit',
  'canyon',
  'velvet',
  'copper',
  'harbor',
  'lantern',
  'meadow',
  'quartz',
  'saddle',
  'thistle',
  'walnut',
  'ember',
  'falcon',
  'glacier',
  'hollow',
  'juniper',
  'kettle',
  'lilac',
  'marble',
  'nectar',
  'otter',
  'pepper',
  'raven',
  'sparrow',
  'tundra',
];
const SYMBOLS = '!#%&*+=?@^~';

/** Values of arbitrary shape (no provider format), each at least 12 characters. */
function arbitraryValue(g: Gen, shape: string): string {
  const w = () => g.pick(MORE_WORDS);
  const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
  switch (shape) {
    case 'passphrase':
      return [w(), w(), w(), w()].join(g.pick(['-', '.', '_'])) + g.chars(DIGITS, 2);
    case 'passphrase-spaces':
      return [w(), w(), w(), w()].join(' ');
    case 'hex':
      return g.chars(HEX, g.pick([32, 40, 64]));
    case 'base64':
      return g.b64of(g.pick([18, 24, 32]));
    case 'words-symbols':
      return cap(w()) + g.pick([...SYMBOLS]) + g.chars(DIGITS, 4) + cap(w()) + g.pick([...SYMBOLS]);
    case 'uuid':
      return g.uuid();
    default:
      return g.chars(ALNUM, g.range(16, 28));
  }
}
const SHAPES = ['passphrase', 'passphrase-spaces', 'hex', 'base64', 'words-symbols', 'uuid', 'alnum'];
const URL_SHAPES = ['passphrase', 'hex', 'alnum', 'uuid']; // usable in a URL as they are

class Builder {
  text = '';
  readonly spans: CaseSpan[] = [];
  line(s: string): void {
    this.text += s + '\n';
  }
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
  filler(g: Gen, ext: string, n: number): void {
    for (let i = 0; i < n; i++) this.line(fillerLine(g, ext, g.int(1000)));
  }
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
      case 'log':
        b.put(`${g.ts(g.int(99))} INFO  ${g.word()} client ready, credential `, [v, sub], ` (${g.int(90)} ms)`);
        break;
      case 'echo':
        b.put('$ echo ', [v, sub]);
        b.put([v, sub]);
        break;
      case 'json-fixture':
        b.put('  "expected": ["', [v, sub], `", "${g.word()}"],`);
        break;
      default:
        b.put(`${g.ts(g.int(99))} GET https://api.example.com/v1/${g.word()}s?page=${g.int(9)}&sig=`, [v, sub], `&limit=${g.int(100)} 200`);
    }
  };
  forms.forEach((f, i) => {
    if (i === firstAt) {
      b.filler(g, ext, g.range(2, 8));
      b.put(...first());
    }
    bareCopy(f, i < firstAt ? 'before' : 'after');
  });
  if (firstAt === bare) {
    b.filler(g, ext, g.range(2, 8));
    b.put(...first());
  }
  b.filler(g, ext, g.range(3, 10));
  return { id, kind: 'second-copy', path, content: b.text, spans: b.spans, workspace: {}, home: {}, env: {} };
}

// ---------------------------------------------------------------- known values

const ENV_NAMES = [
  'DB_PASSWORD',
  'SESSION_SECRET',
  'JWT_SIGNING_KEY',
  'ADMIN_PASS',
  'SMTP_PASS',
  'WEBHOOK_SALT',
  'APP_KEY',
  'CRYPT_SEED',
  'LICENSE_CODE',
  'INTERNAL_AUTH',
  'REDIS_AUTH',
  'BACKUP_PASSPHRASE',
];
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
      home['.aws/credentials'] =
        `[default]\naws_access_key_id = ${'AKIA' + g.chars(UPPER + '234567', 16)}\naws_secret_access_key = ${v}\nregion = eu-west-1\n`;
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
  const [ext, path] = g.pick<[string, string]>([
    ['.log', 'output.log'],
    ['.md', 'terminal.txt'],
  ]);
  const b = new Builder();
  for (const [v, sub] of values) {
    for (let k = g.range(1, 2); k > 0; k--) {
      b.filler(g, ext, g.range(2, 6));
      g.pick<() => void>([
        () => b.put(`${g.ts(g.int(99))} INFO  connecting to ${g.word()}.internal as ${user} with `, [v, sub]),
        () => b.put(`${g.ts(g.int(99))} ERROR auth failed: '`, [v, sub], `' rejected by ${g.word()}`),
        () => {
          b.line('$ printenv | sort | tail -1');
          b.put([v, sub]);
        },
        () => b.put('{"level":"debug","msg":"call","args":["', [v, sub], `", ${g.int(99)}]}`),
        () => b.put(`  File "app/${g.word()}.py", line ${g.int(300)}, in connect: open(host, "`, [v, sub], '")'),
      ])();
    }
  }
  b.filler(g, ext, g.range(2, 6));
  return {
    id,
    kind: 'known-value',
    path,
    content: b.text,
    spans: b.spans,
    workspace: { '.env': envLines.join('\n') + '\n' },
    home,
    env: { [envName]: envValue },
  };
}

// ---------------------------------------------------------------- context

export const CONTEXT_SUBS = [
  'log-key',
  'jenkins-xml',
  'json-key-suffix',
  'jdbc-password',
  'mongodb-srv',
  'basic-auth-url',
  'azure-account-key',
  'slack-webhook',
  'shopify',
  'stripe-restricted',
  'tailscale',
  'embedded-sendgrid',
  'fake-well-formed',
] as const;

function contextCase(g: Gen, id: string, sub: (typeof CONTEXT_SUBS)[number]): Omit<SecretCase, 'split'> {
  const b = new Builder();
  const ts = () => g.ts(g.int(99));
  const u = () => g.word() + g.pick(['', '_svc', 'bot', '-ro']);
  const host = () => `${g.word()}-${g.int(9)}.${g.word()}.internal`;
  const spec: Record<typeof sub, [string, string, () => void]> = {
    'log-key': [
      '.log',
      'gateway.log',
      () =>
        b.put(
          `${ts()} INFO  upstream=${g.word()} Key=`,
          [g.chars(g.pick([ALNUM, HEX, URLSAFE]), g.range(24, 40)), sub],
          ` status=${g.pick([200, 401, 403])}`,
        ),
    ],
    'jenkins-xml': [
      '.xml',
      'credentials.xml',
      () => {
        b.line('    <org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl>');
        b.line(
          `      <scope>GLOBAL</scope>\n      <id>${g.word()}-${g.word()}</id>\n      <description>${g.word()} ${g.word()}</description>`,
        );
        b.put(
          '      <secret>',
          [
            g.pick([
              `{AQAAABAAAA${g.pick(['Ag', 'Aw', 'BA'])}${g.b64of(g.pick([48, 72]))}}`,
              g.chars(ALNUM, 32),
              arbitraryValue(g, 'words-symbols'),
            ]),
            sub,
          ],
          '</secret>',
        );
        b.line('    </org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl>');
      },
    ],
    'json-key-suffix': [
      '.json',
      'config.json',
      () => {
        const key =
          g.pick(['godaddy', 'mailgun', 'twilio', 'sentry', 'smtp', 'partner', 'legacy', 'cdn']) +
          g.pick(['Key', 'Secret', 'Token', 'Password', 'ApiKey', 'AccessToken']);
        b.put(`  "${key}": "`, [arbitraryValue(g, g.pick(['alnum', 'hex', 'base64', 'words-symbols'])), sub], '",');
      },
    ],
    'jdbc-password': [
      '.properties',
      'datasource.properties',
      () =>
        g.pick([
          () =>
            b.put(
              `spring.datasource.url=jdbc:sqlserver://${host()}:1433;databaseName=${g.word()};user=${u()};password=`,
              [arbitraryValue(g, g.pick(['alnum', 'words-symbols'])), sub],
              ';encrypt=true',
            ),
          () =>
            b.put(
              `db.url=jdbc:mysql://${host()}:3306/${g.word()}?user=${u()}&password=`,
              [arbitraryValue(g, g.pick(['alnum', 'passphrase'])), sub],
              '&useSSL=true',
            ),
        ])(),
    ],
    'mongodb-srv': [
      '.log',
      'worker.log',
      () =>
        b.put(
          `${ts()} INFO  connecting to mongodb+srv://${u()}:`,
          [arbitraryValue(g, g.pick(URL_SHAPES)), sub],
          `@cluster0.${g.chars(LOWER + DIGITS, 5)}.mongodb.net/${g.word()}?retryWrites=true`,
        ),
    ],
    'basic-auth-url': [
      '.log',
      'ci.log',
      () =>
        b.put(
          `+ git clone https://${u()}:`,
          [arbitraryValue(g, g.pick(URL_SHAPES)), sub],
          `@git.${g.word()}.example.com/${g.word()}/${g.word()}.git`,
        ),
    ],
    'azure-account-key': [
      '.md',
      'azure.txt',
      () =>
        b.put(
          `DefaultEndpointsProtocol=https;AccountName=${g.word()}${g.chars(LOWER + DIGITS, 6)};AccountKey=`,
          [g.b64of(64), sub],
          ';EndpointSuffix=core.windows.net',
        ),
    ],
    'slack-webhook': [
      '.yaml',
      'alerts.yaml',
      () =>
        b.put(`  ${g.pick(['url', 'endpoint', 'notify'])}: `, [
          ['https://hooks', 'slack', 'com/services/'].join('.') +
            `T${g.chars(UPPER + DIGITS, 8)}/B${g.chars(UPPER + DIGITS, 10)}/${g.chars(ALNUM, 24)}`,
          sub,
        ]),
    ],
    shopify: [
      '.log',
      'shop.log',
      () => b.put(`${ts()} DEBUG shop=${g.word()}.myshopify.com access `, ['shpat' + '_' + g.chars(HEX, 32), sub]),
    ],
    'stripe-restricted': [
      '.log',
      'billing.log',
      () => b.put(`${ts()} INFO  billing client with `, ['rk' + '_live_' + g.chars(ALNUM, g.pick([24, 99])), sub], ' ready'),
    ],
    tailscale: [
      '.md',
      'setup.sh',
      () =>
        b.put(
          'tailscale up --authkey=',
          [`tskey-${g.pick(['auth', 'api'])}-k${g.chars(ALNUM, 10)}CNTRL-${g.chars(ALNUM, 33)}`, sub],
          ' --ssh',
        ),
    ],
    'embedded-sendgrid': [
      '.log',
      'mail.log',
      () => {
        const lead = `${ts()} DEBUG header=som`;
        b.put(lead, ['SG' + '.' + g.chars(URLSAFE, 22) + '.' + g.chars(URLSAFE, 43), sub], ` len=${g.int(99)}`);
      },
    ],
    'fake-well-formed': ['.env', 'test.env', () => b.put('STRIPE_SECRET_KEY=', ['sk' + '_live_' + 'A'.repeat(g.pick([24, 32])), sub])],
  };
  const [ext, path, one] = spec[sub];
  if (ext === '.xml') b.line("<?xml version='1.1' encoding='UTF-8'?>\n<list>");
  for (let k = g.range(2, 3); k > 0; k--) {
    if (ext !== '.xml') b.filler(g, ext, g.range(2, 8));
    one();
  }
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
    () =>
      b.put(
        'DefaultEndpointsProtocol=https;AccountName=myaccount;AccountKey=',
        ['<your-account-key>', '<your-key>', false],
        ';EndpointSuffix=core.windows.net',
      ),
    () => b.put('export AWS_SECRET_ACCESS_KEY=', ['YOUR_SECRET_ACCESS_KEY', 'your_key', false]),
    () => b.put('db.url=jdbc:postgresql://localhost:5432/app?user=app&password=', ['<password>', '<password>', false]),
    () => b.put('mongodb+srv://user:', ['<password>', '<password>', false], '@cluster0.example.mongodb.net/test'),
  ];
  const order = lines
    .map((_, i) => i)
    .sort(() => g.rnd() - 0.5)
    .slice(0, g.range(4, 6));
  for (const i of order) {
    b.filler(g, '.md', g.range(1, 4));
    lines[i]!();
  }
  b.filler(g, '.md', g.range(1, 4));
  return {
    id,
    kind: 'placeholder',
    path: g.pick(['README.md', '.env.example', 'docs/setup.md']),
    content: b.text,
    spans: b.spans,
    workspace: {},
    home: {},
    env: {},
  };
}

// ---------------------------------------------------------------- context classes, widened (issue 16 §3)
// Each class of §3 again, with the variations real files have: quoting, spacing, separators, key-name case
// and style, file formats (log, env, JSON, YAML, XML, INI, .properties, TOML, HCL, docker-compose, k8s, URL
// query), values with the symbols passwords have, values at line end / before a comma / in quotes. Every
// line picks its form from the case's own PRNG; new ids, so the cases above are unchanged and the hash split
// puts about 30 % of these in held-out as well.

export const CONTEXT_FORM_SUBS = [
  'log-key-forms',
  'xml-credential-forms',
  'key-suffix-forms',
  'connection-string-forms',
  'basic-auth-url-forms',
  'azure-key-forms',
  'webhook-url-forms',
  'provider-prefix-forms',
  'fake-well-formed-forms',
  'credential-file-forms',
  'password-symbol-forms',
] as const;

/** Symbols that passwords have; `&` and `<` are left out where the format would have to escape them. */
const PW_SYMBOLS = '/+=!@#%^&*';
function passwordValue(g: Gen, symbols = PW_SYMBOLS): string {
  const n = g.range(12, 24);
  let s = g.chars(UPPER, 1) + g.chars(LOWER, 2) + g.chars(DIGITS, 1);
  while (s.length < n) s += g.rnd() < 0.2 ? g.pick([...symbols]) : g.chars(ALNUM, 1);
  return s;
}
/** A value that a password or token field holds, in one of several shapes (no provider format). */
function fieldValue(g: Gen, symbols = PW_SYMBOLS): string {
  return g.pick<() => string>([
    () => passwordValue(g, symbols),
    () => g.chars(ALNUM, g.range(20, 40)),
    () => g.chars(HEX, g.pick([32, 40, 64])),
    () => g.b64of(g.pick([24, 32])).replace(/[^A-Za-z0-9+/=]/g, ''),
    () => arbitraryValue(g, 'passphrase'),
    () => arbitraryValue(g, 'words-symbols').replace(/[^A-Za-z0-9!#%*+=?@^~]/g, ''),
  ])();
}
const pctEncode = (v: string): string =>
  v.replace(/[^A-Za-z0-9._~-]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
/** A key name in one of the styles real files use: camelCase, PascalCase, snake_case, kebab-case, UPPER_SNAKE, dotted. */
function styledKey(g: Gen, words: readonly string[]): string {
  const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
  return g.pick<() => string>([
    () => words[0]! + words.slice(1).map(cap).join(''),
    () => words.map(cap).join(''),
    () => words.join('_'),
    () => words.join('-'),
    () => words.join('_').toUpperCase(),
    () => words.join('.'),
  ])();
}
const PROVIDER_WORDS = [
  'godaddy',
  'mailgun',
  'twilio',
  'smtp',
  'partner',
  'legacy',
  'cdn',
  'backend',
  'webhook',
  'billing',
  'search',
  'storage',
  'payments',
  'analytics',
];
const SECRET_SUFFIXES: readonly (readonly string[])[] = [
  ['key'],
  ['secret'],
  ['token'],
  ['password'],
  ['api', 'key'],
  ['access', 'token'],
  ['secret', 'key'],
  ['auth', 'token'],
  ['client', 'secret'],
  ['pwd'],
  ['passwd'],
];

function contextFormCase(g: Gen, id: string, sub: (typeof CONTEXT_FORM_SUBS)[number]): Omit<SecretCase, 'split'> {
  const b = new Builder();
  const ts = () => g.ts(g.int(99));
  const user = () => g.word() + g.pick(['', '_svc', 'bot', '-ro', '.admin']);
  const host = () => `${g.word()}-${g.int(9)}.${g.word()}.internal`;
  const q = () => g.pick(['', '"', "'"]);
  const S = (v: string): [string, string] => [v, sub];
  let ext = '.log';
  let path = 'app.log';
  let one: () => void;
  switch (sub) {
    case 'log-key-forms': {
      [ext, path] = g.pick([
        ['.log', 'gateway.log'],
        ['.log', 'worker.out'],
        ['.md', 'console.txt'],
      ]);
      one = () => {
        const v = g.pick<() => string>([
          () => g.chars(g.pick([ALNUM, HEX, URLSAFE]), g.range(24, 48)),
          () => g.b64of(g.pick([24, 30, 33])),
          () => passwordValue(g, '/+=!@#%^*'),
        ])();
        const name = g.pick([
          'Key',
          'key',
          'KEY',
          'apiKey',
          'api_key',
          'API_KEY',
          'api-key',
          'ApiKey',
          'apikey',
          'x-api-key',
          'access_key',
          'AccessKey',
          'secretKey',
          'secret_key',
          'SECRET',
          'secret',
          'client_secret',
          'clientSecret',
          'access_token',
          'accessToken',
          'auth_token',
          'authToken',
          'token',
          'Token',
          'password',
          'Password',
          'passwd',
          'pwd',
        ]);
        g.pick<() => void>([
          () => b.put(`${ts()} INFO  upstream=${g.word()} ${name}=`, S(v), ` status=${g.pick([200, 401, 403])}`),
          () => b.put(`${ts()} DEBUG ${g.word()}: ${name}: `, S(v)),
          () => b.put(`${ts()} DEBUG ${g.word()} ${name}:`, S(v), `, retry=${g.int(5)}`),
          () => b.put(`${ts()} WARN  ${g.word()} ${name} = `, S(v), ` (${g.int(90)} ms)`),
          () => b.put(`${ts()} INFO  ${g.word()} ${name}="`, S(v), `" user=${user()}`),
          () => b.put(`${ts()} INFO  ${g.word()} ${name}='`, S(v), "'"),
          () => b.put(`time=${ts()} level=info msg="calling ${g.word()}" ${name}=`, S(v), ` duration=${g.int(900)}ms`),
          () => b.put(`{"ts":"${ts()}","level":"debug","msg":"${g.word()}","${name}":"`, S(v), `","attempt":${g.int(5)}}`),
          () => b.put(`[${ts()}] [${g.word()}] [${name}=`, S(v), `] request done`),
          () => b.put(`${ts()} INFO  ${g.word()} {${name}=`, S(v), `, region=eu-west-1}`),
          () => b.put(`${ts()} DEBUG ${g.word()} headers: {'${name}': '`, S(v), `', 'accept': '*/*'}`),
          () => b.put(`${name.toUpperCase().replace(/-/g, '_')} `, S(v)),
          () => b.put(`${ts()} INFO  using ${g.pick(['api key', 'API key', 'access key', 'secret key', 'client secret'])} `, S(v)),
        ])();
      };
      break;
    }
    case 'xml-credential-forms': {
      [ext, path] = g.pick([
        ['.xml', 'credentials.xml'],
        ['.xml', 'settings.xml'],
        ['.xml', 'nuget.config'],
        ['.xml', 'context.xml'],
        ['.xml', 'app.config'],
      ]);
      const xv = () => fieldValue(g, '/+=!@#%^*');
      one = () =>
        g.pick<() => void>([
          () => {
            b.line('    <com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>');
            b.line(`      <id>${g.word()}-${g.word()}</id>\n      <username>${user()}</username>`);
            b.put(
              '      <password>',
              S(g.pick([`{AQAAABAAAA${g.pick(['Ag', 'Aw', 'BA'])}${g.b64of(g.pick([48, 72]))}}`, xv()])),
              '</password>',
            );
            b.line('    </com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>');
          },
          () => {
            const [cls, tag] = g.pick([
              ['org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl', 'secret'],
              ['com.dabsquared.gitlabjenkins.connection.GitLabApiTokenImpl', 'apiToken'],
              ['org.jenkinsci.plugins.github__branch__source.GitHubAppCredentials', 'privateKey'],
              ['com.cloudbees.jenkins.plugins.awscredentials.AWSCredentialsImpl', 'secretKey'],
            ]);
            b.line(`    <${cls}>`);
            b.line(`      <id>${g.word()}</id>`);
            b.put(`      <${tag}>`, S(xv()), `</${tag}>`);
            b.line(`    </${cls}>`);
          },
          () => {
            b.line('  <server>');
            b.line(`    <id>${g.word()}-releases</id>\n    <username>${user()}</username>`);
            b.put('    <password>', S(xv()), '</password>');
            b.line('  </server>');
          },
          () => {
            b.line('  <server>');
            b.line(`    <id>${g.word()}</id>`);
            b.put('    <passphrase>', S(xv()), '</passphrase>');
            b.line('  </server>');
          },
          () => {
            b.line(`    <${g.word()}>`);
            b.put(`      <add key="Username" value="${user()}" />\n      <add key="ClearTextPassword" value="`, S(xv()), '" />');
            b.line(`    </${g.word()}>`);
          },
          () =>
            b.put(
              `  <Resource name="jdbc/${g.word()}" auth="Container" type="javax.sql.DataSource" username="${user()}" password="`,
              S(xv()),
              `" driverClassName="org.postgresql.Driver" url="jdbc:postgresql://${host()}/${g.word()}"/>`,
            ),
          () =>
            b.put(
              `  <property name="${g.pick(['password', 'hibernate.connection.password', 'db.password', 'apiKey', 'secretKey', 'accessToken'])}" value="`,
              S(xv()),
              '"/>',
            ),
          () =>
            b.put(
              `  <entry key="${g.pick(['db.password', 'smtp.password', 'api.key', 'client.secret', 'auth.token'])}">`,
              S(xv()),
              '</entry>',
            ),
          () =>
            b.put(
              `  <${g.word()} ${g.pick(['apiKey', 'api_key', 'secret', 'token', 'accessToken', 'password', 'clientSecret'])}="`,
              S(xv()),
              `" ${g.pick(['enabled', 'timeout'])}="${g.int(99)}"/>`,
            ),
          () => {
            const tag = g.pick([
              'ApiKey',
              'apiKey',
              'SecretKey',
              'AccessToken',
              'ClientSecret',
              'Password',
              'DbPassword',
              'privateKey',
              'auth-token',
              'client_secret',
            ]);
            b.put(`  <${tag}>`, S(xv()), `</${tag}>`);
          },
          () => {
            const tag = g.pick(['password', 'secret', 'apiKey', 'token']);
            b.line(`  <${tag}>`);
            b.put('    ', S(xv()));
            b.line(`  </${tag}>`);
          },
          () =>
            b.put(
              `    <add key="${styledKey(g, [g.pick(PROVIDER_WORDS), ...g.pick(SECRET_SUFFIXES)]).replace(/\./g, '_')}" value="`,
              S(xv()),
              '" />',
            ),
        ])();
      break;
    }
    case 'key-suffix-forms': {
      const fmt = g.pick(['json', 'json-compact', 'js', 'yaml', 'toml', 'hcl', 'ini', 'properties', 'env']);
      [ext, path] = (
        {
          json: ['.json', 'config.json'],
          'json-compact': ['.json', 'fixture.json'],
          js: ['.js', 'config.js'],
          yaml: ['.yaml', 'config.yaml'],
          toml: ['.toml', 'config.toml'],
          hcl: ['.tf', 'main.tf'],
          ini: ['.ini', 'app.ini'],
          properties: ['.properties', 'application.properties'],
          env: ['.env', '.env.production'],
        } as Record<string, [string, string]>
      )[fmt]!;
      if (fmt === 'json') b.line('{');
      one = () => {
        const key = styledKey(g, [g.pick(PROVIDER_WORDS), ...g.pick(SECRET_SUFFIXES)]);
        const v = fieldValue(g);
        const k2 = key.replace(/[.-]/g, '_');
        switch (fmt) {
          case 'json':
            g.pick<() => void>([
              () => b.put(`  "${key}": "`, S(v), '",'),
              () => b.put(`  "${key}":"`, S(v), '",'),
              () => {
                b.line(`  "${g.word()}": {`);
                b.line(`    "url": "https://${host()}",`);
                b.put(`    "${key}": "`, S(v), '"');
                b.line('  },');
              },
            ])();
            break;
          case 'json-compact':
            b.put(`{"id":${g.int(999)},"${g.word()}":"${g.word()}","${key}":"`, S(v), `","enabled":true}`);
            break;
          case 'js': {
            const qc = g.pick(["'", '"', '`']);
            b.put(`  ${/[.-]/.test(key) ? `'${key}'` : key}: ${qc}`, S(v), `${qc},`);
            break;
          }
          case 'yaml':
            g.pick<() => void>([
              () => b.put(`  ${key}: `, S(v.replace(/^[^A-Za-z0-9]+/, ''))),
              () => b.put(`  ${key}: "`, S(v), '"'),
              () => b.put(`  ${key}: '`, S(v), "'"),
              () => b.put(`  - ${key}: `, S(v.replace(/^[^A-Za-z0-9]+/, ''))),
              () => b.put(`${key}:  `, S(v.replace(/^[^A-Za-z0-9]+/, '')), `  # ${g.word()}`),
            ])();
            break;
          case 'toml':
            b.put(`${k2} = "`, S(v), '"');
            break;
          case 'hcl':
            b.put(`  ${k2.toLowerCase()} ${' '.repeat(g.int(4))}= "`, S(v), '"');
            break;
          case 'ini':
            b.put(`${k2}${g.pick(['=', ' = ', ' ='])}`, S(v));
            break;
          case 'properties':
            b.put(`${g.word()}.${key.replace(/_/g, '.')}${g.pick(['=', ' = ', ': ', ':'])}`, S(v));
            break;
          default: {
            const qc = q();
            b.put(`${g.pick(['', 'export '])}${k2.toUpperCase()}=${qc}`, S(v), qc);
            break;
          }
        }
      };
      break;
    }
    case 'connection-string-forms': {
      [ext, path] = g.pick([
        ['.env', '.env'],
        ['.yaml', 'application.yaml'],
        ['.json', 'appsettings.json'],
        ['.properties', 'db.properties'],
        ['.log', 'migrate.log'],
        ['.ini', 'odbc.ini'],
      ]);
      const adoPw = () => passwordValue(g, '/+=!@#%^*');
      const urlPw = () =>
        g.pick<() => string>([
          () => pctEncode(passwordValue(g)),
          () => g.chars(ALNUM, g.range(14, 30)),
          () => arbitraryValue(g, 'passphrase'),
        ])();
      const wrap = (parts: Array<string | [string, string]>) => {
        const [lead, tail] =
          ext === '.env'
            ? [`${g.pick(['DATABASE_URL', 'DB_URL', 'REDIS_URL', 'BROKER_URL', 'CONNECTION_STRING'])}=${g.pick(['', '"'])}`, '']
            : ext === '.yaml'
              ? [`  ${g.pick(['url', 'dsn', 'connectionString', 'uri'])}: `, '']
              : ext === '.json'
                ? [`    "${g.pick(['DefaultConnection', 'Database', 'Cache'])}": "`, '",']
                : ext === '.properties'
                  ? [`${g.pick(['spring.datasource.url', 'db.url', 'app.db.dsn'])}=`, '']
                  : ext === '.ini'
                    ? [`${g.pick(['ConnStr', 'Dsn'])} = `, '']
                    : [`${ts()} INFO  connecting to `, ` (attempt ${g.int(4)})`];
        b.put(lead, ...parts, lead.endsWith('"') && ext === '.env' ? '"' : tail);
      };
      one = () =>
        g.pick<() => void>([
          () =>
            wrap([
              `${g.pick(['postgres', 'postgresql'])}://${user()}:`,
              S(urlPw()),
              `@${host()}:5432/${g.word()}${g.pick(['', '?sslmode=require'])}`,
            ]),
          () => wrap([`${g.pick(['mysql', 'mariadb', 'mysql2'])}://${user()}:`, S(urlPw()), `@${host()}:3306/${g.word()}`]),
          () => wrap([`${g.pick(['redis', 'rediss'])}://${g.pick(['', 'default', user()])}:`, S(urlPw()), `@${host()}:6379/${g.int(9)}`]),
          () => wrap([`${g.pick(['amqp', 'amqps'])}://${user()}:`, S(urlPw()), `@${host()}:5672/${g.pick(['', '%2F', g.word()])}`]),
          () => wrap([`mongodb://${user()}:`, S(urlPw()), `@${host()}:27017,${host()}:27017/${g.word()}?replicaSet=rs0&authSource=admin`]),
          () => wrap([`${g.pick(['mssql', 'sqlserver'])}://${user()}:`, S(urlPw()), `@${host()}:1433/${g.word()}`]),
          () => wrap([`jdbc:postgresql://${host()}:5432/${g.word()}?user=${user()}&password=`, S(urlPw()), `&ssl=true`]),
          () => wrap([`jdbc:mariadb://${host()}:3306/${g.word()}?user=${user()}&password=`, S(urlPw())]),
          () => wrap([`jdbc:db2://${host()}:50000/${g.word()}:user=${user()};password=`, S(adoPw().replace(/[;]/g, '')), ';']),
          () =>
            wrap([
              `jdbc:sqlserver://${host()};databaseName=${g.word()};${g.pick(['user', 'userName'])}=${user()};${g.pick(['password', 'Password'])}=`,
              S(adoPw()),
              `;${g.pick(['encrypt=true', 'trustServerCertificate=true'])}`,
            ]),
          () =>
            wrap([
              `${g.pick(['Server', 'Data Source'])}=${g.pick(['tcp:', ''])}${host()},1433;${g.pick(['Database', 'Initial Catalog'])}=${g.word()};${g.pick(['User Id', 'User ID', 'UID', 'user'])}=${user()};${g.pick(['Password', 'password', 'PASSWORD', 'Pwd'])}=`,
              S(adoPw()),
              `;${g.pick(['Encrypt=True;', 'MultipleActiveResultSets=true', ''])}`,
            ]),
          () =>
            wrap([
              `Host=${host()};Port=5432;Database=${g.word()};${g.pick(['Username', 'User ID'])}=${user()};Password=`,
              S(adoPw()),
              g.pick(['', ';SSL Mode=Require']),
            ]),
          () => wrap([`Driver={ODBC Driver 18 for SQL Server};Server=${host()};Database=${g.word()};UID=${user()};PWD=`, S(adoPw()), ';']),
          () => wrap([`DSN=${g.word()};UID=${user()};PWD=`, S(adoPw())]),
          () => wrap([`Driver={PostgreSQL Unicode};Server=${host()};Port=5432;Database=${g.word()};Uid=${user()};Pwd=`, S(adoPw()), ';']),
        ])();
      break;
    }
    case 'basic-auth-url-forms': {
      [ext, path] = g.pick([
        ['.log', 'ci.log'],
        ['.sh', 'deploy.sh'],
        ['.env', '.env'],
        ['.yaml', 'pipeline.yml'],
        ['.ini', 'pip.conf'],
      ]);
      const pw = () =>
        g.pick<() => string>([
          () => pctEncode(passwordValue(g)),
          () => g.chars(ALNUM, g.range(14, 32)),
          () => arbitraryValue(g, 'passphrase'),
          () => g.chars(HEX, 40),
        ])();
      one = () =>
        g.pick<() => void>([
          () => b.put(`+ git clone https://${user()}:`, S(pw()), `@git.${g.word()}.example.com/${g.word()}/${g.word()}.git`),
          () =>
            b.put(
              `git remote set-url origin https://${g.pick(['oauth2', 'x-access-token', 'gitlab-ci-token', user()])}:`,
              S(pw()),
              `@${g.pick(['gitlab', 'git', 'scm'])}.${g.word()}.example.com/${g.word()}.git`,
            ),
          () => b.put(`${g.pick(['index-url', 'extra-index-url'])} = https://${user()}:`, S(pw()), `@pypi.${g.word()}.example.com/simple/`),
          () => b.put(`pip install --extra-index-url https://${user()}:`, S(pw()), `@pypi.${g.word()}.example.com/simple ${g.word()}`),
          () =>
            b.put(`${g.pick(['HTTP_PROXY', 'https_proxy', 'ALL_PROXY'])}=http://${user()}:`, S(pw()), `@proxy.${g.word()}.internal:3128`),
          () => b.put(`  proxy: "http://${user()}:`, S(pw()), `@${host()}:8080"`),
          () => b.put(`curl -fsSL http://${user()}:`, S(pw()), `@${host()}:${g.pick([8080, 9200, 15672])}/api/${g.word()}`),
          () =>
            b.put(
              `${ts()} INFO  fetching ${g.pick(['https', 'http', 'ftp', 'sftp'])}://${user()}:`,
              S(pw()),
              `@${host()}/${g.word()}/${g.word()}.tar.gz`,
            ),
          () => b.put(`  registry: https://${user()}:`, S(pw()), `@registry.${g.word()}.example.com/v2/`),
          () => b.put(`SMTP_URL=smtp${g.pick(['', 's'])}://${user()}%40${g.word()}.com:`, S(pw()), `@smtp.${g.word()}.example.com:587`),
          () => b.put(`  - "https://${user()}:`, S(pw()), `@${g.word()}.example.com/${g.word()}",`),
        ])();
      break;
    }
    case 'azure-key-forms': {
      [ext, path] = g.pick([
        ['.json', 'local.settings.json'],
        ['.env', '.env'],
        ['.yaml', 'values.yaml'],
        ['.md', 'azure.txt'],
        ['.log', 'func.log'],
        ['.sh', 'upload.sh'],
      ]);
      const acct = () => `${g.word()}${g.chars(LOWER + DIGITS, 6)}`;
      one = () =>
        g.pick<() => void>([
          () =>
            b.put(
              `    "AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=${acct()};AccountKey=`,
              S(g.b64of(64)),
              `;EndpointSuffix=core.windows.net",`,
            ),
          () =>
            b.put(`AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=${acct()};AccountKey=`, S(g.b64of(64)), '"'),
          () => b.put(`  connectionString: AccountName=${acct()};AccountKey=`, S(g.b64of(64)), `;DefaultEndpointsProtocol=https`),
          () => b.put(`accountname=${acct()};accountkey=`, S(g.b64of(64)), ';endpointsuffix=core.windows.net'),
          () => b.put(`AccountEndpoint=https://${g.word()}.documents.azure.com:443/;AccountKey=`, S(g.b64of(64)), ';'),
          () =>
            b.put(
              `Endpoint=sb://${g.word()}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=`,
              S(g.b64of(32)),
              g.pick(['', `;EntityPath=${g.word()}`]),
            ),
          () => b.put(`HostName=${g.word()}.azure-devices.net;SharedAccessKeyName=iothubowner;SharedAccessKey=`, S(g.b64of(32))),
          () =>
            b.put(`${g.pick(['AZURE_STORAGE_KEY', 'AZURE_STORAGE_ACCESS_KEY', 'STORAGE_ACCOUNT_KEY', 'ARM_ACCESS_KEY'])}=`, S(g.b64of(64))),
          () => b.put(`az storage blob upload --account-name ${acct()} --account-key `, S(g.b64of(64)), ` -c ${g.word()} -f out.tgz`),
          () => b.put(`  ${g.pick(['accountKey', 'account_key', 'storageKey', 'storage_account_key'])}: "`, S(g.b64of(64)), '"'),
        ])();
      break;
    }
    case 'webhook-url-forms': {
      [ext, path] = g.pick([
        ['.yaml', 'alerts.yaml'],
        ['.env', '.env'],
        ['.json', 'notify.json'],
        ['.sh', 'notify.sh'],
        ['.tf', 'alerts.tf'],
      ]);
      const slack = () => `T${g.chars(UPPER + DIGITS, g.pick([8, 10]))}/B${g.chars(UPPER + DIGITS, g.pick([8, 10]))}/${g.chars(ALNUM, 24)}`;
      const discord = () => `${g.chars(DIGITS, 18)}/${g.chars(URLSAFE, 68)}`;
      const teams = () => `webhookb2/${g.uuid()}@${g.uuid()}/IncomingWebhook/${g.chars(HEX, 32)}/${g.uuid()}`;
      const url = (): [string, [string, string]] =>
        g.pick<() => [string, [string, string]]>([
          () => [['https://hooks', 'slack', 'com/services/'].join('.'), S(slack())],
          () => [
            ['https://hooks', 'slack', 'com/workflows/'].join('.'),
            S(`T${g.chars(UPPER + DIGITS, 10)}/A${g.chars(UPPER + DIGITS, 10)}/${g.chars(DIGITS, 18)}/${g.chars(ALNUM, 24)}`),
          ],
          () => [
            `https://${g.pick(['discord.com', 'discordapp.com', 'canary.discord.com', 'ptb.discord.com'])}/api/webhooks/`,
            S(discord()),
          ],
          () => [`https://${g.word()}.webhook.office.com/`, S(teams())],
        ])();
      one = () => {
        const [lead, secret] = url();
        g.pick<() => void>([
          () => {
            const qc = q();
            b.put(`  ${g.pick(['url', 'webhook_url', 'api_url', 'slack_api_url', 'endpoint'])}: ${qc}`, lead, secret, qc);
          },
          () =>
            b.put(
              `${g.pick(['SLACK_WEBHOOK_URL', 'SLACK_WEBHOOK', 'DISCORD_WEBHOOK_URL', 'TEAMS_WEBHOOK_URL', 'WEBHOOK_URL'])}=`,
              lead,
              secret,
            ),
          () => b.put(`  "${g.pick(['webhookUrl', 'slackWebhook', 'url', 'hook'])}": "`, lead, secret, '",'),
          () => b.put(`curl -X POST -H 'Content-type: application/json' --data '{"text":"${g.word()} done"}' `, lead, secret),
          () => b.put(`  ${g.pick(['webhook_url', 'url', 'address'])} = "`, lead, secret, '"'),
          () => b.put(`${ts()} INFO  posting to ${lead}`, secret, ` -> ${g.pick([200, 404])}`),
        ])();
      };
      break;
    }
    case 'provider-prefix-forms': {
      [ext, path] = g.pick([
        ['.env', '.env'],
        ['.yaml', 'secrets.yaml'],
        ['.json', 'config.json'],
        ['.log', 'app.log'],
        ['.sh', 'setup.sh'],
        ['.yaml', 'workflow.yml'],
      ]);
      const token = (): string =>
        g.pick<() => string>([
          () => g.pick(['shpat', 'shpca', 'shppa', 'shpss']) + '_' + g.chars(HEX, 32),
          () => g.pick(['rk_live_', 'rk_test_', 'sk_test_', 'sk_live_']) + g.chars(ALNUM, g.pick([24, 34, 99])),
          () => 'sk_live_' + g.chars(DIGITS, 2) + g.chars(ALNUM, 96),
          () => 'whsec_' + g.chars(ALNUM, 32),
          () =>
            `tskey-${g.pick(['auth', 'api', 'client', 'webhook'])}-k${g.chars(ALNUM, g.range(9, 12))}CNTRL-${g.chars(ALNUM, g.range(30, 36))}`,
        ])();
      one = () => {
        const t = token();
        g.pick<() => void>([
          () => {
            const qc = q();
            b.put(
              `${g.pick(['SHOPIFY_ACCESS_TOKEN', 'STRIPE_SECRET_KEY', 'STRIPE_API_KEY', 'TS_AUTHKEY', 'TAILSCALE_AUTH_KEY', 'API_TOKEN'])}=${qc}`,
              S(t),
              qc,
            );
          },
          () => b.put(`  ${g.pick(['token', 'apiKey', 'authkey', 'secret', 'key'])}: `, S(t)),
          () => b.put(`  "${g.pick(['accessToken', 'stripeKey', 'authKey', 'secret'])}": "`, S(t), '",'),
          () => b.put(`${ts()} DEBUG ${g.word()} X-Shopify-Access-Token: `, S(t)),
          () => b.put(`${ts()} INFO  client=${g.word()} Authorization: Bearer `, S(t), ` path=/v1/${g.word()}`),
          () => b.put(`tailscale up --auth-key=`, S(t), ` --hostname=${g.word()}`),
          () => b.put(`          authkey: `, S(t)),
          () => b.put(`${ts()} ERROR ${g.word()} failed for key=`, S(t), `, retrying`),
          () => b.put(`stripe.api_key = "`, S(t), '"'),
          () => b.put(`curl -u `, S(t), `: https://api.stripe.com/v1/charges`),
        ])();
      };
      break;
    }
    case 'fake-well-formed-forms': {
      [ext, path] = g.pick([
        ['.env', 'test.env'],
        ['.js', 'payments.test.js'],
        ['.json', 'fixture.json'],
        ['.yaml', 'ci.yaml'],
        ['.py', 'test_billing.py'],
      ]);
      const filler = (n: number) =>
        g.pick<() => string>([
          () => 'A'.repeat(n),
          () => '0'.repeat(n),
          () => 'abcd1234'.repeat(Math.ceil(n / 8)).slice(0, n),
          () => '1234567890'.repeat(Math.ceil(n / 10)).slice(0, n),
          () => 'a'.repeat(n),
        ])();
      one = () => {
        const t = g.pick<() => string>([
          () => 'sk' + '_live_' + filler(g.pick([24, 32, 99])),
          () => 'rk' + '_live_' + filler(24),
          () => 'ghp' + '_' + filler(36),
          () => 'xoxb-' + '1'.repeat(12) + '-' + '1'.repeat(13) + '-' + filler(24),
          () => 'shpat' + '_' + filler(32).replace(/[^0-9a-f]/g, 'a'),
          () => 'npm' + '_' + filler(36),
          () => 'AKIA' + 'A'.repeat(16),
        ])();
        g.pick<() => void>([
          () => b.put(`${g.pick(['STRIPE_SECRET_KEY', 'GITHUB_TOKEN', 'SLACK_BOT_TOKEN', 'API_KEY'])}=`, S(t)),
          () => b.put(`const ${g.pick(['apiKey', 'token', 'secret'])} = '`, S(t), "';"),
          () => b.put(`  "${g.pick(['key', 'token', 'secret'])}": "`, S(t), '",'),
          () => b.put(`  ${g.pick(['token', 'api_key'])}: `, S(t)),
          () => b.put(`${g.pick(['API_KEY', 'TOKEN'])} = "`, S(t), '"'),
        ])();
      };
      break;
    }
    case 'credential-file-forms': {
      const file = g.pick([
        'pypirc',
        'netrc',
        'netrc-multi',
        'gradle',
        'npmrc',
        'pgpass',
        'mycnf',
        's3cfg',
        'docker-config',
        'git-credentials',
        'rclone',
      ]);
      [ext, path] = (
        {
          pypirc: ['.ini', '.pypirc'],
          netrc: ['.md', '.netrc'],
          'netrc-multi': ['.md', '.netrc'],
          gradle: ['.properties', 'gradle.properties'],
          npmrc: ['.ini', '.npmrc'],
          pgpass: ['.md', '.pgpass'],
          mycnf: ['.ini', '.my.cnf'],
          s3cfg: ['.ini', '.s3cfg'],
          'docker-config': ['.json', 'config.json'],
          'git-credentials': ['.md', '.git-credentials'],
          rclone: ['.ini', 'rclone.conf'],
        } as Record<string, [string, string]>
      )[file]!;
      const pv = () => passwordValue(g, '/+=!@#%^*');
      one = () => {
        switch (file) {
          case 'pypirc':
            b.line(`[${g.word()}]`);
            b.line(`repository = https://pypi.${g.word()}.example.com/`);
            b.line(`username = ${user()}`);
            b.put(`password${g.pick([' = ', '=', ': '])}`, S(pv()));
            break;
          case 'netrc':
            b.put(`machine ${host()} login ${user()} password `, S(pv()));
            break;
          case 'netrc-multi':
            b.line(`machine ${host()}`);
            b.line(`  login ${user()}`);
            b.put('  password ', S(pv()));
            break;
          case 'gradle':
            b.put(
              `${g.pick(['mavenPassword', 'ossrhPassword', 'signing.password', 'nexusPassword', 'artifactory_password', 'systemProp.https.proxyPassword', 'sonatypePassword', 'gpr.key', 'githubPackagesToken', 'repoToken'])}=`,
              S(g.pick([pv(), g.chars(ALNUM, 32)])),
            );
            break;
          case 'npmrc':
            b.put(
              `//${g.pick(['npm', 'registry'])}.${g.word()}.example.com/:${g.pick(['_password', '_auth', '_authToken'])}=`,
              S(g.pick([g.b64of(18), g.uuid(), g.b64of(24)])),
            );
            break;
          case 'pgpass':
            b.put(`${host()}:5432:${g.pick(['*', g.word()])}:${user()}:`, S(pv().replace(/[:\\]/g, '')));
            break;
          case 'mycnf': {
            const qc = g.pick(['', '"']);
            b.line('[client]');
            b.line(`user=${user()}`);
            b.put(`password${g.pick(['=', ' = '])}${qc}`, S(pv()), qc);
            break;
          }
          case 's3cfg':
            b.line(`access_key = AKIA${g.chars(UPPER + '234567', 16)}`);
            b.put('secret_key = ', S(g.chars(B64, 40)));
            break;
          case 'docker-config':
            b.put(
              `    "${g.pick(['https://index.docker.io/v1/', `registry.${g.word()}.example.com`])}": { "auth": "`,
              S(Buffer.from(`${user()}:${pv()}`).toString('base64')),
              '" },',
            );
            break;
          case 'git-credentials':
            b.put(`https://${user()}:`, S(pctEncode(pv())), `@${g.pick(['github.com', 'gitlab.com', `git.${g.word()}.example.com`])}`);
            break;
          default:
            b.line(`[${g.word()}]`);
            b.line(`type = ${g.pick(['sftp', 'ftp', 'webdav'])}`);
            b.line(`user = ${user()}`);
            b.put(`${g.pick(['pass', 'password'])} = `, S(g.chars(URLSAFE, g.range(30, 48))));
            break;
        }
      };
      break;
    }
    default: {
      // password-symbol-forms
      const fmt = g.pick(['env', 'yaml', 'properties', 'ini', 'toml', 'compose', 'compose-list', 'k8s-secret', 'k8s-env', 'hcl', 'json']);
      [ext, path] = (
        {
          env: ['.env', '.env'],
          yaml: ['.yaml', 'application.yml'],
          properties: ['.properties', 'application.properties'],
          ini: ['.ini', 'config.ini'],
          toml: ['.toml', 'settings.toml'],
          compose: ['.yaml', 'docker-compose.yml'],
          'compose-list': ['.yaml', 'docker-compose.yml'],
          'k8s-secret': ['.yaml', 'secret.yaml'],
          'k8s-env': ['.yaml', 'deployment.yaml'],
          hcl: ['.tf', 'variables.tf'],
          json: ['.json', 'settings.json'],
        } as Record<string, [string, string]>
      )[fmt]!;
      one = () => {
        const v = passwordValue(g);
        const base = g.pick(['db', 'smtp', 'admin', 'root', 'redis', 'ldap', 'mail', 'rabbitmq', 'postgres', 'mysql_root', 'keystore']);
        const name = styledKey(g, [base, g.pick(['password', 'pass', 'pwd', 'passwd', 'secret'])]).replace(/\./g, '_');
        const qc = g.pick(['"', "'"]);
        const upper = name.toUpperCase().replace(/-/g, '_');
        switch (fmt) {
          case 'env': {
            const qe = g.pick(['', '"', "'"]);
            b.put(`${upper}=${qe}`, S(v), qe);
            break;
          }
          case 'yaml':
            b.put(`  ${name}: ${qc}`, S(v), qc);
            break;
          case 'properties':
            b.put(`${base}.${g.pick(['password', 'pass', 'secret'])}${g.pick(['=', ' = ', ': '])}`, S(v));
            break;
          case 'ini':
            b.put(`${name.replace(/-/g, '_')}${g.pick(['=', ' = '])}`, S(v));
            break;
          case 'toml':
            b.put(`${name.replace(/-/g, '_').toLowerCase()} = ${qc}`, S(v), qc);
            break;
          case 'compose':
            b.line('    environment:');
            b.put(`      ${upper}: ${qc}`, S(v), qc);
            break;
          case 'compose-list':
            b.line('    environment:');
            b.put(`      - ${upper}=`, S(v));
            break;
          case 'k8s-secret':
            b.line('stringData:');
            b.put(`  ${name.toLowerCase()}: ${qc}`, S(v), qc);
            break;
          case 'k8s-env':
            b.put(`        - name: ${upper}\n          value: ${qc}`, S(v), qc);
            break;
          case 'hcl':
            b.put(`  ${name.replace(/-/g, '_').toLowerCase()} = "`, S(v), '"');
            break;
          default:
            b.put(`  "${name}": "`, S(v), '",');
            break;
        }
      };
    }
  }
  for (let k = g.range(2, 3); k > 0; k--) {
    b.filler(g, ext, g.range(1, 5));
    one();
  }
  b.filler(g, ext, g.range(2, 5));
  return { id, kind: 'context', path, content: b.text, spans: b.spans, workspace: {}, home: {}, env: {} };
}

// ---------------------------------------------------------------- placeholders, in the widened contexts

/** Placeholders in the contexts of CONTEXT_FORM_SUBS; masking one is a false positive. */
function placeholderFormCase(g: Gen, id: string): Omit<SecretCase, 'split'> {
  const b = new Builder();
  const P = (v: string, sub: string): [string, string, boolean] => [v, sub, false];
  const x = (n: number) => g.pick(['x', 'X'])!.repeat(n);
  const ph = (): [string, string] =>
    g.pick<() => [string, string]>([
      () => [
        g.pick([
          'your_api_key_here',
          'your-api-key',
          'YOUR_API_KEY',
          'your_password',
          'YOUR_SECRET_HERE',
          'your-token-here',
          'your_client_secret',
        ]),
        'your_…',
      ],
      () => [g.pick(['<TOKEN>', '<your-password>', '<password>', '<API_KEY>', '<secret>', '<your-access-key>']), '<…>'],
      () => ['${' + g.pick(['DB_PASSWORD', 'API_KEY', 'SECRET', 'TOKEN', 'env.NEXUS_PASSWORD', 'var.api_key']) + '}', '${VAR}'],
      () => ['{{ ' + g.pick(['.Values.password', 'secret', 'api_key', 'vault_token']) + ' }}', '{{ … }}'],
      () => [x(g.pick([8, 16, 24, 32])), 'xxx'],
      () => ['%' + g.pick(['NUGET_PASSWORD', 'API_KEY', 'DB_PASS']) + '%', '%VAR%'],
      () => ['${{ secrets.' + g.pick(['API_TOKEN', 'DB_PASSWORD', 'SLACK_WEBHOOK']) + ' }}', '${{ secrets.X }}'],
      () => [g.pick(['changeme', 'CHANGEME', 'REPLACE_ME', '********', 'TODO']), 'changeme'],
    ])();
  const lines: Array<() => void> = [
    () => {
      const [v, s] = ph();
      b.put(`${g.ts(g.int(99))} INFO  upstream=${g.word()} ${g.pick(['Key', 'api_key', 'apiKey', 'token'])}=`, P(v, `log:${s}`));
    },
    () => {
      const [v, s] = ph();
      b.put(`  "${g.pick(['godaddySecret', 'stripeKey', 'apiToken', 'smtpPassword', 'clientSecret'])}": "`, P(v, `json:${s}`), '",');
    },
    () => {
      const [v, s] = ph();
      b.put(`  ${g.pick(['api_secret', 'smtp_password', 'access_token', 'billing_key'])}: "`, P(v, `yaml:${s}`), '"');
    },
    () => {
      const [v, s] = ph();
      b.put(`${g.pick(['API_SECRET', 'SMTP_PASSWORD', 'ACCESS_TOKEN', 'BILLING_KEY'])}=`, P(v, `env:${s}`));
    },
    () => {
      const [v, s] = ph();
      b.put('      <password>', P(v, `xml:${s}`), '</password>');
    },
    () => {
      const [v, s] = ph();
      b.put('      <secret>', P(v, `xml:${s}`), '</secret>');
    },
    () => {
      const [v, s] = ph();
      b.put('    <add key="ClearTextPassword" value="', P(v, `nuget:${s}`), '" />');
    },
    () => {
      const [v, s] = ph();
      b.put(`  <datasource user="app" password="`, P(v, `xml-attr:${s}`), '"/>');
    },
    () =>
      b.put(
        'postgres://app:',
        P(g.pick(['<password>', '${DB_PASSWORD}', 'password', 'PASSWORD', '****']), 'url:<password>'),
        '@localhost:5432/app',
      ),
    () =>
      b.put(
        'mongodb+srv://user:',
        P(g.pick(['<password>', '<db_password>', '${MONGO_PASSWORD}']), 'url:<password>'),
        '@cluster0.example.mongodb.net/test',
      ),
    () =>
      b.put(
        'Server=localhost;Database=app;User Id=sa;Password=',
        P(g.pick(['<YourStrong@Passw0rd>', '<password>', '${SA_PASSWORD}', '{your_password}', 'your_password']), 'ado:<password>'),
        ';',
      ),
    () =>
      b.put(
        'Driver={ODBC Driver 18 for SQL Server};Server=db;UID=sa;PWD=',
        P(g.pick(['<password>', '%DB_PASS%', '${DB_PASS}']), 'odbc:<password>'),
        ';',
      ),
    () =>
      b.put(
        'jdbc:sqlserver://localhost:1433;databaseName=app;user=sa;password=',
        P(g.pick(['<password>', '${DB_PASSWORD}', 'your_password']), 'jdbc:<password>'),
        ';',
      ),
    () =>
      b.put(
        'git clone https://',
        P(g.pick(['<username>:<token>', '${GIT_USER}:${GIT_TOKEN}', 'USERNAME:TOKEN']), 'url:<user>:<token>'),
        '@git.example.com/app.git',
      ),
    () =>
      b.put(
        'DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey=',
        P(g.pick(['<account-key>', '${AZURE_STORAGE_KEY}', 'your_account_key']), 'azure:<key>'),
        ';',
      ),
    () =>
      b.put(
        'Endpoint=sb://example.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=',
        P(g.pick(['<key>', '${SB_KEY}', 'your-shared-access-key']), 'azure:<key>'),
      ),
    () =>
      b.put(
        'SLACK_WEBHOOK_URL=https://hooks.slack.com/services/',
        P(g.pick(['T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX', 'XXX/YYY/ZZZ', '<your-webhook-path>']), 'slack:xxx'),
      ),
    () =>
      b.put(
        'DISCORD_WEBHOOK_URL=https://discord.com/api/webhooks/',
        P(g.pick(['<id>/<token>', '${WEBHOOK_ID}/${WEBHOOK_TOKEN}', 'your_webhook_id/your_webhook_token']), 'discord:<id>/<token>'),
      ),
    () => b.put('SHOPIFY_ACCESS_TOKEN=', P(g.pick(['shpat_' + 'x'.repeat(32), 'shpat_<token>', 'shpat_your_token_here']), 'shopify:xxx')),
    () => b.put('STRIPE_RESTRICTED_KEY=', P(g.pick(['rk_live_' + 'x'.repeat(24), 'rk_test_<your_key>', 'rk_live_...']), 'stripe:xxx')),
    () =>
      b.put(
        'TS_AUTHKEY=',
        P(g.pick(['tskey-auth-' + 'x'.repeat(12) + '-' + 'x'.repeat(24), 'tskey-auth-<key>', '<tailscale-auth-key>']), 'tailscale:xxx'),
      ),
    () =>
      b.put(
        'machine api.example.com login user password ',
        P(g.pick(['<password>', '${NETRC_PASSWORD}', 'your_password']), 'netrc:<password>'),
      ),
    () => {
      b.line('[pypi]');
      b.line('username = __token__');
      b.put('password = ', P(g.pick(['<your PyPI token>', '${PYPI_TOKEN}', 'pypi-your-token-here']), 'pypirc:<token>'));
    },
    () => b.put('mavenPassword=', P(g.pick(['<password>', '${MAVEN_PASSWORD}', 'changeme']), 'gradle:<password>')),
    () => b.put('      - POSTGRES_PASSWORD=', P(g.pick(['${POSTGRES_PASSWORD}', 'changeme', '<password>']), 'compose:${VAR}')),
    () =>
      b.put(
        '  db_password = ',
        P(g.pick(['var.db_password', 'data.vault_generic_secret.db.data["password"]', 'random_password.db.result']), 'hcl:var.x'),
      ),
  ];
  const order = lines
    .map((_, i) => i)
    .sort(() => g.rnd() - 0.5)
    .slice(0, g.range(5, 8));
  for (const i of order) {
    b.filler(g, '.md', g.range(1, 3));
    lines[i]!();
  }
  b.filler(g, '.md', g.range(1, 3));
  return {
    id,
    kind: 'placeholder',
    path: g.pick(['README.md', '.env.example', 'docs/setup.md', 'config.sample.yaml', 'settings.example.xml']),
    content: b.text,
    spans: b.spans,
    workspace: {},
    home: {},
    env: {},
  };
}

// ---------------------------------------------------------------- more contexts (issue 16 §3, second widening)
// Formats the classes above do not generate yet: HTTP request dumps (curl -v, raw requests, HAR), secrets
// passed as command-line arguments (docker -e, kubectl --from-literal, heroku/vault/aws/gh/az, curl -u),
// application config files (Spring, .NET appsettings, Rails database.yml, Django settings, Terraform tfvars,
// Ansible, PHP, Go/Ruby/Python literals, systemd units) and structured log lines (nested JSON, Python and Go
// struct prints, Java toString). New ids (the subs' names are new), so no case above changes and the hash
// split puts about 30 % of these in held-out too; placeholders in the same contexts follow.

export const MORE_CONTEXT_SUBS = ['http-dump-forms', 'cli-argument-forms', 'app-config-forms', 'structured-log-forms'] as const;

/** A value a header, an argument or a config field holds: no quote, blank, backslash or `$` (shell- and config-safe). */
function plainValue(g: Gen): string {
  return g.pick<() => string>([
    () => passwordValue(g, '/+=!@#%^*'),
    () => g.chars(ALNUM, g.range(20, 40)),
    () => g.chars(HEX, g.pick([32, 40, 64])),
    () => g.b64of(g.pick([24, 32])).replace(/[^A-Za-z0-9+/=]/g, ''),
    () => arbitraryValue(g, 'passphrase'),
    () => g.chars(URLSAFE, g.range(24, 44)),
  ])();
}

function moreContextCase(g: Gen, id: string, sub: (typeof MORE_CONTEXT_SUBS)[number]): Omit<SecretCase, 'split'> {
  const b = new Builder();
  const ts = () => g.ts(g.int(99));
  const S = (v: string): [string, string] => [v, sub];
  const secretWords = () => g.pick(SECRET_SUFFIXES);
  let ext = '.log';
  let path = 'app.log';
  let one: () => void;
  switch (sub) {
    case 'http-dump-forms': {
      [ext, path] = g.pick([
        ['.log', 'curl-verbose.log'],
        ['.md', 'request.txt'],
        ['.json', 'session.har.json'],
      ]);
      one = () => {
        // An Authorization scheme carries a token (RFC 6750 b64token characters); a custom header any plain value.
        const token = g.pick<() => string>([
          () => g.chars(ALNUM, g.range(24, 48)),
          () => g.chars(URLSAFE, g.range(24, 48)),
          () => g.b64of(g.pick([24, 32, 48])),
          () => g.chars(HEX, 40),
        ])();
        const v = plainValue(g);
        const header = g.pick([
          'X-Api-Key',
          'x-api-key',
          'X-Auth-Token',
          'X-Access-Token',
          'Api-Key',
          'X-API-KEY',
          'Private-Token',
          'X-Secret-Key',
        ]);
        g.pick<() => void>([
          () => b.put(`> Authorization: Bearer `, S(token)),
          () => b.put(`> ${header}: `, S(v)),
          () => b.put(`${header}: `, S(v)),
          () => b.put(`curl -s -H "${header}: `, S(v), `" https://${g.word()}.example.com/v1/${g.word()}`),
          () => b.put(`curl -H 'Authorization: Bearer `, S(token), `' https://api.${g.word()}.io/items`),
          () => b.put(`curl -H "Authorization: token `, S(token), `" https://api.github.com/user`),
          () => b.put(`        { "name": "${header}", "value": "`, S(v), `" },`),
          () => b.put(`        { "name": "Authorization", "value": "Bearer `, S(token), `" },`),
          () => b.put(`${ts()} DEBUG http: request headers: map[Accept:[*/*] ${header}:[`, S(v), `]]`),
        ])();
      };
      break;
    }
    case 'cli-argument-forms': {
      [ext, path] = g.pick([
        ['.sh', 'deploy.sh'],
        ['.md', 'terminal.txt'],
        ['.log', 'ci-job.log'],
      ]);
      one = () => {
        const v = plainValue(g).replace(/[!^*]/g, '');
        const name = styledKey(g, ['db', ...secretWords()])
          .toUpperCase()
          .replace(/[-.]/g, '_');
        g.pick<() => void>([
          () => b.put(`docker run -d -e ${name}=`, S(v), ` ${g.word()}:latest`),
          () => b.put(`+ docker run --rm --env ${name}=`, S(v), ` registry.example.com/${g.word()}`),
          () =>
            b.put(
              `kubectl create secret generic ${g.word()} --from-literal=${g.pick(['password', 'api-key', 'token', 'client-secret'])}=`,
              S(v),
            ),
          () => b.put(`heroku config:set ${name}=`, S(v), ` -a ${g.word()}`),
          () => b.put(`vault kv put secret/${g.word()} ${g.pick(['password', 'api_key', 'token'])}=`, S(v)),
          () => b.put(`aws configure set aws_secret_access_key `, S(v)),
          () => b.put(`gh secret set ${name} --body "`, S(v), `"`),
          () => b.put(`az login --service-principal -u ${g.uuid()} -p `, S(v), ` --tenant ${g.uuid()}`),
          () => b.put(`$ ${g.word()}-cli login --${g.pick(['token', 'api-key', 'password', 'client-secret'])} `, S(v)),
          () => b.put(`+ ./${g.word()} --${g.pick(['token', 'api-key', 'password', 'secret'])}=`, S(v), ` --verbose`),
          () => b.put(`export ${name}='`, S(v), `'`),
        ])();
      };
      break;
    }
    case 'app-config-forms': {
      const kind = g.pick(['spring', 'dotnet', 'rails', 'django', 'tfvars', 'ansible', 'php', 'code', 'systemd']);
      [ext, path] = (
        {
          spring: ['.properties', 'application.properties'],
          dotnet: ['.json', 'appsettings.Production.json'],
          rails: ['.yaml', 'database.yml'],
          django: ['.py', 'settings.py'],
          tfvars: ['.tf', 'prod.tfvars'],
          ansible: ['.yaml', 'group_vars/all.yml'],
          php: ['.php', 'config.php'],
          code: ['.go', 'config.go'],
          systemd: ['.ini', 'app.service'],
        } as Record<string, [string, string]>
      )[kind]!;
      one = () => {
        const v = plainValue(g);
        const words = [g.pick(PROVIDER_WORDS), ...secretWords()];
        const key = styledKey(g, words);
        const snake = words.join('_');
        switch (kind) {
          case 'spring':
            return g.pick<() => void>([
              () => b.put(`spring.datasource.password=`, S(v)),
              () => b.put(`${g.word()}.${snake.replace(/_/g, '-')}=`, S(v)),
              () => b.put(`spring.mail.password = `, S(v)),
            ])();
          case 'dotnet':
            return g.pick<() => void>([
              () => b.put(`    "${key[0]!.toUpperCase() + key.slice(1)}": "`, S(v), `",`),
              () => b.put(`    "Password": "`, S(v), `",`),
              () => b.put(`    "ClientSecret": "`, S(v), `"`),
            ])();
          case 'rails':
            return g.pick<() => void>([() => b.put(`  password: `, S(v)), () => b.put(`  ${snake}: "`, S(v), `"`)])();
          case 'django':
            return g.pick<() => void>([
              () => b.put(`SECRET_KEY = '`, S(v), `'`),
              () => b.put(`${snake.toUpperCase()} = "`, S(v), `"`),
              () => b.put(`        'PASSWORD': '`, S(v), `',`),
            ])();
          case 'tfvars':
            return b.put(`${snake} = "`, S(v), `"`);
          case 'ansible':
            return g.pick<() => void>([() => b.put(`ansible_become_password: `, S(v)), () => b.put(`${snake}: "`, S(v), `"`)])();
          case 'php':
            return g.pick<() => void>([
              () => b.put(`$${key.replace(/[-.]/g, '_')} = '`, S(v), `';`),
              () => b.put(`    '${snake}' => '`, S(v), `',`),
            ])();
          case 'code':
            return g.pick<() => void>([
              () => b.put(`	${key[0]!.toUpperCase() + key.slice(1).replace(/[-._]/g, '')}: "`, S(v), `",`),
              () => b.put(`config.${snake} = '`, S(v), `'`),
              () => b.put(`${snake.toUpperCase()} = "`, S(v), `"`),
            ])();
          default:
            return b.put(`Environment="${snake.toUpperCase()}=`, S(v), `"`);
        }
      };
      break;
    }
    default: {
      [ext, path] = g.pick([
        ['.log', 'service.log'],
        ['.log', 'debug.out'],
      ]);
      one = () => {
        const v = plainValue(g);
        const words = secretWords();
        const camel = styledKey(g, words).replace(/[-._]/g, '');
        const snake = words.join('_');
        g.pick<() => void>([
          () => b.put(`{"ts":"${ts()}","level":"debug","request":{"auth":{"${camel}":"`, S(v), `"}},"status":${g.pick([200, 401])}}`),
          () => b.put(`${ts()} DEBUG settings: {'host': '${g.word()}.internal', '${snake}': '`, S(v), `', 'port': ${g.int(9000)}}`),
          () => b.put(`${ts()} INFO  config: &{Host:${g.word()} ${camel[0]!.toUpperCase() + camel.slice(1)}:`, S(v), ` Timeout:30s}`),
          () => b.put(`${ts()} INFO  Credentials{user='${g.word()}', ${camel}='`, S(v), `'}`),
          () => b.put(`${ts()} DEBUG ${g.word()} ${snake}="`, S(v), `" user=${g.word()}`),
          () => b.put(`${ts()} TRACE env ${snake.toUpperCase()}=`, S(v)),
        ])();
      };
    }
  }
  const n = g.range(2, 4);
  for (let i = 0; i < n; i++) {
    b.filler(g, ext, g.range(1, 3));
    one();
  }
  b.filler(g, ext, g.range(1, 3));
  return { id, kind: 'context', path, content: b.text, spans: b.spans, workspace: {}, home: {}, env: {} };
}

/** Placeholders in the contexts of MORE_CONTEXT_SUBS; masking one is a false positive. */
function morePlaceholderCase(g: Gen, id: string): Omit<SecretCase, 'split'> {
  const b = new Builder();
  const ph = (): [string, string, boolean] =>
    g.pick<() => [string, string, boolean]>([
      () => [g.pick(['your_api_key_here', 'your-token-here', 'YOUR_PASSWORD', 'your_client_secret']), 'more:your_…', false],
      () => [g.pick(['<TOKEN>', '<your-password>', '<API_KEY>', '<secret>']), 'more:<…>', false],
      () => ['${' + g.pick(['DB_PASSWORD', 'API_KEY', 'TOKEN']) + '}', 'more:${VAR}', false],
      () => [g.pick(['x', 'X'])!.repeat(g.pick([16, 24, 32])), 'more:xxx', false],
      () => [g.pick(['changeme', 'REPLACE_ME', '********']), 'more:changeme', false],
    ])();
  const lines: Array<() => void> = [
    () => b.put(`> Authorization: Bearer `, ph()),
    () => b.put(`curl -H "X-Api-Key: `, ph(), `" https://api.example.com/v1/items`),
    () => b.put(`docker run -e API_TOKEN=`, ph(), ` app:latest`),
    () => b.put(`kubectl create secret generic app --from-literal=password=`, ph()),
    () => b.put(`spring.datasource.password=`, ph()),
    () => b.put(`    "ClientSecret": "`, ph(), `"`),
    () => b.put(`SECRET_KEY = '`, ph(), `'`),
    () => b.put(`db_password = "`, ph(), `"`),
    () => b.put(`Environment="API_TOKEN=`, ph(), `"`),
    () => b.put(`{"level":"debug","request":{"auth":{"accessToken":"`, ph(), `"}}}`),
  ];
  const n = g.range(3, 6);
  for (let i = 0; i < n; i++) {
    b.filler(g, '.md', g.range(1, 2));
    g.pick(lines)();
  }
  return {
    id,
    kind: 'placeholder',
    path: g.pick(['README.md', 'docs/deploy.md', 'config.example.properties']),
    content: b.text,
    spans: b.spans,
    workspace: {},
    home: {},
    env: {},
  };
}

/** Every case, by kind; each case from its own PRNG seeded by its id, so adding cases changes no other. */
export function buildSecretCases(
  counts: Partial<Record<CaseKind | 'context-form' | 'placeholder-form' | 'context-more' | 'placeholder-more', number>> = {},
): SecretCase[] {
  const n = {
    'second-copy': 44,
    'known-value': 30,
    context: 52,
    placeholder: 20,
    'context-form': 660,
    'placeholder-form': 96,
    'context-more': 240,
    'placeholder-more': 40,
    ...counts,
  };
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
  for (let i = 0; i < n['context-form']; i++) {
    const sub = CONTEXT_FORM_SUBS[i % CONTEXT_FORM_SUBS.length]!;
    add(contextFormCase(genFor(`context-${sub}-${i}`), `context-${sub}-${i}`, sub));
  }
  for (let i = 0; i < n['placeholder-form']; i++) add(placeholderFormCase(genFor(`placeholder-form-${i}`), `placeholder-form-${i}`));
  for (let i = 0; i < n['context-more']; i++) {
    const sub = MORE_CONTEXT_SUBS[i % MORE_CONTEXT_SUBS.length]!;
    add(moreContextCase(genFor(`context-${sub}-${i}`), `context-${sub}-${i}`, sub));
  }
  for (let i = 0; i < n['placeholder-more']; i++) add(morePlaceholderCase(genFor(`placeholder-more-${i}`), `placeholder-more-${i}`));
  return out;
}
