// Builds the Shield parts (policy, heuristics, IFC, Tier 2, Tier 3) from files and settings.
// Shared by the CLI and the extension so both decide the same way.
import fs from 'node:fs';
import path from 'node:path';
import { CompiledPolicy, isPresetName, parseShieldPolicy, presetPolicy, type ShieldPolicy } from '../engine/shield/policy';
import type { PolicyState, ShieldParts } from '../engine/shield/pipeline';
import { loadHeuristicRules } from '../engine/heuristics';
import { IFC_PRESETS, IfcEngine, loadIfcPreset, parseIfcPolicy, type IfcPresetName } from '../engine/ifc';
import type { StateStore } from '../engine/shield/types';
import type { Platform } from '../engine';
import { errorMessage } from '../engine/error-message';

export interface ShieldSetupOptions {
  /** A preset name or an absolute path to a policy file (the user's choice). */
  readonly policy: string;
  /** Workspace policy files that may only tighten the user's policy. */
  readonly workspacePolicyFiles?: readonly string[];
  /** IFC preset name or policy file; `none` turns IFC off. */
  readonly ifc: string;
  readonly ifcMode?: 'enforce' | 'audit';
  readonly store: StateStore;
  readonly home: string;
  readonly platform: Platform;
  readonly mode: 'enforce' | 'report';
  readonly tier2?: ShieldParts['tier2'];
  readonly tier3?: ShieldParts['tier3'];
  readonly classifier?: ShieldParts['classifier'];
  readonly classifierThreshold?: number;
  readonly tier2Unavailable?: 'block' | 'escalate';
}

/** Loads one policy source; a broken file yields an error state (the pipeline then blocks non-reads). */
export function loadPolicyState(choice: string, workspaceFiles: readonly string[], env: { home: string; platform: Platform }): PolicyState {
  try {
    const policies: CompiledPolicy[] = [];
    const user = readPolicy(choice);
    policies.push(new CompiledPolicy(user.policy, user.label, env));
    for (const f of workspaceFiles) {
      if (!fs.existsSync(f)) continue;
      const w = readPolicy(f);
      policies.push(new CompiledPolicy(w.policy, `workspace (${w.label})`, env));
    }
    return { ok: true, policies };
  } catch (e) {
    return { ok: false, error: errorMessage(e) };
  }
}

function readPolicy(choice: string): { policy: ShieldPolicy; label: string } {
  if (isPresetName(choice)) return { policy: presetPolicy(choice), label: choice };
  if (!path.isAbsolute(choice))
    throw new Error(`policy \`${choice}\` is neither a preset (default, permissive, strict) nor an absolute file path`);
  return { policy: parseShieldPolicy(fs.readFileSync(choice, 'utf8'), choice), label: path.basename(choice) };
}

export function loadIfc(choice: string, store: StateStore, mode?: 'enforce' | 'audit'): IfcEngine | undefined {
  if (choice === 'none') return undefined;
  const policy = (IFC_PRESETS as readonly string[]).includes(choice)
    ? loadIfcPreset(choice as IfcPresetName)
    : path.isAbsolute(choice)
      ? parseIfcPolicy(fs.readFileSync(choice, 'utf8'), choice)
      : (() => {
          throw new Error(
            `IFC policy \`${choice}\` is neither a preset (default, permissive, strict), \`none\`, nor an absolute file path`,
          );
        })();
  return new IfcEngine(policy, store, { modeOverride: mode });
}

export function buildShield(o: ShieldSetupOptions): ShieldParts {
  return {
    policy: loadPolicyState(o.policy, o.workspacePolicyFiles ?? [], { home: o.home, platform: o.platform }),
    heuristics: loadHeuristicRules(),
    ifc: loadIfc(o.ifc, o.store, o.ifcMode),
    tier2: o.tier2,
    tier3: o.tier3,
    classifier: o.classifier,
    classifierThreshold: o.classifierThreshold,
    mode: o.mode,
    tier2Unavailable: o.tier2Unavailable,
  };
}
