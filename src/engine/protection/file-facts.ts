// What protection learns about a file from the file itself, beyond its name: what its first bytes
// are (a private key, public material) and, for a file with more than one name (hard links),
// which protected file it also is. Cached per engine instance by the file's identity, so a file
// is read once until it changes; bounded per action, so a search over many files stays cheap.
import type { FileFacts, FileSystemPort } from '../ports';
import type { Platform } from '../types';
import { levelRank } from '../types';
import { matchKey, normalizePath } from '../paths';
import { HEAD_BYTES, isPublicMaterial, privateKeySignature, publicMaxBytes, type ContentSignature } from './content';
import { ruleMatches, type CompiledRule } from './tables';
import { findSecrets, loadSecretRules } from '../secrets';

/** Most files whose content one action may read (cache misses); more are counted unchecked. */
export const MAX_CONTENT_READS_PER_ACTION = 12_000;
/** Time one action may spend reading file contents; what is left after it is counted unchecked. */
export const CONTENT_TIME_BUDGET_MS = 3000;
/** Files remembered by identity (each a few dozen bytes); the oldest are forgotten first. */
const MAX_CACHED_FILES = 50_000;
/** Most bytes of a hard link with no protected name that are scanned for secrets before it may be read. */
export const HARD_LINK_SCAN_BYTES = 256 * 1024;
/** A hard-link index older than this is rebuilt before a link is called unknown. */
export const LINK_INDEX_TTL_MS = 5000;
/** File systems keep times coarser than the clock (FAT: 2 s): a status change this close before the index counts as after it. */
const CTIME_SLACK_MS = 3000;
/** Most entries listed below one protected location, and in all, to build the hard-link index. */
const MAX_INDEX_ENTRIES_PER_LOCATION = 5000;
const MAX_INDEX_ENTRIES = 25_000;

/** What one action may still spend on contents, and what it could not check. */
export interface ContentScope {
  reads: number;
  readonly startedAt: number;
  /** Paths whose content was not read because the budget ran out. */
  readonly unchecked: string[];
  /** The hard-link index was rebuilt for this action (at most once). */
  rebuiltIndex: boolean;
}

/** A protected file that is the same file (device and inode) as the one touched. */
export interface LinkTarget {
  readonly path: string;
  readonly rule: CompiledRule;
}

/** How a hard link with no protected name reads: text without secrets, or something to review. */
export type UnknownLinkContent = 'clean' | 'secret' | 'binary' | 'large' | 'unreadable';

interface CachedFile {
  signature?: ContentSignature | null;
  publicMaterial?: boolean;
  linkContent?: UnknownLinkContent;
}

const identityKey = (f: FileFacts): string => `${f.dev}:${f.ino}`;
const versionKey = (f: FileFacts): string => `${f.dev}:${f.ino}:${f.size}:${f.mtime}:${f.ctime}`;

export class FileFactsCache {
  private readonly files = new Map<string, CachedFile>();
  private index: Map<string, LinkTarget[]> | undefined;
  private indexRules: readonly CompiledRule[] | undefined;
  private indexBuiltAt = 0;
  /** What each protected location was when the index was built (a file added to ~/.aws changes the directory). */
  private indexLocations = '';

  constructor(readonly now: () => number = () => Date.now()) {}

  newScope(): ContentScope {
    return { reads: 0, startedAt: this.now(), unchecked: [], rebuiltIndex: false };
  }

  private entry(f: FileFacts): CachedFile {
    const key = versionKey(f);
    let e = this.files.get(key);
    if (!e) {
      if (this.files.size >= MAX_CACHED_FILES) {
        for (const k of [...this.files.keys()].slice(0, MAX_CACHED_FILES / 10)) this.files.delete(k);
      }
      e = {};
      this.files.set(key, e);
    }
    return e;
  }

  /** False (and the path counted unchecked) once the action has spent its content budget. */
  private spend(scope: ContentScope, path: string): boolean {
    if (scope.reads >= MAX_CONTENT_READS_PER_ACTION || this.now() - scope.startedAt > CONTENT_TIME_BUDGET_MS) {
      scope.unchecked.push(path);
      return false;
    }
    scope.reads++;
    return true;
  }

  /**
   * The private-key signature of the file's first bytes, null when it has none, undefined when
   * unknown (unreadable, or the action's budget is spent).
   */
  privateKey(fs: FileSystemPort, path: string, f: FileFacts, scope: ContentScope): ContentSignature | null | undefined {
    const e = this.entry(f);
    if (e.signature !== undefined) return e.signature;
    if (!fs.readHead || !this.spend(scope, path)) return undefined;
    const head = fs.readHead(path, HEAD_BYTES);
    if (head === undefined) return undefined;
    e.signature = privateKeySignature(head, f.size) ?? null;
    return e.signature;
  }

  /** True when all of the file is public material (read whole, up to the table's bound). */
  publicMaterial(fs: FileSystemPort, path: string, f: FileFacts, scope: ContentScope): boolean {
    if (f.size > publicMaxBytes()) return false;
    const e = this.entry(f);
    if (e.publicMaterial !== undefined) return e.publicMaterial;
    if (!fs.readHead || !this.spend(scope, path)) return false;
    const bytes = fs.readHead(path, f.size);
    // A file that changed size since it was stat'ed is not vouched for.
    if (bytes === undefined || bytes.length !== f.size) return false;
    e.publicMaterial = isPublicMaterial(bytes);
    return e.publicMaterial;
  }

