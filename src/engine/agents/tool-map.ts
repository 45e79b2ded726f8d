// An agent's tool call (its own tool name and input fields) → the Bulwark actions it performs.
// The knowledge is data (security/agents/<agent>.yaml, checked against schema.json with examples);
// this file only evaluates it. A tool the data does not name, or an input the mapping cannot read,
// goes to the engine under the tool's own name with its input as the payload: an unknown action
// type, which the engine never allows below Tier 2.
import claudeMap from '../../../security/agents/claude.yaml';
import codexMap from '../../../security/agents/codex.yaml';
import geminiMap from '../../../security/agents/gemini.yaml';
import copilotMap from '../../../security/agents/copilot-cli.yaml';
import vscodeMap from '../../../security/agents/vscode.yaml';
import type { AgentId } from './types';
import { parseApplyPatch } from './apply-patch';
import type { Dialect } from './dialect';
import type { RewriteForm, SandboxToolSpec } from './sandbox-rewrite';

/** A value spec: `$.a.b`, `$.a[*].b`, `$` (see security/agents/schema.json). */
export type ValueSpec =
  string | readonly string[] | { readonly optional: ValueSpec } | { readonly join: string } | { readonly argv: ValueSpec };

export interface ToolRule {
  readonly names: readonly string[];
  readonly action?: string;
  readonly payload?: Readonly<Record<string, ValueSpec>>;
  readonly cwd?: ValueSpec;
  readonly each?: string;
  readonly default_path?: 'cwd';
  readonly handler?: 'apply_patch' | 'urls_in_text';
  readonly patch?: ValueSpec;
  readonly text?: ValueSpec;
  /** A shell tool whose command can run in Bulwark's sandbox: the input fields of its command and timeout. */
  readonly sandbox?: SandboxToolSpec;
  readonly examples: readonly { readonly input: unknown; readonly cwd?: string; readonly actions: readonly MappedAction[] }[];
}

export interface AgentToolMap {
  readonly agent: AgentId;
  /** How this client takes a rewritten tool input, per dialect it answers in (none: it cannot). */
  readonly rewrite?: Partial<Record<Dialect, RewriteForm>>;
  readonly tools: readonly ToolRule[];
}

export interface MappedAction {
  readonly type: string;
  readonly payload: Record<string, unknown>;
  /** Working directory for this action when the tool names one (a shell tool's `directory`). */
  readonly cwd?: string;
}

export interface ToolMapping {
  readonly actions: readonly MappedAction[];
  /** Which rule mapped it (`claude:Write`), or why the tool went to the engine as an unknown type. */
  readonly via: string;
}

export const BUILTIN_TOOL_MAPS: Readonly<Record<AgentId, AgentToolMap>> = {
  claude: claudeMap as AgentToolMap,
  codex: codexMap as AgentToolMap,
  gemini: geminiMap as AgentToolMap,
  'copilot-cli': copilotMap as AgentToolMap,
  vscode: vscodeMap as AgentToolMap,
};

/** Most actions one tool call may expand to (a patch over many files); more is one opaque action. */
export const MAX_ACTIONS_PER_CALL = 200;

class Missing extends Error {}

/**
 * The map for a call, and the others to try when it does not name the tool: hook files are shared
 * between clients (VS Code and Copilot CLI run a workspace's .claude/settings.json hooks), so a
 * Claude-installed hook can see another client's tool names.
 */
export function toolMapsFor(agent: AgentId): AgentToolMap[] {
  const order: AgentId[] = [agent, 'claude', 'copilot-cli', 'vscode', 'codex', 'gemini'];
  return [...new Set(order)].map((a) => BUILTIN_TOOL_MAPS[a]);
}

/** Maps one tool call with the first of `maps` that names the tool. Never throws: what cannot be read becomes the unknown-type action. */
export function mapToolCallAny(maps: readonly AgentToolMap[], toolName: string, input: unknown, cwd?: string): ToolMapping {
  const map = maps.find((m) => m.tools.some((t) => t.names.includes(toolName))) ?? maps[0]!;
  return mapToolCall(map, toolName, input, cwd);
}

/** Maps one tool call. Never throws: what cannot be read becomes the unknown-type action. */
export function mapToolCall(map: AgentToolMap, toolName: string, input: unknown, cwd?: string): ToolMapping {
  const rule = map.tools.find((t) => t.names.includes(toolName));
  const unknown = (why: string): ToolMapping => ({
    actions: [{ type: toolName, payload: isRecord(input) ? { ...input } : { input } }],
    via: why,
  });
  if (!rule) return unknown(`${map.agent}: no mapping for tool \`${toolName}\``);
  try {
    const actions = applyRule(rule, input, cwd);
    if (actions.length === 0) return unknown(`${map.agent}:${toolName}: the input names nothing to check`);
    if (actions.length > MAX_ACTIONS_PER_CALL)
      return unknown(`${map.agent}:${toolName}: more than ${MAX_ACTIONS_PER_CALL} actions in one call`);
    return { actions, via: `${map.agent}:${toolName}` };
  } catch (e) {
    if (e instanceof Missing) return unknown(`${map.agent}:${toolName}: ${e.message}`);
    throw e;
  }
}

