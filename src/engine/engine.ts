// The engine facade: one `check()` per proposed action, the same for the extension, the CLI and
// the hook bridge. Pure: every effect (file system, DNS, shell grammar) comes in through ports.
import type { ActionRequest, Decision, Platform, ProtectionLevel, Reason, Tier } from './types';
import { SYSTEM_CLOCK, type ClockPort, type FileFacts, type FileSystemPort } from './ports';
import { PathError, matchKey, normalizePath, resolveActionPath } from './paths';
import { planSandbox, type SandboxPlan } from './sandbox/plan';
import { Boundary, judgeEffects } from './effects';
import { builtinTables, compileTables, strongestRule, type CompiledRule } from './protection/tables';
import {
  PAYLOAD_UNCLEAR_RULE,
  checkProtection,
  patternPath,
  type PathFinding,
  type PathTouch,
  type ProtectionResult,
} from './protection/check';
import { FileFactsCache } from './protection/file-facts';
import { actionSpec, isKnownActionType } from './actions';
import { payloadTargetsOf } from './payload';
import { ENVIRONMENT_PSEUDO_PATH, analyzeShell, type ShellAnalysis, type ShellParser } from './shell/analyze';
import { checkResolvedAddresses, checkUrlSyntax, type SsrfPolicy } from './ssrf';
import { levelRank } from './types';
import { runShield, type ShieldParts } from './shield/pipeline';
import { invisibleTextCopiedIntoInstructions, invisibleTextInInstructionWrite } from './content/instruction-files';
import { memoryWriteCheck, writesMemory } from './content/memory';
import { evaluateHeuristics, loadHeuristicRules } from './heuristics';
import type { TierVerdict } from './shield/types';
import { REDACTION_FAILED_RULE } from './audit/redact';
import { reasonOf, renderDecision, sentenceOf, type DecisionDraft, type ReasonText } from './reasons';
import type { SecretRuleSet } from './secrets';
import type { IfcDecision } from './ifc';
import { errorMessage } from './error-message';

export interface EngineOptions {
  readonly platform: Platform;
  readonly home: string;
  readonly workspaceRoots: readonly string[];
  /** Bulwark's own state wherever it lives: full_block to agents. */
  readonly selfPaths?: readonly string[];
  readonly fs: FileSystemPort;
  /** Needed for `execute_command`; without it every command is blocked (fail closed). */
  readonly shellParser?: ShellParser;
  /** DNS for the SSRF check; without it host names are checked by name only and the decision says so. */
  readonly resolveHost?: (host: string) => Promise<string[]>;
  readonly ssrfPolicy?: SsrfPolicy;
  /** The Shield tiers and IFC. Without them the engine makes protection-only decisions (no policy, no models). */
  readonly shield?: ShieldParts;
  /** The workspace boundary beyond the workspace folders: more roots reads may come from without anyone asked. */
  readonly boundary?: { readonly extraReadRoots?: readonly string[] };
  /** Secret rules every text of a decision is redacted with before it leaves the engine (default: the bundled rules). */
  readonly secretRules?: SecretRuleSet;
  /** The time now, for what depends on it (the age of a file: `find -mtime +30 -delete`). Default: the host's clock. */
  readonly clock?: ClockPort;
}

/** A decision with the caller's correlation id. */
export interface CheckResult extends Decision {
  readonly id?: string;
  readonly confidence?: number;
  /** Every tier's verdict, in order (Shield mode). */
  readonly trail?: readonly TierVerdict[];
  /** The IFC decision; pass the result to `Engine.recordExecuted` once the action has run. */
  readonly ifc?: IfcDecision;
  readonly sessionId?: string;
  /**
   * Fully blocked files a search of this sandboxed command would read, which the OS sandbox must hide for the
   * allow to hold (`bulwark exec --hide`, the run tool's plan). Only on a sandboxed execute_command.
   */
  readonly sandboxHides?: readonly { readonly path: string; readonly ruleId: string }[];
}

