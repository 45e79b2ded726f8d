// Tier 1 heuristic evaluation of one action: every string of the payload, normalised, against the
// compiled rules. Pure and synchronous.
import { loadSecretRules, redactSecrets } from '../secrets';
import { emptyReport, mergeReport, prepareField } from './normalize';
import type { KeywordHits } from './prefilter';
import type { CompiledRule, CompiledRuleSet, SearchablePattern } from './rules';
import { FIELD_CLASSES, type FieldClass, type HeuristicFinding, type HeuristicResult, type Severity } from './types';

/** Limits of the payload walk. Strings beyond them are not scanned (the report says `truncated`). */
export const MAX_DEPTH = 4;
export const MAX_STRINGS = 256;
export const MAX_TOTAL_CHARS = 2 * 1024 * 1024;

/**
 * Class of a payload string by the name of its key (lower-cased, `_` and `-` removed). Strings
 * under other keys inherit the class of the nearest classified ancestor, or count as `content`.
 */
export const FIELD_CLASS_OF_KEY: Readonly<Record<string, FieldClass>> = Object.fromEntries([
  ...['command', 'commands', 'cmd', 'commandline', 'args', 'argv', 'arguments', 'script', 'shell', 'exec', 'powershell', 'bash'].map(
    (k) => [k, 'command'],
  ),
  ...[
    'path',
    'paths',
    'source',
    'src',
    'destination',
    'dest',
    'dst',
    'dir',
    'directory',
    'file',
    'files',
    'filepath',
    'filename',
    'target',
    'cwd',
    'oldpath',
    'newpath',
  ].map((k) => [k, 'path']),
  ...['url', 'urls', 'uri', 'href', 'link', 'endpoint', 'baseurl', 'webhook'].map((k) => [k, 'url']),
  ...[
    'content',
    'contents',
    'text',
    'data',
    'newstring',
    'oldstring',
    'newtext',
    'oldtext',
    'code',
    'patch',
    'diff',
    'value',
    'insert',
    'replacement',
    'snippet',
  ].map((k) => [k, 'content']),
  ...['body', 'html', 'payload', 'json', 'form'].map((k) => [k, 'body']),
  ...[
    'message',
    'messages',
    'subject',
    'title',
    'description',
    'prompt',
    'comment',
    'note',
    'summary',
    'reason',
    'to',
    'cc',
    'bcc',
    'from',
    'recipient',
    'recipients',
  ].map((k) => [k, 'message']),
  ...['query', 'q', 'search', 'searchterm', 'sql', 'keywords'].map((k) => [k, 'query']),
  ...['pattern', 'patterns', 'glob', 'regex', 'include', 'exclude', 'filter'].map((k) => [k, 'pattern']),
]) as Record<string, FieldClass>;

export interface PayloadString {
  readonly field: string;
  readonly cls: FieldClass;
  readonly text: string;
}

/** Objects with non-string values up to this JSON size are also scanned as JSON text. */
export const MAX_OBJECT_JSON = 4096;

/**
 * Every string of a payload (depth ≤ MAX_DEPTH, at most MAX_STRINGS / MAX_TOTAL_CHARS), with its
 * class. An object that holds booleans, numbers or null (a settings object such as
 * `{"chat.tools.autoApprove": true}`) is also given as its JSON text (class content, field
 * `<path> (JSON)`), when that is at most MAX_OBJECT_JSON characters, so rules about configuration
 * see keys and values together.
 */
