// The audit log: JCS hashing, event coverage, tamper detection (fuzz), torn-line recovery, the state store.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import canonicalize from 'canonicalize';
import Database from 'better-sqlite3';
import {
  AUDIT_EVENT_TYPES,
  GENESIS_HASH,
  entryHash,
  entryLine,
  eventsForDecision,
  verifyEntries,
  type AuditEntry,
} from '../../src/engine/audit';
import type { CheckResult } from '../../src/engine/engine';
import { AuditIntegrityError, AuditLog } from '../../src/node/audit/audit-log';
import { fileWitness, readAnchor, scanChunk, sha256hex, verifyLogFile, verifyLogStream } from '../../src/node/audit/audit-verify';
import { SqliteStateStore, StateDb, STATE_DB_SCHEMA_VERSION } from '../../src/node/audit/state-db';
import { makeTempDir, repoRoot } from './helpers/repo';
import { itSeeded } from './helpers/seeds';

const KEY = Buffer.from('0123456789abcdef0123456789abcdef');
const blocked: CheckResult = {
  id: 'a1',
  sessionId: 's1',
  decision: 'block',
  tier: 0,
  minTier: 0,
  level: 'full_block',
  rules: ['deny.home.ssh'],
  reason: 'ssh keys',
  reasons: [{ rule: 'deny.home.ssh', tier: 0, kind: 'protection', message: 'ssh keys' }],
};
const allowed: CheckResult = {
  id: 'a2',
  sessionId: 's2',
  decision: 'allow',
  tier: 2,
  minTier: 1,
  level: 'unprotected',
  rules: ['tier2.allow'],
  reason: 'fine',
  reasons: [{ rule: 'tier2.allow', tier: 2, kind: 'policy', message: 'fine' }],
  confidence: 0.9,
  trail: [
    { decision: 'escalate', tier: 1, confidence: 1, rules: ['tier1.none'], reason: 'r' },
    { decision: 'allow', tier: 2, confidence: 0.9, rules: ['tier2.allow'], reason: 'ok' },
  ],
};