export interface PathExplanation {
  readonly path: string;
  readonly level: ProtectionLevel;
  readonly rule?: string;
  readonly reason: string;
}

export class Engine {
  private readonly rules: CompiledRule[];
  private readonly ssrfPolicy: SsrfPolicy;
  /** Content and hard-link facts of files by identity, kept across this engine's decisions. */
  private readonly fileFacts = new FileFactsCache();

  private readonly boundary: Boundary;

  constructor(private readonly opts: EngineOptions) {
    this.rules = compileTables(builtinTables(), opts);
    this.boundary = new Boundary({
      platform: opts.platform,
      home: opts.home,
      workspaceRoots: opts.workspaceRoots,
      extraReadRoots: opts.boundary?.extraReadRoots,
    });
    this.ssrfPolicy = opts.ssrfPolicy ?? { allowLoopbackPorts: [] };
  }

  /**
   * Decides one action. Never throws: any error on the way is a block that says what failed. Every
   * text of the result is redacted here, the one way out of the engine: a reason that quotes the
   * payload (a heuristic's match, a URL, an error) never carries a secret to the agent, the user or
   * the audit log.
   */
  async check(action: ActionRequest): Promise<CheckResult> {
    let draft: Draft;
    try {
      draft = { id: action.id, sessionId: action.sessionId, ...(await this.decide(action)) };
    } catch (e) {
      draft = {
        id: action.id,
        ...block([reasonOf('engine.error', 0, 'error', `the check itself failed (${errorMessage(e)}), so the action cannot be allowed`)]),
      };
    }
    try {
      return renderDecision(draft, this.opts.secretRules);
    } catch (e) {
      // Not redacted: the redaction itself failed, and this text holds only its error.
      const failed = block([
        reasonOf(
          REDACTION_FAILED_RULE,
          0,
          'error',
          `the decision's reason could not be cleared of secrets (${errorMessage(e)}), so it is not shown and the action cannot be allowed`,
        ),
      ]);
      return {
        id: action.id,
        sessionId: action.sessionId,
        decision: 'block',
        tier: 0,
        minTier: 0,
        level: draft.level,
        rules: [REDACTION_FAILED_RULE],
        reasons: failed.reasons,
        reason: sentenceOf(failed.text),
      };
    }
  }

  /**
   * Records that an allowed action has run: what it read now taints its session (IFC). A store
   * failure is reported to the caller, who must treat the session as unsafe.
   */
  recordExecuted(result: CheckResult): void {
    if (result.decision === 'allow' && result.ifc && result.sessionId && this.opts.shield?.ifc) {
      this.opts.shield.ifc.commitRead(result.sessionId, result.ifc.readTaint);
    }
  }

  /** Shell analysis with the engine's grammar; throws if no grammar was provided. */
  analyzeCommand(command: string, cwd?: string): ShellAnalysis {
    if (!this.opts.shellParser) throw new Error('the shell grammar is not loaded');
    return analyzeShell(this.opts.shellParser, command, {
      cwd,
      home: this.opts.home,
      platform: this.opts.platform,
      fs: this.opts.fs,
      clock: this.opts.clock ?? SYSTEM_CLOCK,
    });
  }

  /** The protection level of one file, independent of any action (for "Explain Protection"). */
  /**
   * What an OS sandbox must hide and keep read-only for a command that may write only below
   * `writableRoots`: the same tables this engine decides with. Throws SandboxPlanError when a writable
   * root is itself protected.
   */
  sandboxPlan(writableRoots: readonly string[]): SandboxPlan {
    return planSandbox({ rules: this.rules, fs: this.opts.fs, platform: this.opts.platform, writableRoots, home: this.opts.home });
  }

