// The extension's Shield, assembled from its settings: Node side, no `vscode`. src/vscode reads the
// settings, SecretStorage and UI and hands them here; everything that decides what a setting means
// (defaults for bad values, which part fails closed how) lives in this file so it is unit-tested.
//
// Fail-closed rules for the parts:
//   - a policy file (user, workspace, IFC) that does not load → policy state `{ ok: false }`: every
//     non-read action blocks until it is fixed (reads go on to Tier 1);
//   - the built-in heuristics fail to load → policy state `{ ok: false }` too, and a classifier that
//     always throws, so reads block at Tier 1 as well;
//   - the state file is corrupt or unwritable → a store that throws: Tier 2, Tier 3 and IFC block;
//   - the canary cannot be read or created → the Tier 2 evaluator is misconfigured and blocks;
//   - the Tier 2 back end is not configured (no back end, no API key, no model) → block, or ask at
//     Tier 3 if the user opted in; a back end that cannot be built (bad URL …) always blocks.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Platform } from '../engine';
import type { InjectionClassifier, ShieldParts } from '../engine/shield/pipeline';
import { compileRuleSet, loadHeuristicRules } from '../engine/heuristics';
import { ApprovalBroker, type ApprovalSurface, type Tier3Verdict } from '../engine/shield/tier3';
import { MemoryStateStore, type ActionView, type Clock, type StateStore, type TierVerdict } from '../engine/shield/types';
import { TIER2_RULES, Tier2Evaluator, generateCanary, isValidCanary, type ChatBackend } from '../engine/shield/tier2';
import { buildShield, loadIfc, loadPolicyState } from './shield-setup';
import { SqliteStateStore, StateDb } from './audit/state-db';
import { OpenAIChatBackend } from './openai-chat';
import { ensureDirSync } from './fs-util';
import { errorMessage } from '../engine/error-message';

export type Tier2BackendKind = 'none' | 'openai' | 'vscode-lm';

export interface HostSettings {
  /** Preset name or absolute path (the user's choice). */
  readonly policy: string;
  /** IFC preset name, `none`, or absolute path. */
  readonly ifcPolicy: string;
  /** Undefined: the IFC policy's own mode. */
  readonly ifcMode?: 'enforce' | 'audit';
  readonly classifierThreshold: number;
  /** Absolute path, or '' for no classifier (Tier 1 heuristics only). */
  readonly classifierModelDir: string;
  readonly tier2: {
    readonly backend: Tier2BackendKind;
    readonly baseUrl: string;
    readonly model: string;
    /** `vendor/family/id` selector for vscode.lm (empty parts are wildcards). */
    readonly lmModel: string;
    readonly dailyBudget: number;
    readonly cacheTtlSeconds: number;
    readonly timeoutSeconds: number;
    readonly onUnavailable: 'block' | 'escalate';
  };
  readonly tier3: { readonly timeoutSeconds: number; readonly maxPerHour: number };
  /** Loopback ports agents may reach (a local dev server); none by default. */
  readonly allowLoopbackPorts: readonly number[];
  /** Absolute directories outside the workspace folders that agents may read without a review (the workspace boundary). */
  readonly extraReadRoots: readonly string[];
}

