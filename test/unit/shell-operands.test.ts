// The command operand table (security/shell/operands/): every registered command name is in exactly
// one entry, every name has an example, and every example gives exactly the effects it states.
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { analyzeShell, type ShellAnalysis, type ShellParser } from '../../src/engine/shell/analyze';
import { registeredCommandNames, type CommandRegistry } from '../../src/engine/shell/commands';
import { OPERAND_TABLE_FILES, OperandTableError, operandEntries, validateOperandTable, type OperandEntry, type OperandExample, type OperandTable } from '../../src/engine/shell/operands';
import { loadShellParser } from '../../src/node/shell-grammar';
import { loadYaml, yamlFilesUnder } from './helpers/repo';

const DIR = 'security/shell/operands';
const files = yamlFilesUnder(DIR).map((f) => ({ file: f, table: loadYaml<OperandTable>(f) }));

/** Where the examples run; the expectations are relative to these. */
const LINUX = { cwd: '/w', home: '/home/u', platform: 'linux' as const, outCwd: '/w', outHome: '/home/u' };
const WINDOWS = { cwd: 'C:\\w', home: 'C:\\Users\\u', platform: 'win32' as const, outCwd: 'C:/w', outHome: 'C:/Users/u' };
const contextOf = (e: OperandEntry) => ((e.registry ?? 'posix') === 'posix' ? LINUX : WINDOWS);

function commandWord(run: string): string {
  return run.trimStart().split(/\s+/)[0]!;
}
const sameName = (registry: CommandRegistry, a: string, b: string) => (registry === 'posix' ? a === b : a.toLowerCase() === b.toLowerCase());

/** The analysis in the examples' vocabulary: paths relative to the cwd or `~/`, absent means empty. */
function effectsOf(r: ShellAnalysis, ctx: typeof LINUX | typeof WINDOWS): Record<string, unknown> {
  const rel = (p: string) => (p === ctx.outCwd ? '.' : p.startsWith(ctx.outCwd + '/') ? p.slice(ctx.outCwd.length + 1) : p.startsWith(ctx.outHome + '/') ? '~/' + p.slice(ctx.outHome.length + 1) : p);
  return {
    reads: r.reads.map(rel), writes: r.writes.map(rel), deletes: r.deletes.map(rel),
    globs: r.globs.map((g) => ({ ...g, dir: rel(g.dir) })),
    searches: r.searches.map((s) => ({ ...s, path: rel(s.path) })),
    urls: r.urls, logins: r.logins, network: r.network, unnamed_network: r.unnamedNetwork,
    sinks: r.sinks.length, prints_environment: r.printsEnvironment, opaque: r.opaque,
    reviews: r.reviews.length, approvals: r.approvals.length, errors: r.errors,
  };
}
function expected(e: OperandExample): Record<string, unknown> {
  const list = (k: string) => [...((e[k] as string[] | undefined) ?? [])];
  return {
    reads: list('reads').sort(), writes: list('writes').sort(), deletes: list('deletes').sort(),
    globs: ((e.globs as object[] | undefined) ?? []).map((g) => ({ depth: 'one', ...g })),
    searches: (e.searches as object[] | undefined) ?? [],
    urls: list('urls'), logins: list('logins'), network: e.network ?? false, unnamed_network: e.unnamed_network ?? false,
    sinks: e.sinks ?? 0, prints_environment: e.prints_environment ?? false, opaque: e.opaque ?? false,
    reviews: e.reviews ?? 0, approvals: e.approvals ?? 0, errors: [],
  };
}
const sortedGlobs = (x: Record<string, unknown>) => ({ ...x, globs: (x.globs as { dir: string; pattern: string }[]).map((g) => JSON.stringify(g, Object.keys(g).sort())).sort() });