export function collectStrings(payload: Readonly<Record<string, unknown>>): { strings: PayloadString[]; truncated: boolean } {
  const strings: PayloadString[] = [];
  let total = 0;
  let truncated = false;
  const push = (field: string, cls: FieldClass, text: string) => {
    if (strings.length >= MAX_STRINGS || total >= MAX_TOTAL_CHARS) {
      truncated = true;
      return;
    }
    total += text.length;
    strings.push({ field, cls, text });
  };
  const visit = (value: unknown, field: string, cls: FieldClass | undefined, depth: number): void => {
    if (typeof value === 'string') {
      if (value.length > 0) push(field, cls ?? 'content', value);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (depth >= MAX_DEPTH) {
      truncated = true;
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => visit(v, `${field}[${i}]`, cls, depth + 1));
      return;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.some(([, v]) => v === null || typeof v === 'boolean' || typeof v === 'number')) {
      let json: string | undefined;
      try {
        json = JSON.stringify(value);
      } catch {
        json = undefined;
      } // cycles: the strings are still scanned
      if (json !== undefined && json.length <= MAX_OBJECT_JSON) push(`${field || 'payload'} (JSON)`, 'content', json);
    }
    for (const [k, v] of entries) {
      const own = FIELD_CLASS_OF_KEY[k.toLowerCase().replace(/[_-]/g, '')];
      visit(v, field ? `${field}.${k}` : k, own ?? cls, depth + 1);
    }
  };
  visit(payload, '', undefined, 0);
  return { strings, truncated };
}

const SEVERITY_RANK: Record<Severity, number> = { critical: 3, high: 2, medium: 1, low: 0 };
const CONFIDENCE: Record<Severity, number> = { critical: 0.95, high: 0.85, medium: 0.7, low: 0.5 };
export const ALLOW_CONFIDENCE = 0.7;
const EXCERPT = 120;

/** At most 120 characters; invisible, control and bidi characters shown as `\u{…}`. */
function excerpt(s: string): string {
  const shown = s.replace(
    /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]|\uDB40[\uDC00-\uDDEF]/g,
    (ch) => `\\u{${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`,
  );
  return shown.length <= EXCERPT ? shown : shown.slice(0, EXCERPT - 1) + '…';
}

/**
 * The matched text as a reason quotes it. A sensitive-data rule's match is the secret itself, so it
 * is never quoted; any other match has its secrets replaced before it is cut to size, so no piece of
 * one is left at the cut.
 */
function evidence(r: CompiledRule, matched: string): string {
  if (r.rule.category === 'sensitive_data') return `[REDACTED:${r.rule.id}]`;
  return excerpt(redactSecrets(loadSecretRules(), matched).text);
}

function rulesFor(set: CompiledRuleSet, actionType: string, cls: FieldClass, alwaysBlockOnly: boolean) {
  const key = `${actionType}\u0000${cls}\u0000${alwaysBlockOnly ? 1 : 0}`;
  let entry = set.cache.get(key);
  if (!entry) {
    const bit = 1 << FIELD_CLASSES.indexOf(cls);
    const list = set.rules.filter(
      (r) => (r.fieldMask & bit) !== 0 && (!r.actionTypes || r.actionTypes.has(actionType)) && (!alwaysBlockOnly || r.alwaysBlock),
    );
    entry = { normalized: list.filter((r) => !r.raw), raw: list.filter((r) => r.raw) };
    if (set.cache.size > 512) set.cache.clear(); // unknown tool names are unbounded
    set.cache.set(key, entry);
  }
  return entry;
}

const passes = (r: SearchablePattern, found: Uint8Array): boolean => r.prefilter.every((set) => set.some((k) => found[k] === 1));

/** Texts shorter than this are searched whole. */
const WINDOWING_FROM = 4096;

/** At most this many alternatives of a rule are searched one by one; with more whose literals occur, the whole regex is. */
const MAX_SEPARATE = 4;

/**
 * Runs a rule's regex on a text. For long texts and rules with a keyword prefilter and a bounded
 * match length L, only windows of ±2L around the occurrences of the rule's least frequent keyword
 * set are searched (every match contains one of those keywords, so it lies inside such a window),
 * and a match found in a window is confirmed with the sticky regex at the same offset of the whole
 * text, so cutting the window cannot create or change a match. A rule that is an alternation at
 * the top (CompiledRule.branches) is searched, in long texts, through those alternatives whose own
 * literals occur (the others cannot match): one by one when they are few, each only before the
 * leftmost match found so far, the earlier alternative winning a tie, which is the whole regex's
 * match; else the whole regex, anchored on their literals.
 */
