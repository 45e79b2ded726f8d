// The run-command tool (`bulwark_run_command`) without VS Code: the engine decides the command first
// (the caller's `decide`), then it runs inside the OS sandbox through the sandbox helper, its output is
// collected (capped), inspected as untrusted text entering a prompt and wrapped or withheld, and what
// ran is recorded in the audit log (ACTION_EXECUTED / ACTION_FAILED). Without a sandbox it runs only
// when the user chose "tier3" and approves this one command in a dialog that says why there is none.
// Never throws: every failure is an answer { ok: false, rules, reason } that says what to do.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { SandboxPlan } from '../engine';
import { SandboxPlanError, withRequiredHides, type RequiredHide } from '../engine';
import { executionEvent } from '../engine/audit/events';
import type { AuditEventInput } from '../engine/audit';
import { transformForPrompt, type ContentAction } from '../engine/content';
import { redactedArguments } from './approval-text';
import { currentPlatform } from './create-engine';
import { nodeFileSystem } from './fs-port';
import type { HelperRunResult, SandboxHelperClient } from './sandbox/helper-client';
import { sandboxEnvironment } from './sandbox/environment';
import { findOnPath } from './find-on-path';
import type { SandboxStatus } from './sandbox/probe';
import { parseAllowedHost } from './sandbox/proxy';
import { superviseChild, type SandboxOutput, type SandboxRunResult } from './sandbox/runner';
import { errorMessage } from '../engine/error-message';

export const RUN_COMMAND_ACTION = 'execute_command';
/** Bytes of stdout, and of stderr, that come back to the model. */
export const RUN_OUTPUT_LIMIT_BYTES = 256 * 1024;
export const MAX_TIMEOUT_SECONDS = 3600;
const MAX_COMMAND_CHARS = 100_000;

// ---- settings --------------------------------------------------------------------------------------

export const SANDBOX_SETTING_KEYS = [
  'sandbox.unsandboxed',
  'sandbox.passEnvironment',
  'sandbox.allowedHosts',
  'sandbox.timeoutSeconds',
] as const;
export type SandboxSettingKey = (typeof SANDBOX_SETTING_KEYS)[number];

export interface SandboxSettings {
  /** Without an OS sandbox: refuse every command, or run one after the user approves it (Tier 3). */
  readonly unsandboxed: 'refuse' | 'tier3';
  /** Environment variables passed in beyond the allow-list (a value holding a secret is still withheld). */
  readonly passEnvironment: readonly string[];
  /** Hosts reachable through the filtering proxy; none: no network. */
  readonly allowedHosts: readonly string[];
  readonly timeoutSeconds: number;
}

export const SANDBOX_SETTING_DEFAULTS: SandboxSettings = {
  unsandboxed: 'refuse',
  passEnvironment: [],
  allowedHosts: [],
  timeoutSeconds: 300,
};

/** A bad value falls back to the default (never looser than what it could have meant) and is reported. */
export function normalizeSandboxSettings(get: (key: SandboxSettingKey) => unknown): { settings: SandboxSettings; problems: string[] } {
  const problems: string[] = [];
  const d = SANDBOX_SETTING_DEFAULTS;
  const bad = (key: string, v: unknown, want: string, used: unknown) =>
    problems.push(`setting bulwark.${key} must be ${want} (got ${JSON.stringify(v)}); using ${JSON.stringify(used)}`);
  const listOf = (key: SandboxSettingKey): unknown[] => {
    const v = get(key);
    if (v === undefined) return [];
    if (Array.isArray(v)) return v;
    bad(key, v, 'a list', []);
    return [];
  };

  const u = get('sandbox.unsandboxed');
  let unsandboxed = d.unsandboxed;
  if (u === 'refuse' || u === 'tier3') unsandboxed = u;
  else if (u !== undefined) bad('sandbox.unsandboxed', u, '"refuse" or "tier3"', d.unsandboxed);

  const passEnvironment: string[] = [];
  for (const n of listOf('sandbox.passEnvironment')) {
    if (typeof n === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(n)) passEnvironment.push(n);
    else problems.push(`setting bulwark.sandbox.passEnvironment: ${JSON.stringify(n)} is not an environment variable name; left out`);
  }

  const allowedHosts: string[] = [];
  for (const h of listOf('sandbox.allowedHosts')) {
    try {
      parseAllowedHost(h as string);
      allowedHosts.push(h as string);
    } catch (e) {
      problems.push(`setting bulwark.sandbox.allowedHosts: ${(e as Error).message}; left out`);
    }
  }

  const t = get('sandbox.timeoutSeconds');
  let timeoutSeconds = d.timeoutSeconds;
  if (typeof t === 'number' && t > 0 && t <= MAX_TIMEOUT_SECONDS) timeoutSeconds = t;
  else if (t !== undefined)
    bad('sandbox.timeoutSeconds', t, `a number of seconds above 0 and at most ${MAX_TIMEOUT_SECONDS}`, d.timeoutSeconds);

  return { settings: { unsandboxed, passEnvironment, allowedHosts, timeoutSeconds }, problems };
}

