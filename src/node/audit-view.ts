// The audit webview's model, kept in the extension host: every entry of the log as a compact row,
// filtering, paging and the details of one entry. Pure (no `vscode`, no I/O): fed by an AuditSource.
// The log redacts every entry before it is written; what is shown is redacted again, for entries
// written by an older Bulwark that redacted only the arguments.
import type { AuditDetail, AuditFilter, AuditRow } from '../webview/protocol';
import { redactTextOrWithhold } from '../engine/audit/redact';

import type { AuditEntry } from '../engine/audit';
import type { VerifyResult } from '../engine/audit';
import { errorMessage } from '../engine/error-message';
import { canonicalRuleName, ruleAliasName, sameRule } from '../engine/content/rule-aliases';

export type { AuditEntry };
export type VerifyReport = VerifyResult;

/** What the audit UI needs from an audit log (AuditLog, src/node/audit/audit-log.ts). */
export interface AuditSource {
  entries(): AsyncIterable<AuditEntry>;
  onAppend(listener: (entries: readonly AuditEntry[]) => void): { dispose(): void };
  verify(onProgress?: (p: { readonly entries: number }) => void): Promise<VerifyReport>;
}

type DecisionDetails = NonNullable<AuditDetail['decision']>;

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

function decisionIn(e: AuditEntry): DecisionDetails | undefined {
  const d = obj(e.details?.decision);
  if (!d) return undefined;
  return {
    ...(typeof d.decision === 'string' ? { decision: d.decision } : {}),
    ...(typeof d.tier === 'number' ? { tier: d.tier } : {}),
    ...(Array.isArray(d.rules) ? { rules: d.rules.filter((r): r is string => typeof r === 'string') } : {}),
    ...(typeof d.reason === 'string' ? { reason: d.reason } : {}),
    ...(Array.isArray(d.reasons) ? { reasons: reasonsIn(d.reasons) } : {}),
    ...(aliasesIn(e) ?? {}),
    ...(typeof d.confidence === 'number' ? { confidence: d.confidence } : {}),
  };
}

/** The structured reasons an entry records, read defensively (a log is data: any shape may be on disk). */
function reasonsIn(list: readonly unknown[]): NonNullable<DecisionDetails['reasons']> {
  return list.flatMap((v) => {
    const r = obj(v);
    if (!r || typeof r.rule !== 'string' || typeof r.message !== 'string') return [];
    return [
      {
        rule: r.rule,
        ...(typeof r.tier === 'number' ? { tier: r.tier } : {}),
        ...(typeof r.kind === 'string' ? { kind: r.kind } : {}),
        message: r.message,
      },
    ];
  });
}

function aliasesIn(e: AuditEntry): { ruleAliases: Record<string, string> } | undefined {
  const a = obj(e.details?.rule_aliases);
  if (!a) return undefined;
  const out = Object.fromEntries(Object.entries(a).filter((kv): kv is [string, string] => typeof kv[1] === 'string'));
  return Object.keys(out).length ? { ruleAliases: out } : undefined;
}

/** Every rule name an entry records: its decision's and each tier's `rules`, and a derived event's `rules` and `rule`. */
export function rulesOfEntry(e: AuditEntry): string[] {
  const out: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') out.push(x);
  };
  const d = e.details ?? {};
  add(d.rules);
  add(d.rule);
  add(obj(d.decision)?.rules);
  if (Array.isArray(d.trail)) for (const t of d.trail) add(obj(t)?.rules);
  return out;
}

/** Whether the entry names the rule `asked`, by its id or its alias (`PI-001` finds `heuristic.prompt-injection.ignore-previous` and the reverse, also in entries written before the rename). */
export function entryNamesRule(e: AuditEntry, asked: string): boolean {
  return rulesOfEntry(e).some((r) => sameRule(r, asked));
}

/** A rule name with its other name (id ↔ alias), for the free-text search. */
const bothNames = (rule: string): string[] => [...new Set([rule, canonicalRuleName(rule), ruleAliasName(rule) ?? rule])];

const actionIdOf = (e: AuditEntry): string | undefined => (typeof e.details?.action_id === 'string' ? e.details.action_id : undefined);

const SUMMARY_KEYS = ['command', 'path', 'url', 'source', 'destination', 'file', 'dir', 'target', 'query', 'name'];
const MAX_SUMMARY = 160;

