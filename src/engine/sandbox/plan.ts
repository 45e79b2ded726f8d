// What an OS sandbox must hide and keep read-only so that a command whose effects the shell analysis
// could not see (opaque, or simply wrong) still cannot read credentials or change protected files.
// Pure: the protection tables (compiled for one environment) and the file-system port decide; the
// Node side turns a plan into bubblewrap arguments or a macOS sandbox profile.
import type { FileSystemPort } from '../ports';
import type { Platform, ProtectionLevel } from '../types';
import { isWithin, matchKey, normalizePath } from '../paths';
import { ruleMatches, strongestRule, type CompiledRule } from '../protection/tables';

/** One path the sandbox mounts over, and the rule that asks for it. */
export interface SandboxMount {
  /** Absolute physical path (symlinks resolved): what the mount covers. */
  readonly path: string;
  readonly kind: 'file' | 'directory';
  readonly ruleId: string;
  /** guardDirs only: the shallowest directory the placeholder makes (its parents up to here are removed after the run when empty). */
  readonly createdFrom?: string;
}

export interface SandboxPlan {
  /** full_block locations that exist: an empty tmpfs over a directory, an empty read-only file over a file. */
  readonly hidden: readonly SandboxMount[];
  /** Existing files and directories inside a writable root whose change the tables protect: bound read-only. */
  readonly readOnly: readonly SandboxMount[];
  /**
   * Protected directories inside a writable root that do not exist yet (`.vscode`, `.devcontainer`,
   * `.git/hooks`): an empty read-only directory is put there for the run, so the command cannot create
   * them; the host removes the placeholder afterwards if it is still empty.
   */
  readonly guardDirs: readonly SandboxMount[];
  /**
   * Protected paths inside a writable root that do not exist and get no placeholder (files such as
   * `.vscode/settings.json` or `AGENTS.md`, directories such as `.git/hooks` without a `.git`): checked
   * after the run; one the command created is moved aside and reported (never deleted).
   */
  readonly watchMissing: readonly SandboxMount[];
  /** Files a hidden directory holds that are public (`~/.ssh/*.pub`): bound back read-only after it is hidden. */
  readonly reexposed: readonly SandboxMount[];
  /** The writable roots, physical. */
  readonly writable: readonly string[];
  /** Roots or protected directories whose listing was cut short: names there matching a rule may not be covered. */
  readonly incomplete: readonly string[];
}

export interface SandboxPlanInput {
  readonly rules: readonly CompiledRule[];
  readonly fs: FileSystemPort;
  readonly platform: Platform;
  readonly writableRoots: readonly string[];
  /**
   * The home directory: listed breadth-first (the first `maxHomeEntries`) for credentials named anywhere
   * (`.bash_history`, `*.p12`), which have no literal location to stat.
   */
  readonly home?: string;
  readonly maxHomeEntries?: number;
  /**
   * Trees the sandbox mounts afresh (its own /proc and /dev): nothing below them is planned or listed.
   * Default: /proc, /dev, /sys.
   */
  readonly freshTrees?: readonly string[];
  /** Entries listed per writable root (default 100,000). */
  readonly maxEntriesPerRoot?: number;
  /** Entries listed per protected directory that is not hidden whole (default 5,000). */
  readonly maxEntriesPerLocation?: number;
}

const WRITE_PROTECTED: readonly ProtectionLevel[] = ['read_only', 'approval_required', 'escalate_tier2', 'write_tier1_min'];

export class SandboxPlanError extends Error {}

/**
 * The plan for one set of writable roots. A path the plan cannot cover safely is never silently
 * dropped: a writable root that is itself hidden or read-only by a rule is refused (the command would
 * otherwise get write access to a protected tree), and a listing cut short is reported in `incomplete`.
 */
