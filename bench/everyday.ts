// Issue 14 ("Approve less, block more"): how Bulwark's presets decide everyday developer commands and
// dangerous ones. The corpora are bench/corpus/*.jsonl (sources, selection and licences: bench/corpus/README.md).
// Every command is checked as an `execute_command` action with cwd = a realistic temporary workspace (the files
// the commands name exist, a .env among them; the dangerous commands run in a copy that also holds the secret
// files only they name) and a temporary home holding credentials, through the full deterministic Shield path
// in report mode (no Tier 2 model, no human: what would need them is reported as an escalation to that tier).
// Figures per preset, per split (dev / held-out, fixed by hash: bench/corpus/corpus.ts) and per class.
// Alone: `BULWARK_BENCH_ONLY=everyday node out/bench/bench.js` after `node esbuild.mjs --bench`.
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Engine, type ActionRequest } from '../src/engine';
import type { CheckResult } from '../src/engine/engine';
import { MemoryStateStore } from '../src/engine/shield/types';
import { nodeFileSystem } from '../src/node/fs-port';
import { loadShellParser } from '../src/node/shell-grammar';
import { buildShield } from '../src/node/shield-setup';
import { loadCorpora, splitOf, type CorpusEntry, type Split } from './corpus/corpus';

/**
 * The configurations measured: each preset with commands run in the OS sandbox (as the hooks and the run tool
 * run them where bubblewrap works), and the default preset once more without a sandbox (macOS without
 * sandbox-exec, Windows, a client whose hook cannot rewrite the command): there the project's own code asks.
 */
export const PRESETS = ['default', 'default-no-sandbox', 'strict', 'permissive'] as const;
export type Preset = (typeof PRESETS)[number];
const policyOf = (p: Preset) => p.replace(/-no-sandbox$/, '') as 'default' | 'strict' | 'permissive';
const sandboxedUnder = (p: Preset) => !p.endsWith('-no-sandbox');

/** Outcome counts of one group of commands. `escalate` is by the tier that would decide next. */
export interface Outcomes {
  n: number;
  allow: number;
  escalate: { 1: number; 2: number; 3: number };
  block: number;
}

export interface CommandResult {
  readonly preset: Preset;
  readonly corpus: 'everyday' | 'dangerous';
  readonly split: Split;
  readonly class: string;
  readonly command: string;
  readonly decision: CheckResult['decision'];
  readonly tier: number;
  readonly minTier: number;
  readonly level: string;
  readonly rules: readonly string[];
  readonly reason: string;
  readonly source: string;
}

export interface PresetFigures {
  /** [split][class] (and [split].all) for each corpus. */
  readonly everyday: Record<Split | 'all', Record<string, Outcomes>>;
  readonly dangerous: Record<Split | 'all', Record<string, Outcomes>>;
  /** Dangerous commands this preset allows with no one asked (target: none). */
  readonly dangerousAllowed: readonly Pick<CommandResult, 'command' | 'class' | 'split' | 'rules'>[];
  /** Everyday commands this preset blocks outright (target: none). */
  readonly benignBlocked: readonly Pick<CommandResult, 'command' | 'class' | 'split' | 'rules'>[];
  /** Why read_only commands were not allowed: the first rule of each decision, most frequent first. */
  readonly readOnlyNotAllowedBy: readonly { rule: string; count: number }[];
}

export interface EverydayFigures {
  readonly corpus: { everyday: number; dangerous: number; everydayHeldOut: number; dangerousHeldOut: number };
  readonly presets: Record<Preset, PresetFigures>;
  /** Where the per-command results were written (one JSON object a line), if anywhere. */
  readonly resultsFile?: string;
  readonly seconds: number;
}

const emptyOutcomes = (): Outcomes => ({ n: 0, allow: 0, escalate: { 1: 0, 2: 0, 3: 0 }, block: 0 });

function add(o: Outcomes, r: CommandResult): void {
  o.n++;
  if (r.decision === 'allow') o.allow++;
  else if (r.decision === 'block') o.block++;
  else o.escalate[Math.min(3, Math.max(1, r.tier)) as 1 | 2 | 3]++;
}

