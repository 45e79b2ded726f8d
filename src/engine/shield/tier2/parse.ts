// Strict reading of the evaluator's answer. Anything other than one well-formed JSON object with a
// known decision, a confidence in [0,1], a reasoning string and the exact workspace canary is
// rejected; the caller blocks. (Mapping an unknown decision to ALLOW, as OpenParallax's evaluator did, would fail open.)
import { constantTimeEqual } from './canary';

export type Tier2Event = 'budget_exhausted' | 'evaluator_unreachable' | 'canary_missing' | 'malformed_answer' | 'unknown_decision';
export type EvaluatorDecision = 'allow' | 'block' | 'escalate';

export interface ParsedAnswer {
  decision: EvaluatorDecision;
  confidence: number;
  reasoning: string;
}
export interface ParseError {
  error: string;
  event: 'canary_missing' | 'malformed_answer' | 'unknown_decision';
}

/** Longest answer read at all; the prompt asks for one or two sentences. */
export const MAX_ANSWER_CHARS = 64 * 1024;

/** What the canary check concluded, for the verdict's `canary` field. */
export type CanaryStatus = 'verified' | 'missing' | 'n/a';

export function parseEvaluatorAnswer(text: string, canary: string): ParsedAnswer | ParseError {
  const { result } = parseEvaluatorAnswerDetailed(text, canary);
  return result;
}

/** @internal As parseEvaluatorAnswer, plus whether the canary was checked and matched. */
export function parseEvaluatorAnswerDetailed(text: string, canary: string): { result: ParsedAnswer | ParseError; canary: CanaryStatus } {
  const malformed = (error: string, status: CanaryStatus = 'n/a') => ({
    result: { error, event: 'malformed_answer' as const },
    canary: status,
  });
  if (typeof text !== 'string') return malformed('the evaluator returned no text');
  if (text.length > MAX_ANSWER_CHARS) return malformed(`the answer is ${text.length} characters long (limit ${MAX_ANSWER_CHARS})`);
  if (text.trim() === '') return malformed('the answer is empty');

  const objects = jsonObjectsIn(text);
  if (objects.length === 0) return malformed('the answer contains no JSON object');
  if (objects.length > 1) return malformed(`the answer contains ${objects.length} JSON objects; exactly one is required`);
  const obj = objects[0]!;

  const echoed = obj['canary'];
  if (typeof echoed !== 'string' || !constantTimeEqual(echoed, canary)) {
    const what =
      echoed === undefined
        ? 'has no "canary" field'
        : typeof echoed !== 'string'
          ? 'has a "canary" field that is not a string'
          : 'echoes a canary that is not the workspace canary';
    return {
      result: {
        error: `the answer ${what}; it was not written under Bulwark's evaluator instructions (possible prompt injection)`,
        event: 'canary_missing',
      },
      canary: 'missing',
    };
  }

  const d = obj['decision'];
  if (d === undefined) return malformed('the answer has no "decision" field', 'verified');
  if (typeof d !== 'string') return malformed('the "decision" field is not a string', 'verified');
  const decision = d.toLowerCase();
  if (decision !== 'allow' && decision !== 'block' && decision !== 'escalate') {
    return {
      result: {
        error: `unknown decision ${JSON.stringify(d.slice(0, 40))} (expected ALLOW, BLOCK or ESCALATE)`,
        event: 'unknown_decision',
      },
      canary: 'verified',
    };
  }
  const c = obj['confidence'];
  if (c === undefined) return malformed('the answer has no "confidence" field', 'verified');
  if (typeof c !== 'number' || !Number.isFinite(c) || c < 0 || c > 1) {
    return malformed(`"confidence" must be a number from 0 to 1, got ${JSON.stringify(c)?.slice(0, 40) ?? String(c)}`, 'verified');
  }
  const r = obj['reasoning'];
  if (r === undefined) return malformed('the answer has no "reasoning" field', 'verified');
  if (typeof r !== 'string') return malformed('the "reasoning" field is not a string', 'verified');
  return { result: { decision, confidence: c, reasoning: r }, canary: 'verified' };
}

/**
 * Every top-level JSON object in the text. Surrounding prose and ``` fences are skipped; a
 * brace-balanced span that is not valid JSON counts as prose; a `{` that never closes ends the
 * search. Objects inside a valid object are part of it, not counted separately. Linear time.
 */
function jsonObjectsIn(text: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  let i = 0;
  while (i < text.length) {
    const start = text.indexOf('{', i);
    if (start < 0) break;
    const end = balancedEnd(text, start);
    if (end < 0) break; // never closes: the rest is not an object (stopping keeps this linear)
    let value: unknown;
    let ok = true;
    try {
      value = JSON.parse(text.slice(start, end + 1));
    } catch {
      ok = false;
    }
    if (ok && value !== null && typeof value === 'object' && !Array.isArray(value)) found.push(value as Record<string, unknown>);
    i = end + 1;
  }
  return found;
}

/** Index of the `}` closing the `{` at `start`, honouring JSON strings; -1 if it never closes. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}