export function execRule(r: CompiledRule, text: string, hits: KeywordHits): RegExpExecArray | null {
  if (text.length < WINDOWING_FROM) return r.regex.exec(text);
  if (!r.branches) return searchAround(r, text, hits, fewestEnds(r.prefilter, hits));
  const passing: SearchablePattern[] = [];
  for (const b of r.branches) if (passes(b, hits.found)) passing.push(b);
  if (passing.length === 0) return null;
  if (passing.length > MAX_SEPARATE) {
    let ends: number[] | null = [];
    for (const b of passing) {
      const e = fewestEnds(b.prefilter, hits);
      if (!e) {
        ends = null;
        break;
      }
      for (const x of e) ends.push(x);
    }
    return searchAround(r, text, hits, ends);
  }
  let best: RegExpExecArray | null = null;
  for (const b of passing) {
    const m = searchAround(b, text, hits, fewestEnds(b.prefilter, hits), best ? best.index : Infinity);
    if (m && (!best || m.index < best.index)) best = m;
    if (best?.index === 0) break;
  }
  return best;
}

/** End offsets of the occurrences of the set (of `sets`) that occurs least, or null when there is none or each one is dense. */
function fewestEnds(sets: readonly (readonly number[])[], hits: KeywordHits): number[] | null {
  let ends: number[] | null = null;
  for (const set of sets) {
    const e = hits.ends(set);
    if (e && (!ends || e.length < ends.length)) ends = e;
  }
  return ends;
}

/** What trying the sticky regex at one position costs, in characters of a whole-text search. */
const ATTEMPT_COST = 48;
/** What searching one window costs beyond its characters (slicing, starting the search). */
const WINDOW_COST = 64;

/**
 * The pattern's leftmost match that starts before `before` (null if there is none), found the
 * cheapest of three ways: the sticky regex tried at each place a match can start (where its lead
 * keywords start, all of them known), the regex run in windows around `ends` (each match holds one
 * of those keyword ends), or a search of the text (up to where such a match must end). Each finds
 * what the whole-text search finds.
 */
function searchAround(
  r: SearchablePattern,
  text: string,
  hits: KeywordHits,
  ends: number[] | null,
  before = Infinity,
): RegExpExecArray | null {
  const bounded = Number.isFinite(r.maxLength);
  // A match that starts before `before` ends by this offset (and one code unit is room for a final \b).
  const limit = bounded && before < text.length ? Math.min(text.length, before + 2 * r.maxLength + 2) : text.length;
  let windows: [number, number][] | null = null;
  let windowCost = Infinity;
  if (ends && bounded) {
    ends.sort((a, b) => a - b);
    const reach = 2 * r.maxLength + 1;
    windows = [];
    let covered = 0;
    for (const e of ends) {
      const a = Math.max(0, e - reach);
      const b = Math.min(text.length, e + reach);
      if (a >= before) break;
      const prev = windows[windows.length - 1];
      if (prev && a <= prev[1]) {
        covered += Math.max(0, b - prev[1]);
        prev[1] = Math.max(prev[1], b);
      } else {
        windows.push([a, b]);
        covered += b - a;
      }
    }
    if (covered < limit / 2) windowCost = covered + WINDOW_COST * windows.length;
  }
  const starts = r.leads ? hits.starts(r.leads) : null;
  if (starts && starts.count * ATTEMPT_COST < Math.min(windowCost, limit)) {
    // Every match starts at a lead: the first position where the sticky regex matches is the leftmost match.
    const { sticky } = r.windowed();
    for (let q = starts.next(); q >= 0 && q < before; q = starts.next()) {
      sticky.lastIndex = q;
      const m = sticky.exec(text);
      if (m) return m;
    }
    return null;
  }
  if (windowCost === Infinity && limit < text.length) {
    // Only the text a match starting before `before` can reach.
    windows = [[0, limit]];
    windowCost = limit;
  }
  if (windows && windowCost < Infinity) {
    const { global, sticky } = r.windowed();
    for (const [a, b] of windows) {
      if (a >= before) return null;
      const slice = text.slice(a, b);
      global.lastIndex = 0;
      for (let m = global.exec(slice); m; m = global.exec(slice)) {
        if (a + m.index >= before) return null;
        sticky.lastIndex = a + m.index;
        const real = sticky.exec(text);
        if (real) return real;
        global.lastIndex = m.index + 1;
      }
    }
    return null;
  }
  const m = r.regex.exec(text);
  return m && m.index < before ? m : null;
}

