// The deterministic corpus for the redaction figures: ~3 MB of source code (TypeScript, Python, Go),
// config files (YAML, JSON, .env, .npmrc) and logs (app, JSON, nginx), with planted secrets at known
// positions. Two kinds of planted secrets:
//   - `rule-example`: every positive example of every rule in security/secrets/*.yaml, on its own
//     line; its secret span is what that rule alone finds in the example (the rule author's ground
//     truth, so Bulwark's recall on these mostly shows that context does not break detection).
//   - `provider-format`: tokens generated from a seeded PRNG in the published formats of the
//     providers secretlint's recommended preset covers (AWS, GCP, GitHub, Slack, npm, private keys,
//     basic-auth URLs, OpenAI, Anthropic, …), in code/config/log contexts; the span is the value
//     planted. This ground truth does not come from either tool.
// Filler has decoys: UUIDs, commit hashes, base64 blobs, env references, documentation placeholders.
import { findSecrets, secretRuleSubset, type SecretRuleSet } from '../src/engine/secrets';
import { prng } from '../test/unit/helpers/prng';
export { prng };

export interface Planted {
  readonly start: number;
  readonly end: number;
  /** Rule id (rule-example) or provider kind (provider-format). */
  readonly kind: string;
  readonly source: 'rule-example' | 'provider-format';
}

export interface CorpusFile {
  readonly path: string;
  readonly ext: string;
  readonly content: string;
  readonly planted: readonly Planted[];
}

export const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const LOWER = 'abcdefghijklmnopqrstuvwxyz';
export const DIGITS = '0123456789';
export const ALNUM = UPPER + LOWER + DIGITS;
export const URLSAFE = ALNUM + '_-';
export const B64 = ALNUM + '+/';
export const HEX = '0123456789abcdef';

export class Gen {
  constructor(readonly rnd: () => number) {}
  int(n: number): number {
    return Math.floor(this.rnd() * n);
  }
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)]!;
  }
  chars(alphabet: string, n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }
  word(): string {
    return this.pick(WORDS);
  }
  ident(): string {
    return this.word() + this.pick(WORDS).replace(/^./, (c) => c.toUpperCase());
  }
  uuid(): string {
    return `${this.chars(HEX, 8)}-${this.chars(HEX, 4)}-4${this.chars(HEX, 3)}-a${this.chars(HEX, 3)}-${this.chars(HEX, 12)}`;
  }
  ip(): string {
    return `10.${this.int(256)}.${this.int(256)}.${this.int(256)}`;
  }
  ts(i: number): string {
    return `2025-03-${String(1 + (i % 28)).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:${String(this.int(60)).padStart(2, '0')}:${String(this.int(60)).padStart(2, '0')}.${String(this.int(1000)).padStart(3, '0')}Z`;
  }
  b64of(bytes: number): string {
    return Buffer.from(Array.from({ length: bytes }, () => this.int(256))).toString('base64');
  }
}

const WORDS = [
  'user',
  'order',
  'cache',
  'request',
  'session',
  'item',
  'config',
  'handler',
  'parse',
  'render',
  'queue',
  'worker',
  'retry',
  'client',
  'server',
  'build',
  'deploy',
  'metric',
  'event',
  'stream',
  'buffer',
  'token',
  'account',
  'invoice',
  'report',
  'search',
  'index',
  'upload',
  'payment',
  'schema',
  'route',
  'policy',
  'tenant',
  'profile',
  'message',
  'channel',
  'export',
  'import',
  'format',
  'value',
];

// ---------------------------------------------------------------- provider-format secrets

interface Kind {
  readonly kind: string;
  /** Variable name used in contexts. */
  readonly name: string;
  /** The full literal placed in the text and [start, end) of the secret inside it. */
  make(g: Gen): { literal: string; start: number; end: number };
  /** Multi-line values go on their own lines (PEM). */
  readonly block?: boolean;
}

const whole = (literal: string) => ({ literal, start: 0, end: literal.length });
const inside = (prefix: string, secret: string, suffix: string) => ({
  literal: prefix + secret + suffix,
  start: prefix.length,
  end: prefix.length + secret.length,
});
const pass = (g: Gen) => g.chars(ALNUM, 4) + g.chars(DIGITS, 2) + g.chars(ALNUM, 12);

