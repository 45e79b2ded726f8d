// Figures of issue 16 on the cases of bench/secrets-cases.ts, per split (dev / held_out) and per kind:
// planted spans, recall of batch `redactSecrets` (the rules alone: no known-value registry is installed
// in the bench process), verbatim survivors after the real `bulwark redact` CLI (dist/cli.js, or
// BULWARK_BENCH_CLI) over each case file, and placeholders masked (false positives). The CLI runs with
// its working directory in a temporary workspace holding the case's .env, HOME in a temporary home
// holding its credential files, and an environment of PATH, HOME and the case's variables only (never
// the bench's own environment or home, so nothing of this machine is loaded and runs are repeatable).
// The per-sub-kind detail is printed for dev only: the held-out split is not for tuning rules.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { redactSecrets, type SecretRuleSet } from '../src/engine/secrets';
import { buildSecretCases, HELD_OUT_BELOW, type CaseKind, type SecretCase, type Split } from './secrets-cases';

export interface CaseRow {
  split: Split;
  kind: CaseKind;
  cases: number;
  /** Planted secret spans (every copy counts). */
  planted: number;
  batchFound: number;
  batchRecallPct: number;
  /** Planted secret copies still present verbatim in the CLI's output (target 0 on held_out). */
  cliSurvivors: number | null;
  /** Placeholders that must stay, and how many were masked. */
  placeholders: number;
  placeholderFpBatch: number;
  placeholderFpCli: number | null;
  /** Batch findings overlapping no planted span (filler decoys). */
  otherFindings: number;
}

export interface SubRow {
  kind: CaseKind;
  sub: string;
  planted: number;
  batchFound: number;
  cliSurvived: number | null;
}

export interface SecretCaseFigures {
  rule: string;
  cases: { dev: number; held_out: number };
  cli: string | null;
  cliSeconds: number;
  /** Cases whose CLI output differs from batch redaction (the CLI masks known values the batch has no registry for). */
  cliDiffersFromBatch: number | null;
  rows: CaseRow[];
  /** dev only. */
  devDetail: SubRow[];
}

const count = (hay: string, needle: string): number => {
  let n = 0;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
};

/**
 * The input ranges the CLI replaced: the output is the input with some ranges replaced by
 * `[REDACTED:id]`, so the literal pieces between placeholders are found in order in the input.
 */
function maskedRanges(input: string, output: string): Array<[number, number]> | null {
  const pieces = output.split(/\[REDACTED:[a-z0-9.-]+\]/);
  if (pieces.length === 1) return output === input ? [] : null;
  if (!input.startsWith(pieces[0]!)) return null;
  const out: Array<[number, number]> = [];
  let pos = pieces[0]!.length;
  for (let k = 1; k < pieces.length; k++) {
    const p = pieces[k]!;
    const j = k === pieces.length - 1 ? input.length - p.length : input.indexOf(p, pos + 1);
    if (j < pos + 1 || (k === pieces.length - 1 && !input.endsWith(p))) return null;
    out.push([pos, j]);
    pos = j + p.length;
  }
  return out;
}

function runCli(cli: string, c: SecretCase, root: string): Promise<string> {
  const ws = path.join(root, c.id, 'ws');
  const home = path.join(root, c.id, 'home');
  const put = (base: string, files: Record<string, string>) => {
    fs.mkdirSync(base, { recursive: true });
    for (const [f, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(base, f)), { recursive: true });
      fs.writeFileSync(path.join(base, f), text, { mode: 0o600 });
    }
  };
  put(ws, c.workspace);
  put(home, c.home);
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [cli, 'redact'], {
      cwd: ws,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ...c.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    p.stdout.on('data', (d: Buffer) => out.push(d));
    p.stderr.on('data', (d: Buffer) => err.push(d));
    p.on('error', reject);
    p.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(out).toString('utf8'))
        : reject(new Error(`bulwark redact exited ${code} on ${c.id}: ${Buffer.concat(err).toString().slice(0, 300)}`)),
    );
    p.stdin.end(c.content);
  });
}

async function pool<T, R>(items: readonly T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const res: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        res[i] = await fn(items[i]!);
      }
    }),
  );
  return res;
}

