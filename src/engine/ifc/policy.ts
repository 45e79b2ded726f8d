// IFC policies: the bundled presets (security/ifc/*.yaml, compiled into the bundle) and user policy
// files, validated against the shape of security/ifc/schema.json plus the cross-references a JSON
// schema cannot express (complete matrix, each action type in one sink, no unreachable source).
// A policy that fails validation is refused with file, line and column; it is never half-loaded.
import { load, YAMLException } from 'js-yaml';
import defaultPreset from '../../../security/ifc/default.yaml';
import permissivePreset from '../../../security/ifc/permissive.yaml';
import strictPreset from '../../../security/ifc/strict.yaml';
import { locateYamlPath, type YamlPath } from './locate';
import {
  IFC_MODES,
  IFC_VERDICTS,
  MATCH_CRITERIA,
  SENSITIVITIES,
  type IfcMatch,
  type IfcMode,
  type IfcPolicy,
  type IfcSource,
  type IfcVerdict,
  type MatchCriterion,
  type Sensitivity,
} from './types';
import { errorMessage } from '../error-message';

export const IFC_PRESETS = ['default', 'permissive', 'strict'] as const;
export type IfcPresetName = (typeof IFC_PRESETS)[number];

export interface IfcPolicyProblem {
  readonly message: string;
  /** One-based; 0 when the position is unknown (a bundled preset has no text). */
  readonly line: number;
  readonly column: number;
  readonly path: YamlPath;
}

/** A policy that cannot be used. `line`/`column` (one-based) locate the first problem. */
export class IfcPolicyError extends Error {
  override readonly name = 'IfcPolicyError';
  readonly line: number;
  readonly column: number;
  constructor(
    readonly file: string,
    readonly problems: readonly IfcPolicyProblem[],
  ) {
    const first = problems[0] ?? { message: 'invalid policy', line: 0, column: 0, path: [] };
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
    super(`${first.line ? `${file}:${first.line}:${first.column}` : file}: ${first.message}${more}`);
    this.line = first.line;
    this.column = first.column;
  }
}

interface RawProblem {
  message: string;
  path: YamlPath;
  at: 'key' | 'value';
}

const NAME = /^[a-z][a-z0-9_]*$/;
const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (xs: readonly string[]): string => xs.map((x) => `\`${x}\``).join(', ');
const show = (v: unknown): string => (typeof v === 'string' ? `\`${v}\`` : (JSON.stringify(v) ?? String(v)));

