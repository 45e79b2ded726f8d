// Runs the examples of the command operand table (security/shell/operands/) through analyzeShell and
// compares every effect exactly; each module's test file runs the examples of its entries.
import assert from 'node:assert/strict';
import { analyzeShell, type ShellAnalysis, type ShellParser } from '../../../src/engine/shell/analyze';
import type { CommandRegistry } from '../../../src/engine/shell/commands';
import type { OperandEntry, OperandExample, OperandTable } from '../../../src/engine/shell/operands';
import { loadShellParser } from '../../../src/node/shell-grammar';
import { loadYaml, yamlFilesUnder } from './repo';

/** The modules whose test files run the examples: `data` (the interpreter) and each code module under commands/. */
export const OPERAND_EXAMPLE_MODULES = [
  'data',
  'wrappers',
  'shells',
  'builtins',
  'files',
  'find',
  'archives',
  'network',
  'packages',
  'git',
  'windows',
] as const;

/** Where the examples run; the expectations are relative to these. */
const LINUX = { cwd: '/w', home: '/home/u', platform: 'linux' as const, outCwd: '/w', outHome: '/home/u' };
const WINDOWS = { cwd: 'C:\\w', home: 'C:\\Users\\u', platform: 'win32' as const, outCwd: 'C:/w', outHome: 'C:/Users/u' };
type Context = typeof LINUX | typeof WINDOWS;

export function commandWord(run: string): string {
  return run.trimStart().split(/\s+/)[0]!;
}
export const sameName = (registry: CommandRegistry, a: string, b: string) =>
  registry === 'posix' ? a === b : a.toLowerCase() === b.toLowerCase();

/** The analysis in the examples' vocabulary: paths relative to the cwd or `~/`, absent means empty. */
function effectsOf(r: ShellAnalysis, ctx: Context): Record<string, unknown> {
  const rel = (p: string) =>
    p === ctx.outCwd
      ? '.'
      : p.startsWith(ctx.outCwd + '/')
        ? p.slice(ctx.outCwd.length + 1)
        : p.startsWith(ctx.outHome + '/')
          ? '~/' + p.slice(ctx.outHome.length + 1)
          : p;
  return {
    reads: r.reads.map(rel),
    writes: r.writes.map(rel),
    deletes: r.deletes.map(rel),
    globs: r.globs.map((g) => JSON.stringify({ ...g, dir: rel(g.dir) }, Object.keys(g).sort())).sort(),
    searches: r.searches.map((s) => ({ ...s, path: rel(s.path) })),
    urls: r.urls,
    logins: r.logins,
    network: r.network,
    unnamed_network: r.unnamedNetwork,
    sinks: r.sinks.length,
    prints_environment: r.printsEnvironment,
    opaque: r.opaque,
    reviews: r.reviews.length,
    approvals: r.approvals.length,
    errors: r.errors,
  };
}
function expected(e: OperandExample): Record<string, unknown> {
  const list = (k: string) => [...((e[k] as string[] | undefined) ?? [])];
  return {
    reads: list('reads').sort(),
    writes: list('writes').sort(),
    deletes: list('deletes').sort(),
    globs: ((e.globs as object[] | undefined) ?? [])
      .map((g) => ({ depth: 'one', ...g }))
      .map((g) => JSON.stringify(g, Object.keys(g).sort()))
      .sort(),
    searches: (e.searches as object[] | undefined) ?? [],
    urls: list('urls'),
    logins: list('logins'),
    network: e.network ?? false,
    unnamed_network: e.unnamed_network ?? false,
    sinks: e.sinks ?? 0,
    prints_environment: e.prints_environment ?? false,
    opaque: e.opaque ?? false,
    reviews: e.reviews ?? 0,
    approvals: e.approvals ?? 0,
    errors: [],
  };
}

/** Defines one mocha test per example (and per name in its `also`) of the entries handled by `module`. */
export function runOperandExamples(module: (typeof OPERAND_EXAMPLE_MODULES)[number]): void {
  const files = yamlFilesUnder('security/shell/operands').map((f) => ({ file: f, table: loadYaml<OperandTable>(f) }));
  const mine = (e: OperandEntry) => (e.handler === 'data' ? 'data' : e.module) === module;
  let parser: ShellParser;
  before(async () => {
    parser = await loadShellParser();
  });
  it(`the operand table has examples for module ${module}`, () => {
    assert.ok(files.some(({ table }) => table.commands.some(mine)));
  });
  for (const { file, table } of files) {
    const entries = table.commands.filter(mine);
    if (entries.length === 0) continue;
    describe(file, () => {
      for (const entry of entries) {
        const ctx = (entry.registry ?? 'posix') === 'posix' ? LINUX : WINDOWS;
        for (const x of entry.examples ?? []) {
          const word = commandWord(x.run);
          for (const name of [word, ...(x.also ?? [])]) {
            const run = name === word ? x.run : name + x.run.trimStart().slice(word.length);
            it(run, () => {
              const got = effectsOf(analyzeShell(parser, run, { cwd: ctx.cwd, home: ctx.home, platform: ctx.platform }), ctx);
              assert.deepEqual(got, expected(x));
            });
          }
        }
      }
    });
  }
}
