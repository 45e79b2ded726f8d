// Tier 2 — the LLM evaluator. Pure: the back end (HTTP, vscode.lm) is injected as a ChatBackend.
export { Tier2Evaluator, TIER2_DEFAULTS, TIER2_RULES, type ChatBackend, type Tier2Options, type Tier2Result } from './evaluator';
export { EVALUATOR_PROMPT_SHA256, EVALUATOR_PROMPT_TEMPLATE, MAX_ACTION_CHARS, buildEvaluatorPrompt, buildUserMessage } from './prompt';
export {
  MAX_ANSWER_CHARS,
  parseEvaluatorAnswer,
  type CanaryStatus,
  type EvaluatorDecision,
  type ParseError,
  type ParsedAnswer,
  type Tier2Event,
} from './parse';
export { constantTimeEqual, generateCanary, isValidCanary } from './canary';
export { BUDGET_NAMESPACE, localDateKey } from './budget';
export { CACHE_NAMESPACE } from './cache';
export { canonicalJson } from './canonical';
export { sha256Hex } from './sha256';
