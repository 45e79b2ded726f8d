// CheckProtection: the first layer, before any policy or model. Decides from the hard-coded tables
// which paths an action may touch, after `~`, `..`, case, trailing-dot and symlink normalisation.
import type { ActionRequest, PathAccess, Platform, ProtectionLevel, Tier } from '../types';
import { levelRank } from '../types';
import { actionSpec } from '../actions';
import { payloadTargetsOf } from '../payload';
import type { FileSystemPort } from '../ports';
import { PathError, basename, expandHome, isAbsolute, isWithin, matchKey, normalizePath, resolveActionPath } from '../paths';
import type { CompiledRule } from './tables';
import { matchingRules, rulesBelow } from './tables';
import { FileFactsCache, HARD_LINK_SCAN_BYTES, type ContentScope, type UnknownLinkContent } from './file-facts';
import type { ContentSignature } from './content';
import { Minimatch } from 'minimatch';

/** One path an action touches, and how. */
export interface PathTouch {
  readonly path: string;
  readonly access: PathAccess;
  /** Where the path came from: a payload field, or `command` for a shell command. */
  readonly source: string;
  /**
   * A shell glob over the entries of the directory `path` (`rm *.log` in /w: path /w, pattern
   * `*.log`): the touched paths are the entries whose names it matches, not the directory.
   */
  readonly pattern?: string;
  /** `tree`: the pattern names entries anywhere below `path` (`find DIR -name P -delete`), not only in it. */
  readonly depth?: 'one' | 'tree';
  /**
   * Found in the payload by its text rather than named by a declared path field: when it cannot
   * be resolved (relative with no working directory, a NUL byte), the action is escalated to
   * Tier 2 instead of blocked, so an unusual tool payload is reviewed, not refused.
   */
  readonly inferred?: boolean;
  /**
   * A search or listing below the directory `path`: `contents` reads every file below it (grep),
   * `names` reads every directory listing below it (recursive list, find).
   */
  readonly below?: 'contents' | 'names';
  /** With `below`: only entries whose base name matches one of these globs are read (an include filter). */
  readonly belowNames?: readonly string[];
  /** With `below`: entries with a hidden component below `path` are not read (`rg`, `ag`), unless an ignore file may re-include some. */
  readonly belowSkipsHidden?: boolean;
}

export type Effect = { kind: 'none' } | { kind: 'block' } | { kind: 'min_tier'; tier: Tier };

export interface PathFinding {
  readonly path: string;
  /** The resolved file when it differs from `path` (a symlink, or a file inside a touched directory). */
  readonly resolved?: string;
  readonly access: PathAccess;
  readonly level: ProtectionLevel;
  readonly ruleId?: string;
  readonly effect: Effect;
  readonly message: string;
  /** A read of a file whose whole content was checked and holds only public material (certificates, public keys). */
  readonly publicMaterial?: boolean;
  /** A fully blocked file below a search that the OS sandbox hides from the command (not a read). */
  readonly sandboxHides?: boolean;
}

export interface ProtectionResult {
  readonly allowed: boolean;
  readonly level: ProtectionLevel;
  readonly minTier: Tier;
  readonly rules: readonly string[];
  readonly reason: string;
  readonly findings: readonly PathFinding[];
  /** Fully blocked files a search would read that the OS sandbox will hide instead (see `sandboxHidesWithin`). */
  readonly sandboxHides: readonly { readonly path: string; readonly ruleId: string }[];
}

export interface ProtectionContext {
  readonly platform: Platform;
  readonly home: string;
  readonly cwd?: string;
  readonly rules: readonly CompiledRule[];
  readonly fs: FileSystemPort;
  /** What is known about files by their identity (content, hard links); the engine keeps one per instance. Without it, nothing is remembered between actions. */
  readonly facts?: FileFactsCache;
  /**
   * The command runs inside the OS sandbox, which hides what it is told to (`bulwark exec --hide`): a fully
   * blocked file a search would find below its directory, inside one of these roots, is left to the sandbox
   * to hide (reported in `sandboxHides`) instead of refusing the search. What a command names itself stays refused.
   */
  readonly sandboxHidesWithin?: readonly string[];
}

/** The context of one checkProtection call: the engine's file facts and this action's content budget. */
interface Ctx extends ProtectionContext {
  readonly facts: FileFactsCache;
  readonly scope: ContentScope;
}

/** Rule id of a payload part the engine cannot interpret: escalated to Tier 2, not blocked. */
export const PAYLOAD_UNCLEAR_RULE = 'payload.unclear';

