// Package managers and cloud CLIs: which subcommands reach the network, which operands are package names and
// which are files, the files they publish or upload (data sinks), and the configuration that makes them run code.
import { has, lastValue, parseOpts, values } from '../options';
import { literalWord, sliceWord, type WordValue } from '../words';
import { DOT, clip, genericReads, register, type Inv, type Registry } from '../helpers';
import { operandWords, serveFiles } from './shared';

export const PACKAGE_COMMANDS: Registry = new Map();
const reg = (names: string | readonly string[], fn: (inv: Inv) => void) => register(PACKAGE_COMMANDS, names, fn);

const ALL = 'all';
/** `npm install` and every spelling npm accepts for it (its abbreviations and typo aliases). */
const NPM_INSTALL = ['install', 'i', 'in', 'ins', 'inst', 'insta', 'instal', 'isnt', 'isnta', 'isntal'];
const PACKAGE_NET: Record<string, readonly string[] | typeof ALL> = {
  npm: [
    ...NPM_INSTALL,
    'add',
    'ci',
    'clean-install',
    'install-test',
    'it',
    'install-ci-test',
    'update',
    'up',
    'upgrade',
    'udpate',
    'publish',
    'unpublish',
    'outdated',
    'audit',
    'view',
    'v',
    'info',
    'show',
    'search',
    's',
    'se',
    'find',
    'dist-tag',
    'deprecate',
    'login',
    'adduser',
    'whoami',
    'ping',
    'doctor',
    'exec',
    'x',
    'init',
    'create',
    'dlx',
    'owner',
    'access',
    'token',
    'team',
    'star',
    'stars',
    'fund',
    'repo',
    'docs',
    'bugs',
    'pack',
  ],
  pnpm: [
    'install',
    'i',
    'add',
    'update',
    'up',
    'upgrade',
    'publish',
    'dlx',
    'fetch',
    'outdated',
    'audit',
    'create',
    'import',
    'env',
    'exec',
    'info',
    'view',
    'install-test',
    'it',
  ],
  yarn: [
    '',
    'install',
    'add',
    'upgrade',
    'up',
    'upgrade-interactive',
    'publish',
    'dlx',
    'create',
    'info',
    'outdated',
    'audit',
    'npm',
    'set',
    'global',
    'import',
    'plugin',
    'why',
  ],
  bun: ['install', 'i', 'add', 'a', 'update', 'publish', 'x', 'create', 'c', 'upgrade', 'outdated', 'pm', 'link'],
  npx: ALL,
  pnpx: ALL,
  bunx: ALL,
  uvx: ALL,
  pipx: ['install', 'run', 'upgrade', 'upgrade-all', 'inject', 'reinstall', 'reinstall-all'],
  pip: ['install', 'download', 'wheel', 'search', 'index', 'lock'],
  uv: ['add', 'sync', 'lock', 'pip', 'tool', 'python', 'run', 'venv', 'export', 'publish', 'init'],
  poetry: ['install', 'add', 'update', 'lock', 'publish', 'self', 'search', 'new', 'init'],
  conda: ['install', 'create', 'update', 'upgrade', 'search', 'env'],
  mamba: ['install', 'create', 'update', 'upgrade', 'search', 'env'],
  micromamba: ['install', 'create', 'update', 'search', 'env'],
  gem: ['install', 'update', 'push', 'fetch', 'search', 'sources', 'owner', 'yank'],
  bundle: ['install', 'update', 'add', 'outdated', 'package', 'lock', 'cache'],
  bundler: ['install', 'update', 'add', 'outdated'],
  cargo: ['install', 'fetch', 'update', 'publish', 'search', 'add', 'login', 'yank', 'owner', 'generate-lockfile'],
  go: ['get', 'install', 'mod'],
  composer: ['install', 'require', 'update', 'create-project', 'global', 'self-update', 'outdated'],
  brew: ['install', 'upgrade', 'update', 'fetch', 'tap', 'reinstall', 'search', 'info', 'outdated', 'bundle'],
  apt: [
    'install',
    'update',
    'upgrade',
    'dist-upgrade',
    'full-upgrade',
    'download',
    'source',
    'build-dep',
    'reinstall',
    'search',
    'changelog',
  ],
  'apt-get': ['install', 'update', 'upgrade', 'dist-upgrade', 'full-upgrade', 'download', 'source', 'build-dep', 'reinstall', 'changelog'],
  aptitude: ['install', 'update', 'upgrade', 'safe-upgrade', 'full-upgrade', 'download', 'reinstall'],
  dnf: ['install', 'update', 'upgrade', 'downgrade', 'reinstall', 'makecache', 'download', 'search', 'check-update', 'distro-sync'],
  yum: ['install', 'update', 'upgrade', 'downgrade', 'reinstall', 'makecache', 'search', 'check-update'],
  microdnf: ['install', 'update', 'upgrade', 'reinstall', 'makecache'],
  zypper: ['in', 'install', 'up', 'update', 'dup', 'dist-upgrade', 'refresh', 'ref', 'source-install', 'si'],
  apk: ['add', 'update', 'upgrade', 'fetch', 'search'],
  snap: ['install', 'refresh', 'download', 'find'],
  flatpak: ['install', 'update', 'remote-add', 'search'],
  choco: ['install', 'upgrade', 'search', 'download'],
  winget: ['install', 'upgrade', 'download', 'source', 'search', 'show'],
  scoop: ['install', 'update', 'bucket', 'search'],
  helm: ['install', 'upgrade', 'pull', 'repo', 'dependency', 'dep', 'push', 'search'],
  gh: ALL,
  glab: ALL,
  aws: ALL,
  gcloud: ALL,
  gsutil: ALL,
  az: ALL,
  kubectl: ALL,
  doctl: ALL,
  heroku: ALL,
  vercel: ALL,
  netlify: ALL,
  fly: ALL,
  flyctl: ALL,
  wrangler: ALL,
  firebase: ALL,
  terraform: ['init', 'plan', 'apply', 'destroy', 'import', 'refresh', 'login', 'get'],
  tofu: ['init', 'plan', 'apply', 'destroy', 'import', 'refresh', 'get'],
};
/** Options of package managers whose value is not the subcommand. */
const PACKAGE_VALUE_OPTS = new Set([
  '--prefix',
  '-C',
  '--cwd',
  '--dir',
  '--filter',
  '-F',
  '-w',
  '--workspace',
  '--registry',
  '--cache',
  '--userconfig',
  '--manifest-path',
  '--project',
  '-p',
  '--directory',
  '--config',
  '--profile',
  '--region',
  '-g',
]);

