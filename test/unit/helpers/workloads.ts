// Workloads shared by the unit tests (which check what comes out) and `npm run bench` (bench/limits.ts, which
// times them): one definition, so the bench measures exactly the input the tests check.
import type { AuditEntry } from '../../../src/node/audit-view';
import { findSecrets, type SecretRuleSet } from '../../../src/engine/secrets';

/** An audit entry of the view-model tests: every second one in session s2, every third one blocked. */
export function auditViewEntry(seq: number, over: Partial<AuditEntry> = {}): AuditEntry {
  return <AuditEntry>{
    seq,
    id: `id-${seq}`,
    ts: '2026-01-01T00:00:00.000Z',
    session: seq % 2 ? 's1' : 's2',
    event: seq % 3 ? 'ACTION_APPROVED' : 'ACTION_BLOCKED',
    action_type: 'read_file',
    details: {
      decision: {
        decision: seq % 3 ? 'allow' : 'block',
        tier: 0,
        rules: seq % 3 ? [] : ['protection.full_block'],
        reason: `reason ${seq}`,
      },
      args: { path: `/tmp/file-${seq}.txt` },
    },
    prev_hash: 'p',
    hash: 'h',
    ...over,
  };
}

/**
 * 2 MB of log lines with 4 KB slices of `source` every 40 lines and a rule's match example every 25: the mixed
 * corpus the redaction test and its throughput figure use. Complete examples only: an unterminated private-key
 * block redacts everything after it (fail closed).
 */
export function plantedLogCorpus(rules: SecretRuleSet, source: string): string {
  const plants = rules.rules
    .flatMap((r) => r.examples.match)
    .filter((e) => !/-----BEGIN(?![\s\S]*-----END)|PuTTY-User-Key-File(?![\s\S]*Private-MAC)/.test(e));
  let corpus = '';
  for (let i = 0; corpus.length < 2 << 20; i++) {
    corpus += `2024-05-01T12:${String(i % 60).padStart(2, '0')}:00Z INFO request id=${((i * 2654435761) >>> 0).toString(16)} path=/api/v1/items?page=${i % 7} status=200 duration_ms=${i % 300}\n`;
    if (i % 40 === 0) corpus += source.slice((i * 997) % (source.length - 4000), ((i * 997) % (source.length - 4000)) + 4000) + '\n';
    if (i % 25 === 0) corpus += `DEBUG config ${plants[i % plants.length]!}\n`;
  }
  return corpus;
}

/** Every rule's match examples that the full rule set finds something in, with the secret values found (the streaming tests' plants). */
export function ruleMatchPlants(rules: SecretRuleSet): { rule: string; text: string; secrets: string[] }[] {
  return rules.rules
    .flatMap((r) =>
      r.examples.match.map((text) => ({
        rule: r.id,
        text,
        secrets: findSecrets(rules, text).map((f) => text.slice(f.start, f.end)),
      })),
    )
    .filter((p) => p.secrets.length > 0);
}