/** Rule of a hard link none of whose other names is a protected file Bulwark can see: a review decides. */
export const HARD_LINK_UNKNOWN_RULE = 'protection.hard_link_unknown';

/** Rule of files whose content one action had no budget left to read: a review decides. */
export const CONTENT_UNCHECKED_RULE = 'protection.content_unchecked';

/** Most files a directory operation may contain and still be checked file by file. */
export const MAX_TREE_ENTRIES = 5000;

/** What each protection level does to a read, a write and a delete (a delete of an escalate_tier2 file is blocked outright). */
export function effectOf(level: ProtectionLevel, access: PathAccess): Effect {
  switch (level) {
    case 'unprotected':
      return { kind: 'none' };
    case 'full_block':
      return { kind: 'block' };
    case 'read_only':
      return access === 'read' ? { kind: 'none' } : { kind: 'block' };
    case 'approval_required':
      return access === 'read' ? { kind: 'none' } : { kind: 'min_tier', tier: 3 };
    case 'escalate_tier2':
      return access === 'read' ? { kind: 'none' } : access === 'delete' ? { kind: 'block' } : { kind: 'min_tier', tier: 2 };
    case 'write_tier1_min':
      return access === 'read' ? { kind: 'none' } : { kind: 'min_tier', tier: 1 };
  }
}

const LEVEL_PHRASE: Record<ProtectionLevel, string> = {
  unprotected: 'is not protected',
  write_tier1_min: 'needs at least a Tier 1 check to be changed',
  escalate_tier2: 'needs a Tier 2 review to be changed',
  approval_required: 'needs your approval to be changed',
  read_only: 'is read-only to agents',
  full_block: 'is fully blocked to agents (no read, no write)',
};

/**
 * Every path the payload names, with the access its action type implies (payload.ts): the
 * declared path fields, and any other string that is a path, whatever its field.
 */
export function pathTouchesOf(action: ActionRequest, platform?: Platform): PathTouch[] {
  return payloadTargetsOf(action, platform).touches;
}

/**
 * Checks every touched path. `copy_dir`/`move_dir` also check each file of the source tree at its
 * destination; deleting a directory checks what lies below it. The highest level wins: a block on
 * any path blocks the action, otherwise the action's minimum tier is the highest required.
 */
export function checkProtection(actionType: string, touches: readonly PathTouch[], context: ProtectionContext): ProtectionResult {
  const facts = context.facts ?? new FileFactsCache();
  const ctx: Ctx = { ...context, facts, scope: facts.newScope() };
  const findings: PathFinding[] = [];
  // A tree copy reads (copy) or removes (move) its sources and writes its destinations.
  const copiesTree = actionSpec(actionType).copiesTree === true;
  const payloadTouches = touches.filter((t) => t.source !== 'command' && t.pattern === undefined);
  const sources = copiesTree ? payloadTouches.filter((t) => t.access !== 'write') : [];
  const destinations = copiesTree ? payloadTouches.filter((t) => t.access === 'write') : [];
  for (const touch of touches) {
    if (touch.pattern !== undefined) {
      findings.push(...checkPattern(touch, touch.pattern, ctx));
      continue;
    }
    findings.push(...checkOnePath(touch, ctx));
    if (touch.access === 'delete') findings.push(...checkBelow(touch, ctx));
    if (touch.below !== undefined) findings.push(...checkSearch(touch, touch.below, ctx));
  }
  for (const src of sources) for (const dst of destinations) findings.push(...checkTreeCopy(src, dst, ctx));
  if (ctx.scope.unchecked.length) findings.push(contentUnchecked(ctx.scope.unchecked));
  return summarise(findings);
}

interface Resolved {
  display: string;
  normalized: string;
  candidates: string[];
}

function resolveTouch(touch: PathTouch, ctx: ProtectionContext): Resolved | PathFinding {
  let normalized: string;
  try {
    normalized = resolveActionPath(touch.path, { cwd: ctx.cwd, home: ctx.home, platform: ctx.platform });
  } catch (e) {
    const msg = e instanceof PathError ? e.message : String(e);
    if (touch.inferred) {
      return {
        path: touch.path,
        access: touch.access,
        level: 'unprotected',
        ruleId: PAYLOAD_UNCLEAR_RULE,
        effect: { kind: 'min_tier', tier: 2 },
        message: `the payload field \`${touch.source}\` looks like a path that cannot be checked (${msg}), so a Tier 2 review decides`,
      };
    }
    return {
      path: touch.path,
      access: touch.access,
      level: 'unprotected',
      ruleId: 'path.invalid',
      effect: { kind: 'block' },
      message: `${touch.source}: ${msg}`,
    };
  }
  const candidates = [normalized];
  const expanded = expandHome(touch.path, ctx.home, ctx.platform);
  const rawAbsolute = isAbsolute(expanded, ctx.platform) ? expanded : `${ctx.cwd}/${expanded}`;
  const physical = ctx.fs.resolvePhysical(rawAbsolute);
  if (physical !== undefined) {
    try {
      const p = normalizePath(physical, ctx.platform);
      if (p !== normalized) candidates.push(p);
    } catch {
      /* an unresolvable physical path adds nothing; the lexical path is still checked */
    }
  }
  return { display: touch.path, normalized, candidates };
}

