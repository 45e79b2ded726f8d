// Hook figures: the wall time an agent waits for `bulwark hook` per tool call, from process start to
// answer, as the clients run it (a fresh `node dist/cli.js hook` per call), in both modes:
//   - socket: an extension is running (here: the same bridge server the extension starts, deciding
//     with the same engine, default policy), so the hook only maps the call and asks it;
//   - in-process: no extension; the hook builds the engine itself and appends to the audit chain.
//   - the hooks' own server: no extension, but the first call started \`bulwark hook-server\`;
// all with Node's compile cache (NODE_COMPILE_CACHE, which the installed wrapper sets), and once without.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createNodeEngine } from '../src/node/create-engine';
import { buildShield } from '../src/node/shield-setup';
import { MemoryStateStore } from '../src/engine/shield/types';
import { startBridgeServer } from '../src/node/hooks/bridge-server';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const RUNS = Number(process.env.BULWARK_BENCH_HOOK_RUNS ?? 40);

export interface HookRow {
  readonly mode: string;
  readonly n: number;
  readonly p50ms: number;
  readonly p99ms: number;
  readonly maxMs: number;
}

function runHook(
  stateDir: string,
  home: string,
  input: string,
  env: NodeJS.ProcessEnv,
  extra: string[] = [],
): Promise<{ ms: number; stdout: string; code: number | null }> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const cp = spawn(process.execPath, [CLI, 'hook', '--agent', 'claude', '--state-dir', stateDir, ...extra], {
      env: { PATH: process.env.PATH, HOME: home, ...env },
    });
    let stdout = '';
    cp.stdout.on('data', (d: Buffer) => (stdout += d));
    cp.on('error', reject);
    cp.on('close', (code) => resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, stdout, code }));
    cp.stdin.end(input);
  });
}

function row(mode: string, ms: number[]): HookRow {
  const s = [...ms].sort((a, b) => a - b);
  const pick = (p: number) => +s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(1);
  return { mode, n: s.length, p50ms: pick(0.5), p99ms: pick(0.99), maxMs: +s[s.length - 1]!.toFixed(1) };
}

export async function hookFigures(): Promise<HookRow[]> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: build first (node esbuild.mjs)`);
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-bench-hooks-')));
  const home = path.join(root, 'home');
  const ws = path.join(root, 'ws');
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
  fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'src', 'app.ts'), 'export {};\n');
  fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'k');
  const calls = [
    { tool_name: 'Read', tool_input: { file_path: path.join(ws, 'src', 'app.ts') } },
    { tool_name: 'Read', tool_input: { file_path: path.join(home, '.ssh', 'id_rsa') } },
    { tool_name: 'Bash', tool_input: { command: 'git status && cat src/app.ts | wc -l' } },
  ].map((c, i) => JSON.stringify({ session_id: `bench-${i}`, cwd: ws, hook_event_name: 'PreToolUse', tool_use_id: `t${i}`, ...c }));
  const cache = path.join(root, 'compile-cache');
  const rows: HookRow[] = [];
  try {
    const measureMode = async (mode: string, stateDir: string, env: NodeJS.ProcessEnv, extra: string[] = []) => {
      await runHook(stateDir, home, calls[0]!, env, extra); // warm the file cache (and the compile cache)
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const r = await runHook(stateDir, home, calls[i % calls.length]!, env, extra);
        if (r.code !== 0) throw new Error(`${mode}: the hook exited ${r.code}`);
        ms.push(r.ms);
      }
      rows.push(row(mode, ms));
    };
    const cached = { NODE_COMPILE_CACHE: cache };
    await measureMode('in-process, cold (no extension, --no-server)', path.join(root, 'state-local'), cached, ['--no-server']);

    // No extension, the hooks' own server warm (the first call started it).
    const warmDir = path.join(root, 'state-warm');
    await runHook(warmDir, home, calls[0]!, cached);
    for (let i = 0; i < 200 && !fs.existsSync(path.join(warmDir, 'bridge.json')); i++) await new Promise((r) => setTimeout(r, 50));
    await measureMode("hooks' own server (no extension, warm)", warmDir, cached);
    try {
      process.kill(JSON.parse(fs.readFileSync(path.join(warmDir, 'bridge.json'), 'utf8')).pid, 'SIGTERM');
    } catch {
      /* already gone */
    }

    const stateDir = path.join(root, 'state-socket');
    const { engine } = await createNodeEngine({
      workspaceRoots: [ws],
      home,
      selfPaths: [stateDir],
      shield: buildShield({ policy: 'default', ifc: 'default', store: new MemoryStateStore(), home, platform: 'linux', mode: 'report' }),
    });
    const quiet = { info() {}, warn() {}, error() {} };
    const server = await startBridgeServer({
      stateDir,
      log: quiet,
      decide: async (req) => {
        const a = req.action;
        const r = await engine.check({ type: a.type, payload: a.payload, sessionId: a.sessionId, ...(a.cwd ? { cwd: a.cwd } : {}) });
        return { decision: r.decision, tier: r.tier, minTier: r.minTier, level: r.level, rules: [...r.rules], reason: r.reason };
      },
      record: async () => undefined,
    });
    try {
      await measureMode('extension running (socket)', stateDir, cached);
      await measureMode('extension running, no compile cache', stateDir, {});
    } finally {
      await server.dispose();
    }
    const base: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = process.hrtime.bigint();
      await new Promise((r) => spawn(process.execPath, ['-e', ''], { env: { PATH: process.env.PATH } }).on('close', r));
      base.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    rows.push(row('node -e "" (process start alone)', base));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

/**
 * What the hooks add to one real client run, per tool call (test/agents/timing.js: Claude Code, the
 * `work` scenario under the permissive policy, with and without hooks). Needs the clients that the
 * agents stage of `npm test` installs; says so when they are not there.
 */
export async function clientOverhead(): Promise<{ line: string; figures?: unknown }> {
  const root = path.resolve(__dirname, '..', '..');
  const timing = path.join(root, 'test', 'agents', 'timing.js');
  if (!fs.existsSync(path.join(root, '.e2e', 'agents', 'claude')) || !fs.existsSync(timing)) {
    return { line: 'client run overhead: skipped (the agent clients are not installed: run `npm test` once)' };
  }
  // A path esbuild does not follow: the harness is plain Node, loaded as it is.
  const load = module.require.bind(module) as NodeJS.Require;
  const t = load(timing) as {
    measureHookOverhead(o: { client: string; repeats: number }): Promise<unknown>;
    formatOverhead(f: unknown): string;
  };
  const figures = await t.measureHookOverhead({ client: 'claude', repeats: 2 });
  return { line: `client run overhead: ${t.formatOverhead(figures)}`, figures };
}

export function printHookFigures(rows: readonly HookRow[], overhead?: { line: string }): void {
  console.log('hook process, start to answer (a fresh `node dist/cli.js hook` per tool call):');
  console.table(rows);
  if (overhead) console.log(overhead.line);
  const socket = rows.find((r) => r.mode === 'extension running (socket)');
  if (socket)
    console.log(`target: hook p50 < 100 ms with the extension running: ${socket.p50ms < 100 ? 'met' : 'MISSED'} (${socket.p50ms} ms)`);
}
