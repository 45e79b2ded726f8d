// The `bulwark` subcommands check, shell, policy and audit (main.ts dispatches to them). Loaded on
// demand, so `bulwark hook` does not pay for what it does not use.
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { createNodeEngine, currentPlatform } from '../node/create-engine';
import { readJsonLines } from './json-lines';
import type { ActionRequest, Platform } from '../engine';
import { MemoryStateStore, type Clock } from '../engine/shield/types';
import { buildShield } from '../node/shield-setup';
import { CompiledPolicy, parseShieldPolicy } from '../engine/shield/policy';
import { runPolicyExamples } from '../engine/shield/policy-examples';
import { Tier2Evaluator, generateCanary } from '../engine/shield/tier2';
import { OpenAIChatBackend } from '../node/openai-chat';
import { randomBytes } from 'node:crypto';
import { lazyOnnxClassifier } from '../node/classifier/lazy-classifier';
import { UsageError } from './usage-error';
import { absoluteDir, parseFlags, type Flags } from './flags';
import { errorMessage } from '../engine/error-message';

export { UsageError };

export const USAGE = `usage:
  bulwark check [--workspace DIR]... [--extra-read-root DIR]... [--home DIR] [--platform linux|darwin|win32] [--no-resolve] [--allow-loopback-port N]...
                [--policy default|permissive|strict|none|FILE] [--ifc default|permissive|strict|none|FILE] [--mode enforce|audit]
                [--tier2 none|openai [--tier2-url URL] [--tier2-model M]] [--classifier MODEL_DIR [--classifier-threshold 0.85]]  < actions.jsonl
      (--tier2 openai reads the API key from BULWARK_TIER2_API_KEY)
                [--audit-log FILE --audit-db FILE]   (appends each decision's audit entries)
  bulwark audit verify [--log FILE] [--db FILE] [--strict]   (exit 0 only for an intact chain; --strict also checks JCS form)
  bulwark audit query --log FILE [--session S] [--type T] [--since TIME] [--decision allow|block|escalate] [--rule ID]
  bulwark audit export --log FILE --format jsonl|csv
      (audit HMAC key: BULWARK_AUDIT_KEY, else FILE.key beside the --db/--audit-db file, created 0600)
  bulwark hook --agent claude|codex|gemini|copilot-cli|vscode [--state-dir DIR] [--deadline-ms N] [--policy P] [--ifc P] [--no-sandbox] [--allow-net HOST[:PORT]]...
      (an agent's pre/post-tool hook: the client's hook JSON on stdin, the answer in its own format on stdout; an allowed
       shell command runs in bulwark exec where the client takes a rewritten input, unless --no-sandbox)
  bulwark hooks install [--agent claude|codex|gemini|copilot-cli|vscode]... [--scope user|workspace] [--workspace DIR]
                        [--home DIR] [--state-dir DIR] [--timeout SECONDS] [--policy default|permissive|strict] [--no-sandbox]
                        [--allow-net HOST[:PORT]]... [--yes] [--dry-run]
  bulwark hooks uninstall [--agent A]... [--home DIR] [--state-dir DIR] [--yes] [--dry-run]
  bulwark hooks status [--home DIR] [--workspace DIR] [--state-dir DIR]
      (puts Bulwark's hook wrapper into each client's hook configuration, shows the plan first; status: guarded, not installed, tampered)
  bulwark exec [--cwd DIR] [--workspace DIR]... [--allow-net HOST[:PORT]]... [--env NAME]... [--hide PATH]... [--timeout SECONDS] [--verbose] -- CMD...
      (runs CMD in the OS sandbox: credentials hidden, only the workspaces writable, network only to the allowed hosts
       through Bulwark's proxy; --hide hides more (the protected files a decision said the sandbox hides);
       exit status of CMD, 124 on timeout, 125 when no sandbox can start)
  bulwark shell [--cwd DIR] [--home DIR] [--platform P] -- "<command>"
  bulwark policy validate FILE
  bulwark policy test FILE [--home DIR]
  bulwark redact [--report]  < in > out   (secrets in stdin replaced by [REDACTED:rule-id] on stdout, streaming)
  bulwark scan  < texts.jsonl   ({"id","text","phase":"pre_prompt|pre_execution|export","trust":"trusted|untrusted|mixed"} → {"id","action","findings","redacted"})`;

function platformFlag(f: Flags): Platform {
  const p = f.values.get('--platform')?.at(-1) ?? currentPlatform();
  if (p !== 'linux' && p !== 'darwin' && p !== 'win32') throw new UsageError(`--platform must be linux, darwin or win32, got \`${p}\``);
  return p;
}