export const HOST_SETTING_DEFAULTS: HostSettings = {
  policy: 'default',
  ifcPolicy: 'default',
  ifcMode: undefined,
  classifierThreshold: 0.85,
  classifierModelDir: '',
  tier2: { backend: 'none', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', lmModel: '', dailyBudget: 100, cacheTtlSeconds: 60, timeoutSeconds: 30, onUnavailable: 'block' },
  tier3: { timeoutSeconds: 300, maxPerHour: 10 },
  allowLoopbackPorts: [],
  extraReadRoots: [],
};

/** Every setting key this module reads, relative to the `bulwark` section. */
export const HOST_SETTING_KEYS = [
  'policy', 'ifc.policy', 'ifc.mode', 'classifier.threshold', 'classifier.modelDir',
  'tier2.backend', 'tier2.baseUrl', 'tier2.model', 'tier2.lmModel', 'tier2.dailyBudget', 'tier2.cacheTtlSeconds',
  'tier2.timeoutSeconds', 'tier2.onUnavailable', 'tier3.timeoutSeconds', 'tier3.maxPerHour', 'ssrf.allowLoopbackPorts', 'boundary.extraReadRoots',
] as const;
export type HostSettingKey = (typeof HOST_SETTING_KEYS)[number];

/**
 * Reads the raw setting values (`get` returns undefined for unset keys). A value of the wrong type or
 * out of range is replaced by the default, which is never looser than the bad value could mean, and
 * reported. The policy choices are passed through as text: a bad one makes the policy invalid (blocks).
 */
export function normalizeHostSettings(get: (key: HostSettingKey) => unknown): { settings: HostSettings; problems: string[] } {
  const problems: string[] = [];
  const d = HOST_SETTING_DEFAULTS;
  const bad = (key: string, v: unknown, want: string, fallback: unknown) => {
    problems.push(`setting bulwark.${key} must be ${want} (got ${JSON.stringify(v)}); using ${JSON.stringify(fallback)}`);
  };
  const str = (key: HostSettingKey, fallback: string): string => {
    const v = get(key);
    if (v === undefined || v === null) return fallback;
    if (typeof v === 'string') return v.trim();
    bad(key, v, 'a string', fallback);
    return fallback;
  };
  const choice = <T extends string>(key: HostSettingKey, allowed: readonly T[], fallback: T): T => {
    const v = get(key);
    if (v === undefined || v === null) return fallback;
    if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T;
    bad(key, v, `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`, fallback);
    return fallback;
  };
  const num = (key: HostSettingKey, fallback: number, ok: (n: number) => boolean, want: string): number => {
    const v = get(key);
    if (v === undefined || v === null) return fallback;
    if (typeof v === 'number' && ok(v)) return v;
    bad(key, v, want, fallback);
    return fallback;
  };
  const policyText = (key: HostSettingKey, fallback: string): string => {
    const v = get(key);
    if (v === undefined || v === null) return fallback;
    // Not a string: keep it unusable (a policy that does not load blocks), rather than guessing.
    return typeof v === 'string' ? v.trim() : `<bulwark.${key} is not a string: ${JSON.stringify(v)}>`;
  };
  // '' (or unset) = the IFC policy's own mode; a bad value is read as `enforce`, the stricter.
  const ifcModeRaw = get('ifc.mode');
  let ifcMode: 'enforce' | 'audit' | undefined;
  if (ifcModeRaw === 'enforce' || ifcModeRaw === 'audit') ifcMode = ifcModeRaw;
  else if (ifcModeRaw !== undefined && ifcModeRaw !== null && ifcModeRaw !== '') { bad('ifc.mode', ifcModeRaw, 'one of "", "enforce", "audit"', 'enforce'); ifcMode = 'enforce'; }
  // Ports: a wrong entry is left out (fewer ports allowed is the stricter reading) and reported.
  const portsRaw = get('ssrf.allowLoopbackPorts');
  const ports: number[] = [];
  if (portsRaw !== undefined && portsRaw !== null) {
    if (!Array.isArray(portsRaw)) bad('ssrf.allowLoopbackPorts', portsRaw, 'a list of port numbers', []);
    else {
      for (const v of portsRaw) {
        if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535) { if (!ports.includes(v)) ports.push(v); }
        else problems.push(`setting bulwark.ssrf.allowLoopbackPorts: ${JSON.stringify(v)} is not a port number (1-65535); it is left out`);
      }
    }
  }
  // Extra read roots: a wrong entry is left out (a smaller boundary is the stricter reading) and reported.
  const rootsRaw = get('boundary.extraReadRoots');
  const extraReadRoots: string[] = [];
  if (rootsRaw !== undefined && rootsRaw !== null) {
    if (!Array.isArray(rootsRaw)) bad('boundary.extraReadRoots', rootsRaw, 'a list of absolute directories', []);
    else {
      for (const v of rootsRaw) {
        if (typeof v === 'string' && path.isAbsolute(v) && path.resolve(v) !== path.parse(path.resolve(v)).root) { if (!extraReadRoots.includes(path.resolve(v))) extraReadRoots.push(path.resolve(v)); }
        else problems.push(`setting bulwark.boundary.extraReadRoots: ${JSON.stringify(v)} is not an absolute directory other than the file-system root; it is left out`);
      }
    }
  }
  const modelDir = str('classifier.modelDir', '');
  if (modelDir && !path.isAbsolute(modelDir)) problems.push(`setting bulwark.classifier.modelDir must be an absolute path (got ${JSON.stringify(modelDir)}); the classifier is off`);
  return {
    settings: {
      policy: policyText('policy', d.policy),
      ifcPolicy: policyText('ifc.policy', d.ifcPolicy),
      ifcMode,
      classifierThreshold: num('classifier.threshold', d.classifierThreshold, (n) => Number.isFinite(n) && n >= 0 && n <= 1, 'a number from 0 to 1'),
      classifierModelDir: modelDir && path.isAbsolute(modelDir) ? modelDir : '',
      tier2: {
        backend: choice('tier2.backend', ['none', 'openai', 'vscode-lm'] as const, d.tier2.backend),
        baseUrl: str('tier2.baseUrl', d.tier2.baseUrl) || d.tier2.baseUrl,
        model: str('tier2.model', d.tier2.model),
        lmModel: str('tier2.lmModel', d.tier2.lmModel),
        dailyBudget: num('tier2.dailyBudget', d.tier2.dailyBudget, (n) => Number.isSafeInteger(n) && n >= 0, 'a whole number ≥ 0'),
        cacheTtlSeconds: num('tier2.cacheTtlSeconds', d.tier2.cacheTtlSeconds, (n) => Number.isFinite(n) && n >= 0, 'a number ≥ 0'),
        timeoutSeconds: num('tier2.timeoutSeconds', d.tier2.timeoutSeconds, (n) => Number.isFinite(n) && n > 0 && n <= 3600, 'a number of seconds > 0 and ≤ 3600'),
        onUnavailable: choice('tier2.onUnavailable', ['block', 'escalate'] as const, d.tier2.onUnavailable),
      },
      tier3: {
        timeoutSeconds: num('tier3.timeoutSeconds', d.tier3.timeoutSeconds, (n) => Number.isFinite(n) && n > 0 && n <= 86_400, 'a number of seconds > 0 and ≤ 86400'),
        maxPerHour: num('tier3.maxPerHour', d.tier3.maxPerHour, (n) => Number.isSafeInteger(n) && n >= 0, 'a whole number ≥ 0'),
      },
      allowLoopbackPorts: ports,
      extraReadRoots,
    },
    problems,
  };
}

