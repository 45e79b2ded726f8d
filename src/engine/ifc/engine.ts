// The IFC decision for one action, and the session taint behind it.
//
// Data sensitivity of an action = max(session taint, every path it touches — reads and writes:
// writing `.env` is a flow into a critical file). Decision = rules[sensitivity][sink of the
// action type]; a shell command that reaches the network is also judged as a flow into the sink
// of `http_request`, and the stricter verdict wins. A type the policy does not name is judged by its
// sink kind in the action table (actions.ts); an unknown tool as a possible external sink.
//
// Session taint = the highest sensitivity the session has READ. It only rises, and it lives in
// the StateStore (namespace `ifc.taint`, key = session id), so it survives a restart of the
// extension for the same session. Only reading taints, and only an action that ran has read
// anything, so evaluate() never changes the taint: the caller passes `decision.readTaint` to
// commitRead() once the action has actually executed. A blocked or denied read leaves the
// session as it was; the action itself is judged on everything it touches, so `cat .env | curl`
// is blocked by its own reads without waiting for the taint.
//
// Fail-closed: a store that throws, or a stored taint that does not parse, blocks the action
// (rule `ifc.store_error`), in audit mode too; any other exception blocks with `ifc.error`.
import type { StateStore } from '../shield/types';
import { PUBLIC_MATERIAL, classifyPath, sinkOf } from './classify';
import { SINK_REPRESENTATIVES, actionSpec, isKnownActionType } from '../actions';
import {
  SENSITIVITIES,
  maxSensitivity,
  sensitivityRank,
  type ClassifiedPath,
  type IfcDecision,
  type IfcMode,
  type IfcPolicy,
  type IfcTouched,
  type IfcVerdict,
  type ReadTaint,
  type Sensitivity,
} from './types';
import { errorMessage } from '../error-message';

export const IFC_TAINT_NAMESPACE = 'ifc.taint';

/** The state store failed or holds a taint that does not parse. */
export class IfcStoreError extends Error {
  override readonly name = 'IfcStoreError';
}

export interface IfcEngineOptions {
  /** The user's setting; wins over the policy file's `mode`. */
  readonly modeOverride?: IfcMode;
}

/**
 * The sink categories an action type flows into: the one the policy names it in; otherwise those
 * of the representatives of its sink kind in the action table (an unknown tool: every way out,
 * since a tool that sends data out is a sink whatever it is called).
 */
function ownSinks(policy: IfcPolicy, actionType: string): { sink: string; how: string }[] {
  const named = sinkOf(policy, actionType);
  if (named !== undefined) return [{ sink: named, how: `${actionType} is ${article(named)} ${named} sink` }];
  const spec = actionSpec(actionType);
  const like = isKnownActionType(actionType)
    ? `${actionType} is not named in the policy; it sends data like`
    : `${actionType} is a tool Bulwark does not know, so it may send data out, like`;
  const out: { sink: string; how: string }[] = [];
  for (const rep of SINK_REPRESENTATIVES[spec.sink]) {
    const sink = sinkOf(policy, rep);
    if (sink !== undefined && !out.some((o) => o.sink === sink)) out.push({ sink, how: `${like} ${rep}, ${article(sink)} ${sink} sink` });
  }
  return out;
}

const SEVERITY: Readonly<Record<IfcVerdict, number>> = { allow: 0, escalate: 1, block: 2 };
const article = (word: string): string => (/^[aeiou]/i.test(word) ? 'an' : 'a');

function parseStored(value: string): ReadTaint {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    throw new IfcStoreError(`stored taint is not JSON: ${JSON.stringify(value.slice(0, 60))}`);
  }
  const t = v as Partial<ReadTaint> | null;
  if (!t || typeof t !== 'object' || !SENSITIVITIES.includes(t.sensitivity as Sensitivity))
    throw new IfcStoreError(`stored taint has no valid sensitivity: ${JSON.stringify(value.slice(0, 60))}`);
  return {
    sensitivity: t.sensitivity as Sensitivity,
    ...(typeof t.path === 'string' ? { path: t.path } : {}),
    ...(typeof t.source === 'string' ? { source: t.source } : {}),
  };
}

const higher = (a: ReadTaint, b: ReadTaint): ReadTaint => (sensitivityRank(b.sensitivity) > sensitivityRank(a.sensitivity) ? b : a);
const PUBLIC: ReadTaint = { sensitivity: 'public' };

export class IfcEngine {
  readonly mode: IfcMode;
  /** Taint this instance committed, kept even when writing it to the store failed. */
  private readonly committed = new Map<string, ReadTaint>();

  constructor(
    readonly policy: IfcPolicy,
    private readonly store: StateStore,
    opts: IfcEngineOptions = {},
  ) {
    this.mode = opts.modeOverride ?? policy.mode;
  }

