// `bulwark hooks install|uninstall|status`: puts Bulwark's hook wrapper into each agent client's
// hook configuration (and takes it out). Prints the plan first; writes only with --yes or after a
// "y" on a terminal. Exit 0 done (or nothing to do), 1 not confirmed / status found a problem, 2 bad input.
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { AGENT_IDS, isAgentId, type AgentId } from '../engine/agents/types';
import { bulwarkStateDir } from '../node/hooks/state-dir';
import {
  DEFAULT_CLIENT_TIMEOUT_S,
  applyPlan,
  describePlan,
  describeStatus,
  detectClients,
  hooksStatus,
  planChangesAnything,
  planInstall,
  planUninstall,
  type HooksContext,
  type HooksPlan,
} from '../node/hooks/install';
import { ALLOW_NET_ENTRY, HOOK_POLICIES, type HookPolicy, type WrapperPlatform } from '../node/hooks/wrapper';
import { UsageError } from './usage-error';

export interface HooksIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  /** The Node executable the wrapper will run, and dist/cli.js. */
  readonly node: string;
  readonly cli: string;
}

// In the dist/cli.js bundle __filename is dist/cli.js itself, also when started through bin/bulwark.js.
const defaultIo = (): HooksIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  node: process.execPath,
  cli: __filename,
});

interface Parsed {
  values: Map<string, string[]>;
  bools: Set<string>;
}

function parse(argv: string[], valued: readonly string[], booleans: readonly string[]): Parsed {
  const values = new Map<string, string[]>();
  const bools = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (valued.includes(name)) {
      const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new UsageError(`${name} needs a value`);
      values.set(name, [...(values.get(name) ?? []), v]);
    } else if (booleans.includes(name) && eq < 0) {
      bools.add(name);
    } else {
      throw new UsageError(`unknown ${a.startsWith('-') ? 'option' : 'argument'} \`${a}\``);
    }
  }
  return { values, bools };
}

const last = (p: Parsed, name: string) => p.values.get(name)?.at(-1);

function absolute(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (!path.isAbsolute(v)) throw new UsageError(`${flag} must be an absolute path, got \`${v}\``);
  return path.resolve(v);
}

function agentsOf(p: Parsed): AgentId[] | undefined {
  const raw = p.values.get('--agent');
  if (!raw) return undefined;
  const out: AgentId[] = [];
  for (const a of raw.flatMap((v) => v.split(','))) {
    if (!isAgentId(a)) throw new UsageError(`--agent must be one of ${AGENT_IDS.join(', ')}, got \`${a}\``);
    if (!out.includes(a)) out.push(a);
  }
  return out;
}

function platform(): WrapperPlatform {
  return process.platform === 'win32' ? 'win32' : process.platform === 'darwin' ? 'darwin' : 'linux';
}