function pemBlock(g: Gen, label: string, magic: string, lines: number): string {
  const body = (magic + g.b64of(lines * 48)).slice(0, lines * 64 - 20);
  const wrapped = body.match(/.{1,64}/g)!.join('\n');
  return `-----BEGIN ${label}-----\n${wrapped}\n-----END ${label}-----`;
}

const label = (kind: string) => ['PRIV', 'ATE KEY'].join('').replace(/^/, kind ? `${kind} ` : '');

const KINDS: readonly Kind[] = [
  { kind: 'aws-access-key-id', name: 'AWS_ACCESS_KEY_ID', make: (g) => whole('AKIA' + g.chars(UPPER + '234567', 16)) },
  { kind: 'aws-secret-access-key', name: 'AWS_SECRET_ACCESS_KEY', make: (g) => whole(g.chars(B64, 40)) },
  { kind: 'github-pat-classic', name: 'GITHUB_TOKEN', make: (g) => whole('ghp_' + g.chars(ALNUM, 36)) },
  { kind: 'github-oauth', name: 'GH_OAUTH_TOKEN', make: (g) => whole('gho_' + g.chars(ALNUM, 36)) },
  { kind: 'github-fine-grained-pat', name: 'GH_PAT', make: (g) => whole('github_pat_' + g.chars(ALNUM, 22) + '_' + g.chars(ALNUM, 59)) },
  {
    kind: 'slack-bot-token',
    name: 'SLACK_BOT_TOKEN',
    make: (g) => whole(`xoxb-${g.chars(DIGITS, 12)}-${g.chars(DIGITS, 13)}-${g.chars(ALNUM, 24)}`),
  },
  {
    kind: 'slack-webhook',
    name: 'SLACK_WEBHOOK_URL',
    make: (g) =>
      whole(`https://hooks.slack.com/services/T${g.chars(UPPER + DIGITS, 8)}/B${g.chars(UPPER + DIGITS, 10)}/${g.chars(ALNUM, 24)}`),
  },
  { kind: 'npm-access-token', name: 'NPM_TOKEN', make: (g) => whole('npm_' + g.chars(ALNUM, 36)) },
  { kind: 'pem-rsa', name: 'RSA_KEY', block: true, make: (g) => whole(pemBlock(g, label('RSA'), 'MIIEpAIBAAKCAQEA', 25)) },
  {
    kind: 'pem-pkcs8',
    name: 'PRIVATE_KEY',
    block: true,
    make: (g) => whole(pemBlock(g, label(''), 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 26)),
  },
  {
    kind: 'pem-openssh',
    name: 'SSH_KEY',
    block: true,
    make: (g) => whole(pemBlock(g, label('OPENSSH'), 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW', 7)),
  },
  { kind: 'pem-ec', name: 'EC_KEY', block: true, make: (g) => whole(pemBlock(g, label('EC'), 'MHcCAQEEI', 4)) },
  {
    kind: 'basic-auth-url',
    name: 'REGISTRY_URL',
    make: (g) => inside(`https://${g.word()}bot:`, pass(g), `@${g.word()}.internal.example.com/v2/`),
  },
  {
    kind: 'openai-project-key',
    name: 'OPENAI_API_KEY',
    make: (g) => whole('sk-proj-' + g.chars(URLSAFE, 74) + 'T3BlbkFJ' + g.chars(URLSAFE, 74)),
  },
  { kind: 'anthropic-api-key', name: 'ANTHROPIC_API_KEY', make: (g) => whole('sk-ant-api03-' + g.chars(URLSAFE, 93) + 'AA') },
  { kind: 'sendgrid', name: 'SENDGRID_API_KEY', make: (g) => whole(`SG.${g.chars(URLSAFE, 22)}.${g.chars(URLSAFE, 43)}`) },
  { kind: 'shopify', name: 'SHOPIFY_ACCESS_TOKEN', make: (g) => whole('shpat_' + g.chars(HEX, 32)) },
  { kind: 'stripe-secret', name: 'STRIPE_SECRET_KEY', make: (g) => whole('sk_live_' + g.chars(ALNUM, g.pick([24, 99]))) },
  { kind: 'gitlab-pat', name: 'GITLAB_TOKEN', make: (g) => whole('glpat-' + g.chars(URLSAFE, 20)) },
  {
    kind: 'grafana-cloud',
    name: 'GRAFANA_CLOUD_TOKEN',
    make: (g) =>
      whole(
        'glc_' +
          Buffer.from(
            JSON.stringify({
              o: String(g.range(100000, 999999)),
              n: `stack-${g.range(100000, 999999)}-hm-read-${g.word()}`,
              k: g.chars(ALNUM, 24),
              m: { r: 'prod-us-east-0' },
            }),
          ).toString('base64'),
      ),
  },
  { kind: 'grafana-service-account', name: 'GRAFANA_SA_TOKEN', make: (g) => whole(`glsa_${g.chars(ALNUM, 32)}_${g.chars(HEX, 8)}`) },
  { kind: 'groq', name: 'GROQ_API_KEY', make: (g) => whole('gsk_' + g.chars(ALNUM, 52)) },
  { kind: 'huggingface', name: 'HF_TOKEN', make: (g) => whole('hf_' + g.chars(UPPER + LOWER, 34)) },
  { kind: 'linear', name: 'LINEAR_API_KEY', make: (g) => whole('lin_api_' + g.chars(ALNUM, 40)) },
  { kind: 'notion', name: 'NOTION_TOKEN', make: (g) => whole('ntn_' + g.chars(DIGITS, 11) + g.chars(ALNUM, 35)) },
  {
    kind: '1password-service-account',
    name: 'OP_SERVICE_ACCOUNT_TOKEN',
    make: (g) => {
      let json = JSON.stringify({
        signInAddress: 'my.1password.com',
        userAuth: { method: 'SRPg-4096', alg: 'PBES2g-HS256', iterations: 650000, salt: g.chars(URLSAFE, 22) },
        email: `${g.chars(LOWER, 12)}@1passwordserviceaccounts.com`,
        srpX: g.chars(HEX, 64),
        muk: { alg: 'A256GCM', ext: true, k: g.chars(URLSAFE, 43), key_ops: ['encrypt', 'decrypt'], kty: 'oct', kid: 'mp' },
        secretKey: `A3-${g.chars(UPPER + DIGITS, 6)}-${g.chars(UPPER + DIGITS, 11)}`,
        throttleSecret: { seed: g.chars(HEX, 64), deviceUuid: g.chars(LOWER + DIGITS, 26) },
        deviceUuid: g.chars(LOWER + DIGITS, 26),
      });
      while (json.length % 3 !== 1) json = json.replace('"mp"', `"mp${g.chars(LOWER, 1)}"`);
      return whole('ops_' + Buffer.from(json).toString('base64'));
    },
  },
  {
    kind: 'postgres-url',
    name: 'DATABASE_URL',
    make: (g) => inside(`postgres://${g.word()}_svc:`, pass(g), `@db-${g.int(9)}.${g.word()}.internal:5432/${g.word()}`),
  },
  {
    kind: 'mongodb-url',
    name: 'MONGODB_URI',
    make: (g) =>
      inside(
        `mongodb+srv://${g.word()}:`,
        pass(g),
        `@cluster0.${g.chars(LOWER + DIGITS, 5)}.mongodb.net/${g.word()}?retryWrites=true&w=majority`,
      ),
  },
  {
    kind: 'mysql-url',
    name: 'MYSQL_URL',
    make: (g) => inside(`mysql://${g.word()}:`, pass(g), `@mysql.${g.word()}.internal:3306/${g.word()}`),
  },
  { kind: 'vault-service-token', name: 'VAULT_TOKEN', make: (g) => whole('hvs.CAESI' + g.chars(URLSAFE, 86)) },
  { kind: 'vercel', name: 'VERCEL_TOKEN', make: (g) => whole('vcp_' + g.chars(ALNUM, 40)) },
  { kind: 'databricks', name: 'DATABRICKS_TOKEN', make: (g) => whole('dapi' + g.chars(HEX, 32)) },
  { kind: 'docker-pat', name: 'DOCKER_TOKEN', make: (g) => whole('dckr_pat_' + g.chars(URLSAFE, 27)) },
  { kind: 'figma', name: 'FIGMA_TOKEN', make: (g) => whole('figd_' + g.chars(URLSAFE, 40)) },
  { kind: 'cloudflare', name: 'CLOUDFLARE_API_TOKEN', make: (g) => whole('cfut_' + g.chars(ALNUM, 40) + g.chars(HEX, 8)) },
  { kind: 'tailscale', name: 'TS_AUTHKEY', make: (g) => whole(`tskey-auth-k${g.chars(ALNUM, 10)}CNTRL-${g.chars(ALNUM, 33)}`) },
];

/** Per file type, the ways a value is written: [before, after] around the literal. */
function contextFor(g: Gen, ext: string, name: string, block: boolean): [string, string] {
  const camel = name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  const snake = name.toLowerCase();
  if (block) {
    switch (ext) {
      case '.json':
        return [`  "${camel}": "`, '",']; // (newlines stay raw: a pasted key)
      case '.log':
        return [`${g.ts(g.int(1000))} DEBUG loaded key material:\n`, ''];
      case '.py':
        return [`${name} = """`, '"""'];
      case '.ts':
        return [`const ${camel} = \``, '`;'];
      case '.yaml':
        return [`${snake}: |\n`, ''];
      default:
        return [`${name}="`, '"'];
    }
  }
  switch (ext) {
    case '.ts':
      return g.pick<[string, string]>([
        [`const ${camel} = "`, '";'],
        [`  ${camel}: '`, `',`],
        [`process.env.${name} ??= "`, '";'],
      ]);
    case '.py':
      return g.pick<[string, string]>([
        [`${name} = "`, '"'],
        [`    ${snake}="`, '",'],
        [`os.environ.setdefault("${name}", "`, '")'],
      ]);
    case '.go':
      return g.pick<[string, string]>([
        [`\t${camel} := "`, '"'],
        [`const ${camel} = "`, '"'],
      ]);
    case '.yaml':
      return g.pick<[string, string]>([
        [`  ${snake}: `, ''],
        [`  ${snake}: "`, '"'],
        [`    - name: ${name}\n      value: "`, '"'],
      ]);
    case '.json':
      return [`  "${camel}": "`, '",'];
    case '.log':
      return g.pick<[string, string]>([
        [`${g.ts(g.int(1000))} DEBUG config ${snake}=`, ` loaded from env`],
        [`${g.ts(g.int(1000))} WARN retrying with ${name}="`, `" attempt=${g.int(5)}`],
        [`{"ts":"${g.ts(g.int(1000))}","level":"debug","msg":"env","${name}":"`, '"}'],
      ]);
    case '.env':
      return g.pick<[string, string]>([
        [`${name}=`, ''],
        [`export ${name}="`, '"'],
      ]);
    default:
      return [`${name}=`, ''];
  }
}

// ---------------------------------------------------------------- filler

/** AWS's documentation key id (a decoy every scanner should ignore). */
const AWS_DOC_EXAMPLE = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');

export function fillerLine(g: Gen, ext: string, i: number): string {
  const w = () => g.word();
  const id = () => g.ident();
  switch (ext) {
    case '.ts':
      return g.pick([
        () => `import { ${id()}, ${id()} } from './${w()}/${w()}';`,
        () => `export async function ${id()}(${w()}: ${g.pick(['string', 'number', 'Request'])}, opts = {}): Promise<void> {`,
        () => `  const ${id()} = await this.${w()}.${id()}(${w()}Id, { timeout: ${g.int(10000)} });`,
        () => `  if (!${w()}) throw new Error(\`${w()} ${w()} not found: \${${w()}Id}\`);`,
        () => `  // TODO(${w()}): ${w()} the ${w()} before ${w()}ing the ${w()}`,
        () => `  return ${w()}.map((x) => x.${w()}).filter(Boolean);`,
        () => `  const apiKey = process.env.${w().toUpperCase()}_API_KEY ?? '';`,
        () => `  headers: { 'Content-Type': 'application/json', 'X-Request-Id': '${g.uuid()}' },`,
        () => '}',
      ])();
    case '.py':
      return g.pick([
        () => `from ${w()}.${w()} import ${id()}`,
        () => `def ${w()}_${w()}(self, ${w()}, ${w()}=None):`,
        () => `    logger.info("${w()} %s ${w()} in %.2fs", ${w()}.id, elapsed)`,
        () => `    ${w()} = self.${w()}.get("${w()}", ${g.int(100)})`,
        () => `    password = os.environ.get("DB_PASSWORD")`,
        () => `    return [${w()} for ${w()} in ${w()}s if ${w()}.${w()}]`,
        () => `    # ${w()} ${w()} ${w()}; see https://docs.example.com/${w()}`,
      ])();
    case '.go':
      return g.pick([
        () => `func (s *${id()}) ${id()}(ctx context.Context, ${w()} string) error {`,
        () => `\tif err := s.${w()}.${id()}(ctx, ${w()}); err != nil {\n\t\treturn fmt.Errorf("${w()}: %w", err)\n\t}`,
        () => `\t${w()} := make(map[string]int, ${g.int(64)})`,
        () => `\tlog.Printf("${w()} %s took %v", ${w()}, time.Since(start))`,
        () => '}',
      ])();
    case '.yaml':
      return g.pick([
        () => `  ${w()}: ${g.int(1000)}`,
        () => `  image: registry.example.com/${w()}/${w()}:${g.chars(HEX, 7)}`,
        () => `    - name: ${w().toUpperCase()}_URL\n      value: "https://${w()}.svc.cluster.local"`,
        () => `  token: \${{ secrets.${w().toUpperCase()}_TOKEN }}`,
        () => `  api_key: <your-api-key-here>`,
      ])();
    case '.json':
      return g.pick([
        () => `  "${w()}": "${w()}-${g.int(100)}",`,
        () => `  "${w()}Id": "${g.uuid()}",`,
        () => `  "integrity": "sha512-${g.b64of(48)}",`,
        () => `  "${w()}": ${g.int(10000)},`,
      ])();
    case '.env':
      return g.pick([
        () => `${w().toUpperCase()}_HOST=${w()}.internal`,
        () => `${w().toUpperCase()}_PORT=${g.range(1000, 9999)}`,
        () => `# ${w()} ${w()} settings`,
        () => `${w().toUpperCase()}_API_KEY=changeme`,
      ])();
    case '.log':
      return g.pick([
        () => `${g.ts(i)} INFO  [${w()}-worker-${g.int(8)}] ${w()} ${w()} id=${g.uuid()} in ${g.int(900)}ms`,
        () =>
          `${g.ip()} - - [07/Mar/2025:10:${String(g.int(60)).padStart(2, '0')}:00 +0000] "GET /api/v1/${w()}s/${g.int(99999)}?page=${g.int(9)} HTTP/1.1" 200 ${g.int(99999)} "-" "Mozilla/5.0"`,
        () =>
          `{"ts":"${g.ts(i)}","level":"info","msg":"${w()} ${w()}","trace_id":"${g.chars(HEX, 32)}","span_id":"${g.chars(HEX, 16)}","duration_ms":${g.int(500)}}`,
        () => `${g.ts(i)} ERROR ${w()} failed: connection reset by peer (commit ${g.chars(HEX, 40)})`,
        () => `${g.ts(i)} DEBUG payload=${g.b64of(36)} size=${g.int(4096)}`,
        () => `${g.ts(i)} INFO  using AWS key ${AWS_DOC_EXAMPLE} from the docs sample`,
      ])();
    default:
      return g.pick([
        () => `The ${w()} ${w()} keeps a ${w()} of every ${w()} and ${w()}s it when the ${w()} changes.`,
        () => `- \`${w()}\`: ${w()} ${w()} (default \`${g.int(100)}\`)`,
        () => `## ${w()} ${w()}`,
      ])();
  }
}

const FILE_TYPES: readonly [string, string][] = [
  ['src/services/%.ts', '.ts'],
  ['app/%.py', '.py'],
  ['internal/%.go', '.go'],
  ['deploy/%.yaml', '.yaml'],
  ['config/%.json', '.json'],
  ['env/%.env', '.env'],
  ['logs/%.log', '.log'],
  ['logs/%-access.log', '.log'],
  ['docs/%.md', '.md'],
];

class FileBuilder {
  private text = '';
  readonly planted: Planted[] = [];
  get length(): number {
    return this.text.length;
  }
  line(s: string): void {
    this.text += s + '\n';
  }
  plant(before: string, literal: string, start: number, end: number, after: string, kind: string, source: Planted['source']): void {
    const at = this.text.length + before.length;
    this.planted.push({ start: at + start, end: at + end, kind, source });
    this.line(before + literal + after);
  }
  done(): string {
    return this.text;
  }
}

/** The positive examples of every rule, with the spans that rule alone finds in each. */
function ruleExamples(rules: SecretRuleSet): { text: string; spans: [number, number][]; ruleId: string; unbounded: boolean }[] {
  const out: { text: string; spans: [number, number][]; ruleId: string; unbounded: boolean }[] = [];
  for (const rule of rules.rules) {
    const alone = secretRuleSubset(rules, [rule.id]);
    for (const text of rule.examples.match) {
      const spans = findSecrets(alone, text).map((f) => [f.start, f.end] as [number, number]);
      if (spans.length) out.push({ text, spans, ruleId: rule.id, unbounded: rule.maxLength === Infinity });
    }
  }
  return out;
}

export function buildCorpus(
  rules: SecretRuleSet,
  opts: { seed?: number; targetBytes?: number; perKind?: number; plant?: boolean } = {},
): CorpusFile[] {
  const g = new Gen(prng(opts.seed ?? 20250307));
  const target = opts.targetBytes ?? 3_000_000;
  const plant = opts.plant ?? true;
  const examples = plant ? ruleExamples(rules) : [];
  if (plant && examples.length === 0) throw new Error('the rules carry no examples (the bench bundle must keep them)');
  // Secrets to plant, shuffled, then spread over the files.
  type Item = { type: 'example'; e: (typeof examples)[number] } | { type: 'provider'; k: Kind };
  // A block without its END line (an example of "redacted to the end of the text") goes last in a
  // file of its own, so the rest of that file is not credited as found through it.
  const unterminated = (e: (typeof examples)[number]) => e.unbounded && e.spans.some(([, end]) => end === e.text.length);
  const tails = examples.filter(unterminated);
  const items: Item[] = examples.filter((e) => !unterminated(e)).map((e) => ({ type: 'example', e }));
  for (const k of plant ? KINDS : []) for (let i = 0; i < (opts.perKind ?? 8); i++) items.push({ type: 'provider', k });
  for (let i = items.length - 1; i > 0; i--) {
    const j = g.int(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  const files: CorpusFile[] = [];
  // GCP service-account key files (the format secretlint's gcp rule reads).
  for (let i = 0; plant && i < 6; i++) {
    const b = new FileBuilder();
    const pem = pemBlock(g, label(''), 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 26).replace(/\n/g, '\\n') + '\\n';
    const project = `${g.word()}-${g.word()}-${g.range(100000, 999999)}`;
    b.line('{');
    b.line('  "type": "service_account",');
    b.line(`  "project_id": "${project}",`);
    b.line(`  "private_key_id": "${g.chars(HEX, 40)}",`);
    b.plant('  "private_key": "', pem, 0, pem.length, '",', 'gcp-service-account', 'provider-format');
    b.line(`  "client_email": "${g.word()}@${project}.iam.gserviceaccount.com",`);
    b.line(`  "client_id": "${g.chars(DIGITS, 21)}",`);
    b.line('  "auth_uri": "https://accounts.google.com/o/oauth2/auth",');
    b.line('  "token_uri": "https://oauth2.googleapis.com/token"');
    b.line('}');
    files.push({ path: `secrets/gcp-${i}.json`, ext: '.json', content: b.done(), planted: b.planted });
  }
  let total = files.reduce((n, f) => n + f.content.length, 0);
  const fileCount = Math.max(1, Math.round(target / 9000));
  const perFile = Math.ceil(items.length / fileCount);
  for (let n = 0; total < target || items.length > 0 || tails.length > 0; n++) {
    const [pattern, ext] = FILE_TYPES[n % FILE_TYPES.length]!;
    const b = new FileBuilder();
    const size = g.range(3000, 15000);
    const mine = items.splice(0, perFile);
    const slots = new Set(mine.map(() => g.int(Math.max(1, Math.floor(size / 60)))));
    let lineNo = 0;
    while (b.length < size || mine.length > 0) {
      if (mine.length > 0 && (slots.has(lineNo) || b.length >= size)) {
        const it = mine.shift()!;
        if (it.type === 'example') {
          const { text, spans, ruleId } = it.e;
          const at = b.length;
          b.line(text);
          for (const [s, e] of spans) b.planted.push({ start: at + s, end: at + e, kind: ruleId, source: 'rule-example' });
        } else {
          const { literal, start, end } = it.k.make(g);
          const [before, after] = contextFor(g, ext, it.k.name, it.k.block === true);
          b.plant(before, literal, start, end, after, it.k.kind, 'provider-format');
        }
      }
      b.line(fillerLine(g, ext, lineNo));
      lineNo++;
    }
    const tail = tails.shift();
    if (tail) {
      const at = b.length;
      b.line(tail.text);
      for (const [s, e] of tail.spans) b.planted.push({ start: at + s, end: at + e, kind: tail.ruleId, source: 'rule-example' });
    }
    const content = b.done();
    files.push({ path: pattern.replace('%', `${g.word()}-${n}`), ext, content, planted: b.planted });
    total += content.length;
  }
  return files;
}