  /** The session's taint with the file that caused it. Throws IfcStoreError when the store fails. */
  taintDetailOf(sessionId: string): ReadTaint {
    let stored: string | undefined;
    try {
      stored = this.store.get(IFC_TAINT_NAMESPACE, sessionId);
    } catch (e) {
      throw new IfcStoreError(`reading the session taint failed: ${errorMessage(e)}`);
    }
    const fromStore = stored === undefined ? PUBLIC : parseStored(stored);
    return higher(fromStore, this.committed.get(sessionId) ?? PUBLIC);
  }

  /** The highest sensitivity the session has read. Throws IfcStoreError when the store fails. */
  taintOf(sessionId: string): Sensitivity {
    return this.taintDetailOf(sessionId).sensitivity;
  }

  /**
   * Records that the session has read data of this sensitivity (call it after the action ran,
   * with `decision.readTaint`). The taint only rises. Returns the session's taint afterwards.
   * When the store fails the raise is still kept by this instance, then IfcStoreError is thrown.
   */
  commitRead(sessionId: string, read: ReadTaint | Sensitivity): Sensitivity {
    const r: ReadTaint = typeof read === 'string' ? { sensitivity: read } : read;
    if (!SENSITIVITIES.includes(r.sensitivity)) throw new TypeError(`IFC: unknown sensitivity ${JSON.stringify(r.sensitivity)}`);
    const mine = this.committed.get(sessionId) ?? PUBLIC;
    if (sensitivityRank(r.sensitivity) > sensitivityRank(mine.sensitivity)) this.committed.set(sessionId, r);
    let stored: ReadTaint;
    try {
      const s = this.store.get(IFC_TAINT_NAMESPACE, sessionId);
      stored = s === undefined ? PUBLIC : parseStored(s);
    } catch (e) {
      throw e instanceof IfcStoreError ? e : new IfcStoreError(`reading the session taint failed: ${errorMessage(e)}`);
    }
    const current = higher(stored, this.committed.get(sessionId) ?? PUBLIC);
    if (sensitivityRank(current.sensitivity) > sensitivityRank(stored.sensitivity)) {
      try {
        this.store.set(IFC_TAINT_NAMESPACE, sessionId, JSON.stringify(current));
      } catch (e) {
        throw new IfcStoreError(`writing the session taint failed: ${errorMessage(e)}`);
      }
    }
    return current.sensitivity;
  }

  /**
   * Classifies every path the action touches (payload paths and the read targets of shell
   * analysis, as `reads`; created/changed/deleted paths as `writes`) and decides the flow.
   * Never throws: failures are blocks. Does not change the taint (see commitRead).
   */
  evaluate(sessionId: string, actionType: string, touched: IfcTouched): IfcDecision {
    let classified: ClassifiedPath[] = [];
    let readTaint: ReadTaint = PUBLIC;
    try {
      // A read of a file that holds only certificates or public keys carries nothing secret, whatever its name.
      const publicMaterial = new Set(touched.publicMaterial ?? []);
      const readClass = (p: string) =>
        publicMaterial.has(p) ? { sensitivity: 'public' as const, source: PUBLIC_MATERIAL } : classifyPath(this.policy, p);
      classified = [
        ...touched.reads.map((p) => ({ path: p, access: 'read' as const, ...readClass(p) })),
        ...touched.writes.map((p) => ({ path: p, access: 'write' as const, ...classifyPath(this.policy, p) })),
      ];
      for (const c of classified)
        if (c.access === 'read') readTaint = higher(readTaint, { sensitivity: c.sensitivity, path: c.path, source: c.source });
    } catch (e) {
      return this.failure(
        actionType,
        classified,
        readTaint,
        'critical',
        'ifc.error',
        `Blocked by IFC: the paths of ${actionType} could not be classified (${errorMessage(e)}); IFC fails closed`,
      );
    }

    let taint: ReadTaint;
    try {
      taint = this.taintDetailOf(sessionId);
    } catch (e) {
      return this.failure(
        actionType,
        classified,
        readTaint,
        'critical',
        'ifc.store_error',
        `Blocked by IFC: the session's taint could not be read from the state store (${errorMessage(e)}); IFC fails closed`,
      );
    }

    try {
      return this.decide(actionType, touched, classified, taint, readTaint);
    } catch (e) {
      return this.failure(
        actionType,
        classified,
        readTaint,
        taint.sensitivity,
        'ifc.error',
        `Blocked by IFC: the decision failed (${errorMessage(e)}); IFC fails closed`,
      );
    }
  }

