// Rule ids and their aliases. Tier 1 heuristic, content and memory rules are named
// `<family>.<what it catches>` (`prompt-injection.ignore-previous`); a rule that had a coded id before
// keeps it as its `alias` (`PI-001`). Decisions name rules by id (`heuristic.<id>`, `content.<id>`);
// the audit log records the alias beside the id, and what a person types to find a rule (the audit
// search, `bulwark audit query --rule`) may use either. Built from the bundled rule files, validated
// by their own loaders (malformed data throws: fail closed).
import { BUNDLED_RULE_FILES, validateRuleFile } from '../heuristics/rules';
import { CODED_RULE_ID } from '../heuristics/types';
import { BUNDLED_MEMORY_FILES, validateMemoryFile } from './memory';
import { BUNDLED_CONTENT_FILES, validateContentFile } from './rules';

export interface RuleAliasTable {
  /** Rule id → its alias (former coded id). */
  readonly aliasOf: ReadonlyMap<string, string>;
  /** Alias → the rule id. */
  readonly idOf: ReadonlyMap<string, string>;
}

export class RuleAliasError extends Error {
  override readonly name = 'RuleAliasError';
}

/** Prefixes under which decisions name these rules. */
const DECISION_PREFIXES = ['heuristic.', 'content.'];

/** The table of every rule with an alias. Throws when two rules share an id or an alias. */
export function buildRuleAliasTable(rules: Iterable<{ readonly id: string; readonly alias?: string }>): RuleAliasTable {
  const aliasOf = new Map<string, string>();
  const idOf = new Map<string, string>();
  const ids = new Set<string>();
  for (const r of rules) {
    if (ids.has(r.id)) throw new RuleAliasError(`rule id \`${r.id}\` is used by more than one rule`);
    ids.add(r.id);
    if (r.alias === undefined) continue;
    if (idOf.has(r.alias)) throw new RuleAliasError(`alias \`${r.alias}\` is given to more than one rule`);
    aliasOf.set(r.id, r.alias);
    idOf.set(r.alias, r.id);
  }
  return { aliasOf, idOf };
}

/** Every bundled heuristic, content and memory rule (id and alias). */
export function bundledRuleNames(): { id: string; alias?: string }[] {
  return [
    ...Object.entries(BUNDLED_RULE_FILES).flatMap(([name, data]) => validateRuleFile(data, name).rules),
    ...Object.entries(BUNDLED_CONTENT_FILES).flatMap(([name, data]) => validateContentFile(data, name)),
    ...Object.entries(BUNDLED_MEMORY_FILES).flatMap(([name, data]) => validateMemoryFile(data, name)),
  ].map((r) => ({ id: r.id, ...(r.alias === undefined ? {} : { alias: r.alias }) }));
}

let bundled: RuleAliasTable | undefined;

/** The bundled rules' table (built once). */
export function ruleAliasTable(): RuleAliasTable {
  bundled ??= buildRuleAliasTable(bundledRuleNames());
  return bundled;
}

/** `name` split into a decision prefix (`heuristic.`, `content.` or '') and the rest. */
function splitPrefix(name: string): [string, string] {
  const p = DECISION_PREFIXES.find((x) => name.startsWith(x) && name.length > x.length);
  return p ? [p, name.slice(p.length)] : ['', name];
}

/**
 * The rule id `name` means: an alias (`PI-001`, any letter case, bare or with a decision prefix:
 * `heuristic.PI-001`) becomes the rule's id in the same form (`heuristic.prompt-injection.ignore-previous`);
 * any other name comes back unchanged.
 */
export function canonicalRuleName(name: string, table: RuleAliasTable = ruleAliasTable()): string {
  const [prefix, rest] = splitPrefix(name);
  if (!CODED_RULE_ID.test(rest.toUpperCase())) return name;
  const id = table.idOf.get(rest.toUpperCase());
  return id === undefined ? name : prefix + id;
}

/** The alias of the rule `name` names, in the same form (`heuristic.prompt-injection.ignore-previous` → `heuristic.PI-001`); undefined when it has none. */
export function ruleAliasName(name: string, table: RuleAliasTable = ruleAliasTable()): string | undefined {
  const [prefix, rest] = splitPrefix(canonicalRuleName(name, table));
  const alias = table.aliasOf.get(rest);
  return alias === undefined ? undefined : prefix + alias;
}

/**
 * Whether the recorded rule name `recorded` (from a decision or an audit entry, which may predate the
 * descriptive ids) and the name a person asked for mean the same rule: by id or alias, with or
 * without the decision prefix (`PI-001` finds `heuristic.prompt-injection.ignore-previous`).
 */
export function sameRule(recorded: string, asked: string, table: RuleAliasTable = ruleAliasTable()): boolean {
  const a = canonicalRuleName(recorded, table);
  const b = canonicalRuleName(asked, table);
  if (a === b) return true;
  const [pa, ra] = splitPrefix(a);
  const [pb, rb] = splitPrefix(b);
  return ra === rb && (pa === '' || pb === '');
}

/** Alias of every rule in `names` that has one, keyed by the name as given (for the audit log). */
export function ruleAliasesOf(names: Iterable<string>, table: RuleAliasTable = ruleAliasTable()): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) {
    const alias = ruleAliasName(n, table);
    if (alias !== undefined && alias !== n) out[n] = alias;
  }
  return out;
}
