// Tier 3 approval broker: first answer wins, timeout denies, rate limit denies without asking.
import assert from 'node:assert/strict';
import { ApprovalBroker, type ApprovalRequest, type ApprovalSurface } from '../../src/engine/shield/tier3';
import { MemoryStateStore, type StateStore } from '../../src/engine/shield/types';

const request = (id = 'r1'): ApprovalRequest => ({
  id,
  sessionId: 's',
  actionType: 'execute_command',
  payload: { command: 'git push --force' },
  reasons: [{ rule: 'tier2.verdict', tier: 2, kind: 'policy', message: 'ambiguous' }],
});
const surface = (id: string, answer: 'approve' | 'deny' | 'never' | 'throw', delayMs = 0, seen: string[] = []): ApprovalSurface => ({
  id,
  ask: (_req, signal) =>
    new Promise((resolve, reject) => {
      seen.push(id);
      if (answer === 'never') {
        signal.addEventListener('abort', () => reject(new Error('aborted')));
        return;
      }
      setTimeout(() => (answer === 'throw' ? reject(new Error(`${id} broke`)) : resolve(answer)), delayMs);
    }),
});
const clock = (t = { now: 1_000_000 }) => ({ now: () => t.now, t });

describe('Tier 3 approval broker', () => {
  it('approves when a human approves, for that request only', async () => {
    const b = new ApprovalBroker({ surfaces: [surface('modal', 'approve')], store: new MemoryStateStore(), clock: clock() });
    const v = await b.decide(request());
    assert.deepEqual([v.decision, v.tier, v.event, v.surface], ['allow', 3, 'approved', 'modal']);
  });

  it('the first answer wins and the other surfaces are told to close', async () => {
    let aborted = false;
    const slow: ApprovalSurface = {
      id: 'slow',
      ask: (_r, signal) =>
        new Promise((_res, rej) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            rej(new Error('closed'));
          }),
        ),
    };
    const b = new ApprovalBroker({ surfaces: [slow, surface('fast', 'deny', 5)], store: new MemoryStateStore(), clock: clock() });
    const v = await b.decide(request());
    assert.deepEqual([v.decision, v.event, v.surface], ['block', 'denied', 'fast']);
    assert.ok(aborted);
  });

  it('a failing surface does not decide while another can still answer', async () => {
    const b = new ApprovalBroker({
      surfaces: [surface('broken', 'throw'), surface('modal', 'approve', 20)],
      store: new MemoryStateStore(),
      clock: clock(),
    });
    assert.equal((await b.decide(request())).decision, 'allow');
  });

  it('no answer within the timeout denies', async () => {
    const b = new ApprovalBroker({ surfaces: [surface('modal', 'never')], store: new MemoryStateStore(), clock: clock(), timeoutMs: 30 });
    const v = await b.decide(request());
    assert.deepEqual([v.decision, v.event], ['block', 'timeout']);
    assert.match(v.reason, /no answer within/);
  });

  it('every surface failing denies', async () => {
    const b = new ApprovalBroker({
      surfaces: [surface('a', 'throw'), surface('b', 'throw')],
      store: new MemoryStateStore(),
      clock: clock(),
    });
    const v = await b.decide(request());
    assert.deepEqual([v.decision, v.event], ['block', 'error']);
  });

  it('no surface at all denies', async () => {
    const v = await new ApprovalBroker({ surfaces: [], store: new MemoryStateStore(), clock: clock() }).decide(request());
    assert.deepEqual([v.decision, v.event], ['block', 'no_surface']);
  });

  it('more than max_per_hour requests are denied without prompting, across restarts, and the window slides', async () => {
    const store = new MemoryStateStore();
    const c = clock();
    const seen: string[] = [];
    const make = () => new ApprovalBroker({ surfaces: [surface('modal', 'approve', 0, seen)], store, clock: c, maxPerHour: 3 });
    for (let i = 0; i < 3; i++) assert.equal((await make().decide(request(`r${i}`))).decision, 'allow');
    const v = await make().decide(request('r4'));
    assert.deepEqual([v.decision, v.event], ['block', 'rate_limited']);
    assert.match(v.reason, /approval fatigue/);
    assert.equal(seen.length, 3, 'the rate-limited request was not shown to anyone');
    c.t.now += 3_600_001;
    assert.equal((await make().decide(request('r5'))).decision, 'allow');
  });

  it('a store error denies (fail closed)', async () => {
    const broken: StateStore = {
      get: () => {
        throw new Error('disk I/O error');
      },
      set: () => undefined,
      delete: () => undefined,
    };
    const v = await new ApprovalBroker({ surfaces: [surface('modal', 'approve')], store: broken, clock: clock() }).decide(request());
    assert.deepEqual([v.decision, v.event], ['block', 'error']);
    assert.match(v.reason, /disk I\/O error/);
  });
});