  private decide(
    actionType: string,
    touched: IfcTouched,
    classified: readonly ClassifiedPath[],
    taint: ReadTaint,
    readTaint: ReadTaint,
  ): IfcDecision {
    const sensitivity = classified.reduce<Sensitivity>((m, c) => maxSensitivity(m, c.sensitivity), taint.sensitivity);
    const base = { sensitivity, classified, taint: taint.sensitivity, readTaint };

    // The sinks this action flows into: its type's, and the network sink for a shell command that reaches the network.
    // On equal verdicts the network flow is named: `cat .env | curl …` is reported as critical → external.
    const flows: { sink: string; how: string }[] = [];
    const own = ownSinks(this.policy, actionType);
    const network = (touched.network ?? []).filter((n) => typeof n === 'string' && n.length > 0);
    if (network.length) {
      const net = sinkOf(this.policy, 'http_request');
      if (net !== undefined && !own.some((o) => o.sink === net))
        flows.push({
          sink: net,
          how: `${actionType} reaches the network (${network[0]}${network.length > 1 ? ` and ${network.length - 1} more` : ''}), ${article(net)} ${net} sink`,
        });
    }
    flows.push(...own);

    if (flows.length === 0) {
      return {
        ...base,
        decision: 'allow',
        enforced: this.mode === 'enforce',
        wouldBlock: false,
        rule: 'ifc.no_sink',
        reason: `Allowed by IFC: ${actionType} sends data to no sink category of ${this.policyLabel()}`,
      };
    }

    let chosen = flows[0]!;
    const verdictOf = (sink: string): IfcVerdict => {
      const row = this.policy.rules[sensitivity];
      const v = Object.prototype.hasOwnProperty.call(row, sink) ? row[sink] : undefined;
      if (v === undefined || !Object.prototype.hasOwnProperty.call(SEVERITY, v))
        throw new Error(`the policy has no decision for ${sensitivity} → ${sink}`);
      return v;
    };
    let verdict = verdictOf(chosen.sink);
    for (const f of flows.slice(1)) {
      const v = verdictOf(f.sink);
      if (SEVERITY[v] > SEVERITY[verdict]) {
        chosen = f;
        verdict = v;
      }
    }

    const rule = `ifc.${sensitivity}.${chosen.sink}`;
    const why = `${this.cause(sensitivity, taint, classified)}; ${chosen.how}, and ${sensitivity} → ${chosen.sink} is ${verdict} in ${this.policyLabel()}`;
    const sink = chosen.sink;
    if (verdict === 'block' && this.mode === 'audit') {
      return {
        ...base,
        decision: 'allow',
        enforced: false,
        wouldBlock: true,
        sink,
        rule,
        reason: `Allowed in IFC audit mode, would be blocked: ${why}`,
      };
    }
    const lead =
      verdict === 'block'
        ? 'Blocked by IFC'
        : verdict === 'escalate'
          ? 'Escalated by IFC (needs approval before it runs)'
          : 'Allowed by IFC';
    return {
      ...base,
      decision: verdict,
      enforced: this.mode === 'enforce',
      wouldBlock: verdict === 'block',
      sink,
      rule,
      reason: `${lead}: ${why}`,
    };
  }

  /** Why the data has this sensitivity: the taint and/or the touched paths at that level. */
  private cause(sensitivity: Sensitivity, taint: ReadTaint, classified: readonly ClassifiedPath[]): string {
    if (sensitivity === 'public') return 'no sensitive data is involved (all public)';
    const parts: string[] = [];
    if (taint.sensitivity === sensitivity) {
      parts.push(
        taint.path
          ? `the session has read ${sensitivity} data (${taint.path}, rule ${taint.source ?? 'unknown'})`
          : `the session has read ${sensitivity} data`,
      );
    }
    const top = classified.filter((c) => c.sensitivity === sensitivity);
    if (top.length) {
      const c = top[0]!;
      const more = top.length > 1 ? ` and ${top.length - 1} more ${sensitivity} path${top.length > 2 ? 's' : ''}` : '';
      parts.push(`the action ${c.access === 'read' ? 'reads' : 'writes'} ${c.path} (${sensitivity}, rule ${c.source})${more}`);
    }
    return parts.join(', and ');
  }

  private policyLabel(): string {
    return this.policy.origin === 'preset' ? `the ${this.policy.name} policy` : `the IFC policy ${this.policy.name}`;
  }

  private failure(
    actionType: string,
    classified: readonly ClassifiedPath[],
    readTaint: ReadTaint,
    sensitivity: Sensitivity,
    rule: string,
    reason: string,
  ): IfcDecision {
    let sink: string | undefined;
    try {
      sink = sinkOf(this.policy, actionType);
    } catch {
      sink = undefined;
    }
    return {
      decision: 'block',
      enforced: true,
      wouldBlock: true,
      sensitivity,
      ...(sink !== undefined ? { sink } : {}),
      rule,
      reason,
      classified,
      taint: sensitivity,
      readTaint,
    };
  }
}
