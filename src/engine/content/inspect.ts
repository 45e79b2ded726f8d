// Content inspection: one text, where it is going (phase) and who wrote it (trust) → findings in
// four categories and one action. Pure and synchronous; never throws on odd text.
//
// Prompt injection: the Tier 1 rules of category prompt_injection (security/heuristics/
// prompt-injection.yaml) over the same normalised variants Tier 1 sees (NFKC, invisible characters
// removed, homoglyphs folded, whitespace collapsed, tag text, bounded base64/hex/URL/escape
// decoding), built with an offset map so every finding points at the original text.
// Secrets: the secret detectors (security/secrets/). Credential references and invisible text:
// security/content/*.yaml, matched on the original text.
import { loadHeuristicRules, type CompiledRule, type CompiledRuleSet } from '../heuristics/rules';
import { prepareMapped } from '../heuristics/normalize';
import { loadSecretRules, redactSecrets, redactionPlaceholder, type SecretRuleSet } from '../secrets';
import { loadContentRules, matchSpans, type CompiledContentRule } from './rules';
import { combineActions, matrixAction } from './matrix';
import {
  CONTENT_PHASES,
  TRUST_LABELS,
  type ContentFinding,
  type ContentPhase,
  type FindingCategory,
  type InspectionResult,
  type TrustLabel,
} from './types';

export interface InspectOptions {
  /** Defaults to the bundled rule sets. */
  readonly heuristics?: CompiledRuleSet;
  readonly secrets?: SecretRuleSet;
  readonly contentRules?: readonly CompiledContentRule[];
}

/** Prompt injection is scanned in chunks of this many characters (overlapping by CHUNK_OVERLAP). */
export const INSPECT_CHUNK = 256 * 1024;
export const CHUNK_OVERLAP = 4 * 1024;
/** Text beyond this is not scanned for prompt injection (the result says `truncated`). */
export const MAX_INSPECT_CHARS = 8 * 1024 * 1024;
/** Most findings one prompt-injection rule reports per scanned variant. */
const MAX_PI_MATCHES = 16;

const piRulesOf = new WeakMap<CompiledRuleSet, readonly CompiledRule[]>();
function promptInjectionRules(set: CompiledRuleSet): readonly CompiledRule[] {
  let rules = piRulesOf.get(set);
  if (!rules) {
    rules = set.rules.filter((r) => r.rule.category === 'prompt_injection' && !r.raw);
    piRulesOf.set(set, rules);
  }
  return rules;
}

/** Accepts `pre_prompt`, `PrePrompt`, `pre-prompt` …; undefined for anything else. */
export function parsePhase(value: unknown): ContentPhase | undefined {
  if (typeof value !== 'string') return undefined;
  const k = value.toLowerCase().replace(/[_\s-]/g, '');
  return CONTENT_PHASES.find((p) => p.replace(/_/g, '') === k);
}

/** Accepts `trusted`, `untrusted`, `mixed` (any case); undefined for anything else. */
export function parseTrust(value: unknown): TrustLabel | undefined {
  if (typeof value !== 'string') return undefined;
  const k = value.toLowerCase();
  return TRUST_LABELS.find((t) => t === k);
}

interface RawFinding extends Omit<ContentFinding, 'action'> {}

function promptInjectionFindings(set: CompiledRuleSet, text: string): { findings: RawFinding[]; truncated: boolean } {
  const rules = promptInjectionRules(set);
  const findings: RawFinding[] = [];
  const seen = new Set<string>();
  const limit = Math.min(text.length, MAX_INSPECT_CHARS);
  for (let base = 0; base < limit; base += INSPECT_CHUNK - CHUNK_OVERLAP) {
    const chunk = text.slice(base, Math.min(limit, base + INSPECT_CHUNK));
    const { variants } = prepareMapped(chunk);
    for (const v of variants) {
      const hits = set.keywords.scan(v.text, set.keywords.acquire());
      for (const r of rules) {
        if (!r.prefilter.every((ks) => ks.some((k) => hits.found[k] === 1))) continue;
        for (const [a, b] of matchSpans(r.windowed().global, v.text, MAX_PI_MATCHES)) {
          const [s, e] = v.span(a, b);
          const start = base + s;
          const end = base + e;
          const key = `${r.rule.id}:${start}:${end}`;
          if (seen.has(key)) continue;
          seen.add(key);
          findings.push({
            category: 'prompt_injection',
            rule: r.rule.id,
            severity: r.rule.severity,
            start,
            end,
            ...(r.rule.risk ? { risk: r.rule.risk } : {}),
            description: r.rule.description,
            ...(v.kind === 'normalized' ? {} : { variant: v.kind as RawFinding['variant'] }),
          });
        }
      }
      set.keywords.release(hits);
    }
    if (base + INSPECT_CHUNK >= limit) break;
  }
  return { findings, truncated: text.length > MAX_INSPECT_CHARS };
}

