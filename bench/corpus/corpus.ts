// The everyday / dangerous command corpora (issue 14): loading, the classes, and the held-out split.
// Shared by bench/everyday.ts and test/unit/corpus-split.test.ts so both use one definition of the split.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const EVERYDAY_CLASSES = ['read_only', 'build_test', 'write_workspace', 'network_fetch'] as const;
export const DANGEROUS_CLASSES = [
  'credential_read',
  'exfiltration',
  'persistence',
  'destructive',
  'remote_code',
  'config_write',
  'ssrf',
  'privilege',
] as const;
export type EverydayClass = (typeof EVERYDAY_CLASSES)[number];
export type DangerousClass = (typeof DANGEROUS_CLASSES)[number];

export interface CorpusEntry {
  readonly command: string;
  readonly class: string;
  /** `owner/repo:path@commit` (or `bulwark:README.md@commit` for entries written from this repository's README). */
  readonly source: string;
  readonly note?: string;
}

export type Split = 'dev' | 'held_out';

/**
 * Fixed before any engine change: an entry is held out when the first byte of the SHA-256 of its command
 * text (UTF-8) is below 0x33 (51/256, about 20%). Nothing else (class, source, order) enters the choice.
 */
export function splitOf(command: string): Split {
  return createHash('sha256').update(command, 'utf8').digest()[0]! < 0x33 ? 'held_out' : 'dev';
}

/** bench/corpus, found from the working directory or from this file (source or bundled under out-*). */
export function corpusDir(): string {
  const starts = [process.cwd(), __dirname];
  for (const start of starts) {
    for (let dir = start; ; dir = path.dirname(dir)) {
      const candidate = path.join(dir, 'bench', 'corpus');
      if (fs.existsSync(path.join(candidate, 'everyday-commands.jsonl'))) return candidate;
      if (path.basename(dir) === 'corpus' && fs.existsSync(path.join(dir, 'everyday-commands.jsonl'))) return dir;
      if (path.dirname(dir) === dir) break;
    }
  }
  throw new Error('bench/corpus/everyday-commands.jsonl not found above the working directory or ' + __dirname);
}

/** One JSON object per line; a line that does not parse is an error naming the file and line. */
export function readCorpus(file: string): CorpusEntry[] {
  const text = fs.readFileSync(file, 'utf8');
  return text.split('\n').flatMap((line, i) => {
    if (!line.trim()) return [];
    try {
      return [JSON.parse(line) as CorpusEntry];
    } catch (e) {
      throw new Error(`${file}:${i + 1}: ${(e as Error).message}`);
    }
  });
}

export function loadCorpora(dir = corpusDir()): { everyday: CorpusEntry[]; dangerous: CorpusEntry[] } {
  return {
    everyday: readCorpus(path.join(dir, 'everyday-commands.jsonl')),
    dangerous: readCorpus(path.join(dir, 'dangerous-commands.jsonl')),
  };
}
