// Effect-based decisions: what an action does, judged from what the engine already knows (the shell
// analysis, the command table, the paths and their protection, the workspace boundary). The class is
// what Tier 0 policy rules match with `effects:`; `judged` says, for the decision's reason, which
// effects were looked at and why they are harmless, so an allow explains itself as a block does.
import { actionSpec, isKnownActionType } from './actions';
import { isWithin, matchKey, normalizePath } from './paths';
import type { ShellAnalysis } from './shell/analyze';
import { judgeInvocation } from './shell/command-effects';
import type { Platform } from './types';
import boundaryTable from '../../security/shell/boundary.yaml';

/**
 * `inspect`: only reads, of unprotected files inside the boundary. `workspace_write`: also writes
 * ordinary files inside the workspace. `workspace_delete`: also removes some. `project_code`: runs the
 * project's code (tests, builds), whose effects no analysis can know; `project_code_sandboxed` when it
 * will run inside the OS sandbox. `outside_boundary_read` / `outside_boundary_write`: touches files
 * outside the workspace folders and the extra roots. `unjudged`: anything else (unknown commands,
 * network, protected files, opaque commands, types without an effect model).
 */
export const EFFECT_CLASSES = [
  'inspect',
  'workspace_write',
  'workspace_delete',
  'project_code',
  'project_code_sandboxed',
  'outside_boundary_read',
  'outside_boundary_write',
  'unjudged',
] as const;
export type EffectClass = (typeof EFFECT_CLASSES)[number];

export interface EffectJudgement {
  readonly class: EffectClass;
  /** What was judged, one short clause each (for the reason of an allow, and the audit log). */
  readonly judged: readonly string[];
}

export interface BoundaryOptions {
  readonly platform: Platform;
  readonly home: string;
  readonly workspaceRoots: readonly string[];
  /** More roots reads may come from (a sibling checkout the user named). */
  readonly extraReadRoots?: readonly string[];
}

interface BoundaryTable {
  readonly version: 1;
  readonly harmless_reads: readonly {
    readonly path: string;
    readonly why: string;
    readonly examples: { readonly inside: readonly string[]; readonly outside: readonly string[] };
  }[];
}

/** The workspace boundary: where reads may come from and writes may go without anyone asked. */
export class Boundary {
  private readonly writeRoots: string[];
  private readonly readRoots: string[];

  constructor(private readonly o: BoundaryOptions) {
    // A root that is not a path on this platform (the table's POSIX locations on Windows) is left out.
    const keys = (ps: readonly string[]) =>
      ps.flatMap((p) => {
        const k = this.key(p);
        return k === undefined ? [] : [k];
      });
    this.writeRoots = keys(o.workspaceRoots);
    const harmless = keys((boundaryTable as BoundaryTable).harmless_reads.map((h) => h.path.replace(/^~(?=\/)/, o.home)));
    this.readRoots = [...this.writeRoots, ...keys(o.extraReadRoots ?? []), ...harmless];
  }

  private key(p: string): string | undefined {
    try {
      return matchKey(normalizePath(p, this.o.platform), this.o.platform);
    } catch {
      return undefined;
    }
  }

  canRead(p: string): boolean {
    const k = this.key(p);
    return k !== undefined && this.readRoots.some((r) => isWithin(k, r));
  }

  canWrite(p: string): boolean {
    const k = this.key(p);
    return k !== undefined && this.writeRoots.some((r) => isWithin(k, r));
  }
}

export interface EffectInput {
  readonly type: string;
  readonly cwd?: string;
  /** Every path the action touches, resolved against cwd and home, with its access. */
  readonly touches: readonly { readonly path: string; readonly access: 'read' | 'write' | 'delete' }[];
  /** The protection result: a minimum tier above 0 means a protected file is touched in a way that matters. */
  readonly protectionMinTier: number;
  readonly analysis?: ShellAnalysis;
  /** The payload named URLs or the command reaches the network. */
  readonly network: boolean;
  /** The caller runs the action inside the OS sandbox (the surface says so, never the agent's payload). */
  readonly sandboxed: boolean;
  /** Fully blocked files below a search that the sandbox hides from the command (not reads). */
  readonly hiddenBySandbox?: readonly string[];
  /** The command prints its environment, which the sandbox gives it without secrets. */
  readonly environmentFromSandbox?: boolean;
}

