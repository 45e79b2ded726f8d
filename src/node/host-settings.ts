// The extension's settings as the engine host reads them (Node side, no `vscode`): the keys, their
// defaults, what a wrong value means (never looser than the value could mean), and the policy files
// whose content the engine depends on. src/vscode/engine-host.ts reads the raw values and hands them here.
import fs from 'node:fs';
import path from 'node:path';

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
  tier2: {
    backend: 'none',
    baseUrl: 'https://api.openai.com/v1',
    model: 'gpt-4o-mini',
    lmModel: '',
    dailyBudget: 100,
    cacheTtlSeconds: 60,
    timeoutSeconds: 30,
    onUnavailable: 'block',
  },
  tier3: { timeoutSeconds: 300, maxPerHour: 10 },
  allowLoopbackPorts: [],
  extraReadRoots: [],
};

/** Every setting key this module reads, relative to the `bulwark` section. */
export const HOST_SETTING_KEYS = [
  'policy',
  'ifc.policy',
  'ifc.mode',
  'classifier.threshold',
  'classifier.modelDir',
  'tier2.backend',
  'tier2.baseUrl',
  'tier2.model',
  'tier2.lmModel',
  'tier2.dailyBudget',
  'tier2.cacheTtlSeconds',
  'tier2.timeoutSeconds',
  'tier2.onUnavailable',
  'tier3.timeoutSeconds',
  'tier3.maxPerHour',
  'ssrf.allowLoopbackPorts',
  'boundary.extraReadRoots',
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
  else if (ifcModeRaw !== undefined && ifcModeRaw !== null && ifcModeRaw !== '') {
    bad('ifc.mode', ifcModeRaw, 'one of "", "enforce", "audit"', 'enforce');
    ifcMode = 'enforce';
  }
  // Ports: a wrong entry is left out (fewer ports allowed is the stricter reading) and reported.
  const portsRaw = get('ssrf.allowLoopbackPorts');
  const ports: number[] = [];
  if (portsRaw !== undefined && portsRaw !== null) {
    if (!Array.isArray(portsRaw)) bad('ssrf.allowLoopbackPorts', portsRaw, 'a list of port numbers', []);
    else {
      for (const v of portsRaw) {
        if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535) {
          if (!ports.includes(v)) ports.push(v);
        } else
          problems.push(`setting bulwark.ssrf.allowLoopbackPorts: ${JSON.stringify(v)} is not a port number (1-65535); it is left out`);
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
        if (typeof v === 'string' && path.isAbsolute(v) && path.resolve(v) !== path.parse(path.resolve(v)).root) {
          if (!extraReadRoots.includes(path.resolve(v))) extraReadRoots.push(path.resolve(v));
        } else
          problems.push(
            `setting bulwark.boundary.extraReadRoots: ${JSON.stringify(v)} is not an absolute directory other than the file-system root; it is left out`,
          );
      }
    }
  }
  const modelDir = str('classifier.modelDir', '');
  if (modelDir && !path.isAbsolute(modelDir))
    problems.push(`setting bulwark.classifier.modelDir must be an absolute path (got ${JSON.stringify(modelDir)}); the classifier is off`);
  return {
    settings: {
      policy: policyText('policy', d.policy),
      ifcPolicy: policyText('ifc.policy', d.ifcPolicy),
      ifcMode,
      classifierThreshold: num(
        'classifier.threshold',
        d.classifierThreshold,
        (n) => Number.isFinite(n) && n >= 0 && n <= 1,
        'a number from 0 to 1',
      ),
      classifierModelDir: modelDir && path.isAbsolute(modelDir) ? modelDir : '',
      tier2: {
        backend: choice('tier2.backend', ['none', 'openai', 'vscode-lm'] as const, d.tier2.backend),
        baseUrl: str('tier2.baseUrl', d.tier2.baseUrl) || d.tier2.baseUrl,
        model: str('tier2.model', d.tier2.model),
        lmModel: str('tier2.lmModel', d.tier2.lmModel),
        dailyBudget: num('tier2.dailyBudget', d.tier2.dailyBudget, (n) => Number.isSafeInteger(n) && n >= 0, 'a whole number ≥ 0'),
        cacheTtlSeconds: num('tier2.cacheTtlSeconds', d.tier2.cacheTtlSeconds, (n) => Number.isFinite(n) && n >= 0, 'a number ≥ 0'),
        timeoutSeconds: num(
          'tier2.timeoutSeconds',
          d.tier2.timeoutSeconds,
          (n) => Number.isFinite(n) && n > 0 && n <= 3600,
          'a number of seconds > 0 and ≤ 3600',
        ),
        onUnavailable: choice('tier2.onUnavailable', ['block', 'escalate'] as const, d.tier2.onUnavailable),
      },
      tier3: {
        timeoutSeconds: num(
          'tier3.timeoutSeconds',
          d.tier3.timeoutSeconds,
          (n) => Number.isFinite(n) && n > 0 && n <= 86_400,
          'a number of seconds > 0 and ≤ 86400',
        ),
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