  explainPath(path: string): PathExplanation {
    let normalized: string;
    try {
      normalized = resolveActionPath(path, { home: this.opts.home, platform: this.opts.platform });
    } catch (e) {
      return { path, level: 'unprotected', rule: 'path.invalid', reason: e instanceof PathError ? e.message : String(e) };
    }
    const candidates = [normalized];
    const physical = this.opts.fs.resolvePhysical(normalized);
    if (physical) candidates.push(normalizePath(physical, this.opts.platform));
    let best: CompiledRule | undefined;
    for (const c of candidates) {
      const m = strongestRule(this.rules, matchKey(c, this.opts.platform));
      if (m && (!best || levelRank(m.rule.level) > levelRank(best.rule.level))) best = m;
    }
    if (!best)
      return {
        path: normalized,
        level: 'unprotected',
        reason: 'no protection rule applies; Shield policy decides what agents may do with it',
      };
    return { path: normalized, level: best.rule.level, rule: best.rule.id, reason: best.rule.reason };
  }

  /** The paths read whose whole content protection found to be public material (certificates, public keys), as IFC sees reads. */
  private publicMaterialRead(findings: readonly PathFinding[], cwd: string | undefined): string[] {
    const o = this.opts;
    return findings
      .filter((f) => f.publicMaterial === true && f.access === 'read')
      .flatMap((f) => {
        try {
          return [resolveActionPath(f.path, { cwd, home: o.home, platform: o.platform })];
        } catch {
          return [];
        }
      });
  }

  /** The absolute paths an action reads or moves from (copy and move sources, a command's reads and removals). */
  private sourcesOf(touches: readonly PathTouch[], cwd: string | undefined): string[] {
    const o = this.opts;
    return touches
      .filter((t) => t.access === 'read' || t.access === 'delete')
      .flatMap((t) => {
        try {
          return [resolveActionPath(t.path, { cwd, home: o.home, platform: o.platform })];
        } catch {
          return [];
        }
      });
  }

  /**
   * One decision, step by step: what the payload and a command touch and reach, the protection check, the
   * content checks (invisible text in instruction files, memory writes), SSRF for every URL, then the Shield
   * (or, without one, the protection floor). Each step either stops with a block or adds to the floor.
   */
  private async decide(action: ActionRequest): Promise<Outcome> {
    validateAction(action);
    // One decision sees one snapshot of the file system: the same path is resolved, stated and listed
    // once however many checks ask (a copy's source and destination, a search and its entries).
    const o = { ...this.opts, fs: memoizedFileSystem(this.opts.fs) };
    const targets = payloadTargetsOf(action, o.platform);
    const touches: PathTouch[] = targets.touches;
    const network: string[] = targets.urls.map((u) => u.url);
    const floor = payloadFloor(action, targets);

    let command: CommandFacts | undefined;
    if (action.type === 'execute_command') {
      const c = this.analyseCommand(action, o, touches, network, floor);
      if ('decision' in c) return c;
      command = c;
    }

    const protection = checkProtection(action.type, touches, {
      platform: o.platform,
      home: o.home,
      cwd: action.cwd,
      rules: this.rules,
      fs: o.fs,
      facts: this.fileFacts,
      ...(command?.sandboxed ? { sandboxHidesWithin: o.workspaceRoots } : {}),
    });
    const found = protectionReasons(protection);
    const level = { level: protection.level };
    if (!protection.allowed) return { ...block(found), minTier: protection.minTier, ...level };

    const content = this.checkContent(action, protection, touches, o, floor, found);
    if ('decision' in content) return content;

    const ssrf = await this.checkPayloadUrls(action, targets.urls);
    if (ssrf) return { ...block([ssrf]), ...level };

    const facts: DecisionFacts = { action, o, targets, touches, network, floor, protection, found, command };
    return o.shield ? this.shieldDecision(o.shield, facts, content.memoryTier1) : decisionWithoutShield(facts);
  }