function context(p: Parsed, io: HooksIo): HooksContext {
  const home = absolute('--home', last(p, '--home')) ?? os.homedir();
  let stateDir: string;
  try {
    stateDir = bulwarkStateDir(last(p, '--state-dir'), io.env, home);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return { home, stateDir, env: io.env, platform: platform() };
}

async function confirm(plan: HooksPlan, p: Parsed, io: HooksIo): Promise<'yes' | 'dry-run' | 'no'> {
  if (p.bools.has('--dry-run')) return 'dry-run';
  if (p.bools.has('--yes')) return 'yes';
  if (!io.stdin.isTTY) {
    io.stderr.write(`bulwark: nothing was written: run again with --yes to ${plan.kind} (or --dry-run to only show the plan)\n`);
    return 'no';
  }
  const rl = readline.createInterface({ input: io.stdin, output: io.stdout });
  const answer = await new Promise<string>((resolve) =>
    rl.question(`${plan.kind === 'install' ? 'Install' : 'Uninstall'} these hooks? [y/N] `, resolve),
  );
  rl.close();
  return /^y(es)?$/i.test(answer.trim()) ? 'yes' : 'no';
}

async function carryOut(plan: HooksPlan, p: Parsed, io: HooksIo): Promise<number> {
  const out = (s: string) => io.stdout.write(s + '\n');
  const lines = describePlan(plan);
  if (!planChangesAnything(plan)) {
    out(plan.kind === 'install' ? "Bulwark's hooks are already installed as asked; nothing to write:" : "Nothing of Bulwark's to remove.");
    for (const l of lines) out(`  ${l}`);
    for (const n of plan.notes) out(`note: ${n}`);
    return 0;
  }
  out(`Bulwark will ${plan.kind === 'install' ? 'write' : 'change'} these files:`);
  for (const l of lines) out(`  ${l}`);
  for (const w of plan.warnings) out(`warning: ${w}`);
  for (const n of plan.notes) out(`note: ${n}`);
  const answer = await confirm(plan, p, io);
  if (answer === 'dry-run') {
    out('(dry run: nothing was written)');
    return 0;
  }
  if (answer === 'no') return 1;
  const r = applyPlan(plan);
  out(`done: ${r.written.length} file(s) written, ${r.deleted.length} removed.`);
  if (plan.kind === 'install') out('Check with `bulwark hooks status`.');
  return 0;
}

export async function runHooks(argv: string[], io: HooksIo = defaultIo()): Promise<number> {
  const [sub, ...rest] = argv;
  const out = (s: string) => io.stdout.write(s + '\n');
  switch (sub) {
    case 'install': {
      const p = parse(
        rest,
        ['--agent', '--scope', '--workspace', '--home', '--state-dir', '--timeout', '--policy', '--allow-net'],
        ['--yes', '--dry-run', '--no-sandbox'],
      );
      const ctx = context(p, io);
      const scope = last(p, '--scope') ?? 'user';
      if (scope !== 'user' && scope !== 'workspace') throw new UsageError(`--scope must be user or workspace, got \`${scope}\``);
      const workspace = absolute('--workspace', last(p, '--workspace')) ?? (scope === 'workspace' ? process.cwd() : undefined);
      const policy = last(p, '--policy');
      if (policy !== undefined && !(HOOK_POLICIES as readonly string[]).includes(policy))
        throw new UsageError(`--policy must be one of ${HOOK_POLICIES.join(', ')}, got \`${policy}\``);
      const allowNet = p.values.get('--allow-net') ?? [];
      for (const h of allowNet)
        if (!ALLOW_NET_ENTRY.test(h))
          throw new UsageError(`--allow-net takes HOST[:PORT] (a name, *.name, an IPv4 address or [IPv6]), got \`${h}\``);
      const timeoutRaw = last(p, '--timeout');
      const timeoutSeconds = timeoutRaw === undefined ? DEFAULT_CLIENT_TIMEOUT_S : Number(timeoutRaw);
      let agents = agentsOf(p);
      if (!agents) {
        agents = detectClients(ctx);
        if (!agents.length)
          throw new UsageError(
            'no agent client found on this machine (no ~/.claude, ~/.codex, ~/.gemini, ~/.copilot or VS Code, none on PATH): name one with --agent',
          );
        out(`Found: ${agents.join(', ')} (choose with --agent).`);
      }
      let plan: HooksPlan;
      try {
        plan = planInstall({
          ...ctx,
          agents,
          scope,
          ...(workspace ? { workspace } : {}),
          timeoutSeconds,
          node: io.node,
          cli: io.cli,
          ...(policy ? { policy: policy as HookPolicy } : {}),
          ...(p.bools.has('--no-sandbox') ? { sandbox: false } : {}),
          ...(allowNet.length ? { allowNet } : {}),
        });
      } catch (e) {
        if (/timeout must be/.test((e as Error).message))
          throw new UsageError((e as Error).message.replace('the hook timeout', '--timeout'));
        throw e;
      }
      return await carryOut(plan, p, io);
    }
    case 'uninstall': {
      const p = parse(rest, ['--agent', '--home', '--state-dir'], ['--yes', '--dry-run']);
      const ctx = context(p, io);
      const agents = agentsOf(p);
      return await carryOut(planUninstall({ ...ctx, ...(agents ? { agents } : {}) }), p, io);
    }
    case 'status': {
      const p = parse(rest, ['--home', '--workspace', '--state-dir'], []);
      const ctx = context(p, io);
      const workspace = absolute('--workspace', last(p, '--workspace'));
      const s = hooksStatus({ ...ctx, ...(workspace ? { workspace } : {}) });
      out(`Bulwark agent hooks (state: ${ctx.stateDir}):`);
      for (const l of describeStatus(s)) out(`  ${l}`);
      return s.clients.some((c) => c.state === 'tampered' || c.state === 'broken') ? 1 : 0;
    }
    default:
      throw new UsageError('usage: bulwark hooks install|uninstall|status');
  }
}
