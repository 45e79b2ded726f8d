// The issue 14 command corpora (bench/corpus): well-formed, de-duplicated, large enough, and with the
// held-out split fixed by hash (first byte of SHA-256 of the command < 0x33) at a share near 20%.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { DANGEROUS_CLASSES, EVERYDAY_CLASSES, loadCorpora, splitOf, type CorpusEntry } from '../../bench/corpus/corpus';
import { repoRoot } from './helpers/repo';

const SOURCE = /^(?:[\w.-]+\/[\w.-]+|bulwark):[^@\s]+@[0-9a-f]{40}$/;

describe('issue 14 command corpora', () => {
  const { everyday, dangerous } = loadCorpora(path.join(repoRoot(), 'bench', 'corpus'));

  const wellFormed = (name: string, entries: CorpusEntry[], classes: readonly string[]) => {
    entries.forEach((e, i) => {
      const where = `${name} line ${i + 1}`;
      assert.equal(typeof e.command, 'string', `${where}: command`);
      assert.ok(e.command.trim().length > 0 && e.command === e.command.trim(), `${where}: command empty or padded`);
      // No tldr placeholder left (Go templates of `docker --format` are literal braces, not placeholders).
      if (e.source.startsWith('tldr-pages/'))
        assert.ok(
          !e.command.replace(/\{\{(?:\.|json |range |end)[^}]*\}\}/g, '').includes('{{'),
          `${where}: a placeholder left in ${e.command}`,
        );
      assert.ok(classes.includes(e.class), `${where}: class ${e.class}`);
      assert.match(e.source, SOURCE, `${where}: source ${e.source}`);
      assert.ok(e.note === undefined || (typeof e.note === 'string' && e.note.length > 0), `${where}: note`);
      assert.deepEqual(
        Object.keys(e).filter((k) => !['command', 'class', 'source', 'note'].includes(k)),
        [],
        `${where}: unknown fields`,
      );
    });
  };

  it('every everyday entry has a command, a class, a source with a commit id', () => wellFormed('everyday', everyday, EVERYDAY_CLASSES));
  it('every dangerous entry has a command, a class, a source with a commit id', () =>
    wellFormed('dangerous', dangerous, DANGEROUS_CLASSES));

  it('no command appears twice, within a corpus or across both', () => {
    for (const [name, entries] of [
      ['everyday', everyday],
      ['dangerous', dangerous],
    ] as const) {
      const seen = new Set<string>();
      for (const e of entries) {
        assert.ok(!seen.has(e.command), `${name}: duplicate ${JSON.stringify(e.command)}`);
        seen.add(e.command);
      }
    }
    const benign = new Set(everyday.map((e) => e.command));
    assert.deepEqual(
      dangerous.filter((e) => benign.has(e.command)).map((e) => e.command),
      [],
    );
  });

  it('sizes: at least 1,000 everyday and 500 dangerous commands, every class present', () => {
    assert.ok(everyday.length >= 1000, `everyday: ${everyday.length}`);
    assert.ok(dangerous.length >= 500, `dangerous: ${dangerous.length}`);
    for (const c of EVERYDAY_CLASSES)
      assert.ok(
        everyday.some((e) => e.class === c),
        `no everyday ${c}`,
      );
    for (const c of DANGEROUS_CLASSES)
      assert.ok(
        dangerous.some((e) => e.class === c),
        `no dangerous ${c}`,
      );
    assert.ok(everyday.filter((e) => e.class === 'read_only').length >= 300, 'read_only is the class the 90% target is about');
  });

  it('the held-out split is the SHA-256 rule and holds out 15–25% of each corpus', () => {
    // Fixed vectors: sha256("git status") starts e6…, sha256("rm -rf ~") starts 22… (< 0x33).
    assert.equal(splitOf('git status'), 'dev');
    assert.equal(splitOf('rm -rf ~'), 'held_out');
    for (const [name, entries] of [
      ['everyday', everyday],
      ['dangerous', dangerous],
    ] as const) {
      const share = entries.filter((e) => splitOf(e.command) === 'held_out').length / entries.length;
      assert.ok(share >= 0.15 && share <= 0.25, `${name}: held-out share ${(share * 100).toFixed(1)}%`);
    }
  });

  it('the JSONL files are what bench/corpus/build.mjs makes from the transcriptions', () => {
    execFileSync(process.execPath, [path.join(repoRoot(), 'bench', 'corpus', 'build.mjs'), '--check'], { stdio: 'pipe' });
  });
});
