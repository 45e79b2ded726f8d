// The user's secrets that are already on disk or in the environment, loaded into the process's
// known-values registry (src/engine/secrets/known-values.ts) so that every output masks them by value,
// whatever their shape: the workspace's .env files, secret-named environment variables, and the values
// in ~/.aws/credentials, ~/.npmrc, ~/.git-credentials, ~/.netrc, ~/.pypirc and ~/.docker/config.json.
// Values are kept only as hashes in the registry; nothing here logs or stores one. Files are re-read
// when they change (refresh(): one stat per file), so a rotated key is masked from its next output on.
import fs from 'node:fs';
import path from 'node:path';
import { KnownValues, installProcessKnownValues } from '../engine/secrets';
import { errorMessage } from '../engine/error-message';

/** Names of variables and keys that hold secrets (`API_KEY`, `dbPassword`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`). */
const SECRET_NAME =
  /(?:^|[^a-z])(?:key|secret|token|passw(?:or)?d|passphrase|pwd|pass|auth|credential|cred|private|session|cookie|dsn|signature|salt|api[-_]?key)s?(?:$|[^a-z])|(?:database|db|redis|mongo(?:db)?|postgres(?:ql)?|mysql|amqp|connection)[-_]?(?:url|uri|string)/i;

/** Files read at most this large (a .env or a credentials file is small; a huge one is not read). */
const MAX_FILE_BYTES = 1 << 20;
/** .env files looked for this deep below each workspace folder (monorepo packages), skipping dependency and VCS trees. */
const ENV_FILE_DEPTH = 3;
const SKIP_DIRS = new Set([
  'node_modules',
  '.git',
  '.hg',
  '.svn',
  'dist',
  'build',
  'out',
  'target',
  'vendor',
  '.venv',
  'venv',
  '__pycache__',
  '.next',
  '.cache',
]);
const MAX_DIRS_LISTED = 2000;

export interface KnownSecretSources {
  readonly workspaceRoots: readonly string[];
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
}

/** What one refresh read: files and how many values each gave (never the values). */
export interface KnownSecretsReport {
  readonly files: readonly { readonly file: string; readonly values: number }[];
  readonly environment: number;
  readonly errors: readonly string[];
}

export function isSecretName(name: string): boolean {
  // The shell's working directories (PWD, OLDPWD) share `pwd` with password names.
  if (/^(?:OLD)?PWD$/.test(name)) return false;
  return SECRET_NAME.test(name.replace(/([a-z])([A-Z])/g, '$1_$2'));
}

/** KEY=VALUE lines of a dotenv file (`export` prefix, quotes, inline comments after unquoted values). */
export function parseDotenv(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]\s*(.*)$/.exec(raw);
    if (!m) continue;
    let v = m[2]!.trim();
    const q = v[0];
    if ((q === '"' || q === "'" || q === '`') && v.length >= 2 && v.lastIndexOf(q) > 0) v = v.slice(1, v.lastIndexOf(q));
    else v = v.replace(/\s+#.*$/, '');
    if (v !== '') out.push([m[1]!, v]);
  }
  return out;
}

/**
 * A value that is configuration, not a secret, whatever its name: a URL without credentials in it
 * (`https://api.example.com`) or a file path (`SSH_AUTH_SOCK=/tmp/ssh-x/agent.1`). A base64 secret can
 * start with `/` too (`/sFzoq1P8GHmHFt…`): a path's parts are names, so a part with `+` or `=`, or of 16+
 * letters and digits only that mix upper and lower case and digits, makes the value a secret (a temporary
 * directory's `tmp-AbC12z` suffix has a separator). Every other value of a
 * .env file or a secret-named variable is masked by value (the engine's skip rule still leaves out short,
 * numeric, plain-word and common values).
 */