/**
 * Runs the heuristic rules on every string of the payload. `alwaysBlockOnly` runs only the
 * `always_block` rules (used when a policy already allowed the action, or when the minimum tier
 * is 2 or more). Never throws on odd payloads; throws only if a rule is broken (a bug: fail closed).
 */
export function evaluateHeuristics(
  rules: CompiledRuleSet,
  actionType: string,
  payload: Readonly<Record<string, unknown>>,
  opts: { alwaysBlockOnly?: boolean } = {},
): HeuristicResult {
  const alwaysBlockOnly = opts.alwaysBlockOnly === true;
  const report = emptyReport();
  const findings: HeuristicFinding[] = [];
  const matched = new Set<string>();
  const { strings, truncated } = collectStrings(payload ?? {});
  report.truncated = truncated;
  const add = (r: CompiledRule, field: string, m: RegExpExecArray, variant: HeuristicFinding['variant']) => {
    matched.add(r.rule.id);
    findings.push({
      ruleId: r.rule.id,
      category: r.rule.category,
      severity: r.rule.severity,
      action: r.rule.action,
      alwaysBlock: r.alwaysBlock,
      field,
      match: evidence(r, m[0]),
      description: r.rule.description,
      ...(variant ? { variant } : {}),
    });
  };
  // Hits are reused across calls (their tables are as large as the keyword automaton).
  const mainHits = rules.keywords.acquire();
  const extraHits = rules.keywords.acquire();
  try {
    for (const s of strings) {
      const applicable = rulesFor(rules, actionType, s.cls, alwaysBlockOnly);
      if (applicable.normalized.length === 0 && applicable.raw.length === 0) continue;
      mainHits.reset();
      const prepared = prepareField(s.text, s.cls === 'command', rules.keywords, mainHits, rules.cues);
      mergeReport(report, prepared.report, s.field);
      if (prepared.raw !== null) {
        for (const r of applicable.raw) {
          if (matched.has(r.rule.id)) continue;
          const m = r.regex.exec(prepared.raw);
          if (m) add(r, s.field, m, 'raw');
        }
      }
      if (applicable.normalized.length === 0) continue;
      for (const v of prepared.variants) {
        let hits = v.hits;
        if (!hits) {
          extraHits.reset();
          hits = rules.keywords.scan(v.text, extraHits);
        }
        for (const r of applicable.normalized) {
          if (matched.has(r.rule.id) || !passes(r, hits.found)) continue;
          const m = execRule(r, v.text, hits);
          if (m) add(r, s.field, m, v.kind === 'normalized' ? undefined : v.kind);
        }
      }
    }
  } finally {
    rules.keywords.release(mainHits);
    rules.keywords.release(extraHits);
  }
  findings.sort(
    (a, b) =>
      (a.action === b.action ? 0 : a.action === 'block' ? -1 : 1) ||
      SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
      rules.order.get(a.ruleId)! - rules.order.get(b.ruleId)!,
  );
  const top = findings[0];
  const verdict = top ? top.action : 'allow';
  const confidence = top ? CONFIDENCE[top.severity] : ALLOW_CONFIDENCE;
  return { verdict, confidence, findings, normalization: report };
}
