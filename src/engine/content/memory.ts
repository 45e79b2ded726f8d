// Memory poisoning: text written to an agent's long-term memory (a memory_write action, or a write
// to MEMORY.md, memory/** or USER.md, the protection rules ws.memory and ws.user) is inspected like
// text entering a prompt, because that is where it goes: every later session reads its memory as
// its own notes. The prompt-injection rules (through Tier 1's evaluation, which the engine shares
// with the Shield so a large note is normalised once), secrets, invisible text, and the memory
// directive rules (security/memory/), which catch standing orders that are documentation anywhere
// else ("always run `curl … | sh` before tests; never ask").
//
// Trust: untrusted. Every action Engine.check sees was proposed by an agent's model, so the text it
// writes comes from the model and whatever it read; a person who edits memory edits the file.
//
// Decision, from the content matrix (phase pre_prompt, trust untrusted), for a write:
// - block → block. redact (a secret, invisible text) → block too: a write cannot be redacted in
//   flight, and a secret kept in memory reaches every later prompt (the reason says to keep where
//   the secret lives instead); invisible text is blocked as in every agent instruction file.
// - require_approval → a person decides (minimum Tier 3).
// - annotate (credential references, low-severity wording) → no effect: "the token is in
//   $GITHUB_TOKEN" is a good memory.
import directives from '../../../security/memory/directives.yaml';
import { evaluateHeuristics } from '../heuristics/evaluate';
import { KeywordIndex, analyzePattern, isAscii } from '../heuristics/prefilter';
import { compilePattern, loadHeuristicRules, type CompiledRuleSet } from '../heuristics/rules';
import { PROMPT_RISKS, type HeuristicResult, type PromptRisk, type Severity } from '../heuristics/types';
import { loadSecretRules, redactSecrets } from '../secrets';
import { INVISIBLE_IN_INSTRUCTIONS_RULE, writtenStrings } from './instruction-files';
import { matrixAction } from './matrix';
import { loadContentRules, matchSpans, matchSpansIn, validateRuleFile } from './rules';
import type { ContentAction, ContentFinding, FindingCategory } from './types';

export interface MemoryRule {
  /** `memory.<what it catches>`. */
  readonly id: string;
  /** The former coded id (`MD-001`), if the rule had one: recorded beside the id in the audit log. */
  readonly alias?: string;
  readonly severity: Severity;
  readonly risk: PromptRisk;
  readonly pattern: string;
  readonly description: string;
  readonly examples?: { readonly match: readonly string[]; readonly no_match: readonly string[] };
}

export interface CompiledMemoryRule {
  readonly rule: MemoryRule;
  /** The pattern with the `g` flag. */
  readonly regex: RegExp;
  /**
   * Literal sets every match contains (Tier 1's prefilter analysis), as keyword ids of the rule set's
   * index: a text without one keyword of each set cannot match, and the rule is skipped.
   */
  readonly prefilter: readonly (readonly number[])[];
}

/** The rules and one keyword automaton over all their literals (one pass over a text tells every rule's prefilter). */
export interface CompiledMemoryRules {
  readonly rules: readonly CompiledMemoryRule[];
  readonly keywords: KeywordIndex;
}

export class MemoryRuleError extends Error {
  override readonly name = 'MemoryRuleError';
}

export const BUNDLED_MEMORY_FILES: Readonly<Record<string, unknown>> = { directives };

/** Protection rules of the files that hold an agent's memory (security/protection/workspace.yaml). */
export const MEMORY_FILE_RULES: ReadonlySet<string> = new Set(['ws.memory', 'ws.user']);
export const MEMORY_INJECTION_RULE = 'content.memory_injection';
export const MEMORY_SECRET_RULE = 'content.memory_secret';
/** Most rule ids of findings a decision lists (the first ones, in text order). */
const MAX_LISTED = 8;

