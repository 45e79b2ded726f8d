// `bulwark hook --agent claude|codex|gemini|copilot-cli|vscode`: the program every guarded agent
// calls before (and after) each tool call. It reads the client's hook JSON on stdin, maps the tool
// call to Bulwark actions (security/agents/), has them decided — by the running extension over its
// socket (Tier 3 in the editor's modal, one audit chain, shared taint), or in-process when no
// extension runs (nobody to ask: what needs a human is denied) — and answers in the client's own
// dialect. Whatever goes wrong ends as a deny with a reason: never an allow because something failed.
// An allowed shell call of a client that can take a rewritten input runs inside Bulwark's OS sandbox
// (`bulwark exec`, hook-sandbox.ts) unless `--no-sandbox`; the others are answered with silence.
import type { AgentId, HookAnswer, HookCall, MappedAction } from '../engine/agents';
import {
  AGENT_IDS,
  BUILTIN_TOOL_MAPS,
  HookInputError,
  denyWithoutPayload,
  isAgentId,
  mapToolCallAny,
  toolMapsFor,
  parseHookCall,
  postToolAnswer,
  postToolContext,
  preToolAnswer,
  refusalText,
  rewriteTarget,
} from '../engine/agents';
import type { BridgeDecision } from '../node/hooks/bridge-protocol';

import { ALLOW_NET_ENTRY } from '../node/hooks/wrapper';
import { MIN_NODE_MAJOR, nodeMajor } from './node-version';
import { errorMessage } from '../engine/error-message';

export { MIN_NODE_MAJOR };
/** Largest hook payload read; a bigger one is denied (a tool input carrying a huge file). */
export const MAX_HOOK_INPUT_BYTES = 32 * 1024 * 1024;
/** Answer before this, whatever is still pending (the client's own hook timeout must be longer). */
export const DEFAULT_DEADLINE_MS = 25_000;
/** Tool output scanned after the tool ran (more is not scanned, and the context says so). */
const MAX_OUTPUT_CHARS = 4 * 1024 * 1024;

const USAGE =
  'usage: bulwark hook --agent claude|codex|gemini|copilot-cli|vscode [--event NAME] [--state-dir DIR] [--deadline-ms N] [--policy default|permissive|strict|FILE] [--ifc default|permissive|strict|none|FILE] [--no-server] [--no-sandbox] [--allow-net HOST[:PORT]]...';

interface HookFlags {
  agent: AgentId;
  event?: string;
  stateDir?: string;
  deadlineMs: number;
  policy: string;
  ifc: string;
  noServer: boolean;
  /** Allowed shell calls run in Bulwark's sandbox where the client can take a rewritten input. */
  sandbox: boolean;
  allowNet: string[];
}

export interface HookIo {
  readonly stdin: AsyncIterable<Buffer | string>;
  write(answer: HookAnswer): void;
}

/** Runs one hook call; resolves to the exit code. Never throws. */
export async function runHook(argv: string[], given?: HookIo): Promise<number> {
  const started = Date.now();
  const io = given ?? processIo();
  try {
    return await answerHook(argv, io, started);
  } finally {
    // The client's wrapper waits for this process to end: a sandbox probe stuck in a child must not keep it alive once answered.
    if (!given && (await import('./hook-sandbox')).sandboxProbeStuck()) setTimeout(() => process.exit(), 200).unref();
  }
}