  /**
   * execute_command: the command's analysis turned into path touches, network targets and floor reasons, or a
   * block (no command, no grammar, an address the SSRF policy refuses).
   */
  private analyseCommand(
    action: ActionRequest,
    o: EngineOptions,
    touches: PathTouch[],
    network: string[],
    floor: Floor,
  ): CommandFacts | Outcome {
    const command = action.payload.command;
    if (typeof command !== 'string' || command.length === 0)
      return block([reasonOf('action.invalid', 0, 'policy', 'execute_command needs a non-empty `command` string')]);
    if (!o.shellParser)
      return block([reasonOf('shell.unavailable', 0, 'error', 'the shell grammar could not be loaded, so the command cannot be analysed')]);
    const a = analyzeShell(o.shellParser, command, {
      cwd: action.cwd,
      home: o.home,
      platform: o.platform,
      fs: o.fs,
      clock: o.clock ?? SYSTEM_CLOCK,
    });
    const sandboxed = action.sandboxed === true;
    // Inside the OS sandbox a command's environment is an allow-list with every secret withheld: printing
    // it (`printenv`, `env`, `ps e`) reads nothing protected. Another process's environ file stays a read.
    const sandboxedEnvironment = sandboxed && a.printsEnvironment && !a.environmentByPath;
    for (const p of a.reads)
      if (!(sandboxedEnvironment && p === ENVIRONMENT_PSEUDO_PATH)) touches.push({ path: p, access: 'read', source: 'command' });
    for (const p of a.writes) touches.push({ path: p, access: 'write', source: 'command' });
    for (const p of a.deletes) touches.push({ path: p, access: 'delete', source: 'command' });
    for (const g of a.globs) touches.push({ path: g.dir, access: g.access, source: 'command', pattern: g.pattern, depth: g.depth });
    for (const s of a.searches)
      touches.push({
        path: s.path,
        access: 'read',
        source: 'command',
        below: s.mode,
        ...(s.names ? { belowNames: s.names } : {}),
        ...(s.skipsHidden ? { belowSkipsHidden: true } : {}),
      });
    if (a.reviews.length) floor.raise(2, reasonOf('shell.review', 2, 'policy', `${a.reviews.join('; ')}, so it needs at least Tier 2`));
    if (a.approvals.length)
      floor.raise(3, reasonOf('shell.approval', 3, 'policy', `${a.approvals.join('; ')}, so it needs your approval (Tier 3)`));
    if (a.opaque) {
      const why = a.opaqueReasons.join('; ') || 'its effects cannot be known statically';
      floor.raise(2, reasonOf('shell.opaque', 2, 'policy', `the command is opaque (${why}), so it needs at least Tier 2`));
    }
    // Listening servers are not addresses to SSRF-check, but data leaves through them (IFC).
    network.push(...a.urls, ...a.sinks);
    const logins = new Set(a.logins);
    for (const url of a.urls) {
      let v = checkUrlSyntax(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`, this.ssrfPolicy);
      // Another scheme a command speaks (gopher, dict, ftp, ldap, ssh, git…) reaches a host all the same:
      // the host is checked as an address (`curl gopher://127.0.0.1:6379/_INFO` talks to Redis).
      if (v.rule === 'ssrf.scheme') v = checkUrlSyntax(url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, 'http://'), this.ssrfPolicy);
      if (v.allowed || v.rule === 'ssrf.scheme' || v.rule === 'ssrf.bad_url') continue;
      // Logging in to a machine on a private network (ssh, scp, rsync) is ordinary work that needs
      // credentials, not a request smuggled to an internal service: a review, not a block.
      if (logins.has(url) && (v.rule === 'ssrf.range.private' || v.rule === 'ssrf.range.cgnat')) {
        floor.raise(
          2,
          reasonOf(v.rule, 2, 'policy', `the command logs in to ${url}, on a private network (${v.reason}), so it needs at least Tier 2`),
        );
        continue;
      }
      return block([reasonOf(v.rule ?? 'ssrf', 0, 'policy', `the command reaches ${url}: ${v.reason}${loopbackHint(v.rule)}`)]);
    }
    return { analysis: a, sandboxed, sandboxedEnvironment };
  }