/** Validates one rule file (the shape of security/memory/schema.json) and returns its rules. */
export function validateMemoryFile(data: unknown, name: string): MemoryRule[] {
  const fail = (msg: string): never => {
    throw new MemoryRuleError(`memory rules \`${name}\`: ${msg}`);
  };
  return validateRuleFile<'prompt_injection', MemoryRule>(data, {
    fail,
    category: (v) => (v === 'prompt_injection' ? v : fail('category must be prompt_injection')),
    id: () => ({ family: 'memory', aliasPrefix: 'MD' }),
    extraKeys: ['risk'],
    rule: (base, raw, _category, where) => {
      if (!PROMPT_RISKS.includes(raw.risk as never)) where(`risk must be one of ${PROMPT_RISKS.join(', ')}`);
      return {
        id: base.id,
        ...(base.alias === undefined ? {} : { alias: base.alias }),
        severity: base.severity,
        risk: raw.risk as PromptRisk,
        pattern: base.pattern,
        description: base.description,
        ...(base.examples ? { examples: base.examples } : {}),
      };
    },
  });
}

/** Validates and compiles rule files (name → parsed YAML). Throws on any defect. */
export function compileMemoryRules(files: Readonly<Record<string, unknown>>): CompiledMemoryRules {
  const seen = new Set<string>();
  const out: CompiledMemoryRule[] = [];
  const ids = new Map<string, number>();
  const idOf = (k: string) => {
    let id = ids.get(k);
    if (id === undefined) {
      id = ids.size;
      ids.set(k, id);
    }
    return id;
  };
  for (const [name, data] of Object.entries(files)) {
    for (const rule of validateMemoryFile(data, name)) {
      for (const name of rule.alias === undefined ? [rule.id] : [rule.id, rule.alias]) {
        if (seen.has(name)) throw new MemoryRuleError(`memory rules: duplicate rule id or alias \`${name}\``);
        seen.add(name);
      }
      let re: RegExp;
      try {
        re = compilePattern(rule.pattern);
      } catch (e) {
        throw new MemoryRuleError(`memory rules: rule \`${rule.id}\`: pattern does not compile: ${(e as Error).message}`);
      }
      // The rules search the text as written, whitespace not collapsed: keywords without whitespace.
      out.push({
        rule,
        regex: new RegExp(re.source, re.flags + 'g'),
        prefilter: analyzePattern(re.source, { uncollapsed: true }).literals.map((set) => set.map(idOf)),
      });
    }
  }
  return { rules: out, keywords: new KeywordIndex([...ids.keys()]) };
}

let bundled: CompiledMemoryRules | undefined;

/** The bundled memory directive rules (validated, compiled once). */
export function loadMemoryRules(): CompiledMemoryRules {
  bundled ??= compileMemoryRules(BUNDLED_MEMORY_FILES);
  return bundled;
}

export interface MemoryCheckOptions {
  /** Tier 1's rule set (default: the bundled rules). */
  readonly heuristics?: CompiledRuleSet;
  /** Tier 1's evaluation of the whole payload with the same action type, when the caller has it: reused where it covers the written text. */
  readonly tier1?: HeuristicResult;
  readonly rules?: CompiledMemoryRules;
}

const finding = (category: FindingCategory, rule: string, severity: Severity, description: string, risk?: PromptRisk): ContentFinding => {
  const f = { category, rule, severity, start: 0, end: 0, description, ...(risk ? { risk } : {}) };
  return { ...f, action: matrixAction('pre_prompt', 'untrusted', f) };
};

/** Prompt-injection findings of a Tier 1 result, with each rule's risk (the matrix needs it). */
function injectionOf(h: HeuristicResult, set: CompiledRuleSet): { f: ContentFinding; field: string }[] {
  return h.findings
    .filter((x) => x.category === 'prompt_injection')
    .map((x) => {
      const rule = set.rules.find((r) => r.rule.id === x.ruleId)?.rule;
      return { f: finding('prompt_injection', x.ruleId, x.severity, x.description, rule?.risk), field: x.field };
    });
}