export async function runCheck(argv: string[]): Promise<number> {
  const f = parseFlags(
    argv,
    [
      '--workspace',
      '--extra-read-root',
      '--home',
      '--platform',
      '--allow-loopback-port',
      '--policy',
      '--ifc',
      '--mode',
      '--tier2',
      '--tier2-url',
      '--tier2-model',
      '--classifier',
      '--classifier-threshold',
      '--audit-log',
      '--audit-db',
    ],
    ['--no-resolve'],
  );
  if (f.rest.length) throw new UsageError(`unexpected argument \`${f.rest[0]}\``);
  const platform = platformFlag(f);
  const ports = (f.values.get('--allow-loopback-port') ?? []).map((p) => {
    const n = Number(p);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`--allow-loopback-port must be a port number, got \`${p}\``);
    return n;
  });
  const home = f.values.get('--home')?.at(-1);
  const homeDir = home ? absoluteDir('--home', home) : os.homedir();
  const workspaceRoots = (f.values.get('--workspace') ?? []).map((w) => absoluteDir('--workspace', w));
  const policy = f.values.get('--policy')?.at(-1) ?? 'default';
  const mode = f.values.get('--mode')?.at(-1);
  if (mode !== undefined && mode !== 'enforce' && mode !== 'audit')
    throw new UsageError(`--mode must be enforce or audit, got \`${mode}\``);
  // Sessions are decided in input order on one store, so a session's taint carries across lines.
  const store = new MemoryStateStore();
  const clock: Clock = { now: () => Date.now() };
  const shield =
    policy === 'none'
      ? undefined
      : buildShield({
          policy,
          ifc: f.values.get('--ifc')?.at(-1) ?? 'default',
          ifcMode: mode as 'enforce' | 'audit' | undefined,
          store,
          home: homeDir,
          platform,
          mode: 'report',
          tier2: tier2Flag(f, store, clock),
          ...classifierFlags(f),
        });
  if (shield && !shield.policy.ok) throw new UsageError(shield.policy.error);
  const { engine } = await createNodeEngine({
    workspaceRoots,
    home: homeDir,
    platform,
    resolve: !f.bools.has('--no-resolve'),
    ssrfPolicy: { allowLoopbackPorts: ports },
    shield,
    extraReadRoots: (f.values.get('--extra-read-root') ?? []).map((d) => absoluteDir('--extra-read-root', d)),
  });
  const auditLogFile = f.values.get('--audit-log')?.at(-1);
  const auditDbFile = f.values.get('--audit-db')?.at(-1) ?? (auditLogFile === undefined ? undefined : `${auditLogFile}.db`);
  if (auditLogFile === undefined && f.values.has('--audit-db')) throw new UsageError('--audit-db needs --audit-log');
  const audit = auditLogFile === undefined ? undefined : await openCliAudit(auditLogFile, auditDbFile!);
  const runSession = `cli-${process.pid}-${Date.now()}`;
  if (audit)
    await audit.log.append(
      audit.sessionEvent('started', runSession, { surface: 'cli', argv: argv.filter((a) => !a.startsWith('--tier2-url')) }),
    );
  try {
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
      // The CLI runs nothing itself; it assumes what it did not block runs, so later lines see the taint.
      if (d.decision !== 'block') engine.recordExecuted({ ...d, decision: 'allow' });
      // The entry is durable before the decision is printed: a CI step never sees an unrecorded decision.
      if (audit)
        await audit.log.appendDecision(d, { session: action.sessionId, actionType: action.type, payload: action.payload, cwd: action.cwd });
      process.stdout.write(
        JSON.stringify({
          id: input.id ?? null,
          decision: d.decision,
          tier: d.tier,
          min_tier: d.minTier,
          level: d.level,
          rules: d.rules,
          reason: d.reason,
          reasons: d.reasons,
        }) + '\n',
      );
    }
    if (malformed) {
      process.stderr.write(`bulwark check: ${malformed} malformed input line(s); see the error objects in the output\n`);
      return 2;
    }
    return 0;
  } finally {
    if (audit) {
      await audit.log.append(audit.sessionEvent('ended', runSession, { surface: 'cli' })).catch(() => undefined);
      await audit.log.close();
    }
  }
}

