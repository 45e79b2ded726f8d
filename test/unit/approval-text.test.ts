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
        {
          rule: 'editor.vscode_exec_config',
          tier: 0,
          kind: 'protection',
          message: '.vscode/settings.json needs your approval to be changed',
        },
        { rule: 'policy.default', tier: 0, kind: 'policy', message: 'the default policy sends it to Tier 2' },
        { rule: 'tier2.not_configured', tier: 2, kind: 'error', message: 'no evaluator' },
      ],
    });
    assert.equal(t.title, 'Bulwark: approve execute_command?');
    assert.ok(!t.detail.includes(ghp), 'the token is not shown');
    assert.match(t.detail, /\[REDACTED:/);
    // Each line says who said it, what, and the rule.
    assert.match(t.detail, /^Protection: \.vscode\/settings\.json needs your approval to be changed \[editor\.vscode_exec_config\]$/m);
    assert.match(t.detail, /^Tier 0 \(policy\): the default policy sends it to Tier 2 \[policy\.default\]$/m);
    assert.match(t.detail, /^Tier 2, a failure: no evaluator \[tier2\.not_configured\]$/m);
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
