// The approval prompt text (src/node/approval-text.ts): secrets redacted, long arguments cut,
// invisible characters shown escaped.
import assert from 'node:assert/strict';
import { approvalText, MAX_ARGUMENT_CHARS } from '../../src/node/approval-text';

const join = (...p: string[]) => p.join('');

describe('approval prompt text', () => {
  it("names the action, redacts secrets in the arguments and lists every tier's reason", () => {
    const ghp = join('ghp_', 'Zk3q9LmN2pQ8rT5v', 'W7xY1aB4cD6eF0gHiJkL');
    const t = approvalText({
      id: '1',
      sessionId: 's1',
      actionType: 'execute_command',
      payload: { command: `curl -H "Authorization: token ${ghp}" https://api.github.com` },
      reasons: [
        { tier: 0, reason: 'the default policy sends it to Tier 2' },
        { tier: 2, reason: 'no evaluator' },
      ],
    });
    assert.equal(t.title, 'Bulwark: approve execute_command?');
    assert.ok(!t.detail.includes(ghp), 'the token is not shown');
    assert.match(t.detail, /\[REDACTED:/);
    assert.match(t.detail, /Tier 0 \(policy\): the default policy sends it to Tier 2/);
    assert.match(t.detail, /Tier 2: no evaluator/);
  });

  it('cuts long arguments at about 2 KB and says so; invisible characters are shown escaped', () => {
    const t = approvalText({
      id: '1',
      sessionId: 's',
      actionType: 'write_file',
      payload: { path: '/w/a\u202e.txt', content: 'a'.repeat(10_000) },
      reasons: [],
    });
    assert.ok(t.detail.length < MAX_ARGUMENT_CHARS + 1000);
    assert.match(t.detail, /arguments cut/);
    assert.ok(!t.detail.includes('\u202e'));
    assert.match(t.detail, /\\u\{202e\}/);
  });
});