  /**
   * Content rules on what the action writes: invisible characters written or copied into an agent instruction
   * file are blocked before any policy or model (content/instruction-files.ts); a memory write is judged by its
   * content (content/memory.ts), like the heuristics: a block is Tier 1's, otherwise it needs Tier 3. Tier 1's
   * evaluation of a memory write is run once here and handed on to the Shield (a large note is normalised once).
   */
  private checkContent(
    action: ActionRequest,
    protection: ProtectionResult,
    touches: readonly PathTouch[],
    o: EngineOptions,
    floor: Floor,
    found: readonly Reason[],
  ): Outcome | { readonly memoryTier1?: ReturnType<typeof evaluateHeuristics> } {
    const blocked = { minTier: protection.minTier, level: protection.level };
    const hidden =
      invisibleTextInInstructionWrite(protection.findings, action.payload) ??
      invisibleTextCopiedIntoInstructions(protection.findings, () => this.sourcesOf(touches, action.cwd), o.fs);
    if (hidden) return { ...block(sentenceReasons(hidden.rules, 0, hidden.reason), found), ...blocked };
    const memoryTier1 = writesMemory(action.type, protection.findings)
      ? evaluateHeuristics(o.shield?.heuristics ?? loadHeuristicRules(), action.type, action.payload)
      : undefined;
    const memory = memoryWriteCheck(action.type, action.payload, protection.findings, {
      ...(o.shield ? { heuristics: o.shield.heuristics } : {}),
      ...(memoryTier1 ? { tier1: memoryTier1 } : {}),
    });
    if (memory?.verdict === 'block') return { ...block(sentenceReasons(memory.rules, 1, memory.reason), found), tier: 1, ...blocked };
    if (memory) floor.raise(3, ...sentenceReasons(memory.rules, 3, memory.reason));
    return memoryTier1 ? { memoryTier1 } : {};
  }

  /** SSRF for http_request's `url` and every other http(s) URL in the payload (a request the tool may make). */
  private async checkPayloadUrls(action: ActionRequest, urls: ReturnType<typeof payloadTargetsOf>['urls']): Promise<Reason | undefined> {
    if (action.type === 'http_request') {
      const ssrf = await this.checkRequestUrl(action.payload.url);
      if (ssrf) return ssrf;
    }
    for (const u of urls) {
      if (!u.http || (action.type === 'http_request' && u.field === 'url')) continue;
      const ssrf = await this.checkRequestUrl(u.url);
      if (ssrf) return { ...ssrf, message: `the payload field \`${u.field}\` names ${ssrf.message}` };
    }
    return undefined;
  }

  /** The Shield decides, given the effects of the action (judged against the workspace boundary) and the floor. */
  private async shieldDecision(
    shield: ShieldParts,
    f: DecisionFacts,
    memoryTier1: ReturnType<typeof evaluateHeuristics> | undefined,
  ): Promise<Outcome> {
    const { action, o, targets, protection } = f;
    // Each touch resolved once: the Shield gets the path (a glob as its pattern), effects the directory.
    let unresolved = 0;
    const resolved = f.touches.flatMap((t) => {
      try {
        const dir = resolveActionPath(t.path, { cwd: action.cwd, home: o.home, platform: o.platform });
        return [{ access: t.access, dir, path: t.pattern === undefined ? dir : patternPath(dir, t.pattern, t.depth) }];
      } catch {
        unresolved++;
        return [];
      }
    });
    const effects =
      unresolved === 0 && !targets.unclear.length && isKnownActionType(action.type)
        ? judgeEffects(
            {
              type: action.type,
              cwd: action.cwd,
              touches: resolved.map((r) => ({ path: r.dir, access: r.access })),
              protectionMinTier: protection.minTier,
              analysis: f.command?.analysis,
              network: f.network.length > 0,
              sandboxed: action.sandboxed === true,
              hiddenBySandbox: protection.sandboxHides.map((h) => h.path),
              environmentFromSandbox: f.command?.sandboxedEnvironment === true,
            },
            this.boundary,
          )
        : { class: 'unjudged' as const, judged: ['some of what it touches cannot be interpreted'] };
    const d = await runShield(shield, {
      effects,
      id: action.id ?? '',
      sessionId: action.sessionId,
      action: { type: action.type, payload: action.payload },
      paths: resolved.map((r) => r.path),
      reads: resolved.filter((r) => r.access === 'read').map((r) => r.path),
      writes: resolved.filter((r) => r.access !== 'read').map((r) => r.path),
      network: f.network,
      publicMaterial: this.publicMaterialRead(protection.findings, action.cwd),
      floor: Math.max(protection.minTier, f.floor.tier) as Tier,
      reasons: [...f.found, ...f.floor.reasons],
      floorReasons: floorExplained(f),
      ...(memoryTier1 ? { heuristics: memoryTier1 } : {}),
    });
    return {
      decision: d.decision,
      tier: d.tier,
      minTier: d.minTier,
      level: protection.level,
      reasons: d.reasons,
      text: d.text,
      confidence: d.confidence,
      trail: d.trail,
      ifc: d.ifc,
      ...sandboxHidesOf(protection),
    };
  }

