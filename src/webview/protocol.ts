// Typed messages between the audit webview page (src/webview/main.ts, browser) and its host
// (src/vscode/audit-panel.ts). No imports: both sides share these types only.
//
// The host keeps the log's entries and pages them: the page holds only the rows it shows, so a
// 100k-entry log costs one small `view` message, not 100k rows. Details are fetched on selection.

/** One list row: just what the list shows (full details come with `detail`). */
export interface AuditRow {
  readonly seq: number;
  readonly ts: string;
  readonly session: string;
  readonly event: string;
  readonly action?: string;
  readonly decision?: string;
  readonly tier?: number;
  /** Short text: the path, command or URL of the action, or the reason. */
  readonly summary: string;
}

export interface AuditFilter {
  readonly session?: string;
  readonly event?: string;
  readonly decision?: string;
  readonly text?: string;
}

export interface ChainStatus {
  readonly state: 'unverified' | 'verifying' | 'intact' | 'broken' | 'error';
  readonly checked?: number;
  readonly message?: string;
  /** Sequence number of the first broken entry (state 'broken'). */
  readonly firstBrokenSeq?: number;
}

export interface AuditDetail {
  readonly seq: number;
  readonly id?: string;
  readonly ts: string;
  readonly session: string;
  readonly event: string;
  readonly action?: string;
  readonly decision?: {
    readonly decision?: string;
    readonly tier?: number;
    readonly rules?: readonly string[];
    readonly reason?: string;
    /** The structured reasons (entries written since they exist): each rule with its tier, kind and message. */
    readonly reasons?: readonly { readonly rule: string; readonly tier?: number; readonly kind?: string; readonly message: string }[];
    /** Former codes of the rules it names (`prompt-injection.ignore-previous` → `PI-001`). */
    readonly ruleAliases?: Readonly<Record<string, string>>;
    readonly confidence?: number;
  };
  /** The (already redacted) arguments as indented JSON. */
  readonly args?: string;
  /** The other details fields as indented JSON. */
  readonly other?: string;
  readonly prevHash: string;
  readonly hash: string;
}

/** Host → page. */
export type HostMessage =
  | {
      readonly type: 'init';
      readonly logFile: string;
      /** Entries in the whole log and in the current filter. */
      readonly total: number;
      readonly filtered: number;
      readonly filter: AuditFilter;
      readonly sessions: readonly string[];
      readonly events: readonly string[];
      readonly decisions: readonly string[];
      readonly chain: ChainStatus;
      /** The first rows of the filtered view, starting at index `start`. */
      readonly start: number;
      readonly rows: readonly AuditRow[];
      /** Set when the log could not be opened or read. */
      readonly error?: string;
      /** The log is still being read: the first rows are shown early, a complete `init` follows. */
      readonly partial?: boolean;
    }
  | {
      readonly type: 'rows';
      readonly requestId: number;
      readonly start: number;
      readonly rows: readonly AuditRow[];
      readonly filtered: number;
    }
  | {
      readonly type: 'append';
      readonly total: number;
      readonly filtered: number;
      readonly rows: readonly AuditRow[];
      readonly sessions: readonly string[];
      readonly events: readonly string[];
    }
  | { readonly type: 'detail'; readonly seq: number; readonly detail?: AuditDetail }
  | { readonly type: 'verifyProgress'; readonly checked: number }
  /** `index`: position of the first broken entry in the filtered view (-1: not in it). */
  | { readonly type: 'verifyResult'; readonly chain: ChainStatus; readonly index?: number };

/** Page → host. */
export type PageMessage =
  /** `filter`: the filter the page had before a reload (restored panel), if any. */
  | { readonly type: 'ready'; readonly filter?: AuditFilter }
  | { readonly type: 'requestRange'; readonly requestId: number; readonly start: number; readonly count: number }
  | { readonly type: 'filter'; readonly filter: AuditFilter }
  | { readonly type: 'select'; readonly seq: number }
  | { readonly type: 'verify' }
  | { readonly type: 'reload' };

/** A filter as received from the page: only known string fields, each at most 1000 characters. */
export function sanitizeFilter(f: unknown): AuditFilter {
  if (typeof f !== 'object' || f === null) return {};
  const o = f as Record<string, unknown>;
  const pick = (k: keyof AuditFilter) => (typeof o[k] === 'string' && (o[k] as string).length <= 1000 ? { [k]: o[k] as string } : {});
  return { ...pick('session'), ...pick('event'), ...pick('decision'), ...pick('text') };
}

/** Rows sent with `init` and per `requestRange` at most. */
export const PAGE_SIZE = 200;
