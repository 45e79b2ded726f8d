// The audit webview's model (src/node/audit-view.ts): rows, filters, paging, details.
import assert from 'node:assert/strict';
import { AuditView, type AuditEntry } from '../../src/node/audit-view';
import { auditViewEntry as entry } from './helpers/workloads';

describe('audit view model', () => {
  it('pages, filters by session, event, decision and text, and finds entries', () => {
    const v = new AuditView();
    for (let i = 1; i <= 1000; i++) v.add(entry(i));
    assert.equal(v.total, 1000);
    assert.deepEqual(
      v.range(0, 3).map((r) => r.seq),
      [1, 2, 3],
    );
    assert.equal(v.range(0, 3)[0]!.summary, '/tmp/file-1.txt');
    v.setFilter({ decision: 'block' });
    assert.equal(v.filtered, 333);
    assert.ok(v.range(0, 500).every((r) => r.decision === 'block'));
    v.setFilter({ session: 's1', text: 'FILE-9' });
    assert.deepEqual(
      v.range(0, 5).map((r) => r.seq),
      [9, 91, 93, 95, 97],
    );
    assert.equal(v.indexOf(91), 1);
    assert.equal(v.indexOf(2), -1);
    const live = v.add(entry(1001));
    assert.equal(live, undefined, 'an appended entry outside the filter is not shown');
    v.setFilter({});
    assert.equal(v.filtered, 1001);
    assert.equal(v.detail(3)?.decision?.rules?.[0], 'protection.full_block');
    assert.match(v.detail(3)?.args ?? '', /file-3\.txt/);
  });

  it('shows the decision and arguments of an action on each of its entries', () => {
    const v = new AuditView();
    const base = { ts: '2026-01-01T00:00:00.000Z', session: 's', action_type: 'write_file', prev_hash: 'p', hash: 'h' };
    v.add(<AuditEntry>{ ...base, seq: 1, id: 'a', event: 'ACTION_PROPOSED', details: { action_id: 'x', args: { path: '/etc/passwd' } } });
    v.add(<AuditEntry>{
      ...base,
      seq: 2,
      id: 'b',
      event: 'ACTION_EVALUATED',
      details: { action_id: 'x', decision: { decision: 'block', tier: 0, rules: ['deny.etc'], reason: 'system file' } },
    });
    v.add(<AuditEntry>{ ...base, seq: 3, id: 'c', event: 'ACTION_BLOCKED', details: { action_id: 'x', tier: 0, rules: ['deny.etc'] } });
    const rows = v.range(0, 3);
    assert.deepEqual(
      rows.map((r) => r.summary),
      ['/etc/passwd', '/etc/passwd', '/etc/passwd'],
    );
    assert.deepEqual(
      rows.map((r) => r.decision),
      [undefined, 'block', 'block'],
    );
    const d = v.detail(3);
    assert.equal(d?.decision?.reason, 'system file');
    assert.match(d?.args ?? '', /etc\/passwd/);
  });

  it('shows the structured reasons and former rule codes of a decision, redacted, and skips malformed ones', () => {
    const v = new AuditView();
    const secret = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
    v.add(<AuditEntry>{
      ts: '2026-01-01T00:00:00.000Z',
      session: 's',
      action_type: 'write_file',
      prev_hash: 'p',
      hash: 'h',
      seq: 1,
      id: 'e1',
      event: 'ACTION_EVALUATED',
      details: {
        action_id: 'x',
        rule_aliases: { 'heuristic.prompt-injection.ignore-previous': 'heuristic.PI-001', bad: 7 },
        decision: {
          decision: 'block',
          tier: 1,
          rules: ['heuristic.prompt-injection.ignore-previous'],
          reason: `Blocked at Tier 1: told to ignore instructions near ${secret}.`,
          reasons: [
            {
              rule: 'heuristic.prompt-injection.ignore-previous',
              tier: 1,
              kind: 'policy',
              message: `told to ignore instructions near ${secret}`,
            },
            { rule: 42, message: 'not a rule' },
            'not an object',
          ],
        },
      },
    });
    const d = v.detail(1)?.decision;
    assert.deepEqual(
      d?.reasons?.map((r) => [r.rule, r.tier, r.kind]),
      [['heuristic.prompt-injection.ignore-previous', 1, 'policy']],
    );
    assert.ok(!d?.reasons?.[0]?.message.includes(secret) && d?.reasons?.[0]?.message.includes('[REDACTED:'), d?.reasons?.[0]?.message);
    assert.ok(!d?.reason?.includes(secret));
    assert.deepEqual(d?.ruleAliases, { 'heuristic.prompt-injection.ignore-previous': 'heuristic.PI-001' });
  });

  // How long the filtering takes (< 1000 ms) is measured in `npm run bench` (bench/limits.ts), not asserted here (issue 15).
  it('filters 100k entries', () => {
    const v = new AuditView();
    for (let i = 1; i <= 100_000; i++) v.add(entry(i));
    v.setFilter({ text: 'file-4242' });
    assert.ok(v.filtered >= 1);
  });
});