  /** SSRF: scheme and literal checks, then every resolved address. The reason of a block, or undefined when allowed. */
  private async checkRequestUrl(url: unknown): Promise<Reason | undefined> {
    if (typeof url !== 'string' || url.length === 0) return reasonOf('action.invalid', 0, 'policy', 'http_request needs a `url` string');
    const v = checkUrlSyntax(url, this.ssrfPolicy);
    if (!v.allowed) return reasonOf(v.rule ?? 'ssrf', 0, 'policy', `${url}: ${v.reason}${loopbackHint(v.rule)}`);
    if (!v.needsResolution || !this.opts.resolveHost || !v.host) return undefined;
    let addresses: string[];
    try {
      addresses = await this.opts.resolveHost(v.host);
    } catch (e) {
      return reasonOf('ssrf.resolution_failed', 0, 'policy', `${url}: could not resolve ${v.host} (${errorMessage(e)})`);
    }
    const v2 = checkResolvedAddresses(v, addresses, this.ssrfPolicy);
    // (A loopback name here passed the port check but resolves elsewhere: no port would help.)
    if (!v2.allowed)
      return reasonOf(
        v2.rule ?? 'ssrf',
        0,
        'policy',
        `${url}: ${v2.reason}${v2.rule === 'ssrf.range.loopback' ? loopbackHint(v2.rule) : ''}`,
      );
    return undefined;
  }
}

/** What to do about a blocked loopback address: the one exception the SSRF policy can grant. */
function loopbackHint(rule: string | undefined): string {
  return rule === 'ssrf.name.loopback' || rule === 'ssrf.range.loopback'
    ? '. To let agents reach a server of yours on this machine, allow its port (allowLoopbackPorts: the bulwark.ssrf.allowLoopbackPorts setting, or --allow-loopback-port for the CLI)'
    : '';
}

/**
 * A port that answers each question once for the life of one decision. Only answers are kept (a
 * throwing port still throws); `readText` and `readHead` are keyed by their size bound too.
 */
function memoizedFileSystem(fs: FileSystemPort): FileSystemPort {
  const physical = new Map<string, string | undefined>();
  const stats = new Map<string, FileFacts | undefined>();
  const trees = new Map<string, ReturnType<FileSystemPort['listTree']>>();
  const texts = new Map<string, string | undefined>();
  const heads = new Map<string, Uint8Array | undefined>();
  const memo = <V>(m: Map<string, V>, key: string, get: () => V): V => {
    if (m.has(key)) return m.get(key) as V;
    const v = get();
    if (m.size < 10_000) m.set(key, v);
    return v;
  };
  return {
    resolvePhysical: (p) => memo(physical, p, () => fs.resolvePhysical(p)),
    listTree: (dir, limit) => memo(trees, `${limit}\0${dir}`, () => fs.listTree(dir, limit)),
    ...(fs.statFile ? { statFile: (p: string) => memo(stats, p, () => fs.statFile!(p)) } : {}),
    ...(fs.readText ? { readText: (p: string, max: number) => memo(texts, `${max}\0${p}`, () => fs.readText!(p, max)) } : {}),
    ...(fs.readHead ? { readHead: (p: string, max: number) => memo(heads, `${max}\0${p}`, () => fs.readHead!(p, max)) } : {}),
  };
}