reg(Object.keys(PACKAGE_NET), (inv) => {
  const key = inv.cmd.toLowerCase().replace(/\d+(\.\d+)*$/, '');
  const subs = PACKAGE_NET[key] ?? PACKAGE_NET[inv.cmd] ?? [];
  let sub: string | undefined;
  for (let i = 0; i < inv.args.length; i++) {
    const t = inv.args[i]!.text;
    if (PACKAGE_VALUE_OPTS.has(t) && key !== 'pacman') {
      i++;
      continue;
    }
    if (t.startsWith('-')) continue;
    sub = t;
    break;
  }
  if ((subs === ALL || subs.includes(sub ?? '')) && !packageListsOnly(key, inv.args)) inv.an.net();
  // pip list --outdated / --uptodate compares with the package index.
  if (key === 'pip' && sub === 'list' && inv.args.some((w) => /^--(outdated|uptodate)$|^-[a-zA-Z]*[ou]/.test(w.text))) inv.an.net();
  const sink = DATA_SINKS[key];
  if (sink) sink(inv);
  // A tool writing its own configuration: its operands are keys and values, not files.
  if (TOOL_CONFIG[key]?.(inv)) return;
  if ((key === 'npx' || key === 'pnpx' || key === 'bunx') && nodeServer(inv, inv.args)) return;
  if (key === 'pip' || key === 'uv') {
    const p = parseOpts(inv.args, {
      short: 'rceit',
      long: [
        'requirement',
        'constraint',
        'editable',
        'index-url',
        'extra-index-url',
        'target',
        'find-links',
        'prefix',
        'root',
        'src',
        'python',
      ],
    });
    for (const r of values(p, '-r', '--requirement', '-c', '--constraint')) inv.an.read(r, inv.scope);
    for (const e of values(p, '-e', '--editable')) if (!/^[a-z+]+:\/\//i.test(e.text)) inv.an.read(e, inv.scope);
    for (const u of values(p, '-i', '--index-url', '--extra-index-url')) inv.an.netWord(u, 'pip index');
    for (const t of values(p, '-t', '--target', '--prefix', '--root')) inv.an.write(t, inv.scope);
  }
  const names = packageNameOperands(inv, key);
  genericReads(
    inv,
    inv.args.filter((w) => !names.has(w)),
  );
});

/** A word that names a file to any package manager: a path from `.`, `/`, `~/`, `\\` or a drive. */
const EXPLICIT_PATH = /^(\.|\/|~\/|~$|\\|[A-Za-z]:[\\/])/;

/**
 * The operands of a package manager's subcommand that name packages, modules, repositories or images
 * (`composer require a/b`, `go install host/x@v1`, `npm i @scope/pkg`, `gh repo clone a/b`, `brew install
 * user/tap/formula`): to the command they are names, not files, whatever they look like. Files stay files:
 * `npm i ./dir`, `npm i pkg.tgz`, `go run main.go`, `apt install ./x.deb` (each family's `isFile`).
 */
interface NameOperands {
  /** The subcommands whose operands are names ('' for the command itself: npx PACKAGE). */
  readonly subs: readonly string[];
  /** Options that take no value: an operand after one of them is still an operand (after any other, it may be its value). */
  readonly flags: readonly string[];
  /** Is this operand a file to the command? */
  readonly isFile: (text: string) => boolean;
  /** How many operands are names (npm exec, go run: the ones after are the program's arguments); all when absent. */
  readonly count?: (sub: string) => number;
}

const NODE_FLAGS = [
  '--save',
  '-S',
  '--save-dev',
  '-D',
  '--save-optional',
  '-O',
  '--save-exact',
  '-E',
  '--save-peer',
  '--save-prod',
  '-P',
  '--global',
  '-g',
  '--no-save',
  '--force',
  '-f',
  '--legacy-peer-deps',
  '--ignore-scripts',
  '--prefer-offline',
  '--dev',
  '--peer',
  '--optional',
  '--exact',
  '--tilde',
  '-T',
  '--yes',
  '-y',
  '--frozen-lockfile',
  '--no-lockfile',
  '--silent',
  '-s',
  '--verbose',
  '--dry-run',
  '--latest',
  '-L',
  '--recursive',
  '-r',
  '--interactive',
  '-i',
];
/** npm-package-arg: a path, `file:`/`link:`/`portal:` or a tarball is a file; `user/repo` is GitHub, `@scope/name` a package. */
const nodeIsFile = (t: string) => EXPLICIT_PATH.test(t) || /^(file|link|portal):/.test(t) || /\.(tgz|tar\.gz|tar)$/.test(t);
const NODE_SUBS = [
  ...NPM_INSTALL,
  'add',
  'a',
  'update',
  'up',
  'upgrade',
  'udpate',
  'uninstall',
  'un',
  'unlink',
  'remove',
  'rm',
  'r',
  'view',
  'v',
  'info',
  'show',
  'outdated',
  'dlx',
  'x',
  'exec',
  'create',
  'c',
  'why',
  'explain',
  'ls',
  'list',
  'dedupe',
  'global',
];
/** npm exec / dlx / x / create run the package they name: the words after it are its arguments. */
const nodeCount = (sub: string) => (['', 'dlx', 'x', 'exec', 'create', 'c'].includes(sub) ? 1 : Infinity);
const NODE_NAMES: NameOperands = { subs: NODE_SUBS, flags: NODE_FLAGS, isFile: nodeIsFile, count: nodeCount };
const NPX_NAMES: NameOperands = { subs: [''], flags: NODE_FLAGS, isFile: nodeIsFile, count: nodeCount };

const NAME_OPERANDS: Record<string, NameOperands> = {
  npm: NODE_NAMES,
  pnpm: NODE_NAMES,
  yarn: NODE_NAMES,
  bun: NODE_NAMES,
  npx: NPX_NAMES,
  pnpx: NPX_NAMES,
  bunx: NPX_NAMES,
  // vendor/name[:constraint]; create-project's second operand is the directory it writes (handled below).
  composer: {
    subs: [
      'require',
      'r',
      'remove',
      'rm',
      'update',
      'u',
      'upgrade',
      'show',
      'info',
      'why',
      'depends',
      'why-not',
      'prohibits',
      'outdated',
      'reinstall',
      'create-project',
      'suggests',
      'browse',
      'home',
      'global',
    ],
    flags: [
      '--dev',
      '--no-dev',
      '--prefer-dist',
      '--prefer-source',
      '--prefer-stable',
      '--prefer-lowest',
      '--no-update',
      '--no-install',
      '--no-scripts',
      '--no-progress',
      '--no-interaction',
      '-n',
      '--update-with-dependencies',
      '-w',
      '--update-with-all-dependencies',
      '-W',
      '--with-all-dependencies',
      '--with-dependencies',
      '--ignore-platform-reqs',
      '--dry-run',
      '-q',
      '--quiet',
      '-v',
      '-vv',
      '-vvv',
      '--verbose',
      '--sort-packages',
      '--all',
      '-a',
      '--latest',
      '-l',
      '--direct',
      '--tree',
      '-t',
      '--keep-vcs',
      '--remove-vcs',
      '--ask',
    ],
    isFile: (t) => EXPLICIT_PATH.test(t),
    count: (sub) => (sub === 'create-project' ? 1 : Infinity),
  },
  // Import paths (host/x/y@v); a package from a directory starts with `.` or `/`, a file list ends in .go.
  go: {
    subs: ['get', 'install', 'run', 'build', 'test', 'vet', 'list', 'doc', 'clean', 'generate', 'fix', 'fmt', 'mod'],
    flags: [
      '-u',
      '-t',
      '-d',
      '-v',
      '-x',
      '-a',
      '-n',
      '-i',
      '-race',
      '-msan',
      '-asan',
      '-cover',
      '-trimpath',
      '-modcacherw',
      '-insecure',
      '-json',
      '-m',
      '-short',
      '-failfast',
    ],
    isFile: (t) => EXPLICIT_PATH.test(t) || /\.go$/.test(t),
    count: (sub) => (sub === 'run' ? 1 : Infinity),
  },
  brew: {
    subs: [
      'install',
      'reinstall',
      'upgrade',
      'uninstall',
      'remove',
      'rm',
      'tap',
      'untap',
      'info',
      'fetch',
      'outdated',
      'deps',
      'uses',
      'home',
      'search',
      'link',
      'unlink',
      'pin',
      'unpin',
    ],
    flags: [
      '--cask',
      '--formula',
      '-f',
      '--force',
      '-v',
      '--verbose',
      '-q',
      '--quiet',
      '-d',
      '--debug',
      '--HEAD',
      '--fetch-HEAD',
      '--build-from-source',
      '-s',
      '--force-bottle',
      '--ignore-dependencies',
      '--only-dependencies',
      '--dry-run',
      '-n',
      '--overwrite',
      '--greedy',
      '--installed',
      '--all',
      '--eval-all',
      '--no-quarantine',
      '--adopt',
      '--zap',
      '--formulae',
      '--casks',
    ],
    isFile: (t) => EXPLICIT_PATH.test(t) || /\.rb$/.test(t),
  },
  scoop: {
    subs: ['install', 'update', 'uninstall', 'info', 'home', 'cat', 'depends'],
    flags: [
      '-g',
      '--global',
      '-k',
      '--no-cache',
      '-i',
      '--independent',
      '-s',
      '--skip-hash-check',
      '-u',
      '--no-update-scoop',
      '-f',
      '--force',
      '-q',
      '--quiet',
      '--all',
    ],
    isFile: (t) => EXPLICIT_PATH.test(t) || /\.json$/.test(t) || /^[a-z][a-z0-9+.-]*:\/\//i.test(t),
  },
};
// apt's `pkg/suite` selects a release; a package file is a path or ends in .deb.
const APT_NAMES: NameOperands = {
  subs: [
    'install',
    'reinstall',
    'remove',
    'purge',
    'source',
    'build-dep',
    'download',
    'show',
    'policy',
    'depends',
    'rdepends',
    'changelog',
  ],
  flags: [
    '-y',
    '--yes',
    '--assume-yes',
    '-q',
    '-qq',
    '--quiet',
    '--no-install-recommends',
    '--install-recommends',
    '--install-suggests',
    '-f',
    '--fix-broken',
    '--reinstall',
    '--only-upgrade',
    '--allow-downgrades',
    '-s',
    '--simulate',
    '--dry-run',
    '-d',
    '--download-only',
    '--purge',
    '--auto-remove',
    '--autoremove',
    '--no-upgrade',
    '-m',
    '--fix-missing',
    '--full',
    '--installed',
  ],
  isFile: (t) => EXPLICIT_PATH.test(t) || /\.deb$/.test(t),
};
for (const k of ['apt', 'apt-get', 'aptitude']) NAME_OPERANDS[k] = APT_NAMES;
const GH_REPO_VERBS = ['clone', 'create', 'view', 'fork', 'delete', 'archive', 'unarchive', 'edit', 'sync', 'set-default'];

/**
 * The words of `inv.args` that are names to the command (left out of the generic path reads), after writing what
 * some of them imply: `composer create-project a/b DIR` and `gh repo clone a/b [DIR]` write DIR (or the name's
 * last part), `npm i file:../x` reads ../x.
 */
function packageNameOperands(inv: Inv, key: string): Set<WordValue> {
  const { an, scope } = inv;
  const names = new Set<WordValue>();
  const args = inv.args;
  if (key === 'gh' || key === 'glab') {
    // -R/--repo OWNER/REPO names a repository everywhere.
    for (let i = 0; i < args.length; i++) {
      const t = args[i]!.text;
      if ((t === '-R' || t === '--repo') && args[i + 1]) names.add(args[++i]!);
      else if (/^(--repo=|-R.)/.test(t)) names.add(args[i]!);
    }
    const ops = operandWords(args, 0, [], GH_VALUED);
    const [sub, verb, repo, dir] = ops;
    if (sub?.text !== 'repo' || !verb || !GH_REPO_VERBS.includes(verb.text) || !repo || repo.dynamic || EXPLICIT_PATH.test(repo.text))
      return names;
    names.add(repo);
    if (verb.text === 'clone') {
      if (dir) {
        an.write(dir, scope);
        names.add(dir);
      } else
        an.write(
          literalWord(
            repo.text
              .replace(/\.git$/, '')
              .replace(/\/+$/, '')
              .split('/')
              .pop()!,
          ),
          scope,
        );
    }
    return names;
  }
  const rule = NAME_OPERANDS[key];
  if (!rule) return names;
  let at = 0;
  let sub = '';
  if (!rule.subs.includes('')) {
    // The subcommand: the first word that is neither an option nor the value of one (`npm --prefix x install`).
    for (; at < args.length; at++) {
      const t = args[at]!.text;
      if (PACKAGE_VALUE_OPTS.has(t)) at++;
      else if (!t.startsWith('-')) break;
    }
    const w = args[at];
    if (!w || w.dynamic || !rule.subs.includes(w.text)) return names;
    sub = w.text;
    at++;
    if (sub === 'global') {
      // `composer global require a/b`, `yarn global add a/b`: the subcommand follows.
      const next = args[at];
      if (!next || next.dynamic || !rule.subs.includes(next.text)) return names;
      sub = next.text;
      at++;
    }
  }
  // npx -p PKG, npm exec --package=PKG: the packages it installs before running the command.
  if (rule === NPX_NAMES || ['exec', 'dlx', 'x'].includes(sub)) {
    for (let i = 0; i < args.length; i++) {
      const t = args[i]!.text;
      if ((t === '-p' || t === '--package') && args[i + 1] && !nodeIsFile(args[i + 1]!.text)) names.add(args[++i]!);
      else if (/^--package=/.test(t) && !nodeIsFile(t.slice('--package='.length))) names.add(args[i]!);
    }
  }
  const ops = operandWords(args, at, rule.flags, rule === NPX_NAMES || ['exec', 'dlx', 'x'].includes(sub) ? ['-p', '--package'] : []);
  const count = rule.count?.(sub) ?? Infinity;
  for (const [i, w] of ops.entries()) {
    if (w.dynamic || w.glob) break;
    // `go test ./... -args x`, `npm exec pkg -- x`: what follows is the program's.
    if (i >= count) break;
    if (rule.isFile(w.text)) {
      // A package file need not look like a path (`npm i pkg.tgz`, `go run main.go`): read as the command reads it.
      const linked = /^(file|link|portal):(.+)$/.exec(w.text);
      if (linked && rule.isFile === nodeIsFile) {
        names.add(w);
        an.read(literalWord(linked[2]!), scope);
      } else an.read(w, scope);
      continue;
    }
    names.add(w);
  }
  if (key === 'composer' && sub === 'create-project' && ops[0] && !ops[0].dynamic) {
    // create-project vendor/name [DIR [VERSION]]: DIR defaults to the name's last part.
    const dir = ops[1];
    if (dir) {
      an.write(dir, scope);
      names.add(dir);
      if (ops[2]) names.add(ops[2]);
    } else an.write(literalWord(ops[0].text.split('/').pop()!), scope);
  }
  return names;
}

/**
 * The forms of a network subcommand that stay on the machine: npx's own help and version (no package
 * named, none fetched) and `cargo install --list` (what is installed). `npx tsc --version` is not
 * one: without a local tsc, npx downloads the package of that name.
 */
function packageListsOnly(key: string, args: readonly WordValue[]): boolean {
  const words = args.map((w) => (w.dynamic || w.glob ? undefined : w.text));
  if (words.includes(undefined) || words.length === 0) return false;
  if (key === 'npx') return words.length === 1 && ['--help', '-h', '--version', '-v'].includes(words[0]!);
  if (key === 'cargo') return words.length === 2 && words[0] === 'install' && words[1] === '--list';
  return false;
}

// ------------------------------------------------------------------------------------------
// Commands that send local files or data to a remote service (for SSRF and IFC). Targets that are
// not http(s) URLs (`s3://b/k`, `gs://b`, `rclone://remote/path`) are reported as URLs of their own
// scheme: the SSRF check passes over schemes it does not fetch, and IFC counts them as network.

/** Non-option operands of a CLI after its subcommands, options with values skipped. */
function operands(args: readonly WordValue[], valued: readonly string[]): WordValue[] {
  const out: WordValue[] = [];
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (args[i]!.dynamic) {
      out.push(args[i]!);
      continue;
    }
    if (t.startsWith('--') && t.includes('=')) continue;
    if (t.startsWith('-') && t !== '-') {
      if (valued.includes(t)) i++;
      continue;
    }
    out.push(args[i]!);
  }
  return out;
}

