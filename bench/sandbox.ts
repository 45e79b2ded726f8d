// Figures for the OS sandbox (issue 13): start overhead per command (`true` through bubblewrap with a warm
// plan versus `true` spawned plainly, same run, interleaved so machine noise hits both alike), what
// planning costs (home + workspace listing, the part the helper caches), and the filtering proxy's
// throughput (bench/sandbox-proxy.ts). Needs dist/sandbox-init.js only for the proxy's forwarder (not timed here).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Engine } from '../src/engine';
import { nodeFileSystem } from '../src/node/fs-port';
import { probeSandbox } from '../src/node/sandbox/probe';
import { runSandboxed } from '../src/node/sandbox/runner';
import { sandboxEnvironment } from '../src/node/sandbox/environment';
import { benchProxyThroughput } from './sandbox-proxy';

const RUNS = 60;

export interface SandboxFigures {
  mechanism: string;
  unavailable?: string;
  plainP50ms?: number;
  plainP99ms?: number;
  sandboxedP50ms?: number;
  sandboxedP99ms?: number;
  overheadP50ms?: number;
  overheadP99ms?: number;
  planMs?: number;
  planHidden?: number;
  planReadOnly?: number;
  proxiedMBps?: number;
  directMBps?: number;
}

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn('true', [], { stdio: 'ignore' });
    c.on('error', reject);
    c.on('close', () => resolve());
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(2);
};

export async function sandboxFigures(): Promise<SandboxFigures> {
  const status = await probeSandbox();
  if (!status.available) return { mechanism: status.mechanism, unavailable: status.reason };
  const base = fs.mkdtempSync('/var/tmp/bulwark-bench-sbx-');
  try {
    const ws = path.join(base, 'ws');
    fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
    for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(ws, 'src', `f${i}.ts`), 'export {}\n');
    fs.mkdirSync(path.join(ws, '.git/hooks'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.env'), 'A=1\n');
    // The real home of this user: what a plan costs on a lived-in machine.
    const engine = new Engine({ platform: 'linux', home: os.homedir(), workspaceRoots: [ws], fs: nodeFileSystem });
    const t0 = process.hrtime.bigint();
    const plan = engine.sandboxPlan([ws]);
    const planMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const { env } = sandboxEnvironment(process.env);
    const out = { stdout: () => undefined, stderr: () => undefined };
    const plain: number[] = [];
    const sandboxed: number[] = [];
    for (let i = 0; i < 5; i++) {
      await spawnTrue();
      await runSandboxed({ command: ['true'], cwd: ws, plan, env, timeoutMs: 10_000 }, out);
    }
    for (let i = 0; i < RUNS; i++) {
      let s = process.hrtime.bigint();
      await spawnTrue();
      plain.push(Number(process.hrtime.bigint() - s) / 1e6);
      s = process.hrtime.bigint();
      const r = await runSandboxed({ command: ['true'], cwd: ws, plan, env, timeoutMs: 10_000 }, out);
      sandboxed.push(Number(process.hrtime.bigint() - s) / 1e6);
      if (r.status !== 'exited' || r.exitCode !== 0) throw new Error(`sandboxed true failed: ${r.status} ${r.error ?? ''}`);
    }
    const proxy = await benchProxyThroughput();
    return {
      mechanism: status.mechanism,
      plainP50ms: pct(plain, 0.5),
      plainP99ms: pct(plain, 0.99),
      sandboxedP50ms: pct(sandboxed, 0.5),
      sandboxedP99ms: pct(sandboxed, 0.99),
      overheadP50ms: +(pct(sandboxed, 0.5) - pct(plain, 0.5)).toFixed(2),
      overheadP99ms: +(pct(sandboxed, 0.99) - pct(plain, 0.99)).toFixed(2),
      planMs: +planMs.toFixed(1),
      planHidden: plan.hidden.length,
      planReadOnly: plan.readOnly.length,
      proxiedMBps: proxy.proxiedMBps,
      directMBps: proxy.directMBps,
    };
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

export function printSandboxFigures(f: SandboxFigures): void {
  console.log('OS sandbox:');
  console.table([f]);
  if (f.unavailable) {
    console.log(`sandbox unavailable here: ${f.unavailable}`);
    return;
  }
  console.log(`target: sandbox start overhead p50 < 30 ms: ${f.overheadP50ms! < 30 ? 'met' : 'MISSED'}`);
}