function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > MAX_SUMMARY ? `${t.slice(0, MAX_SUMMARY)}…` : t;
}

export function summaryOf(e: AuditEntry): string {
  const args = e.details?.args;
  const a = obj(args);
  if (a) {
    const payload = obj(a.payload) ?? a;
    for (const k of SUMMARY_KEYS) if (typeof payload[k] === 'string') return oneLine(payload[k] as string);
    return oneLine(json(a));
  }
  if (typeof args === 'string') return oneLine(args);
  const reason =
    decisionIn(e)?.reason ??
    (typeof e.details?.reason === 'string' ? e.details.reason : typeof e.details?.message === 'string' ? e.details.message : undefined);
  // Redacted before it is cut, so no piece of a secret is left at the cut; the head is all a row shows.
  return reason ? oneLine(redactTextOrWithhold(reason.slice(0, 4 * MAX_SUMMARY))) : '';
}

/** The entries of one action (ACTION_PROPOSED carries the arguments, ACTION_EVALUATED the decision). */
interface ActionLink {
  args?: AuditEntry;
  evaluated?: AuditEntry;
  summary?: string;
}

function json(v: unknown, indent?: number): string {
  try {
    return JSON.stringify(v, null, indent) ?? String(v);
  } catch (e) {
    return `(cannot be shown: ${errorMessage(e)})`;
  }
}

export function detailOf(e: AuditEntry, link?: ActionLink): AuditDetail {
  const { decision: _d, args, ...other } = e.details ?? {};
  void _d;
  const found = decisionIn(e) ?? (link?.evaluated ? decisionIn(link.evaluated) : undefined);
  // What a log holds was redacted when written; it is shown redacted again (a log from an older version, a hand edit).
  const decision = found && {
    ...found,
    ...(found.reason === undefined ? {} : { reason: redactTextOrWithhold(found.reason) }),
    ...(found.reasons ? { reasons: found.reasons.map((r) => ({ ...r, message: redactTextOrWithhold(r.message) })) } : {}),
  };
  const shownArgs = args !== undefined ? args : link?.args?.details?.args;
  return {
    seq: e.seq,
    ts: e.ts,
    session: e.session,
    event: e.event,
    prevHash: e.prev_hash,
    hash: e.hash,
    ...(e.id ? { id: e.id } : {}),
    ...(e.action_type ? { action: e.action_type } : {}),
    ...(decision ? { decision } : {}),
    ...(shownArgs !== undefined ? { args: redactTextOrWithhold(json(shownArgs, 2)) } : {}),
    ...(Object.keys(other).length ? { other: redactTextOrWithhold(json(other, 2)) } : {}),
  };
}

export class AuditView {
  private readonly entries: AuditEntry[] = [];
  private readonly rows: AuditRow[] = [];
  /** Lower-case text the free-text filter searches, per entry. */
  private readonly haystacks: string[] = [];
  private readonly bySeq = new Map<number, number>();
  private readonly actions = new Map<string, ActionLink>();
  private readonly links: (ActionLink | undefined)[] = [];

  /**
   * Which action an entry belongs to: its action_id, or (for actions checked without an id) the
   * session's latest ACTION_PROPOSED: the events of one decision are appended together.
   */
  private linkKey(e: AuditEntry): string | undefined {
    const id = actionIdOf(e);
    if (id) return `id:${id}`;
    if (e.details && 'action_id' in e.details && e.action_type) return `session:${e.session}`;
    return undefined;
  }
  private readonly sessionSet = new Set<string>();
  private readonly eventSet = new Set<string>();
  private readonly decisionSet = new Set<string>();
  /** Indices of the entries that pass the filter; undefined: all of them. */
  private view: number[] | undefined;
  private current: AuditFilter = {};

  get total(): number {
    return this.rows.length;
  }
  get filtered(): number {
    return this.view ? this.view.length : this.rows.length;
  }
  get filter(): AuditFilter {
    return this.current;
  }
  get sessions(): string[] {
    return [...this.sessionSet].sort();
  }
  get events(): string[] {
    return [...this.eventSet].sort();
  }
  get decisions(): string[] {
    return [...this.decisionSet].sort();
  }