function isPlainSetting(v: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:\/\/[^@\s]*$/i.test(v)) return true;
  if (!/^(?:\/|\.\.?\/|~\/)[^\s]*$/.test(v)) return false;
  return !v
    .split('/')
    .some(
      (part) => /[+=]/.test(part) || (/^[A-Za-z0-9]{16,}$/.test(part) && /[a-z]/.test(part) && /[A-Z]/.test(part) && /[0-9]/.test(part)),
    );
}

/** The secret values of one file, by its kind. */
export function valuesOf(kind: 'dotenv' | 'aws' | 'npmrc' | 'git-credentials' | 'netrc' | 'pypirc' | 'docker', text: string): string[] {
  switch (kind) {
    case 'dotenv':
      return parseDotenv(text)
        .filter(([, v]) => !isPlainSetting(v))
        .map(([, v]) => v);
    case 'aws':
    case 'pypirc':
      return parseDotenv(text)
        .filter(([k]) => /secret|token|password|access_key_id/i.test(k))
        .map(([, v]) => v);
    case 'npmrc':
      return [...text.matchAll(/(?:_authToken|_auth|_password)\s*=\s*"?([^"\s]+)"?/g)].map((m) => m[1]!).filter((v) => !v.startsWith('${'));
    case 'git-credentials':
      // https://user:password@host: the password (and the whole credential part).
      return [...text.matchAll(/^[a-z][a-z0-9+.-]*:\/\/([^:@\s/]*):([^@\s/]+)@/gim)].flatMap((m) => [decodeSafe(m[2]!)]);
    case 'netrc':
      return [...text.matchAll(/\bpassword\s+(\S+)/g)].map((m) => m[1]!);
    case 'docker': {
      try {
        const auths = (JSON.parse(text) as { auths?: Record<string, { auth?: string; identitytoken?: string }> }).auths ?? {};
        return Object.values(auths).flatMap((a) => {
          const out: string[] = [];
          if (typeof a.auth === 'string') {
            out.push(a.auth);
            const pass = Buffer.from(a.auth, 'base64').toString('utf8').split(':').slice(1).join(':');
            if (pass) out.push(pass);
          }
          if (typeof a.identitytoken === 'string') out.push(a.identitytoken);
          return out;
        });
      } catch {
        return [];
      }
    }
  }
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const HOME_FILES: readonly [string, Parameters<typeof valuesOf>[0]][] = [
  ['.aws/credentials', 'aws'],
  ['.npmrc', 'npmrc'],
  ['.git-credentials', 'git-credentials'],
  ['.netrc', 'netrc'],
  ['.pypirc', 'pypirc'],
  ['.docker/config.json', 'docker'],
];

/** Loads the user's known secrets into a registry and keeps them current. */
export class KnownSecrets {
  private readonly seen = new Map<string, string>();
  private environmentRead = false;
  private readonly roots: string[] = [];

  /** `values`: the registry to fill (a new one by default; a host keeps its own across folder changes). */
  constructor(
    private readonly sources: KnownSecretSources,
    readonly values = new KnownValues(),
  ) {
    this.addWorkspaceRoots(sources.workspaceRoots);
  }

  /** More workspace folders (their .env files are read on the next refresh; the values found so far stay). True when one is new. */
  addWorkspaceRoots(roots: readonly string[]): boolean {
    let added = false;
    for (const r of roots) {
      if (!path.isAbsolute(r)) continue;
      const root = path.resolve(r);
      if (!this.roots.includes(root)) {
        this.roots.push(root);
        added = true;
      }
    }
    return added;
  }

  /** Reads every source that changed since the last call (the first call reads all); never throws. */
  refresh(): KnownSecretsReport {
    const files: { file: string; values: number }[] = [];
    const errors: string[] = [];
    let environment = 0;
    if (!this.environmentRead) {
      this.environmentRead = true;
      // A secret-named variable may hold a path or a plain URL (SSH_AUTH_SOCK, XAUTHORITY, *_KEY_FILE): not a secret.
      for (const [k, v] of Object.entries(this.sources.env))
        if (v && isSecretName(k) && !isPlainSetting(v) && this.values.add(v, 'known-value.environment')) environment++;
    }
    const candidates: [string, Parameters<typeof valuesOf>[0]][] = [
      ...HOME_FILES.map(([f, kind]): [string, Parameters<typeof valuesOf>[0]] => [path.join(this.sources.home, f), kind]),
      ...this.roots.flatMap((r) => envFilesBelow(r, errors).map((f): [string, Parameters<typeof valuesOf>[0]] => [f, 'dotenv'])),
    ];
    for (const [file, kind] of candidates) {
      let st: fs.Stats;
      try {
        st = fs.statSync(file);
      } catch {
        continue;
      }
      if (!st.isFile()) continue;
      const stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
      if (this.seen.get(file) === stamp) continue;
      this.seen.set(file, stamp);
      if (st.size > MAX_FILE_BYTES) {
        errors.push(`${file}: larger than ${MAX_FILE_BYTES} bytes, not read`);
        continue;
      }
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (e) {
        errors.push(`${file}: ${errorMessage(e)}`);
        continue;
      }
      let n = 0;
      const rule = kind === 'dotenv' ? 'known-value.env-file' : `known-value.${kind}`;
      for (const v of valuesOf(kind, text)) if (this.values.add(v, rule)) n++;
      files.push({ file, values: n });
    }
    return { files, environment, errors };
  }
}

/** `.env`, `.env.local`, `.env.production`, `.envrc`, `.dev.vars` below a workspace folder, a few levels deep. */
function envFilesBelow(root: string, errors: string[]): string[] {
  const out: string[] = [];
  const queue: [string, number][] = [[root, 0]];
  let listed = 0;
  while (queue.length && listed < MAX_DIRS_LISTED) {
    const [dir, depth] = queue.shift()!;
    listed++;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      if (depth === 0) errors.push(`${dir}: ${errorMessage(e)}`);
      continue;
    }
    for (const e of entries) {
      if (
        e.isFile() &&
        (/^\.env(\..+)?$/.test(e.name) || e.name === '.envrc' || e.name === '.dev.vars') &&
        !/\.(example|sample|template|dist|defaults)$/i.test(e.name)
      )
        out.push(path.join(dir, e.name));
      else if (e.isDirectory() && depth < ENV_FILE_DEPTH && !SKIP_DIRS.has(e.name)) queue.push([path.join(dir, e.name), depth + 1]);
    }
  }
  return out;
}