/** Rule of the floor every action type outside the table gets (actions.ts, UNKNOWN_ACTION). */
export const UNKNOWN_TYPE_RULE = 'action_type.unknown';

const clip = (s: string): string => (s.length > 80 ? `${s.slice(0, 79)}…` : s);

/** A decision before it is put into words (reasons.ts renders and redacts it in Engine.check). */
type Draft = DecisionDraft<CheckResult>;

/** A Tier 0 block stated by its first reason; `carried` are the other rules that applied. */
function block(stated: readonly Reason[], carried: readonly Reason[] = []): Omit<Draft, 'id' | 'sessionId'> {
  return {
    decision: 'block',
    tier: 0,
    minTier: 0,
    level: 'unprotected',
    reasons: [...stated, ...carried],
    text: { lead: 'Blocked: ', stated: stated.slice(0, 1) },
  };
}

const NO_PROTECTION_RULE_APPLIES = 'No protection rule applies';

/** A decision of the engine's own (the caller's ids are added by Engine.check). */
type Outcome = Omit<Draft, 'id' | 'sessionId'>;

/** The minimum tier beyond protection and what raised it, in order, as the steps of a decision find reasons. */
class Floor {
  readonly reasons: Reason[] = [];
  constructor(public tier: Tier) {}

  /** Raises the floor to at least `tier`, explained by `reasons`. */
  raise(tier: Tier, ...reasons: Reason[]): void {
    this.tier = Math.max(this.tier, tier) as Tier;
    this.reasons.push(...reasons);
  }
}

/** What a command's analysis adds to the rest of its decision. */
interface CommandFacts {
  readonly analysis: ShellAnalysis;
  /** The command runs in the OS sandbox. */
  readonly sandboxed: boolean;
  /** It prints its own environment, which inside the sandbox holds no secret. */
  readonly sandboxedEnvironment: boolean;
}

/** Everything the last step (the Shield, or the protection floor) decides from. */
interface DecisionFacts {
  readonly action: ActionRequest;
  readonly o: EngineOptions;
  readonly targets: ReturnType<typeof payloadTargetsOf>;
  readonly touches: readonly PathTouch[];
  readonly network: readonly string[];
  readonly floor: Floor;
  readonly protection: ProtectionResult;
  /** The protection check's rules as reasons. */
  readonly found: readonly Reason[];
  readonly command?: CommandFacts;
}

/** The action type's own floor, raised to Tier 2 when the payload cannot be fully interpreted. */
function payloadFloor(action: ActionRequest, targets: ReturnType<typeof payloadTargetsOf>): Floor {
  const spec = actionSpec(action.type);
  const floor = new Floor(spec.floor);
  if (!isKnownActionType(action.type))
    floor.raise(
      spec.floor,
      reasonOf(UNKNOWN_TYPE_RULE, spec.floor, 'policy', `\`${clip(action.type)}\` is not an action type Bulwark knows: ${spec.why}`),
    );
  if (targets.unclear.length) {
    const parts = targets.unclear.slice(0, 3).map((u) => `\`${u.field || 'payload'}\` ${u.why}`);
    const more = targets.unclear.length > 3 ? `; and ${targets.unclear.length - 3} more` : '';
    floor.raise(
      2,
      reasonOf(
        PAYLOAD_UNCLEAR_RULE,
        2,
        'protection',
        `the payload cannot be fully interpreted (${parts.join('; ')}${more}), so a Tier 2 review decides`,
      ),
    );
  }
  return floor;
}

