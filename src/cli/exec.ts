// `bulwark exec [--cwd DIR] [--workspace DIR]... [--allow-net HOST]... [--env NAME]... [--hide PATH]... [--timeout S] -- CMD...`
// Runs CMD inside the OS sandbox (src/node/sandbox/): the exit status is the command's; stderr says what
// the sandbox refused. Never runs CMD unsandboxed: when no sandbox can start, it exits 125 and says why.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Engine, SandboxPlanError, withRequiredHides } from '../engine';
import { nodeFileSystem } from '../node/fs-port';
import { installKnownSecrets } from '../node/known-secrets';
import { currentPlatform } from '../node/create-engine';
import { stateDirSelfPaths } from '../node/hooks/state-dir';
import { sandboxEnvironment } from '../node/sandbox/environment';
import { runSandboxed, type SandboxRunResult } from '../node/sandbox/runner';
import { absoluteDir, parseFlags } from './flags';
import { UsageError } from './usage-error';

/** Exit statuses of our own (as timeout(1) and env(1) use them), apart from the command's. */
export const EXIT_TIMEOUT = 124;
export const EXIT_SANDBOX_FAILED = 125;

const DEFAULT_TIMEOUT_S = 600;

export async function runExec(
  argv: string[],
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = process,
): Promise<number> {
  const f = parseFlags(argv, ['--cwd', '--workspace', '--allow-net', '--env', '--timeout', '--home', '--hide'], ['--verbose']);
  if (f.rest.length === 0) throw new UsageError('bulwark exec needs a command after --');
  const cwd = f.values.has('--cwd') ? absoluteDir('--cwd', f.values.get('--cwd')!.at(-1)!) : process.cwd();
  if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) throw new UsageError(`--cwd ${cwd} is not a directory`);
  const workspaces = (f.values.get('--workspace') ?? [cwd]).map((w) => absoluteDir('--workspace', w));
  for (const w of workspaces)
    if (!fs.existsSync(w) || !fs.statSync(w).isDirectory()) throw new UsageError(`--workspace ${w} is not a directory`);
  const timeoutText = f.values.get('--timeout')?.at(-1);
  const timeoutS = timeoutText === undefined ? DEFAULT_TIMEOUT_S : Number(timeoutText);
  if (!(timeoutS > 0 && timeoutS <= 86_400))
    throw new UsageError(`--timeout must be a number of seconds between 0 and 86400, got \`${timeoutText}\``);
  const allowHosts = f.values.get('--allow-net') ?? [];
  const home = f.values.has('--home') ? absoluteDir('--home', f.values.get('--home')!.at(-1)!) : os.homedir();
  const say = (line: string) => {
    io.stderr.write(`bulwark exec: ${line}\n`);
  };
  // Protected files a decision allowed the command on the condition that the sandbox hides them (the hook passes them).
  const hides = (f.values.get('--hide') ?? []).map((p) => {
    if (!path.isAbsolute(p)) throw new UsageError(`--hide ${JSON.stringify(p)} is not an absolute path`);
    return { path: path.resolve(p), ruleId: 'decision.sandbox_hides' };
  });

  const engine = new Engine({
    platform: currentPlatform(),
    home,
    workspaceRoots: workspaces,
    selfPaths: stateDirSelfPaths(process.env, home),
    fs: nodeFileSystem,
  });
  let plan;
  try {
    plan = withRequiredHides(engine.sandboxPlan(workspaces), hides, nodeFileSystem, currentPlatform());
  } catch (e) {
    if (e instanceof SandboxPlanError) {
      say(`refused: ${e.message}`);
      return EXIT_SANDBOX_FAILED;
    }
    throw e;
  }
  const { env, withheld } = sandboxEnvironment(process.env, f.values.get('--env') ?? []);
  // The command's output masks the user's known secrets by value (.env files, secret-named variables, credential files).
  installKnownSecrets({ workspaceRoots: workspaces, home, env: process.env });
  if (f.bools.has('--verbose')) {
    say(
      `${plan.hidden.length} locations hidden, ${plan.readOnly.length} read-only, ${plan.guardDirs.length} guarded; writable: ${plan.writable.join(', ')}`,
    );
    if (withheld.length) say(`environment withheld: ${withheld.join(', ')}`);
  }
  for (const p of plan.incomplete)
    say(`warning: ${p} has too many entries to list whole; credential-named files deep inside it may not be hidden`);

  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let result: SandboxRunResult;
  try {
    result = await runSandboxed(
      { command: f.rest, cwd, plan, env, timeoutMs: timeoutS * 1000, allowHosts, inheritStdin: true },
      { stdout: (t) => io.stdout.write(t), stderr: (t) => io.stderr.write(t) },
      controller.signal,
      {
        forwarder: { node: process.execPath, script: path.join(__dirname, 'sandbox-init.js') },
        ...(process.env.BULWARK_BWRAP ? { bwrapPath: process.env.BULWARK_BWRAP } : {}),
      },
    );
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  for (const d of result.network) if (!d.allowed) say(`refused a connection to ${d.host || '?'}:${d.port} (${d.rule}): ${d.reason}`);
  for (const v of result.violations) say(`${v.ruleId}: ${v.what}`);
  switch (result.status) {
    case 'exited':
      return result.exitCode ?? 1;
    case 'signaled':
      return 128 + (os.constants.signals[result.signal as NodeJS.Signals] ?? 0);
    case 'timed_out':
      say(`killed after ${timeoutS} s (--timeout), with everything it started`);
      return EXIT_TIMEOUT;
    case 'cancelled':
      say('cancelled; the command and everything it started were killed');
      return 130;
    case 'sandbox_failed':
      say(`the sandbox could not start, so the command did not run: ${result.error}${result.fix ? `. To fix: ${result.fix}` : ''}`);
      return EXIT_SANDBOX_FAILED;
  }
}