async function answerHook(argv: string[], io: HookIo, started: number): Promise<number> {
  const agentGuess = guessAgent(argv);
  let answered = false;
  const answer = (a: HookAnswer): number => {
    if (!answered) {
      answered = true;
      io.write(a);
    }
    return a.exitCode;
  };
  const failClosed = (why: string) =>
    answer(denyWithoutPayload(agentGuess, `Bulwark denied this tool call because its hook could not decide: ${why}. Nothing was run.`));

  // The hook answers an old Node in the client's own dialect (a deny), not with the CLI's one-line refusal.
  if (!(nodeMajor() >= MIN_NODE_MAJOR))
    return failClosed(
      `it needs Node.js ${MIN_NODE_MAJOR} or newer and found ${process.version} (install Node ${MIN_NODE_MAJOR}+ and run \`bulwark hooks install\` again so the hook uses it)`,
    );

  let flags: HookFlags;
  try {
    flags = parseHookFlags(argv);
  } catch (e) {
    return failClosed(`${errorMessage(e)} (${USAGE})`);
  }

  let call: HookCall | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => resolve('deadline'), Math.max(0, flags.deadlineMs - (Date.now() - started)));
  });
  try {
    const work = decideCall(flags, io, started + flags.deadlineMs, (c) => {
      call = c;
    });
    const outcome = await Promise.race([work, deadline]);
    if (outcome === 'deadline') {
      const why = `no decision within ${Math.round(flags.deadlineMs / 1000)} s (a review or an approval took too long), so the call is denied; approve sooner, or reinstall the hooks with a longer --timeout`;
      if (call?.phase === 'post_tool' || call?.phase === 'other') return answer({ stdout: '', stderr: '', exitCode: 0 });
      if (call)
        return answer(
          preToolAnswer(call.dialect, call.event, { allow: false, reason: `Bulwark denied this ${call.toolName} call: ${why}.` }),
        );
      return failClosed(why);
    }
    return answer(outcome);
  } catch (e) {
    // An error's text may quote the input (and a secret in it); the deny goes on to the model.
    const { redactTextOrWithhold } = await import('../engine/audit/redact');
    const why = redactTextOrWithhold(e instanceof HookInputError ? e.message : `an internal error (${errorMessage(e)})`);
    if (call && call.phase === 'pre_tool')
      return answer(
        preToolAnswer(call.dialect, call.event, {
          allow: false,
          reason: `Bulwark denied this ${call.toolName} call because its hook could not decide: ${why}. Nothing was run.`,
        }),
      );
    if (call) return answer({ stdout: '', stderr: '', exitCode: 0 });
    return failClosed(why);
  } finally {
    clearTimeout(timer);
  }
}

function parseHookFlags(argv: string[]): HookFlags {
  const values = new Map<string, string>();
  const allowNet: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const [name, inline] = a.startsWith('--') && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
    if (name === '--no-server' || name === '--no-sandbox') {
      values.set(name, 'true');
      continue;
    }
    if (!['--agent', '--event', '--state-dir', '--deadline-ms', '--policy', '--ifc', '--allow-net'].includes(name))
      throw new Error(`unknown option \`${a}\``);
    const v = inline ?? argv[++i];
    if (v === undefined) throw new Error(`${name} needs a value`);
    if (name === '--allow-net') {
      if (!ALLOW_NET_ENTRY.test(v))
        throw new Error(`--allow-net takes HOST[:PORT] (a name, *.name, an IPv4 address or [IPv6]), got \`${v}\``);
      allowNet.push(v);
      continue;
    }
    values.set(name, v);
  }
  const agent = values.get('--agent');
  if (!isAgentId(agent))
    throw new Error(`--agent must be one of ${AGENT_IDS.join(', ')}${agent === undefined ? '' : `, got \`${agent}\``}`);
  const deadlineRaw = values.get('--deadline-ms');
  const deadlineMs = deadlineRaw === undefined ? DEFAULT_DEADLINE_MS : Number(deadlineRaw);
  if (!Number.isInteger(deadlineMs) || deadlineMs < 100 || deadlineMs > 3_600_000)
    throw new Error(`--deadline-ms must be an integer from 100 to 3600000, got \`${deadlineRaw}\``);
  return {
    agent,
    event: values.get('--event'),
    stateDir: values.get('--state-dir'),
    deadlineMs,
    policy: values.get('--policy') ?? 'default',
    ifc: values.get('--ifc') ?? 'default',
    noServer: values.has('--no-server'),
    sandbox: !values.has('--no-sandbox'),
    allowNet,
  };
}

/** The agent named on the command line, for answering even when the flags are otherwise wrong. */
function guessAgent(argv: string[]): AgentId {
  const i = argv.indexOf('--agent');
  const v = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith('--agent='))?.slice(8);
  return isAgentId(v) ? v : 'claude';
}

async function readInput(stdin: AsyncIterable<Buffer | string>): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of stdin) {
    const b = typeof c === 'string' ? Buffer.from(c, 'utf8') : c;
    size += b.length;
    if (size > MAX_HOOK_INPUT_BYTES) throw new HookInputError(`the hook input is larger than ${MAX_HOOK_INPUT_BYTES / (1024 * 1024)} MiB`);
    chunks.push(b);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new HookInputError('the hook input is not valid UTF-8');
  }
  if (text.trim() === '') throw new HookInputError('the hook input is empty');
  try {
    return JSON.parse(text);
  } catch {
    const { jsonSyntaxError } = await import('./json-lines');
    throw new HookInputError(`the hook input is not valid JSON (${jsonSyntaxError(text)})`);
  }
}