  /** What a hard link with no protected name holds: readable only when it is text in which no secret detector fires. */
  unknownLinkContent(fs: FileSystemPort, path: string, f: FileFacts, scope: ContentScope): UnknownLinkContent {
    if (f.size > HARD_LINK_SCAN_BYTES) return 'large';
    const e = this.entry(f);
    if (e.linkContent !== undefined) return e.linkContent;
    if (!fs.readHead || !this.spend(scope, path)) return 'unreadable';
    const bytes = fs.readHead(path, HARD_LINK_SCAN_BYTES);
    if (bytes === undefined || bytes.length !== f.size) return 'unreadable';
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      e.linkContent = 'binary';
      return e.linkContent;
    }
    e.linkContent = text.includes('\u0000') ? 'binary' : findSecrets(loadSecretRules(), text).length ? 'secret' : 'clean';
    return e.linkContent;
  }

  /**
   * The protected files that are the same file as `f` (a hard link), or 'unknown' when none of the
   * protected files Bulwark can list is: its other names may be anywhere on the device. The index
   * is built when first needed and each hit is verified by stat'ing the protected path again. Before
   * a link is called unknown, the index is rebuilt (at most once per action) when a hit was stale,
   * when a protected location changed since it was built (a file added to or replaced in it), or
   * when it is older than LINK_INDEX_TTL_MS (a change deeper below a location).
   */
  linkTargets(
    f: FileFacts,
    rules: readonly CompiledRule[],
    fs: FileSystemPort,
    platform: Platform,
    scope: ContentScope,
  ): LinkTarget[] | 'unknown' {
    const lookup = (): { hits: LinkTarget[]; stale: boolean } => {
      const all = this.index!.get(identityKey(f)) ?? [];
      const hits = all.filter((t) => {
        const now = fs.statFile?.(t.path);
        return now !== undefined && identityKey(now) === identityKey(f);
      });
      return { hits, stale: hits.length < all.length };
    };
    if (!this.index || this.indexRules !== rules) {
      this.rebuild(rules, fs, platform);
      scope.rebuiltIndex = true;
    }
    let r = lookup();
    if (r.hits.length === 0 && !scope.rebuiltIndex) {
      scope.rebuiltIndex = true;
      if (r.stale || this.now() - this.indexBuiltAt > LINK_INDEX_TTL_MS || this.locationsChanged(f, rules, fs)) {
        this.rebuild(rules, fs, platform);
        r = lookup();
      }
    }
    return r.hits.length ? r.hits : 'unknown';
  }

  /**
   * Whether a protected location changed since the index was built. Stat'ing every location costs
   * hundreds of system calls, and a store full of hard links (pnpm's, Nix's) would pay it on every
   * action. A new name for this file (a link made into a protected location) changes its status
   * time, so only a file whose status changed around or after the index was built can have a
   * protected name the index does not know; for the others, the index's own TTL is enough.
   */
  private locationsChanged(f: FileFacts, rules: readonly CompiledRule[], fs: FileSystemPort): boolean {
    let ctimeMs: number;
    try {
      ctimeMs = Number(BigInt(f.ctime) / 1_000_000n);
    } catch {
      ctimeMs = Infinity;
    }
    if (ctimeMs < this.indexBuiltAt - CTIME_SLACK_MS) return false;
    return locationsState(rules, fs) !== this.indexLocations;
  }

  /**
   * Every existing protected file with more than one link, by device and inode. The locations of
   * the most protective rules are listed first, so when the listing bound cuts the index short, it
   * is the least protected files that are missing (a link to them is then called unknown).
   */
  private rebuild(rules: readonly CompiledRule[], fs: FileSystemPort, platform: Platform): void {
    const index = new Map<string, LinkTarget[]>();
    const listings = new Map<string, { path: string; physical: string }[]>();
    let budget = MAX_INDEX_ENTRIES;
    const ordered = [...rules].sort((a, b) => levelRank(b.rule.level) - levelRank(a.rule.level));
    const add = (path: string, physical: string, c: CompiledRule) => {
      let key: string;
      try {
        key = matchKey(normalizePath(path, platform), platform);
      } catch {
        return;
      }
      if (!ruleMatches(c, key)) return;
      const st = fs.statFile?.(physical);
      if (!st || st.kind !== 'file' || st.nlink < 2) return;
      const id = identityKey(st);
      const list = index.get(id) ?? [];
      if (!list.some((t) => t.path === path && t.rule === c)) list.push({ path, rule: c });
      index.set(id, list);
    };
    for (const c of ordered) {
      for (const location of c.locations) {
        const physical = fs.resolvePhysical(location) ?? location;
        const st = fs.statFile?.(physical);
        if (!st) continue;
        if (st.kind === 'file') {
          add(location, physical, c);
          continue;
        }
        if (st.kind !== 'directory') continue;
        let entries = listings.get(physical);
        if (!entries) {
          const tree = budget > 0 ? fs.listTree(physical, Math.min(MAX_INDEX_ENTRIES_PER_LOCATION, budget)) : undefined;
          // Entries are shown under the location as the rules name it (the protected directory may be a link).
          entries = (tree?.entries ?? []).map((e) => ({ path: location + e.slice(physical.length), physical: e }));
          budget -= entries.length;
          listings.set(physical, entries);
        }
        for (const e of entries) add(e.path, e.physical, c);
      }
    }
    this.index = index;
    this.indexRules = rules;
    this.indexBuiltAt = this.now();
    this.indexLocations = locationsState(rules, fs);
  }
}

/** The identity and times of every protected location, as one string to compare. */
function locationsState(rules: readonly CompiledRule[], fs: FileSystemPort): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const c of rules) {
    for (const location of c.locations) {
      if (seen.has(location)) continue;
      seen.add(location);
      const st = fs.statFile?.(location);
      parts.push(st ? `${st.dev}:${st.ino}:${st.mtime}:${st.ctime}` : '-');
    }
  }
  return parts.join('|');
}