export function planSandbox(input: SandboxPlanInput): SandboxPlan {
  const { rules, fs, platform } = input;
  const keyOf = (p: string): string | undefined => {
    try {
      return matchKey(normalizePath(p, platform), platform);
    } catch {
      return undefined;
    }
  };
  const physical = (p: string): string => fs.resolvePhysical(p) ?? p;
  /** The shallowest missing path on the way to `p` (its parent exists), or undefined when `p` exists. */
  const firstMissing = (p: string): string | undefined => {
    const parts = p.split('/');
    for (let i = 2; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (!fs.statFile?.(prefix)) return prefix;
    }
    return undefined;
  };
  const writable = input.writableRoots.map((r) => physical(r));
  const writableKeys = writable.map((w) => keyOf(w)).filter((k): k is string => k !== undefined);
  const insideWritable = (key: string) => writableKeys.some((w) => isWithin(key, w));

  const freshKeys = (input.freshTrees ?? ['/proc', '/dev', '/sys']).map((t) => keyOf(t)).filter((k): k is string => k !== undefined);
  const inFresh = (key: string) => freshKeys.some((f) => isWithin(key, f));

  for (const root of writable) {
    const key = keyOf(root);
    if (key === undefined) throw new SandboxPlanError(`the writable root ${root} is not a valid absolute path`);
    const covering = strongestRule(rules, key);
    if (covering && covering.rule.level !== 'write_tier1_min') {
      throw new SandboxPlanError(
        `the writable root ${root} is protected by ${covering.rule.id} (${covering.rule.level}): a sandbox cannot make it writable`,
      );
    }
  }

  const hidden = new Map<string, SandboxMount>();
  const readOnly = new Map<string, SandboxMount>();
  const guardDirs = new Map<string, SandboxMount>();
  const watchMissing = new Map<string, SandboxMount>();
  const incomplete: string[] = [];
  const reexposed: SandboxMount[] = [];

  const consider = (path: string, c: CompiledRule, kindHint?: 'file' | 'directory') => {
    const phys = physical(path);
    const st = fs.statFile?.(phys);
    const key = keyOf(phys);
    if (key === undefined || inFresh(key)) return;
    if (!st) {
      if (c.rule.level === 'full_block' || !insideWritable(key)) return;
      // A missing protected directory (`.devcontainer`, `.github/hooks`, `.husky`) gets an empty read-only
      // placeholder for the run, so the command cannot create what the rule protects. Only where every
      // directory to create is a dot-directory (configuration by convention): a placeholder `node_modules`
      // or `memory` would change what the command sees, and an empty `.git` looks like a broken repository.
      // A missing protected file, or a directory left out here, is checked after the run instead (a
      // placeholder there would break the tools that read it: npm on a `.npmrc` that is a directory).
      if (kindHint === 'directory') {
        const first = firstMissing(phys);
        // The directories bwrap would make: from the first missing one down to the placeholder.
        const created = first ? phys.slice(first.lastIndexOf('/') + 1).split('/') : [];
        if (first && !writableKeys.includes(key) && created.every((seg) => seg.startsWith('.') && seg.toLowerCase() !== '.git')) {
          guardDirs.set(key, { path: phys, kind: 'directory', ruleId: c.rule.id, createdFrom: first });
          return;
        }
      }
      watchMissing.set(key, { path: phys, kind: kindHint ?? 'file', ruleId: c.rule.id });
      return;
    }
    if (st.kind === 'other') {
      // A socket or FIFO named like a credential: hide it too (bwrap binds over any existing node).
      if (c.rule.level === 'full_block') hidden.set(key, { path: phys, kind: 'file', ruleId: c.rule.id });
      return;
    }
    const mount: SandboxMount = { path: phys, kind: st.kind, ruleId: c.rule.id };
    if (c.rule.level === 'full_block') hidden.set(key, mount);
    else if (WRITE_PROTECTED.includes(c.rule.level) && insideWritable(key)) readOnly.set(key, mount);
  };

  /** Whether a rule covers everything below a directory (then the directory is one mount, not a listing). */
  const coversWhole = (c: CompiledRule, dirKey: string) =>
    ruleMatches(c, dirKey) &&
    ruleMatches(c, `${dirKey.replace(/\/$/, '')}/\u0000probe`) &&
    !c.except?.test(`${dirKey.replace(/\/$/, '')}/\u0000probe`);

  // 1. Every literal location of every rule (home directories, workspace files, Bulwark's own state).
  for (const c of rules) {
    for (const location of c.locations) {
      const key = keyOf(location);
      if (key === undefined || inFresh(key)) continue;
      const phys = physical(location);
      const st = fs.statFile?.(phys);
      if (!st) {
        // A missing location: a directory the rules name (`.vscode`, `.git/hooks`) or a file.
        const whole = coversWhole(c, key);
        if (whole || ruleMatches(c, key)) consider(location, c, whole ? 'directory' : 'file');
        continue;
      }
      if (st.kind !== 'directory') {
        if (ruleMatches(c, key)) consider(location, c);
        continue;
      }
      if (coversWhole(c, key)) {
        consider(location, c);
        // What the rule's exceptions leave readable (public keys in ~/.ssh) stays visible, read-only.
        if (c.except && c.rule.level === 'full_block') {
          const tree = fs.listTree(phys, input.maxEntriesPerLocation ?? 5000);
          for (const e of tree?.entries ?? []) {
            const ek = keyOf(location + e.slice(phys.length));
            if (ek && c.except.test(ek) && fs.statFile?.(e)?.kind === 'file') reexposed.push({ path: e, kind: 'file', ruleId: c.rule.id });
          }
        }
        continue;
      }
      const tree = fs.listTree(phys, input.maxEntriesPerLocation ?? 5000);
      if (!tree) continue;
      if (tree.truncated) incomplete.push(phys);
      for (const e of tree.entries) {
        const ek = keyOf(location + e.slice(phys.length));
        if (ek && ruleMatches(c, ek)) consider(e, c);
      }
    }
  }

  // 2. Every entry of every writable root, against every rule (names anywhere: `.env`, `id_rsa`, `.npmrc`).
  for (const root of writable) {
    const tree = fs.listTree(root, input.maxEntriesPerRoot ?? 100_000);
    if (!tree) continue;
    if (tree.truncated) incomplete.push(root);
    for (const e of tree.entries) {
      const ek = keyOf(e);
      if (ek === undefined) continue;
      const c = strongestRule(rules, ek);
      if (c) consider(e, c);
    }
  }

  // 3. The shallow part of the home directory, for full-block names that have no literal location. A cut
  // listing is expected here (caches, checkouts) and reaches the deep levels last.
  if (input.home) {
    const blocking = rules.filter((c) => c.rule.level === 'full_block');
    // Below what steps 1 and 2 hid there is nothing to add (the end drops mounts below a hidden directory).
    const hiddenSoFar = [...hidden.keys()];
    const tree = fs.listTree(physical(input.home), input.maxHomeEntries ?? 3_000);
    for (const e of tree?.entries ?? []) {
      const ek = keyOf(e);
      if (ek === undefined || hiddenSoFar.some((h) => isWithin(ek, h))) continue;
      const c = strongestRule(blocking, ek);
      if (c) consider(e, c);
    }
  }

  // A mount below a hidden directory has no mount point (the tmpfs is empty): the hidden one wins.
  // Parents mount before children; a public file inside a hidden directory is bound back last.
  const hiddenDirs = [...hidden.entries()].filter(([, m]) => m.kind === 'directory').map(([k]) => k);
  const belowHidden = (k: string) => hiddenDirs.some((d) => d !== k && isWithin(k, d));
  const byDepth = (a: SandboxMount, b: SandboxMount) => a.path.split('/').length - b.path.split('/').length || (a.path < b.path ? -1 : 1);
  const keep = (m: Map<string, SandboxMount>, notHidden: boolean) =>
    [...m.entries()]
      .filter(([k]) => !belowHidden(k) && !(notHidden && hidden.has(k)))
      .map(([, v]) => v)
      .sort(byDepth);
  const readOnlyKeys = [...readOnly.keys()];
  return {
    hidden: keep(hidden, false),
    readOnly: keep(readOnly, true),
    reexposed: reexposed.sort(byDepth),
    guardDirs: keep(guardDirs, true).filter((g) => !readOnlyKeys.some((k) => isWithin(keyOf(g.path)!, k))),
    watchMissing: keep(watchMissing, true),
    writable,
    incomplete,
  };
}