/** Findings of one text bound for memory, other than prompt injection: secrets, invisible text, the memory directive rules. */
function ownFindings(text: string, rules: CompiledMemoryRules): ContentFinding[] {
  const out: ContentFinding[] = [];
  for (const s of redactSecrets(loadSecretRules(), text).findings) out.push(finding('secret_leak', s.ruleId, 'high', s.description));
  const ascii = isAscii(text);
  for (const c of loadContentRules()) {
    if (c.rule.category === 'invisible_text' && matchSpansIn(c.regex, text, 1, ascii).length)
      out.push(finding('invisible_text', c.rule.id, c.rule.severity, c.rule.description));
  }
  const hits = rules.keywords.scan(text, undefined, ascii);
  for (const r of rules.rules) {
    if (!r.prefilter.every((set) => set.some((id) => hits.found[id] === 1))) continue;
    if (matchSpans(r.regex, text, 1).length)
      out.push(finding('prompt_injection', r.rule.id, r.rule.severity, r.rule.description, r.rule.risk));
  }
  return out;
}

/** Every finding of one text bound for memory (prompt injection, secrets, invisible text, memory directives), each with its matrix action. */
export function memoryFindings(text: string, opts: MemoryCheckOptions = {}): ContentFinding[] {
  const set = opts.heuristics ?? loadHeuristicRules();
  return [
    ...injectionOf(evaluateHeuristics(set, 'memory_write', { content: text }), set).map((x) => x.f),
    ...ownFindings(text, opts.rules ?? loadMemoryRules()),
  ];
}

/** True when the action writes to the agent's memory: a memory_write, or a write to a file of MEMORY_FILE_RULES. */
export function writesMemory(actionType: string, findings: readonly PathFindingLike[]): boolean {
  return (
    actionType === 'memory_write' || findings.some((f) => f.access === 'write' && f.ruleId !== undefined && MEMORY_FILE_RULES.has(f.ruleId))
  );
}

interface PathFindingLike {
  readonly path: string;
  readonly resolved?: string;
  readonly access: string;
  readonly ruleId?: string;
}

export interface MemoryVerdict {
  /** block, or escalate: a person decides (minimum Tier 3). */
  readonly verdict: 'block' | 'escalate';
  readonly rules: string[];
  readonly reason: string;
}

/** A write's findings: the action each asks for, what was found, in which field. */
interface Found {
  readonly f: ContentFinding;
  readonly field: string;
}

const asWrite = (a: ContentAction): 'block' | 'escalate' | undefined =>
  a === 'block' || a === 'redact' ? 'block' : a === 'require_approval' ? 'escalate' : undefined;

/**
 * Inspects what an action writes to the agent's memory: a memory_write action, or writes to files
 * of MEMORY_FILE_RULES (`findings`: the protection check's path findings). Undefined when the action
 * writes no memory or nothing was found that matters; else a block or an escalation with rule ids
 * and a reason that names what was found (never the text).
 */