/** A bucket copy (`aws s3 cp`, `gsutil cp`, `gcloud storage cp`, `rclone copy`): remote operands are targets, local ones are read or written. */
function bucketCopy(
  inv: Inv,
  ops: readonly WordValue[],
  isRemote: (w: WordValue) => boolean,
  toUrl: (w: WordValue) => string,
  recursive: boolean,
  what: string,
): void {
  const { an, scope } = inv;
  an.net();
  const dst = ops[ops.length - 1];
  if (!dst || ops.length < 2) {
    for (const o of ops) if (isRemote(o)) an.net(toUrl(o));
    return;
  }
  for (const o of ops) {
    if (o.dynamic) an.netWord(o, what);
    else if (isRemote(o)) an.net(toUrl(o));
  }
  for (const src of ops.slice(0, -1)) {
    if (src.dynamic || isRemote(src) || src.text === '-') continue;
    if (recursive) an.readBelow(src, scope, 'contents');
    else an.read(src, scope);
  }
  if (!dst.dynamic && !isRemote(dst) && dst.text !== '-') an.write(dst, scope);
}

const GH_HOST = 'https://api.github.com';
/** gh options that take a value (so their values are not taken for operands). */
const GH_VALUED = [
  '-R',
  '--repo',
  '--hostname',
  '-f',
  '-F',
  '--field',
  '--raw-field',
  '--input',
  '-X',
  '--method',
  '-H',
  '--header',
  '-q',
  '--jq',
  '-t',
  '--template',
  '-d',
  '--desc',
  '--filename',
  '-b',
  '--body',
  '--body-file',
  '-T',
  '--title',
  '-n',
  '--notes',
  '--notes-file',
  '-e',
  '--env',
  '--env-file',
  '-o',
  '--org',
  '-r',
  '--repos',
  '-v',
  '--visibility',
  '-a',
  '--add',
  '--app',
  '--cache',
  '-p',
  '--preview',
  '--target',
  '-B',
  '--base',
  '-l',
  '--label',
  '--milestone',
  '--assignee',
  '--reviewer',
];