function applyRule(rule: ToolRule, input: unknown, cwd: string | undefined): MappedAction[] {
  if (rule.handler === 'apply_patch') {
    const text = evaluate(rule.patch!, input);
    if (typeof text !== 'string') throw new Missing('the patch text is missing');
    const parsed = parseApplyPatch(text);
    if (!parsed.ok) throw new Missing(`the patch cannot be read (${parsed.error})`);
    const extra = unconsumed(input, [rule.patch!]);
    return parsed.operations.map((op) => withExtra(op, extra));
  }
  if (rule.handler === 'urls_in_text') {
    const text = evaluate(rule.text!, input);
    if (typeof text !== 'string') throw new Missing('the text with the URLs is missing');
    const urls = [...new Set(text.match(/\bhttps?:\/\/[^\s<>"'`)\]]+/gi) ?? [])];
    if (urls.length === 0) throw new Missing('no URL in the text');
    const extra = unconsumed(input, []);
    return urls.map((url) => withExtra({ type: 'http_request', payload: { url } }, extra));
  }
  const elements = rule.each === undefined ? [input] : asArray(select(rule.each, input));
  const topExtra = rule.each === undefined ? {} : unconsumed(input, [rule.each]);
  return elements.map((element) => {
    const payload: Record<string, unknown> = {};
    for (const [field, spec] of Object.entries(rule.payload ?? {})) {
      const v = evaluate(spec, element);
      if (v === undefined) continue;
      if (!fitsField(field, v)) throw new Missing(`\`${field}\` is not ${field === 'paths' ? 'a list of strings' : 'a string'}`);
      payload[field] = v;
    }
    if (rule.default_path === 'cwd' && payload.path === undefined && cwd !== undefined) payload.path = cwd;
    const specs = [...Object.values(rule.payload ?? {}), ...(rule.cwd ? [rule.cwd] : [])];
    const extra = { ...topExtra, ...unconsumed(element, specs) };
    const action: MappedAction = { type: rule.action!, payload };
    const dir = rule.cwd === undefined ? undefined : evaluate(rule.cwd, element);
    if (dir !== undefined && typeof dir !== 'string') throw new Missing('the working directory is not a string');
    return withExtra(dir === undefined ? action : { ...action, cwd: dir }, extra);
  });
}

/** The engine reads these mapped fields as text (or, `paths`, a list of texts): anything else is not what the tool's input was supposed to be. */
function fitsField(field: string, v: unknown): boolean {
  if (field === 'paths') return Array.isArray(v) && v.every((x) => typeof x === 'string');
  return typeof v === 'string';
}

/** Input fields the mapping did not use, kept beside the mapped fields so the engine still checks every path and text in them. */
function withExtra(action: MappedAction, extra: Record<string, unknown>): MappedAction {
  return Object.keys(extra).length === 0 ? action : { ...action, payload: { ...action.payload, extra } };
}

function unconsumed(input: unknown, specs: readonly ValueSpec[]): Record<string, unknown> {
  if (!isRecord(input)) return {};
  const used = new Set(specs.flatMap(topKeys));
  return Object.fromEntries(Object.entries(input).filter(([k]) => !used.has(k)));
}

function topKeys(spec: ValueSpec): string[] {
  if (typeof spec === 'string') {
    const m = /^\$\.([A-Za-z_][A-Za-z0-9_-]*)/.exec(spec);
    return m ? [m[1]!] : [];
  }
  if (Array.isArray(spec)) return spec.flatMap(topKeys);
  const o = spec as Record<string, ValueSpec>;
  return topKeys(o.optional ?? o.join ?? o.argv!);
}

/** Evaluates a spec; a required value that is absent throws Missing. */
function evaluate(spec: ValueSpec, input: unknown, required = true): unknown {
  if (typeof spec === 'string') {
    const v = select(spec, input);
    if (v === undefined && required) throw new Missing(`the input has no \`${spec.slice(2) || '$'}\``);
    return v;
  }
  if (Array.isArray(spec)) {
    for (const alt of spec) {
      const v = select(alt, input);
      if (v !== undefined) return v;
    }
    if (required) throw new Missing(`the input has none of ${spec.map((s) => `\`${s.slice(2)}\``).join(', ')}`);
    return undefined;
  }
  const o = spec as { optional?: ValueSpec; join?: string; argv?: ValueSpec };
  if (o.optional !== undefined) return evaluate(o.optional, input, false);
  if (o.join !== undefined) {
    const v = evaluate(o.join, input, required);
    if (v === undefined) return undefined;
    const items = asArray(v);
    if (!items.every((x) => typeof x === 'string')) throw new Missing(`\`${o.join.slice(2)}\` is not a list of strings`);
    return items.join('\n');
  }
  const v = evaluate(o.argv!, input, required);
  if (Array.isArray(v)) {
    if (v.length === 0 || !v.every((x) => typeof x === 'string')) throw new Missing('the command is not a list of strings');
    return v.map(shellQuote).join(' ');
  }
  return v;
}

/** `$`, `$.a.b`, `$.a[*].b`, `$.a[0]`: `[*]` yields an array of what follows for each element. */
function select(path: string, input: unknown): unknown {
  const steps = path.slice(1).match(/\.[A-Za-z_][A-Za-z0-9_-]*|\[(?:\*|\d+)\]/g) ?? [];
  const walk = (value: unknown, i: number): unknown => {
    if (i === steps.length) return value;
    const step = steps[i]!;
    if (step === '[*]') return Array.isArray(value) ? value.map((x) => walk(x, i + 1)).filter((x) => x !== undefined) : undefined;
    if (step.startsWith('[')) return Array.isArray(value) ? walk(value[Number(step.slice(1, -1))], i + 1) : undefined;
    if (!isRecord(value)) return undefined;
    const key = step.slice(1);
    return Object.prototype.hasOwnProperty.call(value, key) ? walk(value[key], i + 1) : undefined;
  };
  const v = walk(input, 0);
  return v === null ? undefined : v;
}

function asArray(v: unknown): unknown[] {
  if (v === undefined) throw new Missing('the list to map is missing');
  return Array.isArray(v) ? v : [v];
}

/** POSIX single-quote quoting, so an argv array reads as the same command line. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./~-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