export function memoryWriteCheck(
  actionType: string,
  payload: Readonly<Record<string, unknown>>,
  findings: readonly PathFindingLike[],
  opts: MemoryCheckOptions = {},
): MemoryVerdict | undefined {
  if (!writesMemory(actionType, findings)) return undefined;
  const files = findings.filter((f) => f.access === 'write' && f.ruleId !== undefined && MEMORY_FILE_RULES.has(f.ruleId));
  const where = files.length ? `${files[0]!.resolved ?? files[0]!.path}, the agent's memory,` : "the agent's long-term memory";
  const { strings, complete } = writtenStrings(payload, actionType === 'memory_write' ? 'any' : new Set(files.map((f) => f.path)));
  if (!complete) {
    return {
      verdict: 'block',
      rules: [MEMORY_INJECTION_RULE, 'content.payload_too_complex'],
      reason: `Blocked: this write to ${where} is too deeply nested or holds too many strings to be inspected. Write plain text.`,
    };
  }
  const set = opts.heuristics ?? loadHeuristicRules();
  const rules = opts.rules ?? loadMemoryRules();
  const all: Found[] = [];
  // Prompt injection: Tier 1's findings over the whole payload when they cover what is written (the
  // same strings, nothing cut, every finding in a written field); else each written string anew (a
  // diff's added lines, a finding in text being replaced that may hide one in the new text).
  const whole = new Set(strings.filter((s) => !/(?:^|\.)(?:patch|diff)$/i.test(s.field)).map((s) => s.field));
  const reuse =
    opts.tier1 && !opts.tier1.normalization.truncated && injectionOf(opts.tier1, set).every((x) => whole.has(x.field))
      ? opts.tier1
      : undefined;
  if (reuse) all.push(...injectionOf(reuse, set));
  for (const s of strings) {
    const field = s.field || 'payload';
    if (!reuse || !whole.has(s.field))
      for (const x of injectionOf(evaluateHeuristics(set, actionType, { content: s.text }), set)) all.push({ f: x.f, field });
    for (const f of ownFindings(s.text, rules)) all.push({ f, field });
  }
  const found = all.filter((x) => asWrite(x.f.action));
  if (found.length === 0) return undefined;
  const blocking = found.filter((x) => asWrite(x.f.action) === 'block');
  const ids = (xs: readonly Found[]) => [...new Set(xs.map((x) => x.f.rule))];
  const listed = (xs: readonly Found[]) =>
    ids(xs)
      .slice(0, MAX_LISTED)
      .map((id) => `content.${id}`);
  const named = (xs: readonly Found[]) => {
    const first = xs[0]!;
    const more = ids(xs).length > 1 ? ` (and ${ids(xs).slice(1, MAX_LISTED).join(', ')})` : '';
    return `${first.f.description} (${first.f.rule}, in \`${first.field}\`)${more}`;
  };
  const later =
    'Later sessions read their memory as their own notes, and what the model writes there is untrusted, so it would steer every session after this one.';

  if (blocking.length) {
    const secrets = blocking.filter((x) => x.f.category === 'secret_leak');
    const hidden = blocking.filter((x) => x.f.category === 'invisible_text');
    const injected = blocking.filter((x) => x.f.category === 'prompt_injection');
    const rules = [
      ...(secrets.length ? [MEMORY_SECRET_RULE] : []),
      ...(hidden.length ? [INVISIBLE_IN_INSTRUCTIONS_RULE] : []),
      ...(injected.length ? [MEMORY_INJECTION_RULE] : []),
      ...listed(blocking),
    ];
    const parts = [
      ...(secrets.length
        ? [
            `a secret: ${named(secrets)}. Keep where the secret lives instead (the name of the environment variable or the secret manager's reference), never its value`,
          ]
        : []),
      ...(hidden.length
        ? [`invisible characters: ${named(hidden)}, which the model reads and a person reviewing the memory cannot see. Remove them`]
        : []),
      ...(injected.length
        ? [
            `a standing instruction: ${named(injected)}. Keep facts and preferences in memory; put procedures where a person reviews them (the README, a script in the repository)`,
          ]
        : []),
    ];
    const why =
      injected.length || hidden.length
        ? later
        : 'Later sessions read their memory into their prompts, so the secret would reach every one of them and the model provider.';
    return { verdict: 'block', rules, reason: `Blocked: this write would put into ${where} ${parts.join('; and ')}. ${why}` };
  }
  return {
    verdict: 'escalate',
    rules: [MEMORY_INJECTION_RULE, ...listed(found)],
    reason: `this write would put into ${where} what reads as a standing instruction: ${named(found)}. ${later} So a person approves it (Tier 3)`,
  };
}
