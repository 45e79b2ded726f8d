// Inline policy examples (`examples:` in a policy file), checked by `bulwark policy test` and the tests.
import type { Platform } from '../types';
import type { ActionRequest } from '../types';
import { resolveActionPath } from '../paths';
import { pathTouchesOf } from '../protection/check';
import type { CompiledPolicy, PolicyExample } from './policy';
import { errorMessage } from '../error-message';

export interface ExampleOutcome {
  readonly example: PolicyExample;
  readonly index: number;
  readonly passed: boolean;
  readonly got: { decision: string; tier: number; rule: string };
  readonly problem?: string;
}

/** Tier 0 outcome of each example against the compiled policy (policy only: no other layer). */
export function runPolicyExamples(compiled: CompiledPolicy, env: { home: string; platform: Platform }): ExampleOutcome[] {
  return (compiled.policy.examples ?? []).map((example, index) => {
    const action: ActionRequest = {
      type: example.action.type,
      payload: example.action.payload,
      sessionId: 'policy-test',
      cwd: example.action.cwd,
    };
    let paths: string[];
    try {
      // A path found by the payload walk that cannot be resolved escalates in the engine; Tier 0 never sees it.
      paths = pathTouchesOf(action, env.platform).flatMap((t) => {
        try {
          return [resolveActionPath(t.path, { cwd: action.cwd, home: env.home, platform: env.platform })];
        } catch (e) {
          if (t.inferred) return [];
          throw e;
        }
      });
    } catch (e) {
      return { example, index, passed: false, got: { decision: 'error', tier: 0, rule: '' }, problem: errorMessage(e) };
    }
    const r = compiled.evaluate(
      action.type,
      paths,
      example.effects ? { class: example.effects, judged: [`judged ${example.effects} (example)`] } : undefined,
    );
    const problems: string[] = [];
    if (r.decision !== example.expect) problems.push(`expected ${example.expect}, got ${r.decision}`);
    if (example.tier !== undefined && r.minTier !== example.tier) problems.push(`expected tier ${example.tier}, got ${r.minTier}`);
    if (example.rule !== undefined && !r.rule.endsWith(`.${example.rule}`)) problems.push(`expected rule ${example.rule}, got ${r.rule}`);
    return {
      example,
      index,
      passed: problems.length === 0,
      got: { decision: r.decision, tier: r.minTier, rule: r.rule },
      problem: problems.join('; ') || undefined,
    };
  });
}
