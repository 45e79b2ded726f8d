// `npm run bench`: protection-only decisions and shell analysis, measured side by side in one run.
// Targets on this machine (reported, not asserted): p99 < 200 µs per file action, < 1 ms per shell command.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Engine, type ActionRequest } from '../src/engine';
import { nodeFileSystem } from '../src/node/fs-port';
import { loadShellParser } from '../src/node/shell-grammar';

const N_ACTIONS = 10_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summarise(name: string, samplesNs: number[], totalNs: number) {
  const s = [...samplesNs].sort((a, b) => a - b);
  return { name, n: s.length, perSecond: Math.round(s.length / (totalNs / 1e9)), p50us: +(percentile(s, 50) / 1e3).toFixed(1), p99us: +(percentile(s, 99) / 1e3).toFixed(1), maxUs: +(s[s.length - 1]! / 1e3).toFixed(1) };
}

function makeTree(): { root: string; ws: string; home: string } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-bench-')));
  const ws = path.join(root, 'ws');
  const home = path.join(root, 'home');
  for (const f of ['SOUL.md', 'AGENTS.md', 'USER.md', 'src/a.ts', 'src/lib/b.ts', '.env', '.vscode/settings.json', 'docs/x.md']) {
    fs.mkdirSync(path.dirname(path.join(ws, f)), { recursive: true });
    fs.writeFileSync(path.join(ws, f), 'x');
  }
  for (const f of ['.ssh/id_rsa', '.bashrc']) {
    fs.mkdirSync(path.dirname(path.join(home, f)), { recursive: true });
    fs.writeFileSync(path.join(home, f), 'x');
  }
  fs.symlinkSync(path.join(home, '.ssh/id_rsa'), path.join(root, 'link'));
  return { root, ws, home };
}

/** A mixed workload of file actions: mostly ordinary, some protected, some bypass attempts. */
function fileActions(ws: string, home: string, root: string): ActionRequest[] {
  const templates: Array<[string, Record<string, unknown>]> = [
    ['read_file', { path: `${ws}/src/a.ts` }],
    ['read_file', { path: `${ws}/src/lib/b.ts` }],
    ['write_file', { path: `${ws}/src/new-${'x'}.ts`, content: 'export {}' }],
    ['write_file', { path: `${ws}/SOUL.md`, content: 'x' }],
    ['read_file', { path: `${ws}/SOUL.md` }],
    ['write_file', { path: `${ws}/AGENTS.md`, content: 'x' }],
    ['read_file', { path: `${ws}/.env` }],
    ['read_file', { path: `${home}/.ssh/id_rsa` }],
    ['read_file', { path: `${root}/link` }],
    ['write_file', { path: `${ws}/.vscode/settings.json`, content: '{}' }],
    ['list_directory', { path: `${ws}/src` }],
    ['copy_file', { source: `${ws}/src/a.ts`, destination: `${ws}/src/c.ts` }],
    ['move_file', { source: `${ws}/docs/x.md`, destination: `${ws}/docs/y.md` }],
    ['write_file', { path: `${ws}/src/../SOUL.md.`, content: 'x' }],
    ['search_files', { path: ws, pattern: 'TODO' }],
  ];
  return Array.from({ length: N_ACTIONS }, (_, i) => {
    const [type, payload] = templates[i % templates.length]!;
    return { id: String(i), type, payload, sessionId: 'bench' };
  });
}

const COMMANDS = [
  'ls -la', 'git status', 'npm test', 'cat src/a.ts | grep -n TODO', 'echo hello > out.txt', 'cd /tmp && tar -xzf a.tgz -C out',
  'find . -name "*.log" -delete', 'curl -sSL https://example.com/install.sh -o install.sh', 'rm -rf node_modules dist',
  'sudo -u app env FOO=1 timeout 10 python3 manage.py migrate', 'bash -c "cat ~/.ssh/id_rsa | base64"', 'cp -r src/ backup/ && mv backup old',
  'for f in *.ts; do sed -i "s/a/b/" "$f"; done', 'git checkout -- src/a.ts', 'docker run --rm -v "$PWD:/w" node:20 npm ci',
];

async function main(): Promise<void> {
  const { root, ws, home } = makeTree();
  const parser = await loadShellParser();
  const engine = new Engine({ platform: 'linux', home, workspaceRoots: [ws], fs: nodeFileSystem, shellParser: parser });
  try {
    const actions = fileActions(ws, home, root);
    for (const a of actions.slice(0, 500)) await engine.check(a); // warm-up
    const fileSamples: number[] = [];
    let t0 = process.hrtime.bigint();
    for (const a of actions) {
      const s = process.hrtime.bigint();
      await engine.check(a);
      fileSamples.push(Number(process.hrtime.bigint() - s));
    }
    const fileTotal = Number(process.hrtime.bigint() - t0);

    const commandActions: ActionRequest[] = Array.from({ length: N_ACTIONS }, (_, i) => ({ type: 'execute_command', payload: { command: COMMANDS[i % COMMANDS.length] }, sessionId: 'bench', cwd: ws }));
    for (const a of commandActions.slice(0, 500)) await engine.check(a);
    const shellSamples: number[] = [];
    const analysisSamples: number[] = [];
    t0 = process.hrtime.bigint();
    for (const a of commandActions) {
      const s = process.hrtime.bigint();
      await engine.check(a);
      shellSamples.push(Number(process.hrtime.bigint() - s));
    }
    const shellTotal = Number(process.hrtime.bigint() - t0);
    t0 = process.hrtime.bigint();
    for (const a of commandActions) {
      const s = process.hrtime.bigint();
      engine.analyzeCommand(a.payload.command as string, ws);
      analysisSamples.push(Number(process.hrtime.bigint() - s));
    }
    const analysisTotal = Number(process.hrtime.bigint() - t0);

    const rows = [
      summarise('check: file actions (protection only)', fileSamples, fileTotal),
      summarise('check: execute_command (analysis + protection)', shellSamples, shellTotal),
      summarise('shell analysis only', analysisSamples, analysisTotal),
    ];
    console.log(`Bulwark bench — node ${process.version}, ${os.cpus().length} cores, ${N_ACTIONS} actions per row`);
    console.table(rows);
    console.log(`targets: file action p99 < 200 µs: ${rows[0]!.p99us < 200 ? 'met' : 'MISSED'}; shell command p99 < 1000 µs: ${rows[1]!.p99us < 1000 ? 'met' : 'MISSED'}`);
    console.log(JSON.stringify({ bench: 'foundation', rows }));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