// ---- output ----------------------------------------------------------------------------------------

/** Text kept up to a byte limit (UTF-8), cut on a character boundary; says whether anything was cut. */
export class CappedText {
  private parts: string[] = [];
  private kept = 0;
  private cut = false;
  /** Bytes seen in all (kept or not). */
  seen = 0;
  constructor(private readonly limitBytes: number) {}
  add(text: string): void {
    const bytes = Buffer.byteLength(text);
    this.seen += bytes;
    if (this.cut) return;
    if (this.kept + bytes <= this.limitBytes) {
      this.parts.push(text);
      this.kept += bytes;
      return;
    }
    const room = this.limitBytes - this.kept;
    // Cut at `room` bytes without splitting a character (a partial UTF-8 sequence decodes to U+FFFD: drop it).
    const head = Buffer.from(text)
      .subarray(0, room)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    this.parts.push(head);
    this.kept += Buffer.byteLength(head);
    this.cut = true;
  }
  /** Also cut when the helper dropped characters beyond its limit. */
  markCut(): void {
    this.cut = true;
  }
  get text(): string {
    return this.parts.join('');
  }
  get truncated(): boolean {
    return this.cut;
  }
}

export interface OutputSafety {
  readonly action: ContentAction;
  readonly findings: readonly { readonly category: string; readonly rule: string; readonly severity: string }[];
}

/**
 * One output stream for the model: inspected as untrusted text entering a prompt; text the inspection
 * blocks or holds for approval is replaced by the withheld notice, anything else is wrapped in an
 * untrusted-content block. An inspection that fails withholds the text.
 */
export function streamForPrompt(text: string, source: string): { text: string; withheld: boolean; safety: OutputSafety } {
  if (text === '') return { text: '', withheld: false, safety: { action: 'allow', findings: [] } };
  try {
    const t = transformForPrompt(text, source, 'untrusted');
    return {
      text: t.text,
      withheld: t.withheld,
      safety: {
        action: t.result.action,
        findings: t.result.findings.map((f) => ({ category: f.category, rule: f.rule, severity: f.severity })),
      },
    };
  } catch (e) {
    return {
      text: `[Bulwark withheld this output: it could not be inspected (${errorMessage(e)})]`,
      withheld: true,
      safety: { action: 'block', findings: [{ category: 'inspection', rule: 'run.inspection_failed', severity: 'high' }] },
    };
  }
}

// ---- running without a sandbox (tier3, approved) ----------------------------------------------------

/**
 * Runs a command with no OS sandbox (only after the user approved exactly this one): the allow-listed
 * environment, redacted output, and the whole process group killed on timeout or cancellation.
 */