/**
 * The strongest finding for one path: its names (lexical and physical) against the tables, then
 * what the file itself is (withFileFacts) unless only its name is read (`namesOnly`: a listing).
 */
function checkOnePath(touch: PathTouch, ctx: Ctx, namesOnly = false): PathFinding[] {
  const r = resolveTouch(touch, ctx);
  if (!('candidates' in r)) return [r];
  let best: PathFinding | undefined;
  for (const candidate of r.candidates) {
    for (const c of matchingRules(ctx.rules, matchKey(candidate, ctx.platform))) {
      const f = finding(r.display, candidate !== r.normalized ? candidate : undefined, touch.access, c);
      if (!best || outranks(f, best)) best = f;
    }
  }
  if (!namesOnly) {
    const physical = r.candidates[r.candidates.length - 1]!;
    best = strongest(
      withFileFacts(r.display, physical, touch.access, best ? [best] : [], ctx, physical !== r.normalized ? physical : undefined),
    );
  }
  return [
    best ?? {
      path: r.display,
      access: touch.access,
      level: 'unprotected',
      effect: { kind: 'none' },
      message: `${r.display} is not protected`,
    },
  ];
}

function strongest(findings: readonly PathFinding[]): PathFinding | undefined {
  let best: PathFinding | undefined;
  for (const f of findings) if (!best || outranks(f, best)) best = f;
  return best;
}

/**
 * What the file at `physical` adds to what its names decided (`named`): a file with several
 * names (hard links) is also every protected file it is, found by device and inode; a file whose
 * first bytes are private-key material is fully blocked whatever it is called; and a read that a
 * name rule with `public_content_readable` blocks is allowed when all of the file is public
 * material (certificates, public keys). Skipped when a name already blocks the access outright,
 * and without a port that can stat files (names decide).
 *
 * A hard link none of whose names Bulwark can see as protected is treated as its most protected
 * possible self within what can be known: its other names may be any file on the device, so a
 * write (which changes the file under every name) needs a Tier 2 review, and so does a read unless
 * the whole file is text in which no secret detector fires (a credential's content gives it away
 * whatever its name; a private key is blocked as any file is). Removing one name leaves the others
 * intact, so a delete adds nothing.
 */
function withFileFacts(
  display: string,
  physical: string,
  access: PathAccess,
  named: readonly PathFinding[],
  ctx: Ctx,
  resolved?: string,
): PathFinding[] {
  const fs = ctx.fs;
  if (!fs.statFile) return [...named];
  const readable = (f: PathFinding) =>
    f.effect.kind === 'block' &&
    access === 'read' &&
    ctx.rules.some((c) => c.rule.id === f.ruleId && c.rule.public_content_readable === true);
  if (named.some((f) => f.effect.kind === 'block' && !readable(f))) return [...named];
  const st = fs.statFile(physical);
  if (!st || st.kind !== 'file') return [...named];
  let found = [...named];
  if (st.nlink > 1) {
    const targets = ctx.facts.linkTargets(st, ctx.rules, fs, ctx.platform, ctx.scope);
    if (targets !== 'unknown') {
      // The file's own protected name is already among `named`: only its other names add.
      const self = matchKey(safeNormalize(physical, ctx.platform), ctx.platform);
      for (const t of targets)
        if (matchKey(safeNormalize(t.path, ctx.platform), ctx.platform) !== self)
          found.push(finding(display, t.path, access, t.rule, 'a hard link to'));
    } else if (access === 'write') {
      found.push(unknownLink(display, access, st.nlink, 'writing it changes the file under every name'));
    } else if (access === 'read') {
      const content = ctx.facts.unknownLinkContent(fs, physical, st, ctx.scope);
      if (content !== 'clean') found.push(unknownLink(display, access, st.nlink, UNKNOWN_LINK_CONTENT[content]));
    }
    if (found.some((f) => f.effect.kind === 'block' && !readable(f))) return found;
  }
  const signature = ctx.facts.privateKey(fs, physical, st, ctx.scope);
  if (signature) return [...found, privateKeyFinding(display, resolved, access, signature)];
  if (access === 'read' && found.some(readable) && ctx.facts.publicMaterial(fs, physical, st, ctx.scope)) {
    found = found.map((f) => (readable(f) ? publicRead(f) : f));
  }
  return found;
}

