// Every path and URL an action's payload names, whatever the field is called or how deep it sits.
// Agents use their own field names (`file_path`, `filePath`, `uri`, `files[].path`, `edits[0].file`),
// so the declared path fields of a known type are not enough: every other string that is a path
// (absolute, `~/…`, a `file://` URI, or any string under a key that says path/file/dir/…) is a
// touch with the type's access, and every URL is a network target. Strings under content keys
// (`content`, `new_string`, `command`, `query`, …) are text, not targets (Tier 1 scans them).
// What cannot be interpreted (a number where a path belongs, nesting or size beyond the bounds)
// is reported as `unclear`: the engine escalates it to Tier 2 instead of guessing.
import type { ActionRequest, PathAccess, Platform } from './types';
import type { PathTouch } from './protection/check';
import { PathError } from './paths';
import { PATH_FIELDS, accessOf, actionSpec, isKnownActionType } from './actions';

/** Deepest nesting walked; anything deeper is unclear. */
export const MAX_PAYLOAD_DEPTH = 12;
/** Most values (strings, numbers, …) walked; the rest is unclear. */
export const MAX_PAYLOAD_VALUES = 2000;
/** Most URLs checked in one payload; more is unclear. */
export const MAX_PAYLOAD_URLS = 32;
/** Most unclear parts reported (the first ones name the fields). */
const MAX_UNCLEAR = 20;
/** Longer strings are text, not paths. */
const MAX_PATH_CHARS = 4096;

export interface PayloadUrl {
  readonly url: string;
  /** Where it was found, e.g. `headers.Referer`. */
  readonly field: string;
  /** http(s): checked like an http_request. Other schemes (`wss://`, `ftp://`) only count as network for IFC. */
  readonly http: boolean;
}

export interface UnclearPart {
  readonly field: string;
  readonly why: string;
}

export interface PayloadTargets {
  readonly touches: PathTouch[];
  readonly urls: PayloadUrl[];
  readonly unclear: UnclearPart[];
}

/** Keys whose strings are text (compared lower-case, without `_`, `-`, `.`). */
const CONTENT_KEYS: ReadonlySet<string> = new Set([
  'content',
  'contents',
  'text',
  'texts',
  'body',
  'html',
  'markdown',
  'code',
  'snippet',
  'insert',
  'replacement',
  'replace',
  'newstring',
  'oldstring',
  'newstr',
  'oldstr',
  'newtext',
  'oldtext',
  'newcontent',
  'oldcontent',
  'newsource',
  'patch',
  'patches',
  'diff',
  'command',
  'commands',
  'cmd',
  'commandline',
  'script',
  'query',
  'queries',
  'q',
  'search',
  'searchterm',
  'keywords',
  'sql',
  'pattern',
  'patterns',
  'regex',
  'glob',
  'globs',
  'include',
  'exclude',
  'filter',
  'description',
  'prompt',
  'message',
  'messages',
  'subject',
  'title',
  'summary',
  'comment',
  'comments',
  'note',
  'notes',
  'reason',
  'explanation',
  'instructions',
]);

/** Words of a key that say its value is a path (`file_path`, `filePath`, `targetDir`, `working_directory`). */
const PATH_WORDS: ReadonlySet<string> = new Set([
  'path',
  'paths',
  'pathname',
  'file',
  'files',
  'filename',
  'filenames',
  'filepath',
  'filepaths',
  'dir',
  'dirs',
  'dirname',
  'directory',
  'directories',
  'folder',
  'folders',
  'uri',
  'uris',
  'target',
  'targets',
  'source',
  'sources',
  'src',
  'dest',
  'dst',
  'destination',
  'destinations',
  'cwd',
  'root',
  'roots',
  'workdir',
  'oldpath',
  'newpath',
]);
/** Words of a path key that name what a copy or move reads or removes. */
const SOURCE_WORDS: ReadonlySet<string> = new Set(['source', 'sources', 'src', 'from', 'origin', 'old', 'oldpath']);

type KeyClass = 'content' | 'path' | 'plain';

function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function classOfKey(key: string): KeyClass | undefined {
  if (CONTENT_KEYS.has(key.toLowerCase().replace(/[-_.\s]/g, ''))) return 'content';
  return keyWords(key).some((w) => PATH_WORDS.has(w)) ? 'path' : undefined;
}

const isSourceKey = (key: string): boolean => keyWords(key).some((w) => SOURCE_WORDS.has(w));

/** Keys that say where a tool runs, not what it changes: a read of that directory, whatever the type. */
const LOCATION_KEYS: ReadonlySet<string> = new Set(['cwd', 'workdir', 'workingdir', 'workingdirectory', 'currentdir', 'currentdirectory']);
const isLocationKey = (key: string): boolean => LOCATION_KEYS.has(key.toLowerCase().replace(/[-_.\s]/g, ''));