/** What the status bar shows for the policy: the preset name or the file's base name. */
export function policyLabel(choice: string): string {
  return path.isAbsolute(choice) ? path.basename(choice) : choice || '(none)';
}

/** The policy files whose content the engine depends on (for change detection). */
export function policyFilesOf(settings: HostSettings, workspaceRoots: readonly string[]): string[] {
  const files = workspaceRoots.map(workspacePolicyFile);
  if (path.isAbsolute(settings.policy)) files.push(settings.policy);
  if (path.isAbsolute(settings.ifcPolicy)) files.push(settings.ifcPolicy);
  return files;
}

/** `<root>/.bulwark/policy.yaml`: a workspace policy that can only tighten the user's. */
export function workspacePolicyFile(root: string): string {
  return path.join(root, '.bulwark', 'policy.yaml');
}

/** A cheap fingerprint of a file (mtime and size, or "missing"), to notice edits without watchers. */
export function fileStamp(file: string): string {
  try {
    const s = fs.statSync(file);
    return `${s.mtimeMs}:${s.size}`;
  } catch {
    return 'missing';
  }
}

export const CANARY_FILE = 'canary.token';
export const STATE_FILE = 'bulwark.db';

/**
 * The workspace canary in `<stateDir>/canary.token` (mode 0600): read it, or create it once with 32
 * random bytes. A file that exists but does not hold 64 hex characters is an error (it is never
 * silently replaced; deleting it makes a new one).
 */
export function loadOrCreateCanary(stateDir: string, random: (n: number) => Uint8Array = (n) => randomBytes(n)): string {
  const file = path.join(stateDir, CANARY_FILE);
  ensureDirSync(stateDir, 0o700);
  const read = (): string => {
    const c = fs.readFileSync(file, 'utf8').trim();
    if (!isValidCanary(c)) throw new Error(`${file} does not hold a valid Tier 2 canary (64 hex characters); delete the file to generate a new one`);
    try { if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600); } catch { /* best effort */ }
    return c;
  };
  if (fs.existsSync(file)) return read();
  const canary = generateCanary(random);
  try {
    fs.writeFileSync(file, `${canary}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    // Another window created it first: use theirs.
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return read();
    throw new Error(`cannot create the Tier 2 canary file ${file}: ${errorMessage(e)}`);
  }
  return canary;
}

/** A store that fails every call: whatever needs durable state blocks, with this reason. */
export class FailingStateStore implements StateStore {
  constructor(readonly reason: string) {}
  get(): string | undefined { throw new Error(this.reason); }
  set(): void { throw new Error(this.reason); }
  delete(): void { throw new Error(this.reason); }
}

/**
 * The durable store: the key/value table of Bulwark's SQLite state database `<stateDir>/bulwark.db`
 * (the same database that anchors the audit log by default). A database that cannot be opened gives
 * a FailingStateStore and the error.
 */
export function openStateStore(stateDir: string | undefined): { store: StateStore; durable: boolean; error?: string } {
  if (!stateDir) return { store: new MemoryStateStore(), durable: false, error: 'no local folder for Bulwark\'s state is available, so the Tier 2 budget, the approval rate limit and the session taint last only until VS Code restarts' };
  const file = path.join(stateDir, STATE_FILE);
  try {
    ensureDirSync(stateDir, 0o700);
    return { store: new SqliteStateStore(new StateDb(file)), durable: true };
  } catch (e) {
    const why = `Bulwark's state file ${file} cannot be read (${errorMessage(e)}); the Tier 2 evaluator, approvals and IFC block until it is repaired or deleted`;
    return { store: new FailingStateStore(why), durable: false, error: why };
  }
}