  /** Adds an entry (in log order); returns its row when it passes the current filter. */
  add(e: AuditEntry): AuditRow | undefined {
    const i = this.rows.length;
    const aid = this.linkKey(e);
    let link: ActionLink | undefined;
    if (aid) {
      link = this.actions.get(aid);
      if (!link || (e.event === 'ACTION_PROPOSED' && !actionIdOf(e))) this.actions.set(aid, (link = {}));
      if (e.details?.args !== undefined && !link.args) {
        link.args = e;
        link.summary = summaryOf(e);
      }
      if (decisionIn(e) && !link.evaluated) link.evaluated = e;
    }
    const own = decisionIn(e);
    const linked = link?.evaluated ? decisionIn(link.evaluated) : undefined;
    const d = own ?? (e.event === 'ACTION_PROPOSED' ? undefined : linked);
    const summary = e.details?.args !== undefined ? summaryOf(e) : (link?.summary ?? summaryOf(e));
    const row: AuditRow = {
      seq: e.seq,
      ts: e.ts,
      session: e.session,
      event: e.event,
      summary,
      ...(e.action_type ? { action: e.action_type } : {}),
      ...(d?.decision ? { decision: d.decision } : {}),
      ...(d?.tier !== undefined ? { tier: d.tier } : {}),
    };
    this.entries.push(e);
    this.links.push(link);
    this.rows.push(row);
    // Rules under both names: a search by an old coded id finds entries that name the rule by its id, and the reverse.
    const rules = [...new Set([...(d?.rules ?? []), ...rulesOfEntry(e)])].flatMap(bothNames);
    this.haystacks.push(
      [e.seq, e.session, e.event, e.action_type ?? '', d?.decision ?? '', ...rules, d?.reason ?? '', summary].join('\u0000').toLowerCase(),
    );
    this.bySeq.set(e.seq, i);
    this.sessionSet.add(e.session);
    this.eventSet.add(e.event);
    if (row.decision) this.decisionSet.add(row.decision);
    if (!this.view) return row;
    if (!this.matches(i)) return undefined;
    this.view.push(i);
    return row;
  }

  setFilter(f: AuditFilter): void {
    this.current = {
      ...(f.session ? { session: f.session } : {}),
      ...(f.event ? { event: f.event } : {}),
      ...(f.decision ? { decision: f.decision } : {}),
      ...(f.text && f.text.trim() ? { text: f.text.trim() } : {}),
    };
    if (!Object.keys(this.current).length) {
      this.view = undefined;
      return;
    }
    const view: number[] = [];
    for (let i = 0; i < this.rows.length; i++) if (this.matches(i)) view.push(i);
    this.view = view;
  }

  private matches(i: number): boolean {
    const f = this.current;
    const r = this.rows[i]!;
    if (f.session && r.session !== f.session) return false;
    if (f.event && r.event !== f.event) return false;
    if (f.decision && r.decision !== f.decision) return false;
    if (f.text) {
      const h = this.haystacks[i]!;
      for (const word of f.text.toLowerCase().split(/\s+/)) if (word && !h.includes(word)) return false;
    }
    return true;
  }

  /** Rows [start, start + count) of the filtered view. */
  range(start: number, count: number): AuditRow[] {
    const from = Math.max(0, Math.min(start, this.filtered));
    const to = Math.min(this.filtered, from + Math.max(0, count));
    const out: AuditRow[] = [];
    for (let k = from; k < to; k++) out.push(this.rows[this.view ? this.view[k]! : k]!);
    return out;
  }

  /** One entry's details, with the decision and arguments of its action (from the action's other entries). */
  detail(seq: number): AuditDetail | undefined {
    const i = this.bySeq.get(seq);
    if (i === undefined) return undefined;
    const e = this.entries[i]!;
    return detailOf(e, this.links[i]);
  }

  /** Position of the entry `seq` (or, if absent, the nearest entry after it) in the filtered view; -1 if not in it. */
  indexOf(seq: number): number {
    let i = this.bySeq.get(seq);
    if (i === undefined) {
      i = this.rows.findIndex((r) => r.seq >= seq);
      if (i < 0) i = this.rows.length - 1;
    }
    if (i < 0) return -1;
    if (!this.view) return i;
    // the view is sorted by entry index
    let lo = 0,
      hi = this.view.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.view[mid]!;
      if (v === i) return mid;
      if (v < i) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}