describe('audit log', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = makeTempDir('bulwark-audit-');
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const files = () => ({ logFile: path.join(tmp, 'audit.jsonl'), dbFile: path.join(tmp, 'state.db'), hmacKey: KEY });

  it('hash = SHA-256 over the RFC 8785 canonical JSON without `hash` (re-verified independently)', async () => {
    const log = await AuditLog.open({ ...files() });
    await log.appendDecision(blocked, { actionType: 'read_file', payload: { path: '~/.ssh/id_rsa', note: 'ünïcode ✓ <&>', n: 1e21 } });
    await log.close();
    const lines = fs.readFileSync(files().logFile, 'utf8').trim().split('\n');
    let prev = GENESIS_HASH;
    for (const l of lines) {
      const e = JSON.parse(l) as AuditEntry;
      const { hash, ...rest } = e;
      assert.equal(createHash('sha256').update(canonicalize(rest)!, 'utf8').digest('hex'), hash);
      assert.equal(entryHash(rest, sha256hex), hash);
      assert.equal(e.prev_hash, prev);
      prev = hash;
    }
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as AuditEntry).event),
      ['ACTION_PROPOSED', 'ACTION_EVALUATED', 'PROTECTION_BLOCKED', 'ACTION_BLOCKED'],
    );
  });

  it('redacts secrets in details.args', async () => {
    const log = await AuditLog.open({ ...files() });
    const secret = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    await log.appendDecision(allowed, {
      actionType: 'execute_command',
      payload: { command: `curl -H "Authorization: token ${secret}" x` },
    });
    await log.close();
    const text = fs.readFileSync(files().logFile, 'utf8');
    assert.ok(!text.includes(secret), 'the token must not be in the log');
    assert.ok(text.includes('CANARY_VERIFIED') && text.includes('ACTION_APPROVED'));
  });

  it('every defined event type is produced somewhere in src/ (no dead types)', () => {
    const root = path.join(repoRoot(), 'src');
    const walk = (d: string): string[] =>
      fs
        .readdirSync(d, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : e.name.endsWith('.ts') ? [path.join(d, e.name)] : []));
    const defFile = path.join(root, 'engine/audit/types.ts');
    const texts = walk(root)
      .filter((f) => f !== defFile)
      .map((f) => fs.readFileSync(f, 'utf8'));
    for (const t of AUDIT_EVENT_TYPES)
      assert.ok(
        texts.some((s) => s.includes(`'${t}'`)),
        `${t} is defined but never produced`,
      );
  });

  it('eventsForDecision derives IFC, canary, budget, rate-limit and self-protection events', () => {
    const r: CheckResult = {
      decision: 'block',
      tier: 2,
      minTier: 2,
      level: 'unprotected',
      rules: ['tier2.canary_missing', 'tier3.rate_limited'],
      reason: 'x',
      reasons: [],
      sessionId: 's',
      trail: [
        { decision: 'block', tier: 2, confidence: 1, rules: ['tier2.canary_missing'], reason: 'c' },
        { decision: 'block', tier: 2, confidence: 1, rules: ['tier2.budget_exhausted'], reason: 'b' },
      ],
      ifc: {
        decision: 'allow',
        enforced: false,
        wouldBlock: true,
        sensitivity: 'critical',
        sink: 'network',
        rule: 'ifc.critical.network',
        reason: 'r',
        classified: [],
        taint: 'critical',
        readTaint: {} as never,
      },
    };
    const ev = eventsForDecision(r, { actionType: 'http_request', payload: {} }).map((e) => e.event);
    for (const t of ['IFC_CLASSIFIED', 'IFC_WOULD_BLOCK', 'CANARY_MISSING', 'BUDGET_EXHAUSTED', 'RATE_LIMIT_HIT', 'ACTION_BLOCKED'])
      assert.ok(ev.includes(t as never), t);
    const self = eventsForDecision({ ...blocked, rules: ['self.state'] }, { actionType: 'write_file', payload: {} }).map((e) => e.event);
    assert.ok(self.includes('SELF_PROTECTION') && self.includes('PROTECTION_BLOCKED'));
  });

  it('group commit: concurrent appends are all durable, ordered and anchored', async () => {
    const log = await AuditLog.open({ ...files(), checkpointEvery: 10 });
    const all = await Promise.all(
      Array.from({ length: 250 }, (_, i) => log.append({ event: 'CONFIG_CHANGED', session: 's', details: { i } })),
    );
    assert.deepEqual(
      all.map((e) => e.seq),
      Array.from({ length: 250 }, (_, i) => i + 1),
    );
    const r = await log.verify();
    assert.ok(r.ok, JSON.stringify(r.firstBroken));
    assert.equal(r.checked, 250);
    await log.close();
    const db = new StateDb(files().dbFile);
    const a = readAnchor(db, KEY);
    assert.equal(a.head?.seq, 250);
    assert.equal(a.checkpoints.length, 25);
    assert.equal(db.schemaVersion, STATE_DB_SCHEMA_VERSION);
    assert.equal(String(db.db.pragma('journal_mode', { simple: true })), 'wal');
    db.close();
  });

  it('a torn final line is kept aside and sealed with RECOVERY (the chain continues)', async () => {
    let log = await AuditLog.open({ ...files() });
    for (let i = 0; i < 5; i++) await log.append({ event: 'SESSION_STARTED', session: 's', details: { i } });
    await log.close();
    fs.appendFileSync(files().logFile, '{"action_type":"read_file","deta');
    const notes: string[] = [];
    log = await AuditLog.open({ ...files(), onRecovery: (m) => notes.push(m) });
    assert.equal(notes.length, 1);
    const entries: AuditEntry[] = [];
    for await (const e of log.entries()) entries.push(e);
    assert.equal(entries.length, 6);
    assert.equal(entries[5]!.event, 'RECOVERY');
    assert.equal(
      Buffer.from((entries[5]!.details.torn_line as { bytes_base64: string }).bytes_base64, 'base64').toString(),
      '{"action_type":"read_file","deta',
    );
    assert.ok(fs.readdirSync(tmp).some((f) => f.startsWith('audit.jsonl.torn-')));
    assert.ok((await log.verify()).ok);
    await log.close();
  });

  it('opening a truncated or rewritten log throws instead of restarting the chain', async () => {
    const log = await AuditLog.open({ ...files() });
    for (let i = 0; i < 5; i++) await log.append({ event: 'SESSION_ENDED', session: 's', details: { i } });
    await log.close();
    const text = fs.readFileSync(files().logFile, 'utf8').split('\n');
    fs.writeFileSync(files().logFile, text.slice(0, 3).join('\n') + '\n');
    await assert.rejects(AuditLog.open({ ...files() }), AuditIntegrityError);
  });

  it('a log and its database rolled back together are caught by the high-water mark kept elsewhere', async () => {
    const { logFile, dbFile } = files();
    const elsewhere = path.join(tmp, 'global-storage');
    fs.mkdirSync(elsewhere);
    const witnessFile = path.join(elsewhere, 'audit-witness.json');
    const witness = fileWitness(witnessFile, logFile);
    const append = async (log: AuditLog, n: number) => {
      for (let i = 0; i < n; i++) await log.appendDecision(allowed, { actionType: 'read_file', payload: { path: `/w/f${i}` } });
    };
    let log = await AuditLog.open({ ...files(), checkpointEvery: 10, witness });
    await append(log, 6);
    const end1 = log.head.seq;
    assert.ok(end1 % 10 !== 0, `${end1} entries`);
    assert.equal(witness.read()?.seq, Math.floor(end1 / 10) * 10, 'the mark follows the signed checkpoints while the log is open');
    await log.close();
    assert.equal(witness.read()?.seq, end1, 'closing records the exact end');
    const copies = ['', '-wal', '-shm'].map(
      (x) => [dbFile + x, fs.existsSync(dbFile + x) ? fs.readFileSync(dbFile + x) : undefined] as const,
    );
    const oldLog = fs.readFileSync(logFile);
    log = await AuditLog.open({ ...files(), checkpointEvery: 10, witness });
    await append(log, 7);
    const end2 = log.head.seq;
    await log.close();
    // Both files back to the older, self-consistent pair.
    fs.writeFileSync(logFile, oldLog);
    for (const [f, bytes] of copies) {
      if (bytes) fs.writeFileSync(f, bytes);
      else fs.rmSync(f, { force: true });
    }
    assert.ok(
      (await verifyLogFile({ logFile, dbFile, hmacKey: KEY })).ok,
      'without the mark the rolled-back pair is consistent (why the mark exists)',
    );
    const r = await verifyLogFile({ logFile, dbFile, hmacKey: KEY, witness });
    assert.equal(r.firstBroken?.kind, 'truncation');
    assert.match(r.firstBroken?.message ?? '', new RegExp(`high-water mark .* seq ${end2}\\b.*rolled back together`));
    await assert.rejects(
      AuditLog.open({ ...files(), witness }),
      (e: unknown) => e instanceof AuditIntegrityError && /rolled back together/.test(e.message),
    );
    // A mark that was edited (to hide the rollback) has a bad signature and is refused too.
    const edited = JSON.parse(fs.readFileSync(witnessFile, 'utf8')) as Record<string, { seq: number; hash: string; mac: string }>;
    edited[logFile] = { ...edited[logFile]!, seq: end1 };
    fs.writeFileSync(witnessFile, JSON.stringify(edited));
    await assert.rejects(
      AuditLog.open({ ...files(), witness }),
      (e: unknown) => e instanceof AuditIntegrityError && /invalid signature/.test(e.message),
    );
    assert.equal((await verifyLogFile({ logFile, dbFile, hmacKey: KEY, witness })).firstBroken?.kind, 'bad_checkpoint');
    // An unreadable mark store fails closed instead of being ignored.
    fs.writeFileSync(witnessFile, '{not json');
    await assert.rejects(AuditLog.open({ ...files(), witness }), /JSON/);
  });

  it('verify() on an open log records a break as INTEGRITY_VIOLATION (and the break stays visible)', async () => {
    const log = await AuditLog.open({ ...files() });
    for (let i = 0; i < 4; i++) await log.append({ event: 'POLICY_CHANGED', session: 's', details: { i } });
    const L = fs.readFileSync(files().logFile, 'utf8').split('\n');
    L[1] = L[1]!.replace('"session":"s"', '"session":"t"');
    fs.writeFileSync(files().logFile, L.join('\n'));
    const r = await log.verify();
    assert.equal(r.firstBroken?.kind, 'hash_mismatch');
    assert.equal(r.firstBroken?.line, 2);
    const last = fs.readFileSync(files().logFile, 'utf8').trim().split('\n').at(-1)!;
    assert.equal((JSON.parse(last) as AuditEntry).event, 'INTEGRITY_VIOLATION');
    assert.equal((await log.verify(undefined, { record: false })).ok, false);
    await log.close();
  });

  it('SqliteStateStore: get/set/delete persist across reopen', () => {
    let db = new StateDb(files().dbFile);
    let s = new SqliteStateStore(db);
    s.set('ifc.taint', 'sess', 'secret');
    s.set('tier2.budget', '2026-01-01', '3');
    s.delete('tier2.budget', '2026-01-01');
    db.close();
    db = new StateDb(files().dbFile);
    s = new SqliteStateStore(db);
    assert.equal(s.get('ifc.taint', 'sess'), 'secret');
    assert.equal(s.get('tier2.budget', '2026-01-01'), undefined);
    db.close();
    assert.throws(() => s.get('a', 'b')); // closed: throws, callers fail closed
  });

  describe('fuzz: every tampering is detected', function () {
    this.timeout(300000);
    const N = 40;
    let base: { log: string; db: Buffer; wal: Buffer | undefined; lines: string[]; snapshot: string };
    let dir: string;
    before(async () => {
      dir = makeTempDir('bulwark-audit-fuzz-');
      const logFile = path.join(dir, 'a.jsonl');
      const dbFile = path.join(dir, 'a.db');
      const log = await AuditLog.open({ logFile, dbFile, hmacKey: KEY, checkpointEvery: 8 });
      for (let i = 0; i < N / 2; i++)
        await log.appendDecision(i % 2 ? blocked : allowed, { actionType: 'read_file', payload: { path: `/w/f${i}` } });
      const snapshot = fs.readFileSync(logFile, 'utf8'); // an "earlier copy" for rollback
      for (let i = N / 2; i < N; i++)
        await log.appendDecision(i % 2 ? blocked : allowed, { actionType: 'read_file', payload: { path: `/w/f${i}` } });
      await log.close();
      const text = fs.readFileSync(logFile, 'utf8');
      const db = new Database(dbFile);
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      base = { log: text, db: fs.readFileSync(dbFile), wal: undefined, lines: text.trimEnd().split('\n'), snapshot };
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    // Reset per test run from its seed (itSeeded below): the fixed one, then this run's fresh one.
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const rehashChain = (entries: Record<string, unknown>[]) => {
      let prev = GENESIS_HASH;
      return entries.map((e, i) => {
        const { hash: _h, ...rest } = e;
        void _h;
        const u = { ...rest, seq: i + 1, prev_hash: prev };
        const c = canonicalize(u)!;
        prev = sha256hex(c);
        return entryLine(c, prev);
      });
    };
    type Tamper = { name: string; log: string; dbEdit?: (db: Database.Database) => void };
    const tamper = (): Tamper => {
      const L = [...base.lines];
      const i = rnd(L.length);
      const join = (ls: string[]) => ls.join('\n') + '\n';
      switch (rnd(9)) {
        case 0: {
          const e = JSON.parse(L[i]!);
          e.session = e.session + 'x';
          L[i] = JSON.stringify(e);
          return { name: 'edit field', log: join(L) };
        }
        case 1: {
          const e = JSON.parse(L[i]!);
          const { hash: _h, ...rest } = e;
          void _h;
          rest.details = { forged: rnd(1000) };
          const c = canonicalize(rest)!;
          L[i] = entryLine(c, sha256hex(c));
          return { name: 'edit + rehash one', log: join(L) };
        }
        case 2: {
          L.splice(i, 1);
          return { name: 'delete line', log: join(L) };
        }
        case 3: {
          const e = JSON.parse(L[i]!);
          const { hash: _h, ...rest } = e;
          void _h;
          rest.event = 'ACTION_APPROVED';
          rest.id = 'forged';
          const c = canonicalize(rest)!;
          L.splice(i + rnd(2), 0, entryLine(c, sha256hex(c)));
          return { name: 'insert forged', log: join(L) };
        }
        case 4: {
          let j = rnd(L.length);
          if (j === i) j = (i + 1) % L.length;
          [L[i], L[j]] = [L[j]!, L[i]!];
          return { name: 'swap', log: join(L) };
        }
        case 5:
          return { name: 'truncate tail', log: join(L.slice(0, L.length - 1 - rnd(10))) };
        case 6:
          return { name: 'rollback to earlier copy', log: base.snapshot };
        case 7: {
          const ents = L.map((l) => JSON.parse(l));
          ents[i].details = { rewritten: true };
          if (rnd(2)) ents.splice(i, 1);
          return { name: 'rewrite whole chain (valid hashes)', log: join(rehashChain(ents)) };
        }
        default: {
          const which = rnd(3);
          return {
            name: 'corrupt db head',
            log: base.log,
            dbEdit: (db) => {
              if (which === 0) db.prepare('UPDATE audit_head SET seq = seq - 1').run();
              // Always change the first hex digit (writing a fixed digit is a no-op when the hash starts with it).
              else if (which === 1)
                db.prepare(
                  "UPDATE audit_head SET hash = (CASE WHEN substr(hash, 1, 1) = '0' THEN '1' ELSE '0' END) || substr(hash, 2)",
                ).run();
              else
                db.prepare(
                  "UPDATE audit_checkpoint SET hash = (CASE WHEN substr(hash, 1, 1) = 'f' THEN 'e' ELSE 'f' END) || substr(hash, 2) WHERE seq = (SELECT min(seq) FROM audit_checkpoint)",
                ).run();
            },
          };
        }
      }
    };

    // 2000 tamperings with the fixed seed; 400 more with the run's fresh seed (each verification is real I/O).
    itSeeded('random tamperings are all detected; the untouched chain always verifies', 12345, async (fresh, s) => {
      seed = fresh & 0x7fffffff;
      const tamperings = s.fresh ? 400 : 2000;
      const logFile = path.join(dir, 't.jsonl');
      const dbFile = path.join(dir, 't.db');
      const counts: Record<string, number> = {};
      for (let k = 0; k < (tamperings * 21) / 20; k++) {
        const untouched = k % 21 === 0;
        const t = untouched ? ({ name: 'untouched', log: base.log } as Tamper) : tamper();
        fs.writeFileSync(logFile, t.log);
        fs.writeFileSync(dbFile, base.db);
        for (const ext of ['-wal', '-shm']) fs.rmSync(dbFile + ext, { force: true });
        if (t.dbEdit) {
          const db = new Database(dbFile);
          t.dbEdit(db);
          db.close();
        }
        const modes = k % 7 === 0 ? [false, true] : [false];
        for (const strict of modes) {
          const r = await verifyLogFile({ logFile, dbFile, hmacKey: KEY, strict });
          if (untouched) assert.ok(r.ok, `untouched chain failed (strict ${strict}): ${JSON.stringify(r.firstBroken)}`);
          else if (t.log !== base.log || t.dbEdit) assert.ok(!r.ok, `tampering #${k} (${t.name}, strict ${strict}) went undetected`);
        }
        counts[t.name] = (counts[t.name] ?? 0) + 1;
      }
      assert.ok(Object.values(counts).reduce((a, b) => a + b, 0) - counts.untouched! >= tamperings);
      assert.ok(Object.keys(counts).length >= 10, JSON.stringify(counts));
    });

    it('the pure verifier names the kind of break', () => {
      const L = base.lines;
      const kind = (text: string) => verifyEntries(text, sha256hex).firstBroken?.kind;
      assert.equal(verifyEntries(base.log, sha256hex).ok, true);
      assert.equal(kind([L[0], L[2]].join('\n') + '\n'), 'sequence_gap');
      assert.equal(kind([L[0], L[1], L[0]].join('\n') + '\n'), 'reordering');
      assert.equal(kind(L[0] + '\n' + L[1]!.slice(0, 30)), 'torn_line');
      assert.equal(kind(L[0]!.replace('"session":"', '"session":"x') + '\n'), 'hash_mismatch');
      const anchor = { head: { seq: L.length + 5, hash: 'a'.repeat(64), valid: true }, checkpoints: [] };
      assert.equal(verifyEntries(base.log, sha256hex, { anchor }).firstBroken?.kind, 'truncation');
      assert.equal(
        verifyEntries(base.log, sha256hex, { anchor: { head: { seq: 1, hash: 'a', valid: false }, checkpoints: [] } }).firstBroken?.kind,
        'bad_checkpoint',
      );
    });

    it('streams large files in small chunks identically', async () => {
      const f = path.join(dir, 's.jsonl');
      fs.writeFileSync(f, base.log);
      for (const workers of [0, 2]) {
        for (const strict of [false, true]) {
          const r = await verifyLogStream(f, { chunkSize: 97, workers, strict });
          assert.ok(r.ok, JSON.stringify(r));
          assert.equal(r.checked, base.lines.length);
        }
      }
    });

    it('the parallel fast path accepts real entries whole (so it is not silently replaying every chunk)', () => {
      const chunk = Buffer.from(base.log);
      const points = new Map([[8, base.lines[7]!.slice(-66, -2)]]);
      const s = scanChunk(chunk, (d) => createHash('sha256').update(d).digest('hex'), points);
      assert.ok(s, 'an intact log written by AuditLog is accepted by scanChunk');
      assert.equal(s.lines, base.lines.length);
      assert.equal(s.firstSeq, 1);
      assert.equal(s.lastHash, base.lines.at(-1)!.slice(-66, -2));
      assert.equal(chunk.toString(), base.log, 'the bytes are restored after hashing in place');
      assert.equal(
        scanChunk(chunk, (d) => createHash('sha256').update(d).digest('hex'), new Map([[8, 'f'.repeat(64)]])),
        null,
        'an anchor point that differs declines the chunk',
      );
      const edited = Buffer.from(base.log.replace('"session":"', '"session":"Z'));
      assert.equal(
        scanChunk(edited, (d) => createHash('sha256').update(d).digest('hex'), null),
        null,
        'an edited entry declines the chunk',
      );
    });

    it('worker-thread hash checking reports the first broken line across chunks', async () => {
      const f = path.join(dir, 'w.jsonl');
      const L = [...base.lines];
      L[29] = L[29]!.replace('"session":"', '"session":"Z'); // line 30: content edited, hash kept
      L[33] = L[33]!.replace('"session":"', '"session":"Z');
      fs.writeFileSync(f, L.join('\n') + '\n');
      for (const workers of [0, 1, 3]) {
        const r = await verifyLogStream(f, { chunkSize: 1500, workers });
        assert.equal(r.firstBroken?.kind, 'hash_mismatch', `workers ${workers}`);
        assert.equal(r.firstBroken?.line, 30, `workers ${workers}`);
        assert.equal(r.checked, 29);
      }
      const strict = await verifyLogStream(f, { strict: true });
      assert.equal(strict.firstBroken?.line, 30);
    });
  });
});
