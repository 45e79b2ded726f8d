// Crash test: a writer process appending entries is SIGKILLed at random points; after each kill the
// log reopens, no acknowledged entry is lost, at most one torn line is sealed with RECOVERY, and the
// chain verifies against its anchor. The writer is this bundle, run with `node -e` (see crashWriter).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AuditLog } from '../../src/node/audit/audit-log';
import { makeTempDir } from './helpers/repo';

const KEY_HEX = '00112233445566778899aabbccddeeff';

/** The child: appends forever (several in flight at once), printing each acknowledged seq. */
export async function crashWriter(logFile: string, dbFile: string): Promise<void> {
  const log = await AuditLog.open({ logFile, dbFile, hmacKey: Buffer.from(KEY_HEX, 'hex'), checkpointEvery: 16 });
  for (let i = 0; ; i++) {
    const batch = Array.from({ length: 1 + (i % 7) }, (_, k) =>
      log
        .append({
          event: 'ACTION_EXECUTED',
          session: 'crash',
          action_type: 'write_file',
          details: { i, k, pad: 'x'.repeat((i * 37 + k * 101) % 3000) },
        })
        .then((e) => {
          process.stdout.write(`${e.seq}\n`);
        }),
    );
    await Promise.all(batch);
  }
}

if (typeof describe === 'function')
  describe('audit log crash safety (SIGKILL)', function () {
    this.timeout(300000);
    let tmp: string;
    before(() => {
      tmp = makeTempDir('bulwark-audit-crash-');
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it('≥ 30 random kills: no acknowledged entry is lost and the chain verifies after recovery', async () => {
      const logFile = path.join(tmp, 'audit.jsonl');
      const dbFile = path.join(tmp, 'state.db');
      const key = Buffer.from(KEY_HEX, 'hex');
      let maxAcked = 0;
      let recoveries = 0;
      for (let round = 0; round < 32; round++) {
        const child = spawn(
          process.execPath,
          ['-e', `require(${JSON.stringify(__filename)}).crashWriter(process.argv[1], process.argv[2])`, logFile, dbFile],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
        });
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
        });
        await new Promise<void>((resolve) => {
          const wait = () =>
            out.length
              ? setTimeout(
                  () => {
                    child.kill('SIGKILL');
                  },
                  5 + Math.floor(Math.random() * 120),
                )
              : setTimeout(wait, 5);
          wait();
          child.on('exit', () => resolve());
        });
        assert.equal(err, '', `writer failed: ${err}`);
        const acked = out
          .split('\n')
          .filter((l) => /^\d+$/.test(l))
          .map(Number);
        const roundMax = Math.max(0, ...acked);
        maxAcked = Math.max(maxAcked, roundMax);
        const before = await countRecoveries(logFile);
        const log = await AuditLog.open({ logFile, dbFile, hmacKey: key });
        const seqs = new Set<number>();
        let rec = 0;
        for await (const e of log.entries()) {
          seqs.add(e.seq);
          if (e.event === 'RECOVERY') rec++;
        }
        recoveries += rec - before;
        assert.ok(rec - before <= 1, 'at most one RECOVERY per reopen');
        for (const s of acked) assert.ok(seqs.has(s), `acknowledged seq ${s} was lost (round ${round})`);
        assert.ok(log.head.seq >= maxAcked);
        const r = await log.verify(undefined, { record: false });
        assert.ok(r.ok, `round ${round}: ${JSON.stringify(r.firstBroken)}`);
        await log.close();
      }
      assert.ok(maxAcked > 30, `the writer made progress (${maxAcked})`);
      process.stdout.write(`      (${maxAcked} entries acknowledged over 32 kills, ${recoveries} recoveries sealed)\n`);
    });
  });

async function countRecoveries(logFile: string): Promise<number> {
  if (!fs.existsSync(logFile)) return 0;
  return fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"event":"RECOVERY"')).length;
}