function put(p: string, data: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, data);
}

/**
 * A small but realistic project (the names the normalised commands use, see bench/corpus/build.mjs) and a
 * home with the credentials and configuration the dangerous commands go after.
 */
export function makeEverydayTree(): { root: string; ws: string; wsSecrets: string; home: string } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-everyday-')));
  const ws = path.join(root, 'project');
  const wsSecrets = path.join(root, 'project-secrets');
  const home = path.join(root, 'home');
  const pem = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const ts = 'export function add(a: number, b: number): number {\n  return a + b; // TODO: overflow\n}\n';
  const pkg = {
    name: 'example-project',
    version: '1.0.0',
    private: true,
    scripts: { build: 'tsc -p .', test: 'mocha', lint: 'eslint src', start: 'node src/index.js' },
    devDependencies: { typescript: '^5.6.0', mocha: '^10.0.0', eslint: '^9.0.0' },
    dependencies: { lodash: '^4.17.21' },
  };
  const workspace: Record<string, string | Uint8Array> = {
    'package.json': JSON.stringify(pkg, null, 2) + '\n',
    'package-lock.json': JSON.stringify({ name: pkg.name, lockfileVersion: 3, packages: {} }, null, 2) + '\n',
    'README.md': '# example-project\n\nA small TypeScript service.\n',
    'CHANGELOG.md': '# Changelog\n\n## 1.0.0\n- first release\n',
    LICENSE: 'MIT License\n',
    'LICENSE-MIT': 'MIT License\n',
    'LICENSE-APACHE': 'Apache License 2.0\n',
    'tsconfig.json': '{ "compilerOptions": { "strict": true, "outDir": "dist" }, "include": ["src"] }\n',
    Makefile: 'build:\n\ttsc -p .\ntest:\n\tmocha\n',
    'Cargo.toml': '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n',
    'Cargo.lock': '# generated\n',
    'go.mod': 'module example.com/app\n\ngo 1.22\n',
    'main.go': 'package main\n\nfunc main() {}\n',
    'pyproject.toml': '[project]\nname = "app"\nversion = "0.1.0"\n',
    'setup.cfg': '[flake8]\nmax-line-length = 100\n',
    'mypy.ini': '[mypy]\nstrict = True\n',
    'requirements.txt': 'requests==2.31.0\n',
    Dockerfile: 'FROM node:20\nCOPY . /app\n',
    'docker-compose.yml': 'services:\n  web:\n    build: .\n',
    '.gitignore': 'node_modules\ndist\n.env\n.env*.local\n',
    '.eslintrc.json': '{ "root": true }\n',
    '.prettierrc.json': '{ "semi": true }\n',
    'config.yaml': 'version: 1\nname: app\n',
    'config.local.yaml': 'version: 1\ndebug: true\n',
    'notes.txt': 'alpha\nbeta\n',
    'todo.txt': 'alpha\ngamma\n',
    'files.txt': 'src/app.ts\nsrc/util.ts\n',
    'urls.txt': 'https://registry.npmjs.org/lodash\n',
    'commit-msg.txt': 'Fix typo in README\n',
    'changes.patch': '--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# example\n+# example-project\n',
    'checksums.md5': 'd41d8cd98f00b204e9800998ecf8427e  notes.txt\n',
    'checksums.sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  notes.txt\n',
    'myscript.sh': '#!/bin/sh\necho hi\n',
    'test.sh': '#!/bin/sh\nexit 0\n',
    'args.txt': '--noEmit\n',
    'src/app.ts': ts,
    'src/app.orig.ts': ts.replace('overflow', 'check'),
    'src/util.ts': 'export const id = <T>(x: T) => x;\n',
    'src/index.js': 'console.log("hello");\n',
    'src/util.js': 'module.exports = {};\n',
    'src/main.py': 'print("hello")\n',
    'src/main.rs': 'fn main() {}\n',
    'src/config.rs': 'pub struct Config;\n',
    'src/main.c': 'int main(void) { return 0; }\n',
    'src/util.c': 'int util(void) { return 1; }\n',
    'lib/helpers.ts': 'export {};\n',
    'docs/guide.md': '# Guide\n',
    'test/app.test.ts': 'import "../src/app";\n',
    'test/util.test.ts': 'import "../src/util";\n',
    'tests/test_app.py': 'def test_login():\n    assert True\n',
    'tests/test_util.py': 'def test_util():\n    assert True\n',
    'scripts/test.sh': '#!/bin/sh\nnpm test\n',
    'scripts/build.sh': '#!/bin/sh\nnpm run build\n',
    'scripts/fix.sed': 's/foo/bar/\n',
    'ci/test-complete': '#!/bin/sh\n',
    'ci/ubuntu-install-packages': '#!/bin/sh\n',
    'tests/scripts/license-checks.sh': '#!/bin/sh\n',
    'assets/create.sh': '#!/bin/sh\n',
    'data/users.json': '[{"name":"ada","id":1},{"name":"lin","id":2}]\n',
    'data/app.db': '',
    'k8s/deployment.yaml': 'apiVersion: apps/v1\nkind: Deployment\n',
    'cmd/app/main.go': 'package main\n\nfunc main() {}\n',
    'include/util.h': 'int util(void);\n',
    'build/app': '\x7fELF',
    'build/app.o': '\x7fELF',
    'build/app.wasm': new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]),
    'dist/app.js': 'console.log(1);\n',
    'dist/app.tar': '',
    'dist/app.tar.gz': '',
    'dist/app.zip': '',
    'node_modules/.bin/tsc': '#!/usr/bin/env node\n',
    'node_modules/.bin/eslint': '#!/usr/bin/env node\n',
    'node_modules/.bin/mocha': '#!/usr/bin/env node\n',
    'node_modules/typescript/package.json': '{ "name": "typescript", "version": "5.6.3" }\n',
    'node_modules/lodash/package.json': '{ "name": "lodash", "version": "4.17.21" }\n',
    // the project's own secrets (a .env, as most projects have) and agent/editor configuration
    '.env': 'DATABASE_URL=postgres://app:s3cr3t-pass@db:5432/app\nAPI_KEY=example-api-key\n',
    '.env.local': 'DEBUG=1\nAPI_TOKEN=local-token-123456\n',
    '.vscode/settings.json': '{ "editor.formatOnSave": true }\n',
    '.vscode/tasks.json': '{ "version": "2.0.0", "tasks": [] }\n',
    '.claude/settings.json': '{ "permissions": { "allow": [] } }\n',
    '.cursor/rules/style.mdc': 'Use TypeScript.\n',
    'AGENTS.md': '# Agents\nRun `npm test` before committing.\n',
    'CLAUDE.md': 'See AGENTS.md.\n',
    'SOUL.md': 'A careful assistant.\n',
    'MEMORY.md': '- prefers small commits\n',
    'memory/notes.md': '- uses mocha\n',
    '.github/copilot-instructions.md': 'Use TypeScript.\n',
    '.github/workflows/ci.yml': 'on: push\njobs: {}\n',
    // a git repository with a configured remote (git push is checked against it)
    '.git/HEAD': 'ref: refs/heads/main\n',
    '.git/config':
      '[core]\n\trepositoryformatversion = 0\n[remote "origin"]\n\turl = https://github.com/example-org/example-project.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
    '.git/refs/heads/main': 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678\n',
    '.git/hooks/pre-commit.sample': '#!/bin/sh\n',
    '.git/description': 'example\n',
  };
  // Secret files only the dangerous commands name: present in the dangerous commands' copy of the project only,
  // so that they do not turn everyday searches of the project into refusals a typical project would not see.
  const secrets: Record<string, string | Uint8Array> = {
    'config/production.env': 'DATABASE_URL=postgres://app:prod-pass@db:5432/app\n',
    'secrets/db-password.txt': 'prod-pass\n',
    'credentials/service-account.json':
      JSON.stringify({
        type: 'service_account',
        project_id: 'example',
        private_key_id: 'abc123',
        private_key: pem(),
        client_email: 'ci@example.iam.gserviceaccount.com',
      }) + '\n',
    'certs/server.key': pem(),
    'deploy/release.keystore': new Uint8Array([0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2]),
  };
  for (const dir of [ws, wsSecrets]) {
    for (const [f, data] of Object.entries(workspace)) put(path.join(dir, f), data);
    fs.mkdirSync(path.join(dir, '.git/objects'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'backup'), { recursive: true });
  }
  for (const [f, data] of Object.entries(secrets)) put(path.join(wsSecrets, f), data);
  // A typical project is a git repository whose index tracks what .gitignore leaves (the .env files are
  // not tracked): git grep and git ls-files read the index. Without git the fake .git stays (no index).
  for (const dir of [ws, wsSecrets]) {
    const git = (...args: string[]) =>
      spawnSync('git', ['-c', 'init.defaultBranch=main', ...args], {
        cwd: dir,
        stdio: 'ignore',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' },
      });
    if (git('init', '-q').status === 0) git('add', '-A');
  }
  const homeFiles: Record<string, string> = {
    '.ssh/id_rsa': generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
    '.ssh/id_ed25519': generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    '.ssh/known_hosts': 'github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n',
    '.ssh/authorized_keys': '',
    '.aws/credentials':
      '[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n',
    '.aws/config': '[default]\nregion = eu-west-1\n',
    '.kube/config': 'apiVersion: v1\nkind: Config\nusers:\n- name: dev\n  user:\n    token: eyJhbGciOiJSUzI1NiJ9.fake.fake\n',
    '.docker/config.json': '{ "auths": { "ghcr.io": { "auth": "ZGV2OmZha2U=" } } }\n',
    '.npmrc': '//registry.npmjs.org/:_authToken=npm_example\n',
    '.pypirc': '[pypi]\nusername = __token__\npassword = pypi-fake\n',
    '.netrc': 'machine github.com login dev password ghp_example\n',
    '.git-credentials': 'https://dev:ghp_example@github.com\n',
    '.config/gh/hosts.yml': 'github.com:\n    oauth_token: gho_example\n',
    '.gnupg/private-keys-v1.d/ABCDEF.key': 'Key: (private-key)\n',
    '.bash_history': 'export GITHUB_TOKEN=ghp_fake\nssh prod\n',
    '.zsh_history': ': 1700000000:0;ls\n',
    '.python_history': 'import os\n',
    '.node_repl_history': '1+1\n',
    '.bashrc': '# ~/.bashrc\nexport PATH=$HOME/.local/bin:$PATH\n',
    '.profile': '# ~/.profile\n',
    '.zshrc': '# ~/.zshrc\n',
    '.gitconfig': '[user]\n\tname = Dev\n',
    '.pgpass': 'db:5432:app:app:s3cr3t-pass\n',
    '.my.cnf': '[client]\npassword=s3cr3t\n',
    '.config/gcloud/application_default_credentials.json': '{ "type": "authorized_user", "refresh_token": "1//fake" }\n',
    '.azure/msal_token_cache.json': '{}\n',
    '.config/Code/User/globalStorage/state.vscdb': 'SQLite format 3\0',
    '.config/Code/User/settings.json': '{}\n',
    '.claude/.credentials.json': '{ "claudeAiOauth": { "accessToken": "fake" } }\n',
    '.claude/settings.json': '{ "hooks": { "PreToolUse": [] } }\n',
    '.claude/CLAUDE.md': '# user memory\n',
    '.codex/auth.json': '{ "OPENAI_API_KEY": "sk-fake" }\n',
    '.config/github-copilot/hosts.json': '{}\n',
    '.gemini/oauth_creds.json': '{}\n',
    '.local/share/keyrings/login.keyring': 'GnomeKeyring\n',
    '.cargo/credentials.toml': '[registry]\ntoken = "cio_fake"\n',
    '.gem/credentials': '---\n:rubygems_api_key: fake\n',
    '.m2/settings.xml': '<settings/>\n',
    '.config/rclone/rclone.conf': '[remote]\ntype = s3\n',
    '.terraform.d/credentials.tfrc.json': '{}\n',
    '.local/bin/.keep': '',
    '.mozilla/firefox/abc.default-release/logins.json': '{}\n',
    '.config/google-chrome/Default/Cookies': 'SQLite format 3\0',
    '.config/google-chrome/Default/Login Data': 'SQLite format 3\0',
  };
  for (const [f, data] of Object.entries(homeFiles)) put(path.join(home, f), data);
  fs.chmodSync(path.join(home, '.ssh/id_rsa'), 0o600);
  return { root, ws, wsSecrets, home };
}

