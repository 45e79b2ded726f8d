// `bulwark` command line: `check` decides JSON-lines actions from stdin, `shell` prints the
// analysis of one command. Exit 0 on success, 2 on bad input (one line on stderr).
import path from 'node:path';
import { createNodeEngine, currentPlatform } from '../node/create-engine';
import { readJsonLines } from './json-lines';
import type { ActionRequest, Platform } from '../engine';

const USAGE = `usage:
  bulwark check [--workspace DIR]... [--home DIR] [--platform linux|darwin|win32] [--no-resolve] [--allow-loopback-port N]...  < actions.jsonl
  bulwark shell [--cwd DIR] [--home DIR] [--platform P] -- "<command>"`;

export class UsageError extends Error {}

interface Flags { values: Map<string, string[]>; bools: Set<string>; rest: string[] }

function parseFlags(argv: string[], valued: string[], booleans: string[]): Flags {
  const values = new Map<string, string[]>();
  const bools = new Set<string>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') { rest.push(...argv.slice(i + 1)); break; }
    const [name, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (valued.includes(name)) {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`${name} needs a value`);
      values.set(name, [...(values.get(name) ?? []), v]);
    } else if (booleans.includes(name)) {
      bools.add(name);
    } else if (a.startsWith('-')) {
      throw new UsageError(`unknown option ${a}`);
    } else {
      rest.push(a);
    }
  }
  return { values, bools, rest };
}

function absoluteDir(flag: string, v: string): string {
  if (!path.isAbsolute(v)) throw new UsageError(`${flag} must be an absolute path, got \`${v}\``);
  return path.resolve(v);
}

function platformFlag(f: Flags): Platform {
  const p = f.values.get('--platform')?.at(-1) ?? currentPlatform();
  if (p !== 'linux' && p !== 'darwin' && p !== 'win32') throw new UsageError(`--platform must be linux, darwin or win32, got \`${p}\``);
  return p;
}

async function runCheck(argv: string[]): Promise<number> {
  const f = parseFlags(argv, ['--workspace', '--home', '--platform', '--allow-loopback-port', '--policy'], ['--no-resolve']);
  if (f.rest.length) throw new UsageError(`unexpected argument \`${f.rest[0]}\``);
  if (f.values.has('--policy')) throw new UsageError('--policy: Shield policies are not available in this build yet (protection-only decisions)');
  const platform = platformFlag(f);
  const ports = (f.values.get('--allow-loopback-port') ?? []).map((p) => {
    const n = Number(p);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`--allow-loopback-port must be a port number, got \`${p}\``);
    return n;
  });
  const home = f.values.get('--home')?.at(-1);
  const { engine } = await createNodeEngine({
    workspaceRoots: (f.values.get('--workspace') ?? []).map((w) => absoluteDir('--workspace', w)),
    home: home ? absoluteDir('--home', home) : undefined,
    platform,
    resolve: !f.bools.has('--no-resolve'),
    ssrfPolicy: { allowLoopbackPorts: ports },
  });
  let malformed = 0;
  // Lines are decided in order so a session's later actions see its earlier ones.
  for await (const line of readJsonLines(process.stdin)) {
    if ('error' in line) {
      malformed++;
      process.stdout.write(JSON.stringify({ id: line.id ?? null, error: `line ${line.lineNumber}: ${line.error}` }) + '\n');
      continue;
    }
    const input = line.value as Record<string, unknown>;
    const problem = inputProblem(input);
    if (problem) {
      malformed++;
      process.stdout.write(JSON.stringify({ id: input.id ?? null, error: `line ${line.lineNumber}: ${problem}` }) + '\n');
      continue;
    }
    const action: ActionRequest = {
      id: input.id === undefined ? undefined : String(input.id),
      type: input.type as string,
      payload: input.payload as Record<string, unknown>,
      sessionId: typeof input.session === 'string' ? input.session : 'cli',
      cwd: input.cwd as string | undefined,
    };
    const d = await engine.check(action);
    process.stdout.write(JSON.stringify({ id: input.id ?? null, decision: d.decision, tier: d.tier, min_tier: d.minTier, level: d.level, rules: d.rules, reason: d.reason }) + '\n');
  }
  if (malformed) {
    process.stderr.write(`bulwark check: ${malformed} malformed input line(s); see the error objects in the output\n`);
    return 2;
  }
  return 0;
}

function inputProblem(v: Record<string, unknown>): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'each line must be a JSON object';
  if (typeof v.type !== 'string' || v.type.length === 0) return '`type` must be a non-empty string';
  if (typeof v.payload !== 'object' || v.payload === null || Array.isArray(v.payload)) return '`payload` must be an object';
  if (v.session !== undefined && typeof v.session !== 'string') return '`session` must be a string';
  if (v.cwd !== undefined && (typeof v.cwd !== 'string' || !path.isAbsolute(v.cwd))) return '`cwd` must be an absolute path';
  return undefined;
}

async function runShell(argv: string[]): Promise<number> {
  const f = parseFlags(argv, ['--cwd', '--home', '--platform'], []);
  if (f.rest.length !== 1) throw new UsageError('bulwark shell takes exactly one command after --');
  const platform = platformFlag(f);
  const cwd = f.values.get('--cwd')?.at(-1);
  const home = f.values.get('--home')?.at(-1);
  const { engine, shellError } = await createNodeEngine({ workspaceRoots: [], home: home ? absoluteDir('--home', home) : undefined, platform, resolve: false });
  if (shellError) throw new Error(`the shell grammar could not be loaded: ${shellError}`);
  const a = engine.analyzeCommand(f.rest[0]!, cwd === undefined ? undefined : platform === 'win32' ? cwd : absoluteDir('--cwd', cwd));
  process.stdout.write(JSON.stringify({ commands: a.commands, reads: a.reads, writes: a.writes, deletes: a.deletes, network: a.network, opaque: a.opaque, errors: a.errors, urls: a.urls, opaque_reasons: a.opaqueReasons }) + '\n');
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case 'check': return await runCheck(rest);
      case 'shell': return await runShell(rest);
      case undefined: case '-h': case '--help': case 'help':
        process.stdout.write(USAGE + '\n');
        return cmd === undefined ? 2 : 0;
      default: throw new UsageError(`unknown command \`${cmd}\``);
    }
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    process.stderr.write(`bulwark: ${msg.split('\n')[0]}${e instanceof UsageError ? ' (see bulwark --help)' : ''}\n`);
    return 2;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}