/** One location a decision relied on the sandbox hiding (a protected file a search would otherwise read). */
export interface RequiredHide {
  readonly path: string;
  readonly ruleId: string;
}

/**
 * The plan with `required` hidden as well. A decision that allowed a search because the sandbox hides the
 * protected files below it names them; the plan's own listing may have been cut short before reaching
 * them (a large workspace), so they are added here by name and the promise does not rest on a listing.
 * A path that no longer exists needs nothing; one that cannot be resolved or stated is an error (the
 * caller refuses to run: the decision's condition cannot be met).
 */
export function withRequiredHides(
  plan: SandboxPlan,
  required: readonly RequiredHide[],
  fs: FileSystemPort,
  platform: Platform,
): SandboxPlan {
  if (required.length === 0) return plan;
  if (!fs.statFile) throw new SandboxPlanError('cannot hide the files the decision named: the file-system port cannot state files');
  const keyOf = (p: string): string => matchKey(normalizePath(p, platform), platform);
  const hidden = [...plan.hidden];
  const covered = (key: string) => hidden.some((h) => isWithin(key, keyOf(h.path)));
  for (const r of required) {
    if (!/^\//.test(r.path) && platform !== 'win32')
      throw new SandboxPlanError(`cannot hide ${JSON.stringify(r.path)}: not an absolute path`);
    const physical = fs.resolvePhysical(r.path) ?? r.path;
    const st = fs.statFile?.(physical);
    if (!st) continue;
    const key = keyOf(physical);
    if (covered(key)) continue;
    hidden.push({ path: physical, kind: st.kind === 'directory' ? 'directory' : 'file', ruleId: r.ruleId });
  }
  const depth = (m: SandboxMount) => m.path.split('/').length;
  // A public file bound back inside a hidden directory stays bound back; anything else below a new hidden directory goes.
  const dirs = hidden.filter((m) => m.kind === 'directory').map((m) => keyOf(m.path));
  const below = (m: SandboxMount) => dirs.some((d) => d !== keyOf(m.path) && isWithin(keyOf(m.path), d));
  return {
    ...plan,
    hidden: hidden.filter((m) => !below(m)).sort((a, b) => depth(a) - depth(b) || (a.path < b.path ? -1 : 1)),
    readOnly: plan.readOnly.filter((m) => !below(m)),
    guardDirs: plan.guardDirs.filter((m) => !below(m)),
    watchMissing: plan.watchMissing.filter((m) => !below(m)),
  };
}
