// The extension's Shield, assembled from its settings (host-settings.ts), durable store (state-store.ts)
// and Tier 2 back end (tier2-setup.ts): Node side, no `vscode`. src/vscode reads the settings,
// SecretStorage and UI and hands them here; which part fails closed how is decided here, unit-tested.
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
import { randomBytes } from 'node:crypto';
import type { Platform } from '../engine';
import type { InjectionClassifier, ShieldParts } from '../engine/shield/pipeline';
import { compileRuleSet, loadHeuristicRules } from '../engine/heuristics';
import { ApprovalBroker, type ApprovalSurface, type Tier3Verdict } from '../engine/shield/tier3';
import type { Clock, StateStore } from '../engine/shield/types';
import { TIER2_RULES, Tier2Evaluator, generateCanary } from '../engine/shield/tier2';
import { buildShield, loadIfc, loadPolicyState } from './shield-setup';
import { workspacePolicyFile, type HostSettings } from './host-settings';
import { UnusableTier2, loadOrCreateCanary, type Tier2Source } from './tier2-setup';
import { errorMessage } from '../engine/error-message';

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
  const unavailableNote =
    unavailable === 'escalate' ? '; escalated to Tier 3 (a human) because Tier 2 is set to escalate when unavailable' : '; blocked';
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
        backend: d.tier2.backend,
        canary,
        store: d.store,
        clock,
        dailyBudget: s.tier2.dailyBudget,
        cacheTtlMs: s.tier2.cacheTtlSeconds * 1000,
        timeoutMs: s.tier2.timeoutSeconds * 1000,
        onUnavailable: unavailable,
      });
      tier2Status = `Tier 2: ${d.tier2.backend.id}, ${s.tier2.dailyBudget} evaluations a day, verdicts cached ${s.tier2.cacheTtlSeconds} s, timeout ${s.tier2.timeoutSeconds} s; when unavailable: ${unavailable}`;
      break;
    }
  }

  // Tier 3.
  const broker = new ApprovalBroker({
    surfaces: d.surfaces,
    store: d.store,
    clock,
    timeoutMs: s.tier3.timeoutSeconds * 1000,
    maxPerHour: s.tier3.maxPerHour,
  });
  const tier3: ShieldParts['tier3'] = {
    decide: async (request) => {
      const v = await broker.decide(request);
      try {
        d.onTier3Verdict?.(v);
      } catch {
        /* a UI failure does not change the verdict */
      }
      return v;
    },
  };

  const common = {
    tier2,
    tier3,
    mode: 'enforce' as const,
    tier2Unavailable: unavailable,
    classifier: d.classifier,
    classifierThreshold: s.classifierThreshold,
  };
  let parts: ShieldParts;
  try {
    parts = buildShield({
      policy: s.policy,
      workspacePolicyFiles,
      ifc: s.ifcPolicy,
      ifcMode: s.ifcMode,
      store: d.store,
      home: d.home,
      platform: d.platform,
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
    problems.unshift({
      severity: 'error',
      message: `The Shield policy is invalid, so every action other than a read is blocked until it is fixed: ${parts.policy.error}`,
    });
  }
  return { parts, problems, tier2Status };
}
