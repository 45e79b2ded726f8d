// The protection tables are data: every rule is schema-valid and its examples must (and must not) match.
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import {
  builtinTables,
  compileTables,
  matchKey,
  normalizePath,
  validateTable,
  type Platform,
  type ProtectionTable,
} from '../../src/engine';
import { matchingRules } from '../../src/engine/protection/tables';
import { loadYaml } from './helpers/repo';

const TABLE_FILES = ['workspace', 'denylist', 'editor'];
const ENV: Record<Platform, { home: string; workspace: string }> = {
  linux: { home: '/home/u', workspace: '/work/ws' },
  darwin: { home: '/Users/u', workspace: '/Users/u/ws' },
  win32: { home: 'C:/Users/u', workspace: 'C:/ws' },
};

function expandExample(example: string, platform: Platform): string | undefined {
  const e = ENV[platform];
  const p = example.replace(/^~(?=\/|$)/, e.home).replace('{workspace}', e.workspace);
  try {
    return normalizePath(p, platform);
  } catch {
    return undefined;
  } // not absolute on this platform
}

describe('protection tables', () => {
  const schema = loadYaml<object>('security/protection/schema.json');
  const validate = new Ajv({ allErrors: true }).compile(schema);

  for (const name of TABLE_FILES) {
    const table = loadYaml<ProtectionTable>(`security/protection/${name}.yaml`);
    describe(`${name}.yaml`, () => {
      it('is valid against security/protection/schema.json', () => {
        assert.ok(validate(table), JSON.stringify(validate.errors, null, 1));
        assert.doesNotThrow(() => validateTable(table, name));
      });
      for (const rule of table.rules) {
        it(`${rule.id}: examples match and non-examples do not`, () => {
          assert.ok(rule.examples && rule.examples.match.length > 0 && rule.examples.no_match.length > 0, `${rule.id} has no examples`);
          const platforms = rule.platforms ?? (['linux', 'darwin', 'win32'] as Platform[]);
          const tested = new Set<string>();
          for (const platform of platforms) {
            const compiled = compileTables([table], { platform, home: ENV[platform].home, workspaceRoots: [ENV[platform].workspace] });
            for (const [list, want] of [
              [rule.examples!.match, true],
              [rule.examples!.no_match, false],
            ] as const) {
              for (const ex of list) {
                const p = expandExample(ex, platform);
                if (!p) continue;
                tested.add(ex);
                const hit = matchingRules(compiled, matchKey(p, platform)).some((c) => c.rule.id === rule.id);
                assert.equal(hit, want, `${rule.id} on ${platform}: ${ex} (${p}) should ${want ? '' : 'not '}match`);
              }
            }
          }
          for (const ex of [...rule.examples!.match, ...rule.examples!.no_match])
            assert.ok(tested.has(ex), `${rule.id}: example ${ex} is absolute on none of the rule's platforms`);
        });
        it(`${rule.id}: each glob matches one of its examples, and each platform has a match and a non-match`, () => {
          // A glob no example exercises could hold a typo that protects nothing, and a platform without
          // examples is a platform where the rule is not tested at all.
          const platforms = rule.platforms ?? (['linux', 'darwin', 'win32'] as Platform[]);
          const matchedBy = new Map(rule.globs.map((g) => [g, false]));
          for (const platform of platforms) {
            const env = { platform, home: ENV[platform].home, workspaceRoots: [ENV[platform].workspace] };
            const perGlob = rule.globs.map((g) => ({
              g,
              compiled: compileTables([{ version: 1, rules: [{ ...rule, globs: [g], except: undefined }] }], env),
            }));
            const match = rule.examples!.match.flatMap((ex) => expandExample(ex, platform) ?? []);
            const noMatch = rule.examples!.no_match.flatMap((ex) => expandExample(ex, platform) ?? []);
            assert.ok(match.length > 0 && noMatch.length > 0, `${rule.id}: no match or no non-match example is a path on ${platform}`);
            for (const { g, compiled } of perGlob) {
              if (match.some((p) => compiled.some((c) => c.regex.test(matchKey(p, platform))))) matchedBy.set(g, true);
            }
          }
          const untested = [...matchedBy].filter(([, hit]) => !hit).map(([g]) => g);
          assert.deepEqual(untested, [], `${rule.id}: globs no match example exercises`);
        });
      }
    });
  }

  it('the bundled tables are the files on disk', () => {
    assert.deepEqual(
      builtinTables(),
      TABLE_FILES.map((n) => loadYaml(`security/protection/${n}.yaml`)),
    );
  });

  it('rule ids are unique across tables', () => {
    const ids = builtinTables().flatMap((t) => t.rules.map((r) => r.id));
    assert.equal(new Set(ids).size, ids.length);
  });

  it('a malformed table is refused, not half-loaded', () => {
    assert.throws(
      () =>
        validateTable(
          {
            version: 1,
            rules: [
              {
                id: 'x.y',
                level: 'full_block',
                globs: ['relative/path'],
                reason: 'long enough reason',
                examples: { match: ['a'], no_match: ['b'] },
              },
            ],
          },
          't',
        ),
      /rooted/,
    );
    assert.throws(() => validateTable({ version: 2, rules: [] }, 't'), /version/);
    assert.throws(() => validateTable(null, 't'), /not an object/);
  });

  it('skips a denylist directory that covers the home directory itself (running as root)', () => {
    const compiled = compileTables(builtinTables(), { platform: 'linux', home: '/root', workspaceRoots: ['/root/proj'] });
    const hits = matchingRules(compiled, matchKey('/root/proj/src/a.ts', 'linux'));
    assert.deepEqual(
      hits.map((h) => h.rule.id),
      [],
    );
    assert.ok(matchingRules(compiled, matchKey('/root/.ssh/id_rsa', 'linux')).some((h) => h.rule.id === 'deny.home.ssh'));
  });
});