const MAX_JUDGED = 8;

export function judgeEffects(input: EffectInput, boundary: Boundary): EffectJudgement {
  const unjudged = (why: string): EffectJudgement => ({ class: 'unjudged', judged: [why] });
  const isCommand = input.type === 'execute_command';
  // The action table says what a type does with files: reads only, or writes files (nothing else).
  if (!isKnownActionType(input.type)) return unjudged(`${input.type} is not a known action type`);
  const spec = actionSpec(input.type);
  const filesOnly = (spec.readOnly && spec.sink === 'file_read') || spec.sink === 'file_write';
  if (!isCommand && !filesOnly) return unjudged(`${input.type} has no effect model`);
  if (input.protectionMinTier > 0) return unjudged('it touches a protected file');
  if (input.network) return unjudged('it reaches the network');
  const judged: string[] = [];
  let runsCode = false;
  if (isCommand) {
    const a = input.analysis;
    if (!a) return unjudged('the command was not analysed');
    if (a.opaque) return unjudged('the command is opaque');
    if (a.reviews.length || a.approvals.length) return unjudged([...a.approvals, ...a.reviews][0]!);
    if (a.searchPathChanged) return unjudged('the command line sets PATH, so a command name may run a program of the project');
    if (a.network || a.urls.length || a.sinks.length) return unjudged('the command reaches the network or serves files');
    if (a.invocations.length === 0) return unjudged('the command runs nothing the analysis can name');
    // With no path in its arguments a command works on its directory (git status): that must be inside.
    if (!input.cwd) return unjudged('its working directory is not known');
    if (!boundary.canRead(input.cwd)) return { class: 'outside_boundary_read', judged: [`it runs in ${input.cwd}, outside the workspace`] };
    for (const inv of a.invocations) {
      const j = judgeInvocation(inv);
      if (!j.effect) return unjudged(j.why);
      if (j.effect === 'runs_project_code') runsCode = true;
      if (judged.length < MAX_JUDGED && j.effect !== 'runs_its_argument') judged.push(j.why);
    }
  }
  const reads = input.touches.filter((t) => t.access === 'read');
  const changes = input.touches.filter((t) => t.access !== 'read');
  const outsideRead = reads.find((t) => !boundary.canRead(t.path));
  const outsideWrite = changes.find((t) => !boundary.canWrite(t.path));
  if (outsideWrite)
    return {
      class: 'outside_boundary_write',
      judged: [`it ${outsideWrite.access === 'delete' ? 'removes' : 'writes'} ${outsideWrite.path}, outside the workspace`],
    };
  if (outsideRead) return { class: 'outside_boundary_read', judged: [`it reads ${outsideRead.path}, outside the workspace`] };
  if (reads.length) judged.push(`reads ${describePaths(reads)} (inside the workspace boundary, unprotected)`);
  if (input.environmentFromSandbox) judged.push('prints its environment, which the OS sandbox gives it without secrets');
  if (input.hiddenBySandbox?.length)
    judged.push(`the OS sandbox hides ${describePaths(input.hiddenBySandbox.map((path) => ({ path })))} from it`);
  if (changes.length) judged.push(`changes ${describePaths(changes)} (ordinary files inside the workspace)`);
  if (!isCommand && reads.length === 0 && changes.length === 0) return unjudged('it names no file');
  if (runsCode)
    return {
      class: input.sandboxed ? 'project_code_sandboxed' : 'project_code',
      judged: [...judged, input.sandboxed ? 'runs inside the OS sandbox' : 'would run outside any sandbox'],
    };
  if (changes.some((t) => t.access === 'delete')) return { class: 'workspace_delete', judged };
  if (changes.length) return { class: 'workspace_write', judged };
  return { class: 'inspect', judged: judged.length ? judged : ['reads nothing outside its working directory'] };
}

function describePaths(ts: readonly { readonly path: string }[]): string {
  const names = [...new Set(ts.map((t) => t.path))];
  return names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`;
}