const UNKNOWN_LINK_CONTENT: Record<Exclude<UnknownLinkContent, 'clean'>, string> = {
  secret: 'and a secret detector fires on its content',
  binary: 'and its content is not text that can be checked for secrets',
  large: `and it is larger than the ${HARD_LINK_SCAN_BYTES / 1024} KiB that are checked for secrets`,
  unreadable: 'and its content could not be read to check it for secrets',
};

function unknownLink(display: string, access: PathAccess, names: number, why: string): PathFinding {
  return {
    path: display,
    access,
    level: 'escalate_tier2',
    ruleId: HARD_LINK_UNKNOWN_RULE,
    effect: { kind: 'min_tier', tier: 2 },
    message:
      `${display} is one of ${names} names of the same file (hard links), none of the others a protected file Bulwark can see, ${why}, so a Tier 2 review decides` +
      (access === 'write' ? '. To change only this name, write a new file and rename it over this one (that breaks the link)' : ''),
  };
}

function privateKeyFinding(display: string, resolved: string | undefined, access: PathAccess, s: ContentSignature): PathFinding {
  return {
    path: display,
    resolved,
    access,
    level: 'full_block',
    ruleId: s.id,
    effect: { kind: 'block' },
    message:
      `${resolved ? `${display} (resolves to ${resolved})` : display} is fully blocked to agents (no read, no write) by its content, whatever it is called (rule ${s.id}): ${s.reason}. ` +
      'Use the key through a tool that keeps it (ssh-agent, a credential helper, the cloud CLI) rather than reading or copying the file',
  };
}

/** A read of public material (certificates, public keys) that a name rule would block: allowed, the file stays read-only. */
function publicRead(f: PathFinding): PathFinding {
  return {
    ...f,
    level: 'read_only',
    effect: { kind: 'none' },
    publicMaterial: true,
    message: `${f.resolved ? `${f.path} (${f.resolved})` : f.path} holds only public material (certificates or public keys), so it may be read although rule ${f.ruleId} protects it by name; it stays read-only to agents`,
  };
}

function contentUnchecked(paths: readonly string[]): PathFinding {
  const shown =
    paths
      .slice(0, 3)
      .map((p) => `\`${p}\``)
      .join(', ') + (paths.length > 3 ? ` and ${paths.length - 3} more` : '');
  return {
    path: paths[0]!,
    access: 'read',
    level: 'escalate_tier2',
    ruleId: CONTENT_UNCHECKED_RULE,
    effect: { kind: 'min_tier', tier: 2 },
    message: `the action touches more files than Bulwark can check by content in one decision (${shown} not checked for private-key material), so a Tier 2 review decides; name fewer files or a narrower directory`,
  };
}

/** Deleting a directory removes everything below it: protected locations there count as deleted. */
function checkBelow(touch: PathTouch, ctx: Ctx): PathFinding[] {
  const r = resolveTouch(touch, ctx);
  if (!('candidates' in r)) return [];
  const out: PathFinding[] = [];
  for (const candidate of r.candidates) {
    for (const c of rulesBelow(ctx.rules, matchKey(candidate, ctx.platform))) {
      out.push(
        finding(
          r.display,
          c.prefixes.find((p) => isWithin(p, matchKey(candidate, ctx.platform))),
          'delete',
          c,
          'deleting it would remove',
        ),
      );
    }
    const tree = ctx.fs.listTree(candidate, MAX_TREE_ENTRIES);
    if (!tree) continue;
    if (tree.truncated) out.push(tooLarge(r.display, 'delete'));
    for (const entry of tree.entries) {
      const key = matchKey(safeNormalize(entry, ctx.platform), ctx.platform);
      for (const c of matchingRules(ctx.rules, key)) out.push(finding(r.display, entry, 'delete', c, 'deleting it would remove'));
    }
  }
  return out;
}

/**
 * A search or listing below a directory reads what lies below it: `contents` every file (grep),
 * `names` every directory's listing (recursive list, find). Bulwark cannot leave files out of
 * another agent's search, so every entry below (at most MAX_TREE_ENTRIES, symlinks resolved) is
 * checked as a read of its own; a directory too large to list counts as touched whole (Tier 2)
 * and each protected location the tables name below it counts as read. Any entry that may not be
 * read refuses the search; the reason names the entries and suggests narrower directories.
 */