async function decideCall(flags: HookFlags, io: HookIo, deadlineAt: number, onCall: (c: HookCall) => void): Promise<HookAnswer> {
  const call = parseHookCall(await readInput(io.stdin), flags.agent, flags.event);
  onCall(call);
  if (call.phase === 'other') return { stdout: '', stderr: '', exitCode: 0 };
  const { deciders, cwdOf } = await import('./hook-deciders');
  if (call.phase === 'post_tool') {
    const decider = await deciders(flags, deadlineAt);
    const findings = await decider.inspectOutput(call, outputText(call.toolOutput));
    return postToolAnswer(call.dialect, call.event, postToolContext(call.toolName!, findings));
  }
  const maps = toolMapsFor(call.agent);
  const mapping = mapToolCallAny(maps, call.toolName!, call.toolInput, call.cwd);
  // How the call will run if allowed is worked out beside finding the decider (not after the
  // decision), so its audit entry can say so.
  const target = rewriteTarget(BUILTIN_TOOL_MAPS[call.agent], maps, call.dialect, call.toolName!, call.toolInput, mapping);
  const sandboxing = target
    ? import('./hook-sandbox').then((m) =>
        m.sandboxOutcome(call, target, cwdOf(call, mapping.actions[0]!).cwd, {
          enabled: flags.sandbox,
          allowNet: flags.allowNet,
          ...(flags.stateDir ? { stateDir: flags.stateDir } : {}),
        }),
      )
    : undefined;
  const [decider, sandbox] = await Promise.all([deciders(flags, deadlineAt), sandboxing]);
  let worst: { action: MappedAction; d: BridgeDecision } | undefined;
  const decided: BridgeDecision[] = [];
  for (const action of mapping.actions) {
    // A command that will run inside the sandbox is judged as such (the project's tests need no one then).
    const d = await decider.decide(call, action, mapping.via, sandbox?.note, sandbox?.kind === 'wrap');
    decided.push(d);
    if (!worst || rank(d) > rank(worst.d)) worst = { action, d };
    if (d.decision === 'block') break; // one refusal refuses the call; the rest need not be asked
  }
  if (!worst || worst.d.decision === 'allow') {
    if (sandbox?.kind === 'wrap') {
      // An allow that rests on the sandbox hiding protected files (a search over a folder with a .env) passes them on.
      const hide = [...new Set(decided.flatMap((d) => (d.sandboxHides ?? []).map((h) => h.path)))];
      try {
        return hide.length ? sandbox.answerHiding(hide) : sandbox.answer;
      } catch (e) {
        return preToolAnswer(call.dialect, call.event, {
          allow: false,
          reason: `Bulwark denied this ${call.toolName} call: the sandboxed form of the command could not be prepared (${errorMessage(e)}). Nothing was run.`,
        });
      }
    }
    if (sandbox?.kind === 'refuse')
      return preToolAnswer(call.dialect, call.event, {
        allow: false,
        reason: `Bulwark denied this ${call.toolName} call: ${sandbox.why}. Nothing was run. Do not retry it in another form; tell the user what you need and why.`,
      });
    const allow = preToolAnswer(call.dialect, call.event, { allow: true, reason: '' });
    return sandbox?.kind === 'skip' && !sandbox.quiet
      ? { ...allow, stderr: `Bulwark: this command runs without Bulwark's sandbox: ${sandbox.why}.\n` }
      : allow;
  }
  const reason = refusalText({
    tool: call.toolName!,
    decision: worst.d.decision,
    tier: worst.d.tier,
    rules: worst.d.rules,
    reason: await decider.redact(worst.d.reason),
    noReviewer: worst.d.decision === 'escalate' ? decider.noReviewer : undefined,
  });
  return preToolAnswer(call.dialect, call.event, { allow: false, reason });
}

const rank = (d: BridgeDecision) => (d.decision === 'block' ? 2 : d.decision === 'escalate' ? 1 : 0);

/** Every string in a tool's output, joined (a shell tool's stdout/stderr, a file's text…), bounded. */
export function outputText(output: unknown): string {
  const parts: string[] = [];
  let size = 0;
  const walk = (v: unknown, depth: number) => {
    if (size >= MAX_OUTPUT_CHARS || depth > 32) return;
    if (typeof v === 'string') {
      parts.push(v.slice(0, MAX_OUTPUT_CHARS - size));
      size += v.length;
      return;
    }
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(output, 0);
  return parts.join('\n');
}

function processIo(): HookIo {
  return {
    stdin: process.stdin,
    write: (a) => {
      if (a.stdout) process.stdout.write(a.stdout);
      if (a.stderr) process.stderr.write(a.stderr);
    },
  };
}