/** The protection rules that raised the minimum tier explain it (the first one is quoted), then the floor's reasons. */
function floorExplained(f: DecisionFacts): Reason[] {
  return [...(f.protection.minTier > 0 ? f.found.slice(0, 1) : []), ...f.floor.reasons];
}

function sandboxHidesOf(protection: ProtectionResult): { sandboxHides?: CheckResult['sandboxHides'] } {
  return protection.sandboxHides.length ? { sandboxHides: protection.sandboxHides } : {};
}

/** Without a Shield: allowed at Tier 0, or an escalation to the floor with what raised it. */
function decisionWithoutShield(f: DecisionFacts): Outcome {
  const { protection, found, floor, action } = f;
  const minTier = Math.max(protection.minTier, floor.tier) as Tier;
  if (minTier === 0) {
    const text: ReasonText = found.length
      ? { lead: 'Allowed: ', stated: found.slice(0, 1) }
      : { lead: NO_PROTECTION_RULE_APPLIES, stated: [] };
    return { decision: 'allow', tier: 0, minTier, level: protection.level, reasons: [...found], text, ...sandboxHidesOf(protection) };
  }
  // Nothing raised the tier but the action type's own floor: the type is the rule.
  const explained = floorExplained(f);
  const typeFloor = explained.length
    ? []
    : [reasonOf(`action_type.${action.type}`, floor.tier, 'policy', `${action.type} needs at least a Tier ${floor.tier} check`)];
  return {
    decision: 'escalate',
    tier: minTier,
    minTier,
    level: protection.level,
    reasons: [...found, ...floor.reasons, ...typeFloor],
    text: { lead: `Needs Tier ${minTier}: `, stated: [...explained, ...typeFloor] },
  };
}

/**
 * The protection check's rules as reasons, in its order, each with what its first finding of the
 * deciding kind says (a block's, a raised tier's, or a protected read's).
 */
function protectionReasons(p: ProtectionResult): Reason[] {
  const deciding = (f: PathFinding) =>
    !p.allowed ? f.effect.kind === 'block' : p.minTier > 0 ? f.effect.kind === 'min_tier' : f.level !== 'unprotected';
  const raises = (f: PathFinding) => (f.effect.kind === 'min_tier' ? f.effect.tier : 0);
  return p.rules.map((rule) => {
    // The first of the rule's findings that decided, the highest raise first (as the check orders them).
    const f = p.findings
      .filter((x) => x.ruleId === rule && deciding(x))
      .reduce<PathFinding | undefined>((best, x) => (!best || raises(x) > raises(best) ? x : best), undefined);
    const tier: Tier = f?.effect.kind === 'min_tier' ? f.effect.tier : 0;
    return reasonOf(
      rule,
      tier,
      'protection',
      !f ? rule : p.allowed && p.minTier === 0 ? `${f.message}; this action only reads it` : f.message,
    );
  });
}

/**
 * A check that states its reason as a whole sentence (`Blocked: …`: content and memory rules) as
 * reasons: every one of its rules says that sentence, without the lead the decision's text adds.
 */
function sentenceReasons(rules: readonly string[], tier: Tier, sentence: string): Reason[] {
  const message = sentence.replace(/^Blocked: /, '');
  return rules.map((rule) => reasonOf(rule, tier, 'policy', message));
}

/** Bad input is refused with a clear error before any rule runs. */
function validateAction(action: ActionRequest): void {
  if (typeof action !== 'object' || action === null) throw new Error('the action must be an object');
  if (typeof action.type !== 'string' || action.type.length === 0 || action.type.length > 200)
    throw new Error('the action needs a `type` string');
  if (typeof action.payload !== 'object' || action.payload === null || Array.isArray(action.payload))
    throw new Error('the action needs a `payload` object');
  if (action.cwd !== undefined && typeof action.cwd !== 'string') throw new Error('`cwd` must be a string');
}
