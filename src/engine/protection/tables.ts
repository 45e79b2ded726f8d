// The hard-coded protection tables (security/protection/*.yaml, compiled into the bundle) and
// their compilation for one environment (platform, home directory, workspace folders).
import workspaceTable from '../../../security/protection/workspace.yaml';
import denylistTable from '../../../security/protection/denylist.yaml';
import editorTable from '../../../security/protection/editor.yaml';
import type { Platform, ProtectionLevel } from '../types';
import { PROTECTION_LEVELS, levelRank } from '../types';
import { isWithin, matchKey, normalizePath } from '../paths';
import { escapeRegex, globToRegexSource, staticPrefix } from './glob';

export interface ProtectionRule {
  readonly id: string;
  readonly level: Exclude<ProtectionLevel, 'unprotected'>;
  readonly platforms?: readonly Platform[];
  readonly globs: readonly string[];
  readonly except?: readonly string[];
  readonly reason: string;
  /**
   * A read (never a write or delete) is allowed when all of the file is public material
   * (certificates, public keys: security/protection/content.yaml), read whole through the
   * file-system port; anything else, or a file that cannot be read whole, stays at `level`.
   */
  readonly public_content_readable?: boolean;
  /** Test data: checked by the tests on the files, left out of the shipped bundles. */
  readonly examples?: { readonly match: readonly string[]; readonly no_match: readonly string[] };
}
export interface ProtectionTable {
  readonly version: 1;
  readonly description?: string;
  readonly rules: readonly ProtectionRule[];
}

export interface ProtectionEnvironment {
  readonly platform: Platform;
  /** Absolute home directory of the user the agent acts for. */
  readonly home: string;
  /** Absolute roots of the open workspace folders. */
  readonly workspaceRoots: readonly string[];
  /** Bulwark's own state wherever it lives (audit log, database, canary, policy files): full_block. */
  readonly selfPaths?: readonly string[];
}

export interface CompiledRule {
  readonly rule: ProtectionRule;
  readonly regex: RegExp;
  readonly except?: RegExp;
  /** Literal prefixes (match keys) of the rooted globs, to find protected paths below a deleted directory. */
  readonly prefixes: readonly string[];
  /**
   * Where files this rule protects can be found on disk, as written (case kept): the literal part
   * of each rooted glob, and of each match-anywhere glob at every workspace root (and in the home
   * directory when its tail is literal). What the hard-link index stats and lists.
   */
  readonly locations: readonly string[];
  /**
   * A cheap first test: a key can match only if it contains one of these texts (each glob's longest
   * literal run). Undefined when some glob has no literal worth testing (the regex always runs).
   */
  readonly literals?: readonly string[];
}

/** Rule for Bulwark's own state configured by the host (log location, storage folders). */
export const SELF_STATE_RULE_ID = 'self.state';

export function builtinTables(): readonly ProtectionTable[] {
  return [workspaceTable, denylistTable, editorTable].map((t, i) => validateTable(t, ['workspace', 'denylist', 'editor'][i]!));
}

/** Shape check of a table: the data is compiled in, but a malformed table must stop Bulwark, not weaken it. */
export function validateTable(data: unknown, name: string): ProtectionTable {
  const fail = (msg: string): never => {
    throw new Error(`protection table \`${name}\`: ${msg}`);
  };
  if (typeof data !== 'object' || data === null) fail('not an object');
  const t = data as Record<string, unknown>;
  if (t.version !== 1) fail('version must be 1');
  if (!Array.isArray(t.rules) || t.rules.length === 0) fail('rules must be a non-empty list');
  const ids = new Set<string>();
  for (const r of t.rules as Record<string, unknown>[]) {
    const id = typeof r.id === 'string' ? r.id : fail('rule without an id');
    if (ids.has(id)) fail(`duplicate rule id \`${id}\``);
    ids.add(id);
    if (!PROTECTION_LEVELS.includes(r.level as ProtectionLevel) || r.level === 'unprotected') fail(`rule \`${id}\`: bad level`);
    if (
      !Array.isArray(r.globs) ||
      r.globs.length === 0 ||
      !r.globs.every((g) => typeof g === 'string' && /^(~\/|\/|\?:\/|\{workspace\}\/|\*\*\/)/.test(g))
    )
      fail(`rule \`${id}\`: globs must be rooted`);
    if (typeof r.reason !== 'string' || r.reason.length < 10) fail(`rule \`${id}\`: reason missing`);
    if (r.public_content_readable !== undefined && typeof r.public_content_readable !== 'boolean')
      fail(`rule \`${id}\`: public_content_readable must be true or false`);
  }
  return data as ProtectionTable;
}

/**
 * Compiles the tables for one environment. Rules for other platforms are dropped. A directory
 * glob that would cover the user's whole home directory (`/root/**` when running as root) is
 * skipped: it would block every action and make the protection useless.
 */