/** What the Tier 2 back end is, as the caller could set it up. */
export type Tier2Source =
  | { readonly kind: 'none' }
  | { readonly kind: 'backend'; readonly backend: ChatBackend }
  /** Chosen but not usable yet (no API key, no model selector): "unavailable" (block, or Tier 3 if opted in). */
  | { readonly kind: 'not_configured'; readonly why: string }
  /** Chosen but wrong (bad URL, plain http to a remote host): always blocks. */
  | { readonly kind: 'misconfigured'; readonly why: string };

/** The OpenAI-compatible back end from the settings and the API key kept in SecretStorage. */
export function openAITier2Source(settings: HostSettings, apiKey: string | undefined): Tier2Source {
  if (!apiKey) return { kind: 'not_configured', why: 'the OpenAI-compatible Tier 2 back end has no API key (run "Bulwark: Set Tier 2 API Key"; for a keyless local server store any placeholder)' };
  if (!settings.tier2.model) return { kind: 'not_configured', why: 'the OpenAI-compatible Tier 2 back end has no model (set bulwark.tier2.model)' };
  try {
    return { kind: 'backend', backend: new OpenAIChatBackend({ baseURL: settings.tier2.baseUrl, apiKey, model: settings.tier2.model, timeoutMs: settings.tier2.timeoutSeconds * 1000 }) };
  } catch (e) {
    return { kind: 'misconfigured', why: errorMessage(e) };
  }
}

/** A Tier 2 stand-in for a back end that is chosen but cannot be used: the same verdicts the evaluator gives. */
class UnusableTier2 {
  constructor(private readonly rule: string, private readonly verdict: 'block' | 'escalate', private readonly reason: string) {}
  async evaluate(_action: ActionView): Promise<TierVerdict> {
    return { decision: this.verdict, tier: 2, confidence: 1, rules: [this.rule], reason: this.reason };
  }
}

export interface HostShieldDeps {
  readonly settings: HostSettings;
  readonly home: string;
  readonly platform: Platform;
  readonly workspaceRoots: readonly string[];
  /** Bulwark's state folder (canary, state file); undefined when there is no local folder. */
  readonly stateDir: string | undefined;
  /** The durable store (the caller keeps one per state folder across rebuilds). */
  readonly store: StateStore;
  readonly tier2: Tier2Source;
  readonly surfaces: readonly ApprovalSurface[];
  /** Told about every Tier 3 verdict (the extension tells the user about rate limiting). */
  readonly onTier3Verdict?: (v: Tier3Verdict) => void;
  readonly classifier?: InjectionClassifier;
  readonly clock?: Clock;
  /** Random source for a new canary (tests). */
  readonly random?: (n: number) => Uint8Array;
}

export interface HostProblem {
  readonly severity: 'error' | 'warning';
  readonly message: string;
}

export interface HostShield {
  readonly parts: ShieldParts;
  readonly problems: readonly HostProblem[];
  /** One line on Tier 2 for the status tooltip. */
  readonly tier2Status: string;
}