function checkSearch(touch: PathTouch, mode: 'contents' | 'names', ctx: Ctx): PathFinding[] {
  const r = resolveTouch(touch, ctx);
  if (!('candidates' in r)) return [];
  const admits = nameFilter(touch.belowNames);
  const out: PathFinding[] = [];
  const hits: PathFinding[] = [];
  const children = new Set<string>();
  for (const candidate of r.candidates) {
    const tree = ctx.fs.listTree(candidate, MAX_TREE_ENTRIES);
    if (!tree) continue; // not a directory: the read of the path itself is its check
    const root = safeNormalize(candidate, ctx.platform).replace(/\/+$/, '');
    const rootKey = matchKey(root, ctx.platform);
    if (tree.truncated) {
      out.push(tooLarge(r.display, 'read'));
      for (const c of rulesBelow(ctx.rules, rootKey)) {
        // The tables' prefixes are match keys (lower case): shown below the root as the caller spelled it.
        const p = c.prefixes.find((k) => k !== rootKey && isWithin(k, rootKey));
        const f = finding(
          r.display,
          p === undefined ? undefined : root + p.slice(rootKey.replace(/\/+$/, '').length),
          'read',
          c,
          'it may read',
        );
        if (f.effect.kind !== 'none') hits.push(f);
      }
    }
    const all = tree.entries.map((e) => safeNormalize(e, ctx.platform));
    for (const e of all) {
      const parent = e.slice(0, e.lastIndexOf('/'));
      if (parent !== root && parent.slice(0, parent.lastIndexOf('/')) === root) children.add(parent);
    }
    const skipsHidden =
      touch.belowSkipsHidden === true && ctx.platform !== 'win32' && !tree.truncated && !mayReincludeHidden(root, all, ctx);
    const shown = (e: string) => (!skipsHidden || !HIDDEN_BELOW.test(e.slice(root.length))) && (!admits || admits(basename(e)));
    const entries = all.filter(shown);
    const targets =
      mode === 'contents'
        ? entries
        : [...new Set(entries.map((e) => e.slice(0, e.lastIndexOf('/'))))].filter((d) => d !== root && d.length > root.length);
    // The listing does not follow links, so an entry is where it is listed unless it is a link:
    // only links need resolving (every entry, when the port does not say which are links).
    const links = tree.links === undefined ? undefined : new Set(tree.links.map((e) => safeNormalize(e, ctx.platform)));
    for (const entry of targets) {
      if (links && !links.has(entry)) {
        const named = matchingRules(ctx.rules, matchKey(entry, ctx.platform)).map((c) => finding(entry, undefined, 'read', c));
        // A search of contents reads each file: what it is counts too (a key by another name, a hard link).
        for (const f of mode === 'contents' ? withFileFacts(entry, entry, 'read', named, ctx) : named) {
          if (f.effect.kind !== 'none') hits.push({ ...f, path: r.display, resolved: entry });
        }
        continue;
      }
      for (const f of checkOnePath({ path: entry, access: 'read', source: touch.source }, ctx, mode === 'names')) {
        if (f.effect.kind !== 'none') hits.push({ ...f, path: r.display, resolved: f.resolved ?? entry });
      }
    }
  }
  let blocked = hits.filter((f) => f.effect.kind === 'block');
  const hideRoots = ctx.sandboxHidesWithin?.map((w) => matchKey(safeNormalize(w, ctx.platform), ctx.platform));
  if (hideRoots?.length && blocked.length) {
    // Inside the sandbox these files are empty for the command: the search reads nothing from them.
    const rootKeys = r.candidates.map((c) => matchKey(safeNormalize(c, ctx.platform), ctx.platform));
    const hideable = (f: PathFinding) => {
      const k = matchKey(safeNormalize(f.resolved ?? f.path, ctx.platform), ctx.platform);
      return f.level === 'full_block' && f.ruleId !== undefined && !rootKeys.includes(k) && hideRoots.some((w) => isWithin(k, w));
    };
    if (blocked.every(hideable)) {
      const hidden = blocked.map((f): PathFinding => ({
        ...f,
        effect: { kind: 'none' },
        sandboxHides: true,
        message: `the OS sandbox hides ${f.resolved ?? f.path} from it (${f.ruleId})`,
      }));
      hits.splice(0, hits.length, ...hits.filter((f) => f.effect.kind !== 'block'), ...hidden);
      blocked = [];
    }
  }
  if (blocked.length === 0) return [...out, ...hits];
  const shown = [...new Set(blocked.map((f) => f.resolved ?? f.path))];
  const names =
    shown
      .slice(0, 3)
      .map((p) => `\`${p}\``)
      .join(', ') + (shown.length > 3 ? ` and ${shown.length - 3} more` : '');
  const clean = [...children]
    .filter(
      (c) =>
        !c.slice(c.lastIndexOf('/') + 1).startsWith('.') &&
        !shown.some((p) => isWithin(matchKey(p, ctx.platform), matchKey(c, ctx.platform))),
    )
    .sort()
    .slice(0, 3);
  const instead = clean.length ? `, such as ${clean.map((c) => `\`${c}\``).join(' or ')}` : '';
  const what = mode === 'contents' ? 'searching the files below it reads' : 'listing everything below it reads';
  const first = blocked[0]!;
  const message =
    `${r.display}: ${what} ${names}, and ${first.message}. ` +
    `Bulwark checks every file a search would read (it cannot leave files out of another agent's search): search a narrower path that holds no protected file${instead}, or name the files to read`;
  return [...out, ...hits.filter((f) => f.effect.kind !== 'block'), ...blocked.map((f) => ({ ...f, message }))];
}