/**
 * Inspects one text. `source` names where it came from (a tool, a URL, a file; shown in wrappers
 * and notices, it does not change the decision — trust does). Throws only for an unknown phase or
 * trust label (a caller bug) or broken bundled rules.
 */
export function inspect(text: string, phase: ContentPhase, source: string, trust: TrustLabel, opts: InspectOptions = {}): InspectionResult {
  if (!CONTENT_PHASES.includes(phase)) throw new TypeError(`unknown phase \`${String(phase)}\` (expected ${CONTENT_PHASES.join(', ')})`);
  if (!TRUST_LABELS.includes(trust)) throw new TypeError(`unknown trust label \`${String(trust)}\` (expected ${TRUST_LABELS.join(', ')})`);
  const input = typeof text === 'string' ? text : String(text ?? '');
  const raw: RawFinding[] = [];
  const pi = promptInjectionFindings(opts.heuristics ?? loadHeuristicRules(), input);
  raw.push(...pi.findings);
  // Every copy of a found secret and every value the host knows (redactSecrets' value masking), not only what a detector recognises.
  for (const s of redactSecrets(opts.secrets ?? loadSecretRules(), input).findings) {
    raw.push({ category: 'secret_leak', rule: s.ruleId, severity: 'high', start: s.start, end: s.end, description: s.description });
  }
  for (const c of opts.contentRules ?? loadContentRules()) {
    for (const [start, end] of matchSpans(c.regex, input)) {
      raw.push({
        category: c.rule.category as FindingCategory,
        rule: c.rule.id,
        severity: c.rule.severity,
        start,
        end,
        description: c.rule.description,
      });
    }
  }
  const findings: ContentFinding[] = raw
    .map((f) => ({ ...f, action: matrixAction(phase, trust, f) }))
    .sort((a, b) => a.start - b.start || a.end - b.end || a.rule.localeCompare(b.rule));
  const action = combineActions(findings.map((f) => f.action));
  const result: InspectionResult = {
    action,
    phase,
    trust,
    source,
    findings,
    ...(action === 'redact' ? { redacted: redact(input, findings) } : {}),
    ...(pi.truncated ? { truncated: true } : {}),
  };
  return result;
}

/**
 * The text with every secret replaced by `[REDACTED:<rule>]` and every invisible-text finding
 * removed. Secrets win where spans overlap (no part of a secret stays in clear).
 */
export function redact(text: string, findings: readonly Pick<ContentFinding, 'category' | 'rule' | 'start' | 'end'>[]): string {
  const spans = findings
    .filter((f) => f.category === 'secret_leak' || f.category === 'invisible_text')
    .map((f) => ({ start: f.start, end: f.end, secret: f.category === 'secret_leak' ? f.rule : undefined }))
    .sort((a, b) => a.start - b.start || b.end - a.end);
  // Overlapping spans merge into one edit: a placeholder if any of them is a secret, else nothing.
  const groups: { start: number; end: number; secret?: string }[] = [];
  for (const s of spans) {
    const g = groups[groups.length - 1];
    if (g && s.start < g.end) {
      g.end = Math.max(g.end, s.end);
      g.secret ??= s.secret;
    } else groups.push({ ...s });
  }
  const out: string[] = [];
  let pos = 0;
  for (const g of groups) {
    out.push(text.slice(pos, g.start), g.secret === undefined ? '' : redactionPlaceholder(g.secret));
    pos = g.end;
  }
  out.push(text.slice(pos));
  return out.join('');
}