/** An absolute path in any platform's spelling, or one under the home directory. */
function looksAbsolute(s: string, platform: Platform | undefined): boolean {
  if (s === '~' || s.startsWith('~/')) return true;
  if (s.startsWith('/')) return platform !== 'win32' || s.startsWith('//');
  const win = /^[A-Za-z]:[\\/]/.test(s) || s.startsWith('\\\\') || s.startsWith('~\\');
  return win && (platform === undefined || platform === 'win32');
}

type StringTarget =
  | { readonly kind: 'url'; readonly url: string; readonly http: boolean }
  | { readonly kind: 'path'; readonly path: string }
  | { readonly kind: 'unclear'; readonly why: string };

/** `file:///home/u/x` → `/home/u/x`, `file:///C:/x` → `C:/x`; undefined when it cannot be decoded. */
export function fileUriToPath(uri: string): string | undefined {
  const m = /^file:(\/\/([^/?#]*))?([^?#]*)/i.exec(uri);
  if (!m) return undefined;
  const host = m[2] ?? '';
  let path: string;
  try {
    path = decodeURIComponent(m[3] ?? '');
  } catch {
    return undefined;
  }
  if (!path.startsWith('/')) return undefined;
  if (/^\/[A-Za-z]:([/\\]|$)/.test(path)) path = path.slice(1);
  if (host !== '' && host.toLowerCase() !== 'localhost') return `//${host}${path}`;
  return path;
}

/** What one string names, judged by its text alone (`underPathKey`: a relative string is a path too). */
function targetOfString(s: string, underPathKey: boolean, platform: Platform | undefined): StringTarget | undefined {
  const t = s.trim();
  if (/^https?:\/\//i.test(t)) return { kind: 'url', url: t, http: true };
  if (/^file:/i.test(t)) {
    const p = fileUriToPath(t);
    return p === undefined ? { kind: 'unclear', why: `the file URI \`${clip(t)}\` cannot be decoded` } : { kind: 'path', path: p };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/\s]/i.test(t) && !/^[a-z]:[\\/]/i.test(t)) return { kind: 'url', url: t, http: false };
  if (s.length > MAX_PATH_CHARS || /[\r\n]/.test(s)) {
    return underPathKey
      ? { kind: 'unclear', why: `${s.length > MAX_PATH_CHARS ? 'is too long' : 'spans several lines'} to be a path` }
      : undefined;
  }
  if (looksAbsolute(s, platform)) return { kind: 'path', path: s };
  // `--key=/home/u/.ssh/id_rsa`: an option's value.
  const opt = /^--?[A-Za-z0-9][\w-]*=(.+)$/.exec(s);
  if (opt && (looksAbsolute(opt[1]!, platform) || /^file:/i.test(opt[1]!))) return targetOfString(opt[1]!, false, platform);
  if (underPathKey && s !== '') return { kind: 'path', path: s };
  return undefined;
}

const clip = (s: string): string => (s.length > 80 ? `${s.slice(0, 79)}…` : s);

/**
 * The include filter of a search (`include: "*.ts"` or a list): base-name globs the files it reads
 * must match. Anything else (a path glob, an exclusion, not a string) means no filter: all are read.
 */
function includeOf(value: unknown): string[] | undefined {
  const globs = typeof value === 'string' ? [value] : Array.isArray(value) ? value : undefined;
  if (!globs || globs.length === 0) return undefined;
  const out: string[] = [];
  for (const g of globs) {
    if (typeof g !== 'string') return undefined;
    const base = g.replace(/^(\*\*\/)+/, '');
    if (base === '' || base.startsWith('!') || base.includes('/') || base.includes('\\')) return undefined;
    out.push(base);
  }
  return out;
}

/** Whether a list_directory-style payload asks for recursion. */
function asksRecursion(payload: Readonly<Record<string, unknown>>): boolean {
  const r = payload.recursive;
  if (r !== undefined && r !== false && r !== null) return true;
  return ['depth', 'max_depth', 'maxDepth'].some((k) => {
    const d = payload[k];
    return d !== undefined && d !== null && !(typeof d === 'number' && d <= 1);
  });
}

/**
 * The paths and URLs of a payload. The declared path fields of a known type keep today's strict
 * shape (a string or an array of strings, else PathError: a caller bug is refused clearly); every
 * other string is found by the walk, and what the walk cannot interpret is `unclear`.
 */
export function payloadTargetsOf(action: ActionRequest, platform?: Platform): PayloadTargets {
  const spec = actionSpec(action.type);
  const known = isKnownActionType(action.type);
  const below =
    spec.search === 'contents'
      ? 'contents'
      : spec.search === 'names'
        ? 'names'
        : spec.search === 'names_if_recursive' && asksRecursion(action.payload)
          ? 'names'
          : undefined;
  const touches: PathTouch[] = [];
  const urls: PayloadUrl[] = [];
  const unclear: UnclearPart[] = [];
  const names = below ? includeOf(action.payload.include) : undefined;
  const addTouch = (path: string, access: PathAccess, source: string, inferred: boolean) => {
    touches.push({
      path,
      access,
      source,
      ...(inferred ? { inferred: true } : {}),
      ...(below && access === 'read' ? { below, ...(names ? { belowNames: names } : {}) } : {}),
    });
  };

  let values = 0;
  let stopped = false;
  const inferredAccess = (key: string): PathAccess =>
    isLocationKey(key) ? 'read' : spec.sourceAccess !== undefined && isSourceKey(key) ? spec.sourceAccess : spec.access;
  const visit = (value: unknown, field: string, key: string, cls: KeyClass, depth: number, access?: PathAccess): void => {
    if (stopped) return;
    if (++values > MAX_PAYLOAD_VALUES) {
      unclear.push({ field, why: `the payload holds more than ${MAX_PAYLOAD_VALUES} values; the rest was not checked for paths and URLs` });
      stopped = true;
      return;
    }
    if (typeof value === 'string') {
      if (cls === 'content') return;
      const t = targetOfString(value, cls === 'path', platform);
      if (!t) return;
      if (t.kind === 'url') urls.push({ url: t.url, field, http: t.http });
      else if (t.kind === 'path') addTouch(t.path, access ?? inferredAccess(key), field, true);
      else unclear.push({ field, why: t.why });
      return;
    }
    if (value === null || value === undefined) return;
    if (typeof value !== 'object') {
      if (cls === 'path')
        unclear.push({ field, why: `is ${typeof value === 'number' ? 'a number' : `a ${typeof value}`} where a path is expected` });
      return;
    }
    if (depth >= MAX_PAYLOAD_DEPTH) {
      unclear.push({ field, why: `is nested deeper than ${MAX_PAYLOAD_DEPTH} levels; what lies below was not checked for paths and URLs` });
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => visit(v, `${field}[${i}]`, key, cls, depth + 1, access));
      return;
    }
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (depth === 0 && declared.has(k)) continue;
      const at = field ? `${field}.${k}` : k;
      // A key that is itself a path (`{"/home/u/.ssh/id_rsa": "…"}`, a map from files to content).
      const keyTarget = looksAbsolute(k, platform) || /^file:/i.test(k) ? targetOfString(k, false, platform) : undefined;
      if (keyTarget?.kind === 'path') addTouch(keyTarget.path, access ?? spec.access, `${at} (key)`, true);
      else if (keyTarget?.kind === 'unclear') unclear.push({ field: `${at} (key)`, why: keyTarget.why });
      // Content is inherited by plain keys below it; a path key inside content is still a path.
      visit(v, at, k, classOfKey(k) ?? (cls === 'content' ? 'content' : 'plain'), depth + 1, access);
    }
  };
  // A declared field keeps today's strict path handling, except that a URL in it is a URL and a
  // file URI is the path it names.
  const addDeclared = (v: string, at: string, access: PathAccess) => {
    const t = /^[a-z][a-z0-9+.-]*:/i.test(v) && !/^[a-z]:[\\/]/i.test(v) ? targetOfString(v, false, platform) : undefined;
    if (t?.kind === 'url') urls.push({ url: t.url, field: at, http: t.http });
    else if (t?.kind === 'unclear') throw new PathError(`payload field \`${at}\`: ${t.why}`, v);
    else addTouch(t?.kind === 'path' ? t.path : v, access, at.replace(/\[\d+\]$/, ''), false);
  };
  const declared = new Set<string>();
  if (known) {
    for (const field of PATH_FIELDS) {
      const value = action.payload[field];
      if (value === undefined || value === null) continue;
      declared.add(field);
      const list = Array.isArray(value) ? value : [value];
      list.forEach((v, i) => {
        if (typeof v === 'string') addDeclared(v, Array.isArray(value) ? `${field}[${i}]` : field, accessOf(spec, field));
        // `files: [{ path, … }]`: the paths inside are found by the walk, with this field's access.
        else if (typeof v === 'object' && v !== null)
          visit(v, Array.isArray(value) ? `${field}[${i}]` : field, field, 'path', 1, accessOf(spec, field));
        else throw new PathError(`payload field \`${field}\` must be a string path`, String(v));
      });
    }
  }

  visit(action.payload, '', '', 'plain', 0);
  if (unclear.length > MAX_UNCLEAR) unclear.length = MAX_UNCLEAR;
  if (urls.length > MAX_PAYLOAD_URLS) {
    unclear.push({
      field: urls[MAX_PAYLOAD_URLS]!.field,
      why: `the payload names more than ${MAX_PAYLOAD_URLS} URLs, too many to check each one`,
    });
    urls.length = MAX_PAYLOAD_URLS;
  }
  return { touches, urls, unclear };
}