/** Checks `data` against the IFC policy shape; returns every problem found (empty when valid). */
function check(data: unknown): RawProblem[] {
  const problems: RawProblem[] = [];
  const bad = (path: YamlPath, message: string, at: 'key' | 'value' = 'value'): void => {
    problems.push({ message, path, at });
  };

  const strings = (v: unknown, path: YamlPath, what: string): v is string[] => {
    if (!Array.isArray(v)) {
      bad(path, `${what} must be a list of strings`);
      return false;
    }
    if (v.length === 0) {
      bad(path, `${what} must not be empty (remove it instead)`);
      return false;
    }
    let ok = true;
    v.forEach((x, i) => {
      if (typeof x !== 'string' || x.length === 0) {
        bad([...path, i], `${what}: item ${show(x)} must be a non-empty string`);
        ok = false;
      }
    });
    return ok;
  };
  const onlyKeys = (m: Record<string, unknown>, path: YamlPath, allowed: readonly string[], what: string): void => {
    for (const k of Object.keys(m))
      if (!allowed.includes(k)) bad([...path, k], `unknown key \`${k}\` in ${what} (expected ${list(allowed)})`, 'key');
  };

  if (!isMap(data)) {
    bad([], 'an IFC policy must be a mapping with `mode`, `sources`, `sinks` and `rules`');
    return problems;
  }
  onlyKeys(data, [], ['description', 'mode', 'sources', 'sinks', 'rules'], 'the policy');
  for (const k of ['mode', 'sources', 'sinks', 'rules']) if (!has(data, k)) bad([], `missing \`${k}\``);
  if (has(data, 'description') && typeof data.description !== 'string') bad(['description'], '`description` must be a string');
  if (has(data, 'mode') && !IFC_MODES.includes(data.mode as IfcMode))
    bad(['mode'], `mode ${show(data.mode)} is not one of ${list(IFC_MODES)}`);

  // sources
  if (has(data, 'sources')) {
    const sources = data.sources;
    if (!Array.isArray(sources) || sources.length === 0) bad(['sources'], '`sources` must be a non-empty list of source rules');
    else {
      const names = new Set<string>();
      let catchAll: string | undefined;
      sources.forEach((s, i) => {
        const p = ['sources', i];
        if (!isMap(s)) {
          bad(p, 'a source rule must be a mapping with `name`, `sensitivity` and `match`');
          return;
        }
        onlyKeys(s, p, ['name', 'sensitivity', 'description', 'match', 'examples'], 'a source rule');
        for (const k of ['name', 'sensitivity', 'match']) if (!has(s, k)) bad(p, `source rule ${i + 1}: missing \`${k}\``);
        const label = typeof s.name === 'string' ? `source \`${s.name}\`` : `source rule ${i + 1}`;
        if (has(s, 'name')) {
          if (typeof s.name !== 'string' || !NAME.test(s.name))
            bad([...p, 'name'], `${label}: name ${show(s.name)} must be lower-case letters, digits and _`);
          else if (names.has(s.name)) bad([...p, 'name'], `duplicate source name \`${s.name}\``);
          else names.add(s.name);
        }
        if (has(s, 'sensitivity') && !SENSITIVITIES.includes(s.sensitivity as Sensitivity))
          bad([...p, 'sensitivity'], `${label}: sensitivity ${show(s.sensitivity)} is not one of ${list(SENSITIVITIES)}`);
        if (has(s, 'description') && typeof s.description !== 'string')
          bad([...p, 'description'], `${label}: \`description\` must be a string`);
        if (catchAll !== undefined)
          bad(p, `${label} can never match: \`${catchAll}\` before it matches every path (a catch-all must come last)`);
        if (has(s, 'match')) {
          const m = s.match;
          if (!isMap(m)) bad([...p, 'match'], `${label}: \`match\` must be a mapping of criteria ({} = every path)`);
          else {
            onlyKeys(m, [...p, 'match'], MATCH_CRITERIA, `the match of ${label}`);
            for (const c of MATCH_CRITERIA) if (has(m, c)) strings(m[c], [...p, 'match', c], `${label}: \`${c}\``);
            if (Object.keys(m).length === 0 && catchAll === undefined)
              catchAll = typeof s.name === 'string' ? s.name : `source rule ${i + 1}`;
          }
        }
        if (has(s, 'examples')) {
          const e = s.examples;
          if (!isMap(e)) bad([...p, 'examples'], `${label}: \`examples\` must be a mapping with \`match\` and \`no_match\``);
          else {
            onlyKeys(e, [...p, 'examples'], ['match', 'no_match'], `the examples of ${label}`);
            for (const k of ['match', 'no_match']) {
              const v = e[k];
              if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && x.length > 0))
                bad([...p, 'examples', k], `${label}: \`examples.${k}\` must be a list of paths`);
            }
          }
        }
      });
    }
  }

  // sinks
  const categories: string[] = [];
  if (has(data, 'sinks')) {
    const sinks = data.sinks;
    if (!isMap(sinks) || Object.keys(sinks).length === 0) bad(['sinks'], '`sinks` must be a mapping of sink category to action types');
    else {
      const owner = new Map<string, string>();
      for (const [cat, types] of Object.entries(sinks)) {
        if (!NAME.test(cat)) {
          bad(['sinks', cat], `sink category \`${cat}\` must be lower-case letters, digits and _`, 'key');
          continue;
        }
        categories.push(cat);
        if (!strings(types, ['sinks', cat], `sink \`${cat}\``)) continue;
        types.forEach((t, j) => {
          const prev = owner.get(t);
          if (prev !== undefined)
            bad(
              ['sinks', cat, j],
              `action type \`${t}\` is in sink \`${prev}\` and in sink \`${cat}\`: each action type belongs to one sink`,
            );
          else owner.set(t, cat);
        });
      }
    }
  }

  // rules
  if (has(data, 'rules')) {
    const rules = data.rules;
    if (!isMap(rules)) bad(['rules'], '`rules` must be a mapping of sensitivity to sink decisions');
    else {
      for (const k of Object.keys(rules))
        if (!SENSITIVITIES.includes(k as Sensitivity))
          bad(['rules', k], `\`${k}\` in rules is not a sensitivity (expected ${list(SENSITIVITIES)})`, 'key');
      for (const level of SENSITIVITIES) {
        if (!has(rules, level)) {
          bad(['rules'], `rules: missing the row for \`${level}\``);
          continue;
        }
        const row = rules[level];
        if (!isMap(row)) {
          bad(['rules', level], `rules.${level} must be a mapping of sink category to allow, block or escalate`);
          continue;
        }
        for (const [cat, v] of Object.entries(row)) {
          if (categories.length && !categories.includes(cat))
            bad(['rules', level, cat], `rules.${level}: \`${cat}\` is not a sink category (sinks define ${list(categories)})`, 'key');
          else if (!IFC_VERDICTS.includes(v as IfcVerdict))
            bad(['rules', level, cat], `rules.${level}.${cat}: ${show(v)} is not one of ${list(IFC_VERDICTS)}`);
        }
        for (const cat of categories)
          if (!has(row, cat))
            bad(['rules', level], `rules.${level}: no decision for sink \`${cat}\` (every level needs one for every sink)`);
      }
    }
  }
  return problems;
}