/** The figures of `cases` (by default every case of bench/secrets-cases.ts). */
export async function secretCaseFigures(
  rules: SecretRuleSet,
  cases: readonly SecretCase[] = buildSecretCases(),
): Promise<SecretCaseFigures> {
  const cliPath = process.env.BULWARK_BENCH_CLI ?? path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
  const cli = fs.existsSync(cliPath) ? cliPath : null;
  const batch = cases.map((c) => redactSecrets(rules, c.content));
  const t0 = Date.now();
  let outputs: Array<string | null> = cases.map(() => null);
  if (cli) {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-bench-cases-')));
    try {
      outputs = await pool(cases, Math.max(2, os.cpus().length), (c) => runCli(cli, c, root));
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }
  const cliSeconds = (Date.now() - t0) / 1000;

  const rows = new Map<string, CaseRow>();
  const detail = new Map<string, SubRow>();
  let differs = 0;
  cases.forEach((c, i) => {
    const found = batch[i]!.findings;
    const out = outputs[i] ?? null;
    if (out !== null && out !== batch[i]!.text) differs++;
    const key = `${c.split}|${c.kind}`;
    const r = rows.get(key) ?? {
      split: c.split,
      kind: c.kind,
      cases: 0,
      planted: 0,
      batchFound: 0,
      batchRecallPct: 0,
      cliSurvivors: out === null ? null : 0,
      placeholders: 0,
      placeholderFpBatch: 0,
      placeholderFpCli: out === null ? null : 0,
      otherFindings: 0,
    };
    rows.set(key, r);
    r.cases++;
    const overlaps = (s: number, e: number) => found.some((f) => f.start < e && s < f.end);
    const masked = out === null ? null : maskedRanges(c.content, out);
    for (const sp of c.spans) {
      const hit = overlaps(sp.start, sp.end);
      if (!sp.secret) {
        r.placeholders++;
        if (hit) r.placeholderFpBatch++;
        continue;
      }
      r.planted++;
      if (hit) r.batchFound++;
      if (c.split === 'dev') {
        const value = c.content.slice(sp.start, sp.end);
        const survived = out === null ? null : out.includes(value) && !(masked ?? []).some(([a, e]) => a < sp.end && sp.start < e);
        const dk = `${c.kind}|${sp.sub}`;
        const d = detail.get(dk) ?? { kind: c.kind, sub: sp.sub, planted: 0, batchFound: 0, cliSurvived: out === null ? null : 0 };
        detail.set(dk, d);
        d.planted++;
        if (hit) d.batchFound++;
        if (survived && d.cliSurvived !== null) d.cliSurvived++;
        if (process.env.BULWARK_BENCH_DEBUG && (!hit || survived)) {
          const ls = c.content.lastIndexOf('\n', sp.start) + 1;
          console.log(
            `issue-16 dev case ${c.id} ${sp.sub}: ${hit ? '' : 'batch missed'}${!hit && survived ? ', ' : ''}${survived ? 'CLI left it' : ''}: ${JSON.stringify(c.content.slice(ls, c.content.indexOf('\n', sp.end)))}`,
          );
        }
      }
    }
    r.otherFindings += found.filter((f) => !c.spans.some((s) => f.start < s.end && s.start < f.end)).length;
    if (process.env.BULWARK_BENCH_DEBUG && c.split === 'dev') {
      for (const sp of c.spans)
        if (!sp.secret && overlaps(sp.start, sp.end))
          console.log(`issue-16 dev case ${c.id}: placeholder masked: ${JSON.stringify(c.content.slice(sp.start, sp.end))}`);
    }
    if (out !== null) {
      // Survivors: per distinct planted value, the copies of it still in the output (at most the copies planted).
      const copies = new Map<string, number>();
      for (const sp of c.spans)
        if (sp.secret) {
          const v = c.content.slice(sp.start, sp.end);
          copies.set(v, (copies.get(v) ?? 0) + 1);
        }
      for (const [v, n] of copies) r.cliSurvivors! += Math.min(n, count(out, v));
      const ph = new Map<string, number>();
      for (const sp of c.spans)
        if (!sp.secret) {
          const v = c.content.slice(sp.start, sp.end);
          ph.set(v, (ph.get(v) ?? 0) + 1);
        }
      for (const [v, n] of ph) r.placeholderFpCli! += Math.min(n, Math.max(0, count(c.content, v) - count(out, v)));
    }
  });
  for (const r of rows.values()) r.batchRecallPct = r.planted ? +((100 * r.batchFound) / r.planted).toFixed(1) : NaN;
  const kinds: CaseKind[] = ['second-copy', 'known-value', 'context', 'placeholder'];
  const ordered = (['dev', 'held_out'] as const).flatMap((s) =>
    kinds.map((k) => rows.get(`${s}|${k}`)).filter((r): r is CaseRow => r !== undefined),
  );
  for (const s of ['dev', 'held_out'] as const) {
    const rs = ordered.filter((r) => r.split === s);
    const sum = (f: (r: CaseRow) => number | null) => (rs.some((r) => f(r) === null) ? null : rs.reduce((n, r) => n + f(r)!, 0));
    const planted = sum((r) => r.planted)!;
    const batchFound = sum((r) => r.batchFound)!;
    ordered.push({
      split: s,
      kind: 'all' as CaseKind,
      cases: sum((r) => r.cases)!,
      planted,
      batchFound,
      batchRecallPct: +((100 * batchFound) / Math.max(1, planted)).toFixed(1),
      cliSurvivors: sum((r) => r.cliSurvivors),
      placeholders: sum((r) => r.placeholders)!,
      placeholderFpBatch: sum((r) => r.placeholderFpBatch)!,
      placeholderFpCli: sum((r) => r.placeholderFpCli),
      otherFindings: sum((r) => r.otherFindings)!,
    });
  }
  return {
    rule: `held_out when the first byte of SHA-256(case id) < ${HELD_OUT_BELOW} (of 256)`,
    cases: { dev: cases.filter((c) => c.split === 'dev').length, held_out: cases.filter((c) => c.split === 'held_out').length },
    cli,
    cliSeconds,
    cliDiffersFromBatch: cli ? differs : null,
    rows: ordered,
    devDetail: [...detail.values()].sort((a, b) =>
      a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.sub < b.sub ? -1 : a.sub > b.sub ? 1 : 0,
    ),
  };
}

export function printSecretCaseFigures(f: SecretCaseFigures): void {
  console.log(
    `issue 16 cases (second copies, known values, context, placeholders): ${f.cases.dev} dev + ${f.cases.held_out} held-out cases (${f.rule}; held-out cases are never used to tune rules)`,
  );
  if (!f.cli)
    console.log('  bulwark redact CLI not found (build it with `node esbuild.mjs`, or set BULWARK_BENCH_CLI): no survivor figures');
  else
    console.log(
      `  CLI: ${f.cli}, one process per case file, ${f.cliSeconds.toFixed(1)} s; cases whose CLI output differs from batch redaction: ${f.cliDiffersFromBatch}`,
    );
  console.table(
    f.rows.map((r) => ({
      split: r.split,
      kind: r.kind,
      cases: r.cases,
      planted: r.planted,
      batchRecall: `${r.batchFound}/${r.planted} (${r.batchRecallPct}%)`,
      cliSurvivors: r.cliSurvivors,
      placeholders: r.placeholders,
      phMaskedBatch: r.placeholderFpBatch,
      phMaskedCli: r.placeholderFpCli,
      otherFindings: r.otherFindings,
    })),
  );
  console.log('  dev only, by sub-kind (planted spans, batch found, left verbatim by the CLI):');
  console.table(
    f.devDetail.map((d) => ({ kind: d.kind, sub: d.sub, planted: d.planted, batchFound: d.batchFound, cliSurvived: d.cliSurvived })),
  );
  const held = f.rows.find((r) => r.split === 'held_out' && (r.kind as string) === 'all');
  if (held && held.cliSurvivors !== null)
    console.log(
      `target (issue 16): 0 verbatim survivors after bulwark redact on the held-out cases: ${held.cliSurvivors === 0 ? 'met' : `MISSED (${held.cliSurvivors} of ${held.planted} planted copies left)`}; placeholders masked on held-out: ${held.placeholderFpCli} by the CLI, ${held.placeholderFpBatch} in batch`,
    );
}