async function openCliAudit(logFile: string, dbFile: string) {
  const { AuditLog } = await import('../node/audit/audit-log');
  const { cliAuditKey } = await import('../node/audit/cli-key');
  const { sessionEvent } = await import('../engine/audit');
  const log = await AuditLog.open({
    logFile: path.resolve(logFile),
    dbFile: path.resolve(dbFile),
    hmacKey: cliAuditKey(path.resolve(dbFile), true),
    session: 'cli',
    onRecovery: (m) => process.stderr.write(`bulwark: audit log recovered: ${m}\n`),
  });
  return { log, sessionEvent };
}

export async function runAudit(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const f = parseFlags(
    rest,
    ['--log', '--db', '--session', '--type', '--since', '--decision', '--rule', '--format'],
    sub === 'verify' ? ['--strict'] : [],
  );
  if (f.rest.length) throw new UsageError(`unexpected argument \`${f.rest[0]}\``);
  const one = (n: string) => f.values.get(n)?.at(-1);
  const logFile = path.resolve(one('--log') ?? path.join('.bulwark', 'audit.jsonl'));
  // `bulwark audit export … | head`: a closed pipe ends the output quietly.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  const audit = await import('../node/audit/audit-log');
  if (sub === 'verify') {
    const { verifyLogFile } = await import('../node/audit/audit-verify');
    const { cliAuditKey } = await import('../node/audit/cli-key');
    const dbFile = path.resolve(one('--db') ?? `${logFile}.db`);
    const r = await verifyLogFile({ logFile, dbFile, hmacKey: cliAuditKey(dbFile, false), strict: f.bools.has('--strict') });
    process.stdout.write(`${logFile}: ${r.checked} entr${r.checked === 1 ? 'y' : 'ies'} checked\n`);
    if (r.ok) {
      process.stdout.write('chain intact (hashes, links, sequence, anchor head and checkpoints)\n');
      return 0;
    }
    const b = r.firstBroken!;
    process.stdout.write(
      `BROKEN: ${b.kind} at ${b.line ? `line ${b.line}` : 'the anchor'}${b.seq === null ? '' : ` (seq ${b.seq})`}: ${b.message}\n`,
    );
    return 1;
  }
  if (sub === 'query') {
    const decision = one('--decision');
    if (decision !== undefined && !['allow', 'block', 'escalate'].includes(decision))
      throw new UsageError(`--decision must be allow, block or escalate, got \`${decision}\``);
    const type = one('--type');
    const { isAuditEventType } = await import('../engine/audit');
    if (type !== undefined && !isAuditEventType(type)) throw new UsageError(`unknown event type \`${type}\``);
    if (!fs.existsSync(logFile)) throw new Error(`${logFile} does not exist`);
    const since = one('--since');
    if (since !== undefined) audit.parseSince(since);
    // --rule: entries naming the rule by its id or its former coded id (`PI-001`), with or without the `heuristic.`/`content.` prefix.
    const rule = one('--rule');
    if (rule !== undefined && rule.trim() === '') throw new UsageError('--rule needs a rule id');
    const { entryNamesRule } = await import('../node/audit-view');
    for await (const e of audit.queryEntries(audit.readEntries(logFile), {
      session: one('--session'),
      type,
      since,
      decision: decision as 'block' | undefined,
    })) {
      if (rule === undefined || entryNamesRule(e, rule)) process.stdout.write(JSON.stringify(e) + '\n');
    }
    return 0;
  }
  if (sub === 'export') {
    const format = one('--format') ?? 'jsonl';
    if (format !== 'jsonl' && format !== 'csv') throw new UsageError(`--format must be jsonl or csv, got \`${format}\``);
    if (!fs.existsSync(logFile)) throw new Error(`${logFile} does not exist`);
    for await (const chunk of audit.exportEntries(audit.readEntries(logFile), format)) {
      if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once('drain', r));
    }
    return 0;
  }
  throw new UsageError('usage: bulwark audit verify|query|export');
}

function classifierFlags(f: Flags): { classifier?: ReturnType<typeof lazyOnnxClassifier>; classifierThreshold?: number } {
  const dir = f.values.get('--classifier')?.at(-1);
  const t = f.values.get('--classifier-threshold')?.at(-1);
  const threshold = t === undefined ? undefined : Number(t);
  if (threshold !== undefined && !(threshold >= 0 && threshold <= 1))
    throw new UsageError(`--classifier-threshold must be a number from 0 to 1, got \`${t}\``);
  if (dir === undefined) return { classifierThreshold: threshold };
  return { classifier: lazyOnnxClassifier(absoluteDir('--classifier', dir)), classifierThreshold: threshold };
}