export function runUnsandboxed(
  req: { command: readonly string[]; cwd: string; env: Readonly<Record<string, string>>; timeoutMs: number },
  out: SandboxOutput,
  signal?: AbortSignal,
): Promise<SandboxRunResult> {
  const started = Date.now();
  const base = { violations: [], network: [], mechanism: 'none' as const };
  let child;
  try {
    child = spawn(req.command[0]!, req.command.slice(1), {
      cwd: req.cwd,
      env: { ...req.env, PWD: req.cwd },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
  } catch (e) {
    return Promise.resolve({
      ...base,
      status: 'sandbox_failed',
      exitCode: null,
      error: `the command could not be started: ${errorMessage(e)}`,
      durationMs: Date.now() - started,
    });
  }
  return superviseChild(child, out, req.timeoutMs, signal).then((end) => ({
    ...base,
    ...end,
    durationMs: Date.now() - started,
    ...(end.status === 'sandbox_failed' ? { error: `the command could not be started: ${end.error}` } : {}),
  }));
}

// ---- the tool ----------------------------------------------------------------------------------------

export interface RunCommandDecision {
  readonly decision: 'allow' | 'block' | 'escalate';
  readonly tier: number;
  readonly rules: readonly string[];
  readonly reason: string;
  /** Protected files the decision allowed the command on the condition that the sandbox hides them. */
  readonly sandboxHides?: readonly RequiredHide[];
}

export interface UnsandboxedApprovalRequest {
  readonly command: string;
  readonly cwd: string;
  /** Why there is no sandbox, and how to get one. */
  readonly reason: string;
  readonly fix?: string;
}

export interface RunCommandDeps {
  /** Absolute workspace folders: the command may write only below them, and its cwd must be inside one. */
  readonly workspaceRoots: readonly string[];
  readonly settings: SandboxSettings;
  /** The environment the command's allow-listed environment is taken from. */
  readonly hostEnv: NodeJS.ProcessEnv;
  readonly sessionId: string;
  /** The engine's decision, recorded in the audit log; `executed()` records what the command read (IFC) and throws when it cannot. */
  decide(action: {
    id: string;
    type: string;
    payload: Record<string, unknown>;
    sessionId: string;
    cwd?: string;
    sandboxed?: boolean;
  }): Promise<{ result: RunCommandDecision; executed: () => Promise<void> }>;
  /** The engine's sandbox plan for these writable roots (throws SandboxPlanError when a root is protected). */
  sandboxPlan(writableRoots: readonly string[]): Promise<SandboxPlan>;
  probe(): Promise<SandboxStatus>;
  /** Asks the user to run this one command without a sandbox; resolves true only on an explicit yes. */
  approveUnsandboxed(request: UnsandboxedApprovalRequest): Promise<boolean>;
  readonly helper: Pick<SandboxHelperClient, 'run'>;
  /** Appends to the audit log; throws when it cannot. */
  record(event: AuditEventInput): Promise<void>;
  readonly newId: () => string;
}

export interface RunCommandRefusal {
  readonly ok: false;
  readonly rules: readonly string[];
  readonly reason: string;
  readonly [k: string]: unknown;
}
export type RunCommandAnswer = Record<string, unknown> & { readonly ok: boolean };

interface ParsedInput {
  readonly command: string;
  readonly cwd: string | undefined;
  readonly timeoutSeconds: number;
}

const isRefusal = (x: unknown): x is RunCommandRefusal => typeof x === 'object' && x !== null && (x as { ok?: unknown }).ok === false;
const refusal = (rule: string | readonly string[], reason: string, extra: Record<string, unknown> = {}): RunCommandRefusal => ({
  ok: false,
  rules: typeof rule === 'string' ? [rule] : [...rule],
  reason,
  ...extra,
});

/** The input's own shape (the engine decides what the command does). */
function parseInput(input: unknown, roots: readonly string[], settings: SandboxSettings): ParsedInput | RunCommandRefusal {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return refusal('run.input_invalid', 'Refused: the input must be an object { command, cwd?, timeout_seconds? }.');
  const i = input as Record<string, unknown>;
  if (typeof i.command !== 'string' || i.command.trim() === '')
    return refusal('run.input_invalid', 'Refused: `command` must be a non-empty bash command line.');
  if (i.command.length > MAX_COMMAND_CHARS || i.command.includes('\0'))
    return refusal('run.input_invalid', `Refused: \`command\` must be at most ${MAX_COMMAND_CHARS} characters and hold no NUL character.`);
  if (i.cwd !== undefined && (typeof i.cwd !== 'string' || !path.isAbsolute(i.cwd)))
    return refusal(
      'run.input_invalid',
      'Refused: `cwd` must be an absolute path inside a workspace folder (or left out: the first workspace folder).',
    );
  let timeoutSeconds = settings.timeoutSeconds;
  if (i.timeout_seconds !== undefined) {
    if (typeof i.timeout_seconds !== 'number' || !(i.timeout_seconds > 0) || i.timeout_seconds > MAX_TIMEOUT_SECONDS) {
      return refusal('run.input_invalid', `Refused: \`timeout_seconds\` must be a number above 0 and at most ${MAX_TIMEOUT_SECONDS}.`);
    }
    timeoutSeconds = i.timeout_seconds;
  }
  return { command: i.command, cwd: (i.cwd as string | undefined) ?? roots[0], timeoutSeconds };
}

/** The cwd, symlinks resolved, when it is a directory inside a workspace folder. */
function resolveCwd(cwd: string | undefined, roots: readonly string[]): string | RunCommandRefusal {
  if (roots.length === 0)
    return refusal(
      'run.no_workspace',
      'Refused: commands run only inside an open workspace folder, and none is open. Open a folder and try again.',
    );
  if (cwd === undefined) return refusal('run.input_invalid', 'Refused: no working directory.');
  let real: string;
  try {
    real = fs.realpathSync(cwd);
  } catch (e) {
    return refusal('run.cwd_invalid', `Refused: the working directory ${cwd} cannot be resolved (${errorMessage(e)}).`);
  }
  if (!fs.statSync(real).isDirectory()) return refusal('run.cwd_invalid', `Refused: the working directory ${cwd} is not a directory.`);
  const realRoots = roots.map((r) => {
    try {
      return fs.realpathSync(r);
    } catch {
      return r;
    }
  });
  const inside = (root: string) => {
    const rel = path.relative(root, real);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  };
  if (!realRoots.some(inside)) {
    return refusal(
      'run.cwd_outside_workspace',
      `Refused: the working directory ${real} is outside the workspace folders (${realRoots.join(', ')}); give a cwd inside one of them.`,
    );
  }
  return real;
}

/** The answer to one tool call: decided, then run in the OS sandbox (or, approved one by one, without), then reported. */
export async function runCommandTool(input: unknown, deps: RunCommandDeps, signal?: AbortSignal): Promise<RunCommandAnswer> {
  const id = deps.newId();
  const parsed = parseInput(input, deps.workspaceRoots, deps.settings);
  const raw = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  // The engine sees every call, a malformed one too (it is recorded and blocked there).
  const command = isRefusal(parsed) ? raw.command : parsed.command;
  const cwd = isRefusal(parsed) ? (typeof raw.cwd === 'string' ? raw.cwd : deps.workspaceRoots[0]) : parsed.cwd;
  // Asked first: a command that will run inside the OS sandbox is judged as such (the project's own
  // tests and builds run without anyone asked there; outside it they need a review).
  let status: SandboxStatus;
  try {
    status = await deps.probe();
  } catch (e) {
    status = { available: false, mechanism: 'none', reason: `the sandbox check failed (${errorMessage(e)})`, enforces: [] };
  }
  const { result: decision, executed } = await deps.decide({
    id,
    type: RUN_COMMAND_ACTION,
    payload: { command, cwd },
    sessionId: deps.sessionId,
    ...(cwd ? { cwd } : {}),
    ...(status.available ? { sandboxed: true } : {}),
  });
  if (decision.decision !== 'allow') {
    return refusal(
      decision.rules.length ? decision.rules : ['engine.refused'],
      `Bulwark did not allow this command (nothing ran): ${decision.reason}`,
      { decision: decision.decision, tier: decision.tier },
    );
  }
  const failed = (r: RunCommandRefusal, details: Record<string, unknown> = {}) => recordRefusal(deps, id, { command, cwd }, r, details);
  if (isRefusal(parsed)) return failed(parsed);
  const realCwd = resolveCwd(parsed.cwd, deps.workspaceRoots);
  if (isRefusal(realCwd)) return failed(realCwd);
  const bash = findOnPath('bash');
  if (!bash) return failed(refusal('run.no_shell', 'Refused: bash is not installed, and commands are bash lines. Install bash.'));
  if (signal?.aborted) return failed(refusal('run.cancelled', 'Refused: the call was cancelled before the command started; nothing ran.'));

  const { env, withheld } = sandboxEnvironment(deps.hostEnv, deps.settings.passEnvironment);
  // Electron's "act as Node" switch (the extension host has it) is never the command's, whatever the settings name.
  delete env.ELECTRON_RUN_AS_NODE;
  const run: CommandRun = {
    argv: [bash, '-c', parsed.command],
    cwd: realCwd,
    env,
    timeoutMs: Math.round(parsed.timeoutSeconds * 1000),
    stdout: new CappedText(RUN_OUTPUT_LIMIT_BYTES),
    stderr: new CappedText(RUN_OUTPUT_LIMIT_BYTES),
  };
  const ran = status.available
    ? await runSandboxed(deps, run, status, decision.sandboxHides ?? [], signal)
    : await runWithoutSandbox(deps, run, parsed.command, status, signal);
  if ('refused' in ran) return failed(ran.refused, ran.details);
  if (ran.result.status === 'sandbox_failed') {
    const r = ran.result;
    const rule = (r as HelperRunResult).helperRule ?? 'sandbox.failed';
    return failed(
      refusal(
        rule,
        `Refused: the sandbox could not run the command, so it did not run: ${r.error ?? 'unknown error'}${r.fix ? `. To fix: ${r.fix}` : ''}.`,
      ),
      { mechanism: r.mechanism },
    );
  }
  return reportRun(deps, id, run, ran, { command: parsed.command, timeoutSeconds: parsed.timeoutSeconds, withheld, executed });
}

/** One command ready to run: its argv, where, with what environment, for how long, and where its output goes. */
interface CommandRun {
  readonly argv: string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly timeoutMs: number;
  readonly stdout: CappedText;
  readonly stderr: CappedText;
}

/** What running gave: the result (and the plan or the unsandboxed approval), or a refusal before anything ran. */
type Ran =
  | { readonly result: HelperRunResult | SandboxRunResult; readonly plan?: SandboxPlan; readonly unsandboxed?: Record<string, unknown> }
  | { readonly refused: RunCommandRefusal; readonly details: Record<string, unknown> };

/** A refusal after the decision, recorded in the audit log (an unrecordable one says so). */
async function recordRefusal(
  deps: RunCommandDeps,
  id: string,
  call: { command: unknown; cwd: unknown },
  r: RunCommandRefusal,
  details: Record<string, unknown>,
): Promise<RunCommandAnswer> {
  try {
    await deps.record(
      executionEvent(
        { id, sessionId: deps.sessionId },
        { actionType: RUN_COMMAND_ACTION, ok: false, error: r.reason, details: { ...call, rules: [...r.rules], ...details } },
      ),
    );
  } catch (e) {
    return { ...r, audit_error: `the refusal could not be written to the audit log (${errorMessage(e)})` };
  }
  return r;
}

/** In the OS sandbox, planned from the engine's tables; what the decision relied on it hiding is hidden by name. */
async function runSandboxed(
  deps: RunCommandDeps,
  run: CommandRun,
  status: SandboxStatus,
  hides: readonly RequiredHide[],
  signal: AbortSignal | undefined,
): Promise<Ran> {
  let plan: SandboxPlan;
  try {
    plan = withRequiredHides(await deps.sandboxPlan(deps.workspaceRoots), hides, nodeFileSystem, currentPlatform());
  } catch (e) {
    const rule = e instanceof SandboxPlanError ? 'sandbox.plan_refused' : 'sandbox.plan_failed';
    return {
      refused: refusal(rule, `Refused: the sandbox could not be planned (${errorMessage(e)}); nothing ran.`),
      details: { mechanism: status.mechanism },
    };
  }
  const result = await deps.helper.run(
    {
      command: run.argv,
      cwd: run.cwd,
      plan,
      env: run.env,
      timeoutMs: run.timeoutMs,
      allowHosts: [...deps.settings.allowedHosts],
      outputLimit: RUN_OUTPUT_LIMIT_BYTES + 1,
    },
    { stdout: (t) => run.stdout.add(t), stderr: (t) => run.stderr.add(t) },
    signal,
  );
  if (result.dropped?.stdout) run.stdout.markCut();
  if (result.dropped?.stderr) run.stderr.markCut();
  return { result, plan };
}

/** No OS sandbox: refused, unless the user chose to approve such commands one by one and approves this one. */
async function runWithoutSandbox(
  deps: RunCommandDeps,
  run: CommandRun,
  command: string,
  status: SandboxStatus,
  signal: AbortSignal | undefined,
): Promise<Ran> {
  const why = `${status.reason ?? 'no OS sandbox'}${status.fix ? `. To fix: ${status.fix}` : ''}`;
  if (deps.settings.unsandboxed !== 'tier3') {
    return {
      refused: refusal(
        'sandbox.unavailable',
        `Refused: Bulwark runs commands only inside an OS sandbox, and there is none here: ${why}. Nothing ran. (The user can set bulwark.sandbox.unsandboxed to "tier3" to approve commands one by one without a sandbox.)`,
      ),
      details: { mechanism: status.mechanism },
    };
  }
  let approved = false;
  try {
    approved = await deps.approveUnsandboxed({ command, cwd: run.cwd, reason: status.reason ?? 'no OS sandbox', fix: status.fix });
  } catch {
    approved = false;
  }
  if (!approved)
    return {
      refused: refusal(
        'sandbox.unsandboxed_denied',
        `Refused: there is no OS sandbox (${why}) and the user did not approve running this command without one; nothing ran.`,
      ),
      details: { mechanism: 'none' },
    };
  const result = await runUnsandboxed(
    { command: run.argv, cwd: run.cwd, env: run.env, timeoutMs: run.timeoutMs },
    { stdout: (t) => run.stdout.add(t), stderr: (t) => run.stderr.add(t) },
    signal,
  );
  return { result, unsandboxed: { approved_by: 'user', why_no_sandbox: status.reason ?? 'no OS sandbox' } };
}

/**
 * After it ran: what it read taints the session (IFC), the run is written to the audit log, and its output is
 * handed out inspected; if the IFC state or the audit entry cannot be written, the output is withheld.
 */
async function reportRun(
  deps: RunCommandDeps,
  id: string,
  run: CommandRun,
  ran: Exclude<Ran, { refused: RunCommandRefusal }>,
  call: { command: string; timeoutSeconds: number; withheld: readonly string[]; executed: () => Promise<void> },
): Promise<RunCommandAnswer> {
  const { result, plan, unsandboxed } = ran;
  const { stdout, stderr } = run;
  let ifcError: string | undefined;
  try {
    await call.executed();
  } catch (e) {
    ifcError = errorMessage(e);
  }

  const out = streamForPrompt(stdout.text, 'bulwark_run_command stdout');
  const err = streamForPrompt(stderr.text, 'bulwark_run_command stderr');
  const refused = result.network.filter((d) => !d.allowed);
  const sandbox = {
    mechanism: result.mechanism,
    refused_connections: refused.map((d) => ({ host: d.host, port: d.port, rule: d.rule, reason: d.reason })),
    violations: result.violations.map((v) => ({ path: v.path, rule: v.ruleId, what: v.what })),
    ...(plan?.incomplete.length ? { incomplete: [...plan.incomplete] } : {}),
    ...(unsandboxed ? { unsandboxed: true } : {}),
  };
  const ranToEnd = result.status === 'exited';
  const why =
    result.status === 'timed_out'
      ? `the command was killed after ${call.timeoutSeconds} s (its timeout), with everything it started`
      : result.status === 'cancelled'
        ? 'the call was cancelled; the command and everything it started were killed'
        : result.status === 'signaled'
          ? `the command was ended by ${result.signal}`
          : undefined;
  const details = {
    command: call.command,
    cwd: run.cwd,
    status: result.status,
    exit_code: result.exitCode,
    ...(result.signal ? { signal: result.signal } : {}),
    mechanism: result.mechanism,
    ...(unsandboxed ? { unsandboxed } : {}),
    refused_connections: refused.map((d) => ({ host: d.host, port: d.port, rule: d.rule })),
    allowed_connections: result.network.filter((d) => d.allowed).map((d) => ({ host: d.host, port: d.port, entry: d.entry ?? null })),
    violations: result.violations.map((v) => ({ path: v.path, rule: v.ruleId })),
    stdout_bytes: stdout.seen,
    stderr_bytes: stderr.seen,
    truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
    output_safety: { stdout: out.safety.action, stderr: err.safety.action },
    output_rules: [...new Set([...out.safety.findings, ...err.safety.findings].map((f) => f.rule))],
    environment_withheld: call.withheld,
    ...(ifcError ? { ifc_error: ifcError } : {}),
  };
  let auditError: string | undefined;
  try {
    await deps.record(
      executionEvent(
        { id, sessionId: deps.sessionId },
        { actionType: RUN_COMMAND_ACTION, ok: ranToEnd, durationMs: result.durationMs, details, ...(why ? { error: why } : {}) },
      ),
    );
  } catch (e) {
    auditError = errorMessage(e);
  }
  if (ifcError || auditError) {
    // The command ran, but what it printed is not handed out unrecorded.
    const what = ifcError
      ? `the session's data-flow state could not be recorded (${ifcError})`
      : `the audit log could not be written (${auditError})`;
    return refusal(
      ifcError ? 'ifc.record_failed' : 'audit.write_failed',
      `The command ran (status ${result.status}${result.exitCode !== null ? `, exit code ${result.exitCode}` : ''}), but ${what}, so its output is withheld.`,
      { status: result.status, exit_code: result.exitCode, sandbox },
    );
  }
  return {
    ok: ranToEnd && result.exitCode === 0,
    status: result.status,
    exit_code: result.exitCode,
    ...(result.signal ? { signal: result.signal } : {}),
    ...(why ? { reason: why } : {}),
    stdout: out.text,
    stderr: err.text,
    truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
    ...(out.withheld || err.withheld ? { withheld: [...(out.withheld ? ['stdout'] : []), ...(err.withheld ? ['stderr'] : [])] } : {}),
    content_safety: { stdout: out.safety, stderr: err.safety },
    duration_ms: result.durationMs,
    sandbox,
  };
}

/** The dialog text for running one command without a sandbox. */
export function unsandboxedApprovalText(r: UnsandboxedApprovalRequest): { title: string; detail: string } {
  return {
    title: 'Bulwark: run this command WITHOUT a sandbox?',
    detail: [
      `There is no OS sandbox here: ${r.reason}.`,
      r.fix ? `To get one: ${r.fix}.` : '',
      "Without it the command can read every file you can (SSH keys, tokens), write anywhere you can, and reach the network. Bulwark's engine allowed it, and its output is still redacted, but nothing contains what it does.",
      `Command and working directory (secrets redacted):\n${redactedArguments({ command: r.command, cwd: r.cwd })}`,
      'Approve only if you would run this command yourself. No answer denies.',
    ]
      .filter(Boolean)
      .join('\n\n'),
  };
}