export function buildHostShield(d: HostShieldDeps): HostShield {
  const s = d.settings;
  const problems: HostProblem[] = [];
  const clock = d.clock ?? { now: () => Date.now() };
  const workspacePolicyFiles = d.workspaceRoots.map(workspacePolicyFile);

  // Tier 2.
  let tier2: ShieldParts['tier2'];
  let tier2Status: string;
  const unavailable: 'block' | 'escalate' = s.tier2.onUnavailable === 'escalate' ? 'escalate' : 'block';
  const unavailableNote = unavailable === 'escalate' ? '; escalated to Tier 3 (a human) because Tier 2 is set to escalate when unavailable' : '; blocked';
  switch (d.tier2.kind) {
    case 'none':
      tier2 = undefined;
      tier2Status = `Tier 2: no evaluator configured (bulwark.tier2.backend is none); actions that need it are ${unavailable === 'escalate' ? 'sent to you (Tier 3)' : 'blocked'}`;
      break;
    case 'not_configured':
      tier2 = new UnusableTier2(TIER2_RULES.notConfigured, unavailable, `Tier 2 is not configured: ${d.tier2.why}${unavailableNote}`);
      tier2Status = `Tier 2: not configured — ${d.tier2.why}`;
      problems.push({ severity: 'warning', message: `Tier 2 is not configured: ${d.tier2.why}.` });
      break;
    case 'misconfigured':
      tier2 = new UnusableTier2(TIER2_RULES.misconfigured, 'block', `Tier 2 is misconfigured: ${d.tier2.why}; blocked`);
      tier2Status = `Tier 2: misconfigured — ${d.tier2.why}`;
      problems.push({ severity: 'error', message: `Tier 2 is misconfigured, so every action that needs it is blocked: ${d.tier2.why}.` });
      break;
    case 'backend': {
      let canary = '';
      if (d.stateDir) {
        try {
          canary = loadOrCreateCanary(d.stateDir, d.random);
        } catch (e) {
          problems.push({ severity: 'error', message: `${errorMessage(e)}. Every action that needs Tier 2 is blocked.` });
        }
      } else {
        canary = generateCanary(d.random ?? ((n) => randomBytes(n)));
      }
      tier2 = new Tier2Evaluator({
        backend: d.tier2.backend, canary, store: d.store, clock,
        dailyBudget: s.tier2.dailyBudget, cacheTtlMs: s.tier2.cacheTtlSeconds * 1000, timeoutMs: s.tier2.timeoutSeconds * 1000,
        onUnavailable: unavailable,
      });
      tier2Status = `Tier 2: ${d.tier2.backend.id}, ${s.tier2.dailyBudget} evaluations a day, verdicts cached ${s.tier2.cacheTtlSeconds} s, timeout ${s.tier2.timeoutSeconds} s; when unavailable: ${unavailable}`;
      break;
    }
  }

  // Tier 3.
  const broker = new ApprovalBroker({ surfaces: d.surfaces, store: d.store, clock, timeoutMs: s.tier3.timeoutSeconds * 1000, maxPerHour: s.tier3.maxPerHour });
  const tier3: ShieldParts['tier3'] = {
    decide: async (request) => {
      const v = await broker.decide(request);
      try { d.onTier3Verdict?.(v); } catch { /* a UI failure does not change the verdict */ }
      return v;
    },
  };

  const common = {
    tier2, tier3, mode: 'enforce' as const, tier2Unavailable: unavailable,
    classifier: d.classifier, classifierThreshold: s.classifierThreshold,
  };
  let parts: ShieldParts;
  try {
    parts = buildShield({
      policy: s.policy, workspacePolicyFiles, ifc: s.ifcPolicy, ifcMode: s.ifcMode, store: d.store, home: d.home, platform: d.platform,
      ...common,
    });
  } catch {
    // Which part failed: load them one by one, keeping what works and blocking for what does not.
    let policy = loadPolicyState(s.policy, workspacePolicyFiles, { home: d.home, platform: d.platform });
    let heuristics;
    let classifier = d.classifier;
    try {
      heuristics = loadHeuristicRules();
    } catch (e) {
      const why = `Bulwark's built-in heuristic rules failed to load (${errorMessage(e)})`;
      heuristics = compileRuleSet({});
      classifier = { id: 'unavailable', injectionScore: () => Promise.reject(new Error(why)) };
      if (policy.ok) policy = { ok: false, error: why };
    }
    let ifc;
    try {
      ifc = loadIfc(s.ifcPolicy, d.store, s.ifcMode);
    } catch (e) {
      const why = `IFC policy ${JSON.stringify(s.ifcPolicy)} failed to load: ${errorMessage(e)}`;
      if (policy.ok) policy = { ok: false, error: why };
      else problems.push({ severity: 'error', message: `${why}.` });
    }
    parts = { policy, heuristics, ifc, ...common, classifier };
  }
  if (!parts.policy.ok) {
    problems.unshift({ severity: 'error', message: `The Shield policy is invalid, so every action other than a read is blocked until it is fixed: ${parts.policy.error}` });
  }
  return { parts, problems, tier2Status };
}