let current: KnownSecrets | undefined;

/**
 * Loads the user's known secrets and installs them as the process's registry (every redaction in this
 * process then masks them). Returns the loader, whose refresh() picks up changed files.
 */
export function installKnownSecrets(sources: KnownSecretSources, into?: KnownValues): { known: KnownSecrets; report: KnownSecretsReport } {
  const known = new KnownSecrets(sources, into);
  const report = known.refresh();
  installProcessKnownValues(known.values);
  current = known;
  return { known, report };
}

let lastRefresh = 0;

/**
 * For a process that serves commands or projects one after another (the sandbox helper, the hooks' own
 * server, a hook call): the known secrets of these workspace folders (and of the home and the environment)
 * in the process's registry. A folder is read the first time it is seen; after that the sources are re-read
 * when `maxAgeMs` has passed since the last time (0: on every call).
 */
export function knownSecretsFor(workspaces: readonly (string | undefined)[], home: string, env: NodeJS.ProcessEnv, maxAgeMs = 2000): void {
  const roots = workspaces.filter((w): w is string => typeof w === 'string' && path.isAbsolute(w));
  if (!current) {
    installKnownSecrets({ workspaceRoots: roots, home, env });
    lastRefresh = Date.now();
    return;
  }
  if (current.addWorkspaceRoots(roots) || Date.now() - lastRefresh >= maxAgeMs) {
    lastRefresh = Date.now();
    current.refresh();
  }
}