/** Per CLI: how it sends data out. Each handler reports the target(s) and the local files it reads. */
const DATA_SINKS: Record<string, (inv: Inv) => void> = {
  gh(inv) {
    const { an, scope } = inv;
    const ops = operands(inv.args, GH_VALUED);
    const [sub, verb] = ops;
    if (!sub || sub.dynamic || !verb || verb.dynamic) return;
    const p = parseOpts(inv.args, { short: 'RfFXHqtdbTnepv', long: GH_VALUED.filter((o) => o.startsWith('--')).map((o) => o.slice(2)) });
    const host = lastValue(p, '--hostname');
    const out = (path: string) =>
      host
        ? host.dynamic
          ? an.netWord(host, 'gh --hostname')
          : an.net(`https://${host.text}/api/v3${path}`)
        : an.net(`${GH_HOST}${path}`);
    const rest = ops.slice(2);
    if (sub.text === 'api') {
      // `-F key=@file` sends the file's content; `--input FILE` sends the file as the body.
      for (const f of values(p, '-F', '--field')) {
        const at = f.text.indexOf('=@');
        if (at > 0) an.read(sliceWord(f, at + 2), scope);
      }
      for (const f of values(p, '--input')) if (f.text !== '-') an.read(f, scope);
      const sends =
        has(p, '-f', '-F', '--field', '--raw-field', '--input') ||
        values(p, '-X', '--method').some((m) => m.dynamic || !/^(GET|HEAD)$/i.test(m.text));
      if (/^https?:\/\//.test(verb.text)) an.net(verb.text);
      else if (sends) out(`/${verb.text.replace(/^\//, '')}`);
    } else if (sub.text === 'gist' && ['create', 'new', 'edit'].includes(verb.text)) {
      for (const f of rest) if (f.text !== '-') an.read(f, scope);
      for (const f of values(p, '-a', '--add')) an.read(f, scope);
      out('/gists');
    } else if (sub.text === 'release' && ['upload', 'create'].includes(verb.text)) {
      for (const f of rest.slice(1)) an.read(f.dynamic ? f : literalWord(f.text.replace(/#.*$/, '')), scope);
      for (const f of values(p, '-F', '--notes-file')) if (f.text !== '-') an.read(f, scope);
      out('/releases');
    } else if (['secret', 'variable'].includes(sub.text) && verb.text === 'set') {
      for (const f of values(p, '-f', '--env-file')) an.read(f, scope);
      out(`/${sub.text}s`);
    } else if (['issue', 'pr'].includes(sub.text) && ['create', 'comment', 'edit', 'review'].includes(verb.text)) {
      for (const f of values(p, '-F', '--body-file')) if (f.text !== '-') an.read(f, scope);
      out(`/${sub.text === 'pr' ? 'pulls' : 'issues'}`);
    }
  },
  aws(inv) {
    const { an, scope } = inv;
    const p = parseOpts(inv.args, {
      long: [
        'endpoint-url',
        'profile',
        'region',
        'output',
        'query',
        'body',
        'bucket',
        'key',
        'cli-input-json',
        'cli-input-yaml',
        'ca-bundle',
      ],
    });
    for (const e of values(p, '--endpoint-url')) an.netWord(e, 'aws --endpoint-url');
    // `file://x` and `fileb://x` parameter values are read from local files.
    for (const w of inv.args) {
      const m = !w.dynamic ? /^(?:--[\w-]+=)?fileb?:\/\/(.+)$/.exec(w.text) : null;
      if (m) an.read(literalWord(m[1]!), scope);
    }
    for (const b of values(p, '--body')) an.read(b, scope);
    const bucket = lastValue(p, '--bucket');
    if (bucket) an.netWord(bucket.dynamic ? bucket : literalWord(`s3://${bucket.text}`), 'aws s3api');
    const [svc, verb, ...rest] = operands(inv.args, [
      '--profile',
      '--region',
      '--output',
      '--query',
      '--endpoint-url',
      '--exclude',
      '--include',
      '--acl',
      '--storage-class',
      '--sse',
      '--body',
      '--bucket',
      '--key',
      '--content-type',
      '--expires',
      '--cache-control',
      '--metadata',
      '--grants',
      '--ca-bundle',
    ]);
    if (svc?.text !== 's3' || !verb || !['cp', 'mv', 'sync'].includes(verb.text)) return;
    bucketCopy(
      inv,
      rest,
      (w) => /^s3:\/\//i.test(w.text),
      (w) => w.text,
      verb.text === 'sync' || has(p, '--recursive'),
      'aws s3',
    );
  },
  gsutil(inv) {
    const args = inv.args.filter((w) => !/^-[mq]$/.test(w.text));
    const [verb, ...rest] = args;
    if (!verb || !['cp', 'mv', 'rsync'].includes(verb.text)) return;
    const p = parseOpts(rest, { short: 'hpsxzaAL', long: [] });
    bucketCopy(
      inv,
      p.pos,
      (w) => /^gs:\/\//i.test(w.text),
      (w) => w.text,
      has(p, '-r', '-R') || verb.text === 'rsync',
      'gsutil',
    );
  },
  gcloud(inv) {
    const [svc, verb, ...rest] = operands(inv.args, ['--project', '--account', '--configuration', '--format']);
    if (svc?.text !== 'storage' || !verb || !['cp', 'mv', 'rsync'].includes(verb.text)) return;
    bucketCopy(
      inv,
      rest,
      (w) => /^gs:\/\//i.test(w.text),
      (w) => w.text,
      has(parseOpts(inv.args, {}), '-r', '-R', '--recursive') || verb.text === 'rsync',
      'gcloud storage',
    );
  },
  az(inv) {
    const { an, scope } = inv;
    const [svc, kind, verb] = operands(inv.args, []);
    if (svc?.text !== 'storage' || !verb || !/^upload(-batch)?$/.test(verb.text)) return;
    const p = parseOpts(inv.args, {
      short: 'cfns',
      long: [
        'file',
        'source',
        'container-name',
        'account-name',
        'name',
        'destination',
        'share-name',
        'path',
        'connection-string',
        'sas-token',
        'account-key',
        'blob-endpoint',
      ],
    });
    const account = lastValue(p, '--account-name');
    const endpoint = lastValue(p, '--blob-endpoint');
    if (endpoint) an.netWord(endpoint, 'az storage');
    else if (account)
      an.netWord(
        account.dynamic ? account : literalWord(`https://${account.text}.${kind?.text === 'file' ? 'file' : 'blob'}.core.windows.net`),
        'az storage',
      );
    else an.net(`azure-storage://${kind?.text ?? 'blob'}`);
    for (const f of values(p, '-f', '--file')) an.read(f, scope);
    for (const d of values(p, '-s', '--source')) {
      if (verb.text === 'upload-batch') an.readBelow(d, scope, 'contents');
      else an.read(d, scope);
    }
  },
};

reg('rclone', (inv) => {
  const [verb, ...rest] = operands(inv.args, [
    '--config',
    '--include',
    '--exclude',
    '--filter',
    '--transfers',
    '--checkers',
    '--log-file',
    '--bwlimit',
    '--max-age',
    '--min-age',
    '--backup-dir',
    '--suffix',
  ]);
  inv.an.net();
  const p = parseOpts(inv.args, { long: ['config', 'log-file'] });
  for (const c of values(p, '--config')) inv.an.read(c, inv.scope);
  for (const l of values(p, '--log-file')) inv.an.write(l, inv.scope);
  if (!verb || verb.dynamic) return;
  const remote = (w: WordValue) => !w.dynamic && /^:?[\w .-]*:/.test(w.text) && !/^[A-Za-z]:[\\/]/.test(w.text);
  const toUrl = (w: WordValue) => `rclone://${w.text.replace(/^:/, '').replace(':', '/')}`;
  if (['copy', 'sync', 'move', 'copyto', 'moveto', 'bisync', 'copyurl'].includes(verb.text)) {
    bucketCopy(inv, rest, remote, toUrl, !/to$/.test(verb.text), 'rclone');
  } else {
    for (const o of rest) if (remote(o)) inv.an.net(toUrl(o));
  }
});

/**
 * Tools that write their own configuration (`npm config set`, `pip config set`): judged by the file
 * they change, which the protection tables cover (~/.npmrc, a project .npmrc, pip.conf…).
 */
const TOOL_CONFIG: Record<string, (inv: Inv) => boolean> = {
  npm: (inv) => npmLikeConfig(inv, 'npm'),
  pnpm: (inv) => npmLikeConfig(inv, 'pnpm'),
  yarn(inv) {
    const ops = operands(inv.args, ['--cwd']);
    if (ops[0]?.text !== 'config' || !ops[1] || !['set', 'unset', 'delete'].includes(ops[1].text)) return false;
    const home = inv.scope.home ?? '~';
    // Yarn 1 writes ~/.yarnrc; Yarn 2+ the project's .yarnrc.yml (-H: the home one).
    const targets = has(parseOpts(inv.args, {}), '-H', '--home') ? [`${home}/.yarnrc.yml`] : [`${home}/.yarnrc`, '.yarnrc.yml'];
    for (const t of targets) inv.an.write(literalWord(t), inv.scope);
    execKey(
      inv,
      'yarn',
      ops[2],
      /^(yarnPath|yarn-path|plugins|npmRegistryServer|registry|npmScopes|injectEnvironmentFiles|enableScripts|script-shell|shell)$/i,
    );
    return true;
  },
  pip(inv) {
    const ops = operands(inv.args, ['--python']);
    if (ops[0]?.text !== 'config' || !ops[1] || !['set', 'unset', 'edit'].includes(ops[1].text)) return false;
    const p = parseOpts(inv.args, { long: ['editor', 'python'] });
    if (has(p, '--editor')) inv.an.opaque('pip config edit --editor runs an editor');
    const home = inv.scope.home ?? '~';
    const platform = inv.an.platform;
    let targets: string[];
    if (has(p, '--global'))
      targets =
        platform === 'win32'
          ? ['C:/ProgramData/pip/pip.ini']
          : platform === 'darwin'
            ? ['/Library/Application Support/pip/pip.conf']
            : ['/etc/pip.conf', '/etc/xdg/pip/pip.conf'];
    else if (has(p, '--site')) {
      inv.an.opaque('pip config --site writes the configuration of the active environment, which is not known here');
      return true;
    } else
      targets =
        platform === 'win32'
          ? [`${home}/AppData/Roaming/pip/pip.ini`]
          : platform === 'darwin'
            ? [`${home}/Library/Application Support/pip/pip.conf`, `${home}/.config/pip/pip.conf`]
            : [`${home}/.config/pip/pip.conf`];
    for (const t of targets) inv.an.write(literalWord(t), inv.scope);
    execKey(
      inv,
      'pip',
      ops[2],
      /(^|\.)(index-url|extra-index-url|find-links|trusted-host|target|prefix|root|src|editable|require-virtualenv|no-binary)$/i,
    );
    return true;
  },
  conda(inv) {
    const p = parseOpts(inv.args, { long: ['set', 'add', 'append', 'prepend', 'remove', 'remove-key', 'file', 'env', 'name'] });
    if (inv.args[0]?.text !== 'config' || !has(p, '--set', '--add', '--append', '--prepend', '--remove', '--remove-key')) return false;
    const file = lastValue(p, '--file');
    inv.an.write(file ?? literalWord(`${inv.scope.home ?? '~'}/.condarc`), inv.scope);
    execKey(
      inv,
      'conda',
      values(p, '--set', '--add', '--append', '--prepend')[0],
      /^(channels|default_channels|custom_channels|channel_alias|pip_interop_enabled|ssl_verify|proxy_servers)$/i,
    );
    return true;
  },
};
TOOL_CONFIG['pip3'] = TOOL_CONFIG['pip']!;

/** A setting that runs code or changes where packages come from is execution configuration: a review. */
function execKey(inv: Inv, tool: string, key: WordValue | undefined, keys: RegExp): void {
  if (key && (key.dynamic || keys.test(key.text.split('=')[0]!)))
    inv.an.opaque(`${tool} setting \`${clip(key.raw, 40)}\` can run code or change where packages come from`);
}

/** npm settings that run code or change where packages come from: writing one is execution configuration. */
const NPM_EXEC_KEYS =
  /^(script-shell|shell|editor|browser|viewer|git|node-options|onload-script|init-module|ignore-scripts|prefix|globalconfig|userconfig|registry|@[^:]+:registry|.*:_authToken|strict-ssl|cafile|proxy|https-proxy|node-gyp)$/i;

/** `npm config set K V`, `npm set K V`, `npm config delete K`, `npm config edit`, `npm pkg set …`; false for other npm commands. */
function npmLikeConfig(inv: Inv, tool: 'npm' | 'pnpm'): boolean {
  const { an, scope } = inv;
  const ops = operands(inv.args, ['--location', '-L', '--prefix', '--userconfig', '--globalconfig', '-C', '--dir', '--registry']);
  const [sub, action, key, value] = ops;
  if (!sub || sub.dynamic) return false;
  if (sub.text === 'pkg' && action && ['set', 'delete', 'fix'].includes(action.text)) {
    // `npm pkg set scripts.postinstall=…` writes package.json (its scripts run on install).
    if (ops.slice(2).some((w) => w.dynamic || /^scripts\./.test(w.text)))
      an.opaque(`${tool} pkg ${action.text} changes the scripts in package.json`);
    an.write(literalWord('package.json'), scope);
    return true;
  }
  const setting =
    sub.text === 'set'
      ? { action: 'set', key: action, value: key }
      : ['config', 'c'].includes(sub.text) && action && ['set', 'delete', 'rm', 'edit', 'fix'].includes(action.text)
        ? { action: action.text, key, value }
        : undefined;
  if (!setting) return false;
  const p = parseOpts(inv.args, { short: 'L', long: ['location', 'userconfig', 'globalconfig'] });
  const location = lastValue(p, '-L', '--location');
  const home = scope.home ?? '~';
  execKey(inv, tool, setting.key, NPM_EXEC_KEYS);
  if (setting.action === 'edit') an.opaque(`${tool} config edit runs an editor`);
  const user = lastValue(p, '--userconfig');
  if (location?.dynamic) an.opaque(`${tool} config location is not literal`);
  else if (location?.text === 'project') an.write(literalWord('.npmrc'), scope);
  else if (location?.text === 'global' || has(p, '-g', '--global')) {
    const g = lastValue(p, '--globalconfig');
    if (g) an.write(g, scope);
    else an.opaque(`${tool} config --location=global writes the global npmrc, whose place is not known here`);
  } else if (user) an.write(user, scope);
  else if (tool === 'pnpm') {
    const platform = an.platform;
    an.write(
      literalWord(
        platform === 'win32'
          ? `${home}/AppData/Local/pnpm/config/rc`
          : platform === 'darwin'
            ? `${home}/Library/Preferences/pnpm/rc`
            : `${home}/.config/pnpm/rc`,
      ),
      scope,
    );
    an.write(literalWord(`${home}/.npmrc`), scope);
  } else an.write(literalWord(`${home}/.npmrc`), scope);
  return true;
}

/** Static file servers run with npx: `npx http-server [DIR] [-a ADDR] [-p PORT]`, `npx serve [DIR] [-l URI]`, `npx live-server`. */
function nodeServer(inv: Inv, args: readonly WordValue[]): boolean {
  const p = parseOpts(args, { short: 'p', long: ['package', 'yes'], posix: true });
  const [pkg, ...rest] = p.rest;
  const name = pkg && !pkg.dynamic ? pkg.text.replace(/@[^@/]*$/, '') : '';
  const server = NODE_SERVERS[name];
  if (!server) return false;
  server({ ...inv, cmd: name, args: rest });
  return true;
}

const NODE_SERVERS: Record<string, (inv: Inv) => void> = {
  'http-server'(inv) {
    const p = parseOpts(inv.args, { short: 'apdice', long: ['address', 'port', 'proxy', 'cors', 'ext'] });
    // Its default root is ./public when it exists, else the working directory: both lie below `.`.
    serveFiles(inv, 'http-server', p.pos[0] ?? DOT, lastValue(p, '-a', '--address'), lastValue(p, '-p', '--port')?.text ?? '8080');
  },
  serve(inv) {
    const p = parseOpts(inv.args, { short: 'lpc', long: ['listen', 'config'] });
    const listen = lastValue(p, '-l', '--listen');
    const m = listen && !listen.dynamic ? /^(?:tcp:\/\/)?(?:(.*):)?(\d+)$/.exec(listen.text) : null;
    serveFiles(inv, 'serve', p.pos[0] ?? DOT, listen?.dynamic ? listen : m?.[1] ? literalWord(m[1]) : undefined, m?.[2] ?? '3000');
  },
  'live-server'(inv) {
    const host = inv.args.find((w) => w.text.startsWith('--host='));
    const port = inv.args.find((w) => w.text.startsWith('--port='));
    const dir = inv.args.find((w) => !w.text.startsWith('-'));
    serveFiles(inv, 'live-server', dir ?? DOT, host ? sliceWord(host, 7) : undefined, port ? port.text.slice(7) : '8080');
  },
};
reg(Object.keys(NODE_SERVERS), (inv) => NODE_SERVERS[inv.cmd]!(inv));

reg('pacman', (inv) => {
  if (inv.args.some((w) => /^-[A-Za-z]*[SU]/.test(w.text) || w.text === '--sync')) inv.an.net();
});

reg('pip3', (inv) => PACKAGE_COMMANDS.get('pip')!.fn({ ...inv, cmd: 'pip' }));