export function compileTables(tables: readonly ProtectionTable[], env: ProtectionEnvironment): CompiledRule[] {
  const homeKey = matchKey(normalizePath(env.home, env.platform), env.platform);
  const rootKeys = env.workspaceRoots.map((r) => matchKey(normalizePath(r, env.platform), env.platform));
  const out: CompiledRule[] = [];
  const expand = (glob: string): { source: string; prefix?: string; literal: string }[] => {
    const g = glob.toLowerCase();
    if (g.startsWith('~/')) return [rooted(homeKey, g.slice(1))];
    if (g.startsWith('{workspace}/')) return rootKeys.map((k) => rooted(k, g.slice('{workspace}'.length)));
    if (g.startsWith('**/')) return [{ source: globToRegexSource(g), literal: longestLiteral(g) }];
    return [{ source: globToRegexSource(g), prefix: staticPrefix(g), literal: longestLiteral(g) }];
  };
  const rooted = (rootKey: string, rest: string) => {
    const base = rootKey === '/' ? '' : rootKey.replace(/\/$/, '');
    const p = staticPrefix(rest);
    return {
      source: escapeRegex(base) + globToRegexSource(rest),
      prefix: p === undefined ? undefined : base + p,
      literal: longestLiteral(base + rest),
    };
  };
  const home = normalizePath(env.home, env.platform);
  const roots = env.workspaceRoots.map((r) => normalizePath(r, env.platform));
  const under = (base: string, rest: string) => safeNormalize(`${base.replace(/\/$/, '')}/${rest}`, env.platform);
  /** The literal directories and files of a glob, case kept (globs are matched case-insensitively, disks may not be). */
  const locationsOf = (glob: string): string[] => {
    if (glob.startsWith('~/')) {
      const p = staticPrefix(glob.slice(1));
      return p === undefined ? [] : [under(home, p)];
    }
    if (glob.startsWith('{workspace}/')) {
      const p = staticPrefix(glob.slice('{workspace}'.length));
      return p === undefined ? [] : roots.map((r) => under(r, p));
    }
    if (glob.startsWith('**/')) {
      const p = staticPrefix(glob.slice(2));
      return p === undefined ? roots : [...roots, home].map((r) => under(r, p));
    }
    const p = staticPrefix(glob);
    return p === undefined ? [] : [safeNormalize(p, env.platform)];
  };
  for (const table of tables) {
    for (const rule of table.rules) {
      if (rule.platforms && !rule.platforms.includes(env.platform)) continue;
      const parts = rule.globs.flatMap(expand).filter((p) => !(p.prefix && isWithin(homeKey, p.prefix)));
      if (parts.length === 0) continue;
      const exceptParts = (rule.except ?? []).flatMap(expand);
      out.push({
        rule,
        regex: new RegExp(`^(?:${parts.map((p) => p.source).join('|')})$`),
        except: exceptParts.length ? new RegExp(`^(?:${exceptParts.map((p) => p.source).join('|')})$`) : undefined,
        prefixes: parts.flatMap((p) => (p.prefix ? [p.prefix] : [])),
        locations: [
          ...new Set(
            rule.globs.flatMap(locationsOf).filter((l) => l !== '' && !isWithin(matchKey(home, env.platform), matchKey(l, env.platform))),
          ),
        ],
        ...(parts.every((p) => p.literal.length >= 3) ? { literals: [...new Set(parts.map((p) => p.literal))] } : {}),
      });
    }
  }
  const selfPaths = (env.selfPaths ?? []).map((p) => matchKey(normalizePath(p, env.platform), env.platform));
  if (selfPaths.length) {
    out.unshift({
      rule: {
        id: SELF_STATE_RULE_ID,
        level: 'full_block',
        globs: ['/'],
        reason: "it is Bulwark's own state (audit log, database, canary token or policy); agents may neither read nor change it",
        examples: { match: [], no_match: [] },
      },
      regex: new RegExp(`^(?:${selfPaths.map((k) => escapeRegex(k) + '(?:/.*)?').join('|')})$`),
      prefixes: selfPaths,
      locations: (env.selfPaths ?? []).map((p) => normalizePath(p, env.platform)),
    });
  }
  return out;
}

function safeNormalize(p: string, platform: Platform): string {
  try {
    return normalizePath(p, platform);
  } catch {
    return '';
  }
}

/** Whether one compiled rule matches a match key (its literal prefilter first, then its regex). */
export function ruleMatches(c: CompiledRule, key: string): boolean {
  if (c.literals && !c.literals.some((l) => key.includes(l))) return false;
  return c.regex.test(key) && !(c.except && c.except.test(key));
}

/** Every compiled rule that matches the match key of one path. */
export function matchingRules(compiled: readonly CompiledRule[], key: string): CompiledRule[] {
  return compiled.filter((c) => ruleMatches(c, key));
}

/** The most protective rule that matches the match key of one path (the first of equals), or undefined. */
export function strongestRule(compiled: readonly CompiledRule[], key: string): CompiledRule | undefined {
  let best: CompiledRule | undefined;
  for (const c of compiled) if (ruleMatches(c, key) && (!best || levelRank(c.rule.level) > levelRank(best.rule.level))) best = c;
  return best;
}

/**
 * The longest run of literal characters of a (lower-cased) glob, without the slashes at its ends:
 * every path the glob matches contains it (`**\/.git/hooks/**` → `.git/hooks`; `/a/b/**` may match
 * `/a/b` itself, hence no trailing slash).
 */
export function longestLiteral(glob: string): string {
  let best = '';
  for (const run of glob.split(/[*?]+/)) {
    const t = run.replace(/^\/+|\/+$/g, '');
    if (t.length > best.length) best = t;
  }
  return best;
}

/** Rules with a rooted location at or below the directory `dirKey` (what deleting that directory would remove). */
export function rulesBelow(compiled: readonly CompiledRule[], dirKey: string): CompiledRule[] {
  return compiled.filter((c) => c.prefixes.some((p) => p !== dirKey && isWithin(p, dirKey)));
}
