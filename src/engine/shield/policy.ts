// Tier 0: the YAML policy. deny → verify → allow, first match wins, no match escalates to Tier 1.
import { Minimatch } from 'minimatch';
import defaultPreset from '../../../security/shield/default.yaml';
import permissivePreset from '../../../security/shield/permissive.yaml';
import strictPreset from '../../../security/shield/strict.yaml';
import policySchema from '../../../security/shield/schema.json';
import type { Platform, Tier } from '../types';
import type { EffectClass, EffectJudgement } from '../effects';
import { DataFileError, loadYamlWithPositions, validateAgainstSchema } from '../data-file';

export interface PolicyRule {
  readonly name: string;
  readonly description?: string;
  readonly action_types: readonly string[];
  readonly paths?: readonly string[];
  /**
   * The rule matches only actions whose effects class (effects.ts: inspect, workspace_write, …) is one
   * of these. Effect-based decisions: `allow` routine work by what it does, not by its type.
   */
  readonly effects?: readonly EffectClass[];
  readonly tier_override?: number;
}

export interface PolicyExample {
  readonly name?: string;
  readonly action: { readonly type: string; readonly payload: Record<string, unknown>; readonly cwd?: string };
  readonly expect: 'allow' | 'block' | 'escalate';
  /** The effects class the engine would judge for this action (effects.ts); default `unjudged`. */
  readonly effects?: EffectClass;
  readonly tier?: number;
  readonly rule?: string;
}

export interface ShieldPolicy {
  readonly version?: 1;
  readonly name?: string;
  readonly description?: string;
  readonly deny?: readonly PolicyRule[];
  readonly verify?: readonly PolicyRule[];
  readonly allow?: readonly PolicyRule[];
  readonly examples?: readonly PolicyExample[];
}

export const PRESET_NAMES = ['default', 'permissive', 'strict'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

export interface Tier0Result {
  readonly decision: 'allow' | 'block' | 'escalate';
  /** The tier this action must reach at least (verify/allow `tier_override`; 1 when nothing matched). */
  readonly minTier: Tier;
  /** `policy.<list>.<rule name>`, or `policy.no_match`. */
  readonly rule: string;
  readonly reason: string;
}

const PRESETS: Record<PresetName, unknown> = { default: defaultPreset, permissive: permissivePreset, strict: strictPreset };

/** Parses and validates a policy file; errors carry file, line and column. */
export function parseShieldPolicy(text: string, file: string): ShieldPolicy {
  const loaded = loadYamlWithPositions(text, file);
  if (loaded.value === null || loaded.value === undefined) throw new DataFileError(file, { line: 1, column: 1 }, 'the policy is empty');
  validateAgainstSchema(loaded, policySchema, file);
  const policy = loaded.value as ShieldPolicy;
  const names = new Set<string>();
  for (const [list, rules] of [
    ['deny', policy.deny],
    ['verify', policy.verify],
    ['allow', policy.allow],
  ] as const) {
    (rules ?? []).forEach((r, i) => {
      if (names.has(r.name))
        throw new DataFileError(file, loaded.positionOf(`/${list}/${i}/name`), `rule name \`${r.name}\` is used twice`);
      names.add(r.name);
    });
  }
  return policy;
}

export function presetPolicy(name: PresetName): ShieldPolicy {
  return PRESETS[name] as ShieldPolicy;
}

export function isPresetName(s: string): s is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(s);
}

interface CompiledRule {
  readonly rule: PolicyRule;
  readonly list: 'deny' | 'verify' | 'allow';
  readonly types: ReadonlySet<string>;
  readonly any: boolean;
  readonly paths?: readonly Minimatch[];
}

/** A policy ready to evaluate: globs compiled once for one home directory. */
export class CompiledPolicy {
  private readonly rules: CompiledRule[];

  constructor(
    readonly policy: ShieldPolicy,
    readonly label: string,
    env: { home: string; platform: Platform },
  ) {
    const home = env.home.replace(/\\/g, '/').replace(/\/+$/, '');
    const compile = (list: 'deny' | 'verify' | 'allow') =>
      (policy[list] ?? []).map((rule): CompiledRule => ({
        rule,
        list,
        types: new Set(rule.action_types),
        any: rule.action_types.includes('*'),
        paths: rule.paths?.flatMap((p) =>
          globVariants(p, home).map((g) => new Minimatch(g, { nocase: true, dot: true, nocomment: true, nonegate: true })),
        ),
      }));
    this.rules = [...compile('deny'), ...compile('verify'), ...compile('allow')];
  }

  /** Tier 0 for one action: `paths` are the normalised absolute paths it touches (payload and shell analysis). */
  evaluate(actionType: string, paths: readonly string[], effects?: EffectJudgement): Tier0Result {
    const keys = paths.map((p) => p.replace(/\\/g, '/'));
    for (const c of this.rules) {
      if (!c.any && !c.types.has(actionType)) continue;
      // No judgement (an engine without effects, a policy example without one) counts as `unjudged`,
      // never as a class that an allow rule could match.
      if (c.rule.effects && !c.rule.effects.includes(effects?.class ?? 'unjudged')) continue;
      let matched: string | undefined;
      if (c.paths) {
        matched = keys.find((k) => c.paths!.some((m) => m.match(k)));
        if (matched === undefined) continue;
      }
      const on =
        (matched ? ` on ${matched}` : '') +
        (c.rule.effects && effects ? `, whose effects are ${effects.class.replace(/_/g, ' ')}: ${effects.judged.join('; ')}` : '');
      const id = `policy.${c.list}.${c.rule.name}`;
      switch (c.list) {
        case 'deny':
          return {
            decision: 'block',
            minTier: 0,
            rule: id,
            reason: `the ${this.label} policy denies ${actionType}${on} (rule ${c.rule.name})`,
          };
        case 'verify': {
          const tier = clampTier(c.rule.tier_override ?? 1);
          return {
            decision: 'escalate',
            minTier: tier,
            rule: id,
            reason: `the ${this.label} policy sends ${actionType}${on} to Tier ${tier} (rule ${c.rule.name})`,
          };
        }
        case 'allow': {
          const tier = clampTier(c.rule.tier_override ?? 0);
          return tier === 0
            ? {
                decision: 'allow',
                minTier: 0,
                rule: id,
                reason: `the ${this.label} policy allows ${actionType}${on} (rule ${c.rule.name})`,
              }
            : {
                decision: 'escalate',
                minTier: tier,
                rule: id,
                reason: `the ${this.label} policy allows ${actionType}${on} after Tier ${tier} (rule ${c.rule.name})`,
              };
        }
      }
    }
    return {
      decision: 'escalate',
      minTier: 1,
      rule: 'policy.no_match',
      reason: `no rule of the ${this.label} policy matches ${actionType}, so Tier 1 decides`,
    };
  }
}

function clampTier(n: number): Tier {
  return Math.max(0, Math.min(3, Math.trunc(n))) as Tier;
}

/** `~` → home; a relative pattern matches anywhere; `dir/**` also matches `dir` itself. */
function globVariants(pattern: string, home: string): string[] {
  let p = pattern.replace(/\\/g, '/');
  if (p === '~' || p.startsWith('~/')) p = home + p.slice(1);
  else if (!p.startsWith('/') && !p.startsWith('**') && !/^[A-Za-z]:\//.test(p)) p = `**/${p}`;
  return p.endsWith('/**') ? [p, p.slice(0, -3)] : [p];
}