function tier2Flag(f: Flags, store: MemoryStateStore, clock: Clock): Tier2Evaluator | undefined {
  const which = f.values.get('--tier2')?.at(-1) ?? 'none';
  if (which === 'none') return undefined;
  if (which !== 'openai') throw new UsageError(`--tier2 must be none or openai, got \`${which}\``);
  const apiKey = process.env.BULWARK_TIER2_API_KEY;
  if (!apiKey) throw new UsageError('--tier2 openai needs the API key in BULWARK_TIER2_API_KEY');
  const backend = new OpenAIChatBackend({
    baseURL: f.values.get('--tier2-url')?.at(-1) ?? 'https://api.openai.com/v1',
    model: f.values.get('--tier2-model')?.at(-1) ?? 'gpt-4o-mini',
    apiKey,
  });
  return new Tier2Evaluator({ backend, canary: generateCanary((n) => randomBytes(n)), store, clock });
}

export async function runPolicy(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const f = parseFlags(rest, ['--home', '--platform'], []);
  if ((sub !== 'validate' && sub !== 'test') || f.rest.length !== 1) throw new UsageError('usage: bulwark policy validate|test FILE');
  const file = f.rest[0]!;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${file}: ${errorMessage(e)}`);
  }
  const policy = parseShieldPolicy(text, file); // throws file:line:column
  if (sub === 'validate') {
    process.stdout.write(
      `${file}: valid (${policy.deny?.length ?? 0} deny, ${policy.verify?.length ?? 0} verify, ${policy.allow?.length ?? 0} allow rules, ${policy.examples?.length ?? 0} examples)\n`,
    );
    return 0;
  }
  const home = f.values.get('--home')?.at(-1);
  const env = { home: home ? absoluteDir('--home', home) : os.homedir(), platform: platformFlag(f) };
  const outcomes = runPolicyExamples(new CompiledPolicy(policy, file, env), env);
  for (const o of outcomes) {
    const label = o.example.name ?? `${o.example.action.type} #${o.index + 1}`;
    process.stdout.write(
      `${o.passed ? 'ok  ' : 'FAIL'} ${label}: ${o.got.decision} tier ${o.got.tier} (${o.got.rule})${o.problem ? ` — ${o.problem}` : ''}\n`,
    );
  }
  const failed = outcomes.filter((o) => !o.passed).length;
  process.stdout.write(`${outcomes.length - failed} passed, ${failed} failed\n`);
  if (outcomes.length === 0) {
    process.stderr.write(`bulwark: ${file} has no examples to test\n`);
    return 1;
  }
  return failed ? 1 : 0;
}

function inputProblem(v: Record<string, unknown>): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'each line must be a JSON object';
  if (typeof v.type !== 'string' || v.type.length === 0) return '`type` must be a non-empty string';
  if (typeof v.payload !== 'object' || v.payload === null || Array.isArray(v.payload)) return '`payload` must be an object';
  if (v.session !== undefined && typeof v.session !== 'string') return '`session` must be a string';
  if (v.cwd !== undefined && (typeof v.cwd !== 'string' || !path.isAbsolute(v.cwd))) return '`cwd` must be an absolute path';
  return undefined;
}

export async function runShell(argv: string[]): Promise<number> {
  const f = parseFlags(argv, ['--cwd', '--home', '--platform'], []);
  if (f.rest.length !== 1) throw new UsageError('bulwark shell takes exactly one command after --');
  const platform = platformFlag(f);
  const cwd = f.values.get('--cwd')?.at(-1);
  const home = f.values.get('--home')?.at(-1);
  const { engine, shellError } = await createNodeEngine({
    workspaceRoots: [],
    home: home ? absoluteDir('--home', home) : undefined,
    platform,
    resolve: false,
  });
  if (shellError) throw new Error(`the shell grammar could not be loaded: ${shellError}`);
  const a = engine.analyzeCommand(f.rest[0]!, cwd === undefined ? undefined : platform === 'win32' ? cwd : absoluteDir('--cwd', cwd));
  // The analysis quotes the command's words (a token in a header, a password in a URL): redacted like every decision.
  const { redactArgs } = await import('../engine/audit/redact');
  process.stdout.write(
    JSON.stringify(
      redactArgs({
        commands: a.commands,
        reads: a.reads,
        writes: a.writes,
        deletes: a.deletes,
        network: a.network,
        opaque: a.opaque,
        errors: a.errors,
        urls: a.urls,
        sinks: a.sinks,
        searches: a.searches,
        opaque_reasons: a.opaqueReasons,
      }),
    ) + '\n',
  );
  return 0;
}
