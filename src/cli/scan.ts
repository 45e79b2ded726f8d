// `bulwark scan`: content inspection of JSON lines. Each input line is
//   {"id": any, "text": string, "phase": "pre_prompt"|"pre_execution"|"export", "trust": "trusted"|"untrusted"|"mixed", "source"?: string}
// (phases also as PrePrompt / PreExecution / Export), and each output line is
//   {"id", "action", "findings": [{"category", "rule", "severity", "start", "end"}], "redacted": string|null}
// with start/end as UTF-16 offsets into `text`, and `redacted` set when the action is `redact`.
// A bad line (invalid JSON or UTF-8, longer than the line limit, a missing text, an unknown phase
// or trust label) yields {"id", "error": "line N: …"} and the rest are still processed; exit 2
// if there was any, else 0.
import type { Readable, Writable } from 'node:stream';
import { inspect, parsePhase, parseTrust } from '../engine/content';
import { redactTextOrWithhold } from '../engine/audit/redact';
import { readJsonLines } from './json-lines';

export const SCAN_USAGE =
  '  bulwark scan  < texts.jsonl   ({"id","text","phase":"pre_prompt|pre_execution|export","trust":"trusted|untrusted|mixed"} per line → {"id","action","findings","redacted"})';

export interface ScanIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}

function problemOf(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'each line must be a JSON object';
  const o = v as Record<string, unknown>;
  if (typeof o.text !== 'string') return '`text` must be a string';
  if (parsePhase(o.phase) === undefined)
    return `\`phase\` must be pre_prompt, pre_execution or export, got ${JSON.stringify(o.phase ?? null)}`;
  if (parseTrust(o.trust) === undefined) return `\`trust\` must be trusted, untrusted or mixed, got ${JSON.stringify(o.trust ?? null)}`;
  if (o.source !== undefined && typeof o.source !== 'string') return '`source` must be a string';
  return undefined;
}

async function write(out: Writable, s: string): Promise<void> {
  if (!out.write(s)) await new Promise((r) => out.once('drain', r));
}

export async function runScan(
  argv: string[],
  io: ScanIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  if (argv.length) throw new Error(`bulwark scan takes no arguments, got \`${argv[0]}\``);
  let malformed = 0;
  for await (const line of readJsonLines(io.stdin)) {
    if ('error' in line) {
      malformed++;
      await write(io.stdout, JSON.stringify({ id: line.id ?? null, error: `line ${line.lineNumber}: ${line.error}` }) + '\n');
      continue;
    }
    const problem = problemOf(line.value);
    const v = line.value as Record<string, unknown>;
    const id = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v.id ?? null) : null;
    if (problem) {
      malformed++;
      // The problem quotes the bad value: no secret in it goes out.
      await write(io.stdout, JSON.stringify({ id, error: `line ${line.lineNumber}: ${redactTextOrWithhold(problem)}` }) + '\n');
      continue;
    }
    const r = inspect(v.text as string, parsePhase(v.phase)!, typeof v.source === 'string' ? v.source : 'cli', parseTrust(v.trust)!);
    await write(
      io.stdout,
      JSON.stringify({
        id,
        action: r.action,
        findings: r.findings.map((f) => ({ category: f.category, rule: f.rule, severity: f.severity, start: f.start, end: f.end })),
        redacted: r.redacted ?? null,
      }) + '\n',
    );
  }
  if (malformed) {
    io.stderr.write(`bulwark scan: ${malformed} malformed input line(s); see the error objects in the output\n`);
    return 2;
  }
  return 0;
}