describe('shell operand table (security/shell/operands)', () => {
  let parser: ShellParser;
  before(async () => {
    parser = await loadShellParser();
  });

  const validate = new Ajv({ allErrors: true }).compile(loadYaml<object>(`${DIR}/schema.json`));
  it('has the files the engine loads, each valid against schema.json and the engine validator', () => {
    assert.deepEqual(files.map((f) => f.file).sort(), OPERAND_TABLE_FILES.map((f) => f.file).sort());
    for (const { file, table } of files) {
      assert.ok(validate(table), `${file}: ${JSON.stringify(validate.errors)}`);
      validateOperandTable(table, file);
    }
    assert.ok(operandEntries().size > 0);
  });

  const refusals: [string, unknown, RegExp][] = [
    ['unknown top key', { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], handler: 'code', module: 'files' }], extra: 1 }, /unknown key `extra`/],
    ['code without module', { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], handler: 'code' }] }, /names its module/],
    ['code with data keys', { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], handler: 'code', module: 'files', operands: 'read' }] }, /`operands` is for the data interpreter/],
    ['unknown role', { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], handler: 'data', operands: 'eat' }] }, /operands must be one of/],
    ['option value role', { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], handler: 'data', option_values: { o: 'write' } }] }, /option_values maps options/],
    ['also names another command', { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], handler: 'code', module: 'files', examples: [{ run: 'x a', also: ['y'] }] }] }, /also names names of this entry/],
    ['data handler outside posix', { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], registry: 'cmd', handler: 'data', operands: 'read' }] }, /for posix commands only/],
    ['unknown example key', { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], handler: 'code', module: 'files', examples: [{ run: 'x a', read: ['a'] }] }] }, /unknown key `read`/],
  ];
  for (const [what, data, why] of refusals) {
    it(`refuses a malformed table: ${what}`, () => assert.throws(() => validateOperandTable(data, 't'), (e: Error) => e instanceof OperandTableError && why.test(e.message)));
  }

  describe('architecture: every registered command has data and an example', () => {
    const registered = registeredCommandNames();
    for (const [registry, names] of registered) {
      it(`${registry}: every registered name is in exactly one entry, with an example of its own`, () => {
        const entries = operandEntries();
        const missing = names.filter((n) => !entries.has(`${registry} ${n}`));
        assert.deepEqual(missing, [], `registered ${registry} commands with no entry in ${DIR}`);
        const withoutExample = names.filter((n) => {
          const e = entries.get(`${registry} ${n}`)!;
          return !(e.examples ?? []).some((x) => sameName(registry, commandWord(x.run), n) || (x.also ?? []).includes(n));
        });
        assert.deepEqual(withoutExample, [], `registered ${registry} commands with no example`);
      });
    }
    it('names no command that no registry has', () => {
      const unknown = [...operandEntries().keys()].filter((k) => {
        const [registry, name] = k.split(' ') as [CommandRegistry, string];
        return !registered.get(registry)!.includes(name);
      });
      assert.deepEqual(unknown, []);
    });
    it('each example runs the entry it is listed in', () => {
      for (const { file, table } of files) {
        for (const e of table.commands) {
          for (const x of e.examples ?? []) assert.ok(e.names.some((n) => sameName(e.registry ?? 'posix', commandWord(x.run), n)), `${file}: \`${x.run}\` is not a command of [${e.names.join(' ')}]`);
        }
      }
    });
  });

  for (const { file, table } of files) {
    describe(file, () => {
      for (const entry of table.commands) {
        for (const x of entry.examples ?? []) {
          const word = commandWord(x.run);
          for (const name of [word, ...(x.also ?? [])]) {
            const run = name === word ? x.run : name + x.run.trimStart().slice(word.length);
            it(`${run}`, () => {
              const ctx = contextOf(entry);
              const got = effectsOf(analyzeShell(parser, run, { cwd: ctx.cwd, home: ctx.home, platform: ctx.platform }), ctx);
              assert.deepEqual(sortedGlobs(got), sortedGlobs(expected(x)));
            });
          }
        }
      }
    });
  }
});