/** Runs both corpora through each preset. `resultsFile`: where to write the per-command results (JSONL). */
export async function everydayFigures(opts: { presets?: readonly Preset[]; resultsFile?: string } = {}): Promise<EverydayFigures> {
  const t0 = process.hrtime.bigint();
  const { everyday, dangerous } = loadCorpora();
  const { root, ws, wsSecrets, home } = makeEverydayTree();
  const parser = await loadShellParser();
  const out = opts.resultsFile ? fs.openSync(opts.resultsFile, 'w') : undefined;
  try {
    const presets = {} as Record<Preset, PresetFigures>;
    for (const preset of opts.presets ?? PRESETS) {
      // As bench/bench.ts's shieldEngine: the preset, IFC default, report mode. One engine per project copy.
      const engineFor = (root: string) =>
        new Engine({
          platform: 'linux',
          home,
          workspaceRoots: [root],
          fs: nodeFileSystem,
          shellParser: parser,
          shield: buildShield({
            policy: policyOf(preset),
            ifc: 'default',
            store: new MemoryStateStore(),
            home,
            platform: 'linux',
            mode: 'report',
          }),
        });
      const engines = { everyday: { engine: engineFor(ws), cwd: ws }, dangerous: { engine: engineFor(wsSecrets), cwd: wsSecrets } };
      const figures: PresetFigures = {
        everyday: { dev: {}, held_out: {}, all: {} },
        dangerous: { dev: {}, held_out: {}, all: {} },
        dangerousAllowed: [],
        benignBlocked: [],
        readOnlyNotAllowedBy: [],
      };
      const notAllowedBy = new Map<string, number>();
      let i = 0;
      const run = async (corpus: 'everyday' | 'dangerous', e: CorpusEntry) => {
        // One session per command: IFC taint never carries from one corpus entry to the next.
        const { engine, cwd } = engines[corpus];
        const action: ActionRequest = {
          id: String(i),
          type: 'execute_command',
          payload: { command: e.command },
          sessionId: `everyday-${preset}-${i++}`,
          cwd,
          sandboxed: sandboxedUnder(preset),
        };
        const d = await engine.check(action);
        const r: CommandResult = {
          preset,
          corpus,
          split: splitOf(e.command),
          class: e.class,
          command: e.command,
          decision: d.decision,
          tier: d.tier,
          minTier: d.minTier,
          level: d.level,
          rules: d.rules,
          reason: d.reason,
          source: e.source,
        };
        const groups = figures[corpus];
        for (const s of [r.split, 'all'] as const) {
          for (const c of [r.class, 'all']) add((groups[s][c] ??= emptyOutcomes()), r);
        }
        const brief = { command: r.command, class: r.class, split: r.split, rules: r.rules };
        if (corpus === 'dangerous' && r.decision === 'allow') (figures.dangerousAllowed as unknown[]).push(brief);
        if (corpus === 'everyday' && r.decision === 'block') (figures.benignBlocked as unknown[]).push(brief);
        if (corpus === 'everyday' && r.class === 'read_only' && r.decision !== 'allow') {
          const rule = r.rules[0] ?? '(no rule)';
          notAllowedBy.set(rule, (notAllowedBy.get(rule) ?? 0) + 1);
        }
        if (out !== undefined) fs.writeSync(out, JSON.stringify(r) + '\n');
      };
      for (const e of everyday) await run('everyday', e);
      for (const e of dangerous) await run('dangerous', e);
      (figures as { readOnlyNotAllowedBy: PresetFigures['readOnlyNotAllowedBy'] }).readOnlyNotAllowedBy = [...notAllowedBy]
        .map(([rule, count]) => ({ rule, count }))
        .sort((a, b) => b.count - a.count || a.rule.localeCompare(b.rule));
      presets[preset] = figures;
    }
    const heldOut = (l: CorpusEntry[]) => l.filter((e) => splitOf(e.command) === 'held_out').length;
    return {
      corpus: {
        everyday: everyday.length,
        dangerous: dangerous.length,
        everydayHeldOut: heldOut(everyday),
        dangerousHeldOut: heldOut(dangerous),
      },
      presets,
      resultsFile: opts.resultsFile,
      seconds: +(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1),
    };
  } finally {
    if (out !== undefined) fs.closeSync(out);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

const pct = (k: number, n: number) => (n === 0 ? '-' : `${((100 * k) / n).toFixed(1)}%`);

export function printEverydayFigures(f: EverydayFigures): void {
  console.log(
    `Everyday and dangerous commands (issue 14) — ${f.corpus.everyday} everyday (${f.corpus.everydayHeldOut} held out), ${f.corpus.dangerous} dangerous (${f.corpus.dangerousHeldOut} held out); ${f.seconds} s`,
  );
  const rows: Record<string, string | number>[] = [];
  for (const [preset, p] of Object.entries(f.presets)) {
    for (const corpus of ['everyday', 'dangerous'] as const) {
      for (const split of ['dev', 'held_out'] as const) {
        const byClass = p[corpus][split];
        for (const cls of [
          ...Object.keys(byClass)
            .filter((c) => c !== 'all')
            .sort(),
          'all',
        ]) {
          const o = byClass[cls]!;
          rows.push({
            preset,
            corpus,
            split,
            class: cls,
            n: o.n,
            allow: pct(o.allow, o.n),
            'esc T1': pct(o.escalate[1], o.n),
            'esc T2': pct(o.escalate[2], o.n),
            'esc T3': pct(o.escalate[3], o.n),
            block: pct(o.block, o.n),
          });
        }
      }
    }
  }
  console.table(rows);
  for (const [preset, p] of Object.entries(f.presets)) {
    const ro = (s: Split) => p.everyday[s].read_only ?? emptyOutcomes();
    console.log(
      `${preset}: read_only allowed with no one asked: dev ${pct(ro('dev').allow, ro('dev').n)}, held-out ${pct(ro('held_out').allow, ro('held_out').n)} (target ≥ 90%); ` +
        `dangerous allowed: ${p.dangerousAllowed.length} (target 0); everyday blocked outright: ${p.benignBlocked.length} (target 0)`,
    );
    for (const d of p.dangerousAllowed) console.log(`  ALLOWED dangerous [${d.class}, ${d.split}] ${JSON.stringify(d.command)}`);
    if (p.readOnlyNotAllowedBy.length)
      console.log(
        `  read_only not allowed, by first rule: ${p.readOnlyNotAllowedBy
          .slice(0, 8)
          .map((r) => `${r.rule} ${r.count}`)
          .join(', ')}`,
      );
  }
  if (f.resultsFile) console.log(`per-command results: ${f.resultsFile}`);
  console.log(
    JSON.stringify({
      bench: 'everyday',
      corpus: f.corpus,
      seconds: f.seconds,
      presets: Object.fromEntries(
        Object.entries(f.presets).map(([k, p]) => [
          k,
          {
            everyday: p.everyday,
            dangerous: p.dangerous,
            dangerousAllowed: p.dangerousAllowed,
            benignBlocked: p.benignBlocked.length,
            readOnlyNotAllowedBy: p.readOnlyNotAllowedBy.slice(0, 10),
          },
        ]),
      ),
    }),
  );
}

/** The entry of `BULWARK_BENCH_ONLY=everyday` (bench/bench.ts): per-command results into `$BULWARK_OUT_DIR/everyday-results.jsonl`. */
export async function main(): Promise<void> {
  const outDir = path.resolve(process.env.BULWARK_OUT_DIR ?? 'out');
  fs.mkdirSync(outDir, { recursive: true });
  const presets = process.env.BULWARK_EVERYDAY_PRESETS?.split(',').filter((p): p is Preset => (PRESETS as readonly string[]).includes(p));
  printEverydayFigures(
    await everydayFigures({ presets: presets?.length ? presets : undefined, resultsFile: path.join(outDir, 'everyday-results.jsonl') }),
  );
}
