// The value shapes of the secret rules (src/engine/secrets/shapes.ts): passwords and passphrases pass an
// entropy floor their length keeps them under; code names are not secrets, random tokens are.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { compileSecretRules, findSecrets } from '../../src/engine/secrets';
import { isCodeIdentifier, isPassphraseShaped, isPasswordShaped } from '../../src/engine/secrets/shapes';
import { prng } from './helpers/prng';
import { repoRoot } from './helpers/repo';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const URLSAFE = ALNUM + '_-';

function randomTokens(seed: number, alphabet: string, length: number, count: number): string[] {
  const r = prng(seed);
  return Array.from({ length: count }, () => Array.from({ length }, () => alphabet[Math.floor(r() * alphabet.length)]).join(''));
}

describe('secret value shapes', () => {
  it('password: composition (cases, a digit, a symbol when short, half distinct), not a name', () => {
    for (const v of ['Kmw777#7+&Rb', 'Bvc1ofaccccoF8@', 'Hqe5YBBb=hYM', 'Pqf7*L7r+Q*+', 'Tgh79eG2g%u', 'Xk29sLq8Wm3Z'])
      assert.equal(isPasswordShaped(v), true, v);
    for (const v of ['Xk29sLq8Wm3', 'abcdefgh12!', 'ABCDEFGH12!', 'Password', 'Aaaaaaaa1!aa', 'Ab1!', 'exchangeX509Token', 'pass word 1A!'])
      assert.equal(isPasswordShaped(v), false, v);
  });

  it('passphrase: 4+ words joined by one separator, ending in a number', () => {
    for (const v of [
      'raven_kettle_kettle_otter45',
      'otter-velvet-otter-copper32',
      'maple.orbit.canyon.velvet7',
      'Maple-Orbit-Canyon-Velvet2024',
    ])
      assert.equal(isPassphraseShaped(v), true, v);
    for (const v of ['raven_kettle_otter45', 'raven-kettle_otter-maple45', 'raven_kettle_kettle_otter', 'my_secret_key_name_v2x'])
      assert.equal(isPassphraseShaped(v), false, v);
  });

  it('code_identifier: names of code, their member chains and PowerShell cmdlets', () => {
    for (const v of [
      'RefreshToken',
      'CredentialUnavailableError',
      'URLPatternComponentResult',
      'initialAuthUsedAPIKey',
      'exports.rememberX509Credential',
      '_callApiKey',
      'Get-AzAccessToken',
      'k8sServiceAccountTokenProvider',
      'cacheRecord?.idToken?.secret',
      'AccessToken_With_AuthScheme',
      'msalNodeFlowVSCodeCredentialControl',
      '!firstDescriptor.failed',
      'HTTP2_HEADER_WWW_AUTHENTICATE',
    ])
      assert.equal(isCodeIdentifier(v), true, v);
    for (const v of [
      'raven_kettle_kettle_otter45', // a passphrase
      'osajSDCqylnLaFRJxfyKusJQppR',
      'VvM5lmidYX5hQp37VIw0Y6WnONkzBj',
      'e0db4dba9308dba558278d1b58fc7735',
      'qwhzkfmdptlrbnxv', // one word: a random lower-case token (an app password) is not a name
      'shortName', // under 10 characters: too little to tell
      'a1b2c3d4e5f6g7h8',
    ])
      assert.equal(isCodeIdentifier(v), false, v);
  });

  it('code_identifier takes random tokens for names rarely (20-character: at most 1 in 20,000; 12-character: 1 in 1,000)', () => {
    for (const [alphabet, name] of [
      [ALNUM, 'alnum'],
      [LETTERS, 'letters'],
      [URLSAFE, 'urlsafe'],
    ] as const) {
      const long = randomTokens(20, alphabet, 20, 20_000).filter(isCodeIdentifier);
      assert.ok(long.length <= 1, `${name} 20: ${long.slice(0, 5).join(', ')}`);
      const short = randomTokens(12, alphabet, 12, 20_000).filter(isCodeIdentifier);
      assert.ok(short.length <= 20, `${name} 12: ${short.length}: ${short.slice(0, 5).join(', ')}`);
    }
  });

  it('code_identifier knows most names of code it was not built from (@types/node, not the TypeScript lib)', () => {
    const dir = path.join(repoRoot(), 'node_modules', '@types', 'node');
    const names = new Set<string>();
    for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.d.ts')))
      for (const t of fs.readFileSync(path.join(dir, f), 'utf8').match(/\b[A-Za-z_$][\w$]{9,40}\b/g) ?? [])
        if (/[a-z][A-Z]|_/.test(t) && !/\d{3}/.test(t)) names.add(t);
    const known = [...names].filter(isCodeIdentifier).length;
    assert.ok(names.size > 1000, `${names.size} names`);
    assert.ok(known / names.size >= 0.85, `${known} of ${names.size}`);
  });

  it('the word table is what scripts/word-bigrams.mjs builds from the installed TypeScript lib (27 x 27 counts)', () => {
    const root = repoRoot();
    const table = JSON.parse(fs.readFileSync(path.join(root, 'security/secrets/word-bigrams.json'), 'utf8')) as { counts: number[][] };
    assert.equal(table.counts.length, 27);
    for (const row of table.counts) assert.ok(row.length === 27 && row.every((n) => Number.isInteger(n) && n >= 1));
    const r = spawnSync(process.execPath, [path.join(root, 'scripts/word-bigrams.mjs'), '--check'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });

  it('rules name shapes as data: unknown shapes, duplicates and an exemption without a floor are refused', () => {
    const rule = (extra: Record<string, unknown>) => [
      'x.yaml',
      {
        version: 1,
        family: 'x',
        description: 'test rules',
        rules: [{ id: 'x-rule', description: 'a rule', keywords: ['tok='], regex: 'tok=([A-Za-z0-9_]{4,})', ...extra }],
      },
    ];
    const compile = (extra: Record<string, unknown>) => compileSecretRules([rule(extra)] as never);
    assert.throws(() => compile({ allow_shapes: ['identifier'] }), /unknown shape "identifier"/);
    assert.throws(
      () => compile({ entropy: 3, entropy_exempt_shapes: ['code_identifier'] }),
      /unknown shape "code_identifier" \(known: password, passphrase\)/,
    );
    assert.throws(() => compile({ allow_shapes: ['password'] }), /unknown shape "password" \(known: code_identifier\)/);
    assert.throws(() => compile({ entropy: 3, entropy_exempt_shapes: ['password', 'password'] }), /twice/);
    assert.throws(() => compile({ entropy_exempt_shapes: ['password'] }), /needs an `entropy` floor/);
    const phrase = 'tok=raven_kettle_kettle_otter45'; // 3.2 bits per character
    assert.equal(findSecrets(compile({ entropy: 3.5 }), phrase).length, 0);
    assert.equal(findSecrets(compile({ entropy: 3.5, entropy_exempt_shapes: ['passphrase'] }), phrase).length, 1);
    const name = 'tok=RefreshTokenProvider';
    assert.equal(findSecrets(compile({}), name).length, 1);
    assert.equal(findSecrets(compile({ allow_shapes: ['code_identifier'] }), name).length, 0);
  });
});
