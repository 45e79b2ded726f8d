// The environment a sandboxed command gets: what a shell needs to work, never the user's secrets.
// An allow-list, because the names secrets hide under are endless (GITHUB_TOKEN, OPENAI_API_KEY,
// DATABASE_URL with a password, AWS_SESSION_TOKEN...); the policy can name more.
import { findSecrets, loadSecretRules } from '../../engine/secrets';

const PASSED_THROUGH = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'COLORTERM',
  'TZ',
  'EDITOR',
  'VISUAL',
  'PAGER',
  'LESS',
  'NO_COLOR',
  'FORCE_COLOR',
  'CI',
  'COLUMNS',
  'LINES',
  'HOSTNAME',
  // Where the trusted CA certificates are: needed for TLS through the proxy, and no secret.
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'CURL_CA_BUNDLE',
  'REQUESTS_CA_BUNDLE',
  'GIT_SSL_CAINFO',
  'PIP_CERT',
  'AWS_CA_BUNDLE',
]);
const PASSED_THROUGH_PREFIX = /^LC_[A-Z]+$/;

export interface SandboxEnvironment {
  readonly env: Record<string, string>;
  /** Names left out (never their values), to say what the command did not get. */
  readonly withheld: readonly string[];
}

/**
 * `host` filtered to the allow-list plus `named` (what the policy lets through), then any value that
 * holds a secret dropped whatever its name. TMPDIR points at the sandbox's private /tmp.
 */
export function sandboxEnvironment(
  host: NodeJS.ProcessEnv,
  named: readonly string[] = [],
  extra: Record<string, string> = {},
): SandboxEnvironment {
  const env: Record<string, string> = {};
  const withheld: string[] = [];
  const rules = loadSecretRules();
  for (const [name, value] of Object.entries({ ...host, ...extra })) {
    if (value === undefined) continue;
    const listed = PASSED_THROUGH.has(name) || PASSED_THROUGH_PREFIX.test(name) || named.includes(name) || name in extra;
    if (!listed || findSecrets(rules, `${name}=${value}`).length > 0) {
      withheld.push(name);
      continue;
    }
    env[name] = value;
  }
  env.TMPDIR = '/tmp';
  return { env, withheld: withheld.sort() };
}