function build(data: Record<string, unknown>, name: string, origin: IfcPolicy['origin']): IfcPolicy {
  const sources: IfcSource[] = (data.sources as Record<string, unknown>[]).map((s) => {
    const match: { [K in MatchCriterion]?: readonly string[] } = {};
    for (const c of MATCH_CRITERIA) {
      const v = (s.match as Record<string, unknown>)[c];
      if (v !== undefined) match[c] = [...(v as string[])];
    }
    const e = s.examples as { match: string[]; no_match: string[] } | undefined;
    return {
      name: s.name as string,
      sensitivity: s.sensitivity as Sensitivity,
      ...(typeof s.description === 'string' ? { description: s.description } : {}),
      match: match as IfcMatch,
      ...(e ? { examples: { match: [...e.match], no_match: [...e.no_match] } } : {}),
    };
  });
  const sinks = Object.fromEntries(Object.entries(data.sinks as Record<string, string[]>).map(([k, v]) => [k, [...v]]));
  const rules = Object.fromEntries(
    SENSITIVITIES.map((l) => [l, { ...(data.rules as Record<string, Record<string, IfcVerdict>>)[l] }]),
  ) as IfcPolicy['rules'];
  return deepFreeze({
    name,
    origin,
    ...(typeof data.description === 'string' ? { description: data.description } : {}),
    mode: data.mode as IfcMode,
    sources,
    sinks,
    rules,
  });
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/**
 * Validates already-parsed policy data (for example the compiled-in presets). Positions are only
 * known when `text` is given. Throws IfcPolicyError listing every problem.
 */
export function validateIfcPolicy(data: unknown, name: string, opts: { origin?: IfcPolicy['origin']; text?: string } = {}): IfcPolicy {
  const raw = check(data);
  if (raw.length) {
    throw new IfcPolicyError(
      name,
      raw.map((p) => {
        if (opts.text === undefined) return { message: p.message, line: 0, column: 0, path: p.path };
        const pos = locateYamlPath(opts.text, p.path, p.at);
        return { message: p.message, line: pos.line + 1, column: pos.column + 1, path: p.path };
      }),
    );
  }
  return build(data as Record<string, unknown>, name, opts.origin ?? 'file');
}

/** Parses and validates a user policy file. Throws IfcPolicyError with file, line and column. */
export function parseIfcPolicy(text: string, fileName: string): IfcPolicy {
  let data: unknown;
  try {
    data = load(text, { filename: fileName });
  } catch (e) {
    if (e instanceof YAMLException) {
      const mark = e.mark as { line?: number; column?: number } | undefined;
      const line = typeof mark?.line === 'number' ? mark.line + 1 : 1;
      const column = typeof mark?.column === 'number' ? mark.column + 1 : 1;
      throw new IfcPolicyError(fileName, [{ message: `YAML syntax error: ${e.reason || e.message}`, line, column, path: [] }]);
    }
    throw new IfcPolicyError(fileName, [{ message: `cannot parse: ${errorMessage(e)}`, line: 1, column: 1, path: [] }]);
  }
  return validateIfcPolicy(data, fileName, { origin: 'file', text });
}

const PRESET_DATA: Readonly<Record<IfcPresetName, unknown>> = {
  default: defaultPreset,
  permissive: permissivePreset,
  strict: strictPreset,
};
const presetCache = new Map<IfcPresetName, IfcPolicy>();

/** A bundled preset. The data is compiled in; a malformed preset throws rather than weakening IFC. */
export function loadIfcPreset(name: IfcPresetName): IfcPolicy {
  const cached = presetCache.get(name);
  if (cached) return cached;
  if (!IFC_PRESETS.includes(name)) throw new Error(`unknown IFC preset \`${String(name)}\` (expected ${list(IFC_PRESETS)})`);
  const policy = validateIfcPolicy(PRESET_DATA[name], name, { origin: 'preset' });
  presetCache.set(name, policy);
  return policy;
}
