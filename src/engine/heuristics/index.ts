// Tier 1 heuristics: the rule set as data (security/heuristics/*.yaml) and its pure matcher.
export * from './types';
export {
  loadHeuristicRules,
  compileRuleSet,
  validateRuleFile,
  compilePattern,
  HeuristicRuleError,
  BUNDLED_RULE_FILES,
  type CompiledRule,
  type CompiledRuleSet,
} from './rules';
export {
  evaluateHeuristics,
  collectStrings,
  FIELD_CLASS_OF_KEY,
  MAX_DEPTH,
  MAX_STRINGS,
  MAX_TOTAL_CHARS,
  MAX_OBJECT_JSON,
  type PayloadString,
} from './evaluate';
export {
  normalizeForScan,
  collapseWhitespace,
  dequoteShell,
  SCAN_HEAD,
  SCAN_TAIL,
  MAX_BLOBS,
  MAX_DECODE_ATTEMPTS,
  MAX_DECODE_RUNS,
  MAX_BLOB_CHARS,
} from './normalize';
export { requiredLiterals, analyzePattern, KeywordIndex, KeywordHits, NON_ASCII } from './prefilter';