/** A hidden component (`/.env`, `/.git/`) in a path below a search root (the part after the root). */
const HIDDEN_BELOW = /\/\.[^/]/;

/** Ignore files (git's, ripgrep's, fd's, ag's, hg's) whose `!pattern` lines make rg, fd and ag read hidden entries they name. */
const IGNORE_FILES = ['.gitignore', '.ignore', '.rgignore', '.fdignore', '.agignore', '.hgignore'];

/**
 * Whether an ignore file the search consults may re-include hidden entries (a `!` line: ripgrep
 * searches what an ignore file whitelists even when hidden): those below the root, in its parent
 * directories, each repository's .git/info/exclude and the user's global git excludes. A file that
 * exists but cannot be read, or a port that cannot read, counts as one that may.
 */
function mayReincludeHidden(root: string, entries: readonly string[], ctx: Ctx): boolean {
  if (!ctx.fs.readText || !ctx.fs.statFile) return true;
  const files = entries.filter((e) => IGNORE_FILES.includes(basename(e)) || e.endsWith('/.git/info/exclude'));
  for (let d = root; ; d = d.slice(0, d.lastIndexOf('/'))) {
    for (const n of IGNORE_FILES) files.push(`${d}/${n}`);
    files.push(`${d}/.git/info/exclude`);
    if (d === '') break;
  }
  const home = ctx.home.replace(/\/+$/, '');
  files.push(`${home}/.config/git/ignore`, `${home}/.config/fd/ignore`);
  // Git's global excludes file, as the user's and the system's configuration name it (one that
  // includes other configuration files may name it there: unknown).
  for (const config of [`${home}/.gitconfig`, `${home}/.config/git/config`, '/etc/gitconfig']) {
    const text = ctx.fs.statFile(config) ? ctx.fs.readText(config, 1 << 20) : '';
    if (text === undefined || /^\s*\[\s*include/im.test(text)) return true;
    for (const m of text.matchAll(/^\s*excludesfile\s*=\s*(.*?)\s*$/gim)) {
      const v = m[1]!.replace(/^"(.*)"$/, '$1');
      if (!v.startsWith('/') && !v.startsWith('~/')) return true;
      files.push(v.startsWith('~/') ? home + v.slice(1) : v);
    }
  }
  for (const f of files) {
    if (!ctx.fs.statFile(f)) continue;
    const text = ctx.fs.readText(f, 1 << 20);
    if (text === undefined || /^\s*!/m.test(text)) return true;
  }
  return false;
}

/** A test for base names admitted by an include filter (case-insensitive, so it admits at least what the tool would); undefined = all. */
function nameFilter(globs: readonly string[] | undefined): ((name: string) => boolean) | undefined {
  if (!globs || globs.length === 0) return undefined;
  const ms = globs.map(
    (g) => new Minimatch(g, { dot: true, nocase: true, noext: true, nonegate: true, nocomment: true, noglobstar: true }),
  );
  return (name) => ms.some((m) => m.match(name));
}

/** How a glob touch is shown: `dir/pattern`, with `**` between them for depth `tree`. */
export function patternPath(dir: string, pattern: string, depth: PathTouch['depth']): string {
  return `${dir.replace(/[\\/]+$/, '')}/${depth === 'tree' ? '**/' : ''}${pattern}`;
}

/** Most entries listed to expand one glob; a directory with more is checked as a whole. */
const MAX_GLOB_ENTRIES = 2000;

/**
 * A glob over a directory's entries (`rm -f *.log`, `sed -i … *.md`): each entry on disk whose
 * name it matches is checked as a touched path (and, for a delete, what lies below it), and so is
 * each protected location below the directory whose name it could match, whether or not it
 * exists, and so is the pattern itself as a name (what the shell uses when nothing matches). The
 * match is case-insensitive and lets a `*` match a leading dot, so it matches at least what the
 * shell would. When the directory cannot be listed, or holds too many entries (or matches), the
 * whole directory counts as touched, as for a literal path. With depth `tree` (`find DIR -name P
 * -delete`, `-exec rm -rf {} +`) the entries are those anywhere below the directory, and a
 * protected location counts when any component of its path below the directory could match.
 */
function checkPattern(touch: PathTouch, pattern: string, ctx: Ctx): PathFinding[] {
  const dir: PathTouch = { path: touch.path, access: touch.access, source: touch.source };
  const r = resolveTouch(dir, ctx);
  if (!('candidates' in r)) return [r];
  const tree = touch.depth === 'tree';
  const display = patternPath(touch.path, pattern, touch.depth);
  const matcher = new Minimatch(pattern, {
    dot: true,
    nocase: true,
    nobrace: true,
    noext: true,
    nonegate: true,
    nocomment: true,
    noglobstar: true,
  });
  // A glob that matches nothing is passed on literally: `> ~/.ssh/auth*` creates that name.
  const out: PathFinding[] = tree
    ? []
    : checkOnePath({ path: display, access: touch.access, source: touch.source }, ctx).filter((f) => f.effect.kind !== 'none');
  for (const candidate of r.candidates) {
    const dirKey = matchKey(candidate, ctx.platform);
    for (const c of rulesBelow(ctx.rules, dirKey)) {
      for (const p of c.prefixes) {
        if (p === dirKey || !isWithin(p, dirKey)) continue;
        const names = p.slice(dirKey.length).replace(/^\//, '').split('/');
        if ((tree ? names : names.slice(0, 1)).some((name) => name !== '' && matcher.match(name))) {
          out.push(finding(display, p, touch.access, c, touch.access === 'delete' ? 'deleting it would remove' : 'it may write'));
        }
      }
    }
    const listed = tree ? listBelow(ctx.fs, candidate) : listChildren(ctx.fs, candidate, ctx.platform);
    const children = listed?.filter((e) => matcher.match(basename(e)));
    if (!children || children.length > MAX_GLOB_ENTRIES) {
      out.push(...checkOnePath(dir, ctx));
      if (touch.access === 'delete') out.push(...checkBelow(dir, ctx));
      continue;
    }
    for (const child of children) {
      const t: PathTouch = { path: child, access: touch.access, source: touch.source };
      out.push(...checkOnePath(t, ctx).map((f) => (f.effect.kind === 'none' ? f : { ...f, message: `${display}: ${f.message}` })));
      if (touch.access === 'delete') out.push(...checkBelow(t, ctx));
    }
  }
  return out.length
    ? out
    : [
        {
          path: display,
          access: touch.access,
          level: 'unprotected',
          effect: { kind: 'none' },
          message: `${display} matches no protected path`,
        },
      ];
}

/** Most entries listed below a directory to find the ones a `find -name` test matches. */
const MAX_FIND_ENTRIES = 50_000;

/** Every entry below `dir`, or undefined when they cannot all be listed. */
function listBelow(fs: FileSystemPort, dir: string): string[] | undefined {
  const tree = fs.listTree(dir, MAX_FIND_ENTRIES);
  return tree && !tree.truncated ? tree.entries : undefined;
}

/** The entries directly in `dir`, or undefined when they cannot all be listed. */
function listChildren(fs: FileSystemPort, dir: string, platform: Platform): string[] | undefined {
  const tree = fs.listTree(dir, MAX_GLOB_ENTRIES);
  if (!tree) return undefined;
  const base = safeNormalize(dir, platform).replace(/\/+$/, '');
  const inDir = (e: string) => {
    const n = safeNormalize(e, platform);
    return n.startsWith(base + '/') && !n.slice(base.length + 1).includes('/');
  };
  const children = tree.entries.filter(inDir);
  // The listing is breadth-first: with an entry below a child, every child was listed.
  if (tree.truncated && children.length === tree.entries.length) return undefined;
  return children;
}

/** copy_dir / move_dir: each source file is read (or removed) and written at its destination. */
function checkTreeCopy(src: PathTouch, dst: PathTouch, ctx: Ctx): PathFinding[] {
  const s = resolveTouch(src, ctx);
  const d = resolveTouch(dst, ctx);
  if (!('candidates' in s) || !('candidates' in d)) return [];
  const sourceDir = s.candidates[s.candidates.length - 1]!;
  const tree = ctx.fs.listTree(sourceDir, MAX_TREE_ENTRIES);
  if (!tree) return [];
  const out: PathFinding[] = tree.truncated ? [tooLarge(s.display, dst.access)] : [];
  const destDirs = [d.normalized, `${d.normalized}/${basename(sourceDir)}`];
  for (const entry of tree.entries) {
    const rel = safeNormalize(entry, ctx.platform).slice(normalizePath(sourceDir, ctx.platform).length);
    out.push(...checkOnePath({ path: entry, access: src.access, source: src.source }, ctx));
    for (const dir of destDirs) {
      for (const f of checkOnePath({ path: dir + rel, access: 'write', source: dst.source }, ctx)) {
        if (f.effect.kind !== 'none')
          out.push({ ...f, path: d.display, resolved: dir + rel, message: `${d.display}: writing ${dir + rel} — ${f.message}` });
      }
    }
  }
  return out;
}

function safeNormalize(p: string, platform: Platform): string {
  try {
    return normalizePath(p, platform);
  } catch {
    return p;
  }
}

function tooLarge(display: string, access: PathAccess): PathFinding {
  return {
    path: display,
    access,
    level: 'escalate_tier2',
    ruleId: 'protection.tree_too_large',
    effect: { kind: 'min_tier', tier: 2 },
    message: `${display} holds more than ${MAX_TREE_ENTRIES} entries, too many to check each one for protected files`,
  };
}

function finding(display: string, resolved: string | undefined, access: PathAccess, c: CompiledRule, verb?: string): PathFinding {
  const level = c.rule.level;
  const effect = effectOf(level, access);
  const target = resolved ? `${display} (${verb ?? 'resolves to'} ${resolved})` : display;
  let what = LEVEL_PHRASE[level];
  if (effect.kind === 'block' && level === 'escalate_tier2') what = 'cannot be deleted by agents';
  return {
    path: display,
    resolved,
    access,
    level,
    ruleId: c.rule.id,
    effect,
    message: `${target} ${what} (rule ${c.rule.id}): ${c.rule.reason}`,
  };
}

const effectRank = (e: Effect): number => (e.kind === 'block' ? 10 : e.kind === 'min_tier' ? e.tier : 0);
function outranks(a: PathFinding, b: PathFinding): boolean {
  const d = effectRank(a.effect) - effectRank(b.effect);
  return d !== 0 ? d > 0 : levelRank(a.level) > levelRank(b.level);
}

function summarise(all: PathFinding[]): ProtectionResult {
  let level: ProtectionLevel = 'unprotected';
  let minTier: Tier = 0;
  const seen = new Set<string>();
  const sandboxHides = all
    .filter((f) => f.sandboxHides)
    .flatMap((f) => {
      const path = f.resolved ?? f.path;
      if (seen.has(path)) return [];
      seen.add(path);
      return [{ path, ruleId: f.ruleId! }];
    });
  // What the sandbox hides is not read: it neither raises the level nor explains the decision.
  const findings = all.filter((f) => !f.sandboxHides);
  for (const f of findings) {
    if (levelRank(f.level) > levelRank(level)) level = f.level;
    if (f.effect.kind === 'min_tier' && f.effect.tier > minTier) minTier = f.effect.tier;
  }
  const ids = (fs: PathFinding[]) => [...new Set(fs.flatMap((f) => (f.ruleId ? [f.ruleId] : [])))];
  const blocks = findings.filter((f) => f.effect.kind === 'block').sort((a, b) => levelRank(b.level) - levelRank(a.level));
  if (blocks.length) {
    return { allowed: false, level, minTier, rules: ids(blocks), reason: `Blocked: ${blocks[0]!.message}.`, findings, sandboxHides };
  }
  const raising = findings.filter((f) => f.effect.kind === 'min_tier').sort((a, b) => effectRank(b.effect) - effectRank(a.effect));
  if (raising.length) {
    return { allowed: true, level, minTier, rules: ids(raising), reason: `Protected: ${raising[0]!.message}.`, findings, sandboxHides };
  }
  const protectedRead = findings.find((f) => f.level !== 'unprotected');
  return {
    allowed: true,
    level,
    minTier: 0,
    rules: protectedRead?.ruleId ? [protectedRead.ruleId] : [],
    reason: protectedRead ? `Allowed: ${protectedRead.message}; this action only reads it.` : 'No protection rule applies.',
    findings,
    sandboxHides,
  };
}
