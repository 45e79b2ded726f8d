// The command table's position-aware keys (security/shell/commands/dev-tools.yaml): git's own options
// before its subcommand, a subcommand's options after it, and cases that name words after the subcommand.
import assert from 'node:assert/strict';
import { analyzeShell, type ShellParser } from '../../src/engine/shell/analyze';
import { judgeInvocation, validateCommandTable, CommandTableError } from '../../src/engine/shell/command-effects';
import { nodeFileSystem } from '../../src/node/fs-port';
import { loadShellParser } from '../../src/node/shell-grammar';

describe('command table: global options, words cases', function () {
  this.timeout(60_000);
  let parser: ShellParser;
  before(async () => {
    parser = await loadShellParser();
  });
  const effectOf = (command: string, name = command.split(' ')[0]!) => {
    const a = analyzeShell(parser, command, { cwd: '/tmp', home: '/home/u', platform: 'linux', fs: nodeFileSystem });
    const inv = a.invocations.find((i) => i.name === name);
    assert.ok(inv, `${command} runs ${name}`);
    return judgeInvocation(inv).effect;
  };

  it("checks git's -c only before the subcommand: `git -c core.pager=x log` unjudged, `git shortlog -c` judged", () => {
    assert.equal(effectOf('git -c core.pager=x log'), undefined);
    assert.equal(effectOf('git -C src -c core.pager=x shortlog -c'), undefined);
    assert.equal(effectOf('git --config-env=core.pager=P log'), undefined);
    assert.equal(effectOf('git shortlog -c'), 'analysed');
    assert.equal(effectOf('git for-each-ref --sort -committerdate'), 'analysed');
    assert.equal(effectOf('git -C src log -c'), 'analysed');
    // The subcommand's own dangerous options are still checked wherever they are.
    assert.equal(effectOf('git log --ext-diff'), undefined);
  });

  it('a words case needs the words right after the subcommand, in order', () => {
    assert.equal(effectOf('git stash list'), 'analysed');
    assert.equal(effectOf('git -C src stash list'), 'analysed');
    assert.equal(effectOf('git stash -p list'), undefined);
    assert.equal(effectOf('git list stash'), undefined);
    assert.equal(effectOf('git clean -n'), 'analysed');
    assert.equal(effectOf('git clean -fen'), undefined);
    assert.equal(effectOf('git branch --contains HEAD'), 'analysed');
    assert.equal(effectOf('git branch -D x --contains HEAD'), undefined);
  });

  it('refuses malformed position-aware keys', () => {
    const examples = { judged: ['x'], unjudged: [] };
    for (const [bad, msg] of [
      [{ name: 'x', effect: 'analysed', global_unless_options: ['-c'], examples }, /global_unless_options needs subcommands/],
      [{ name: 'x', subcommands: { a: 'analysed' }, global_unless_options: ['c'], examples }, /global_unless_options must be options/],
      [{ name: 'x', cases: [{ words: [], effect: 'analysed' }], examples }, /words must be a list/],
      [{ name: 'x', cases: [{ words: ['-a'], effect: 'analysed' }], examples }, /words must be a list/],
      [{ name: 'x', cases: [{ words: ['a'], only_args: ['a'], effect: 'analysed' }], examples }, /exactly one of/],
      [{ name: 'x', cases: [{ words: ['a'], unless: ['-a'], effect: 'analysed' }], examples }, /unknown key `unless`/],
      [{ name: 'x', cases: [{ words: ['a'], unless_options: '-a', effect: 'analysed' }], examples }, /unless_options must be a list/],
      [{ name: 'x', cases: [{ with_option: 'a', effect: 'analysed' }], examples }, /with_option must be an option/],
    ] as const) {
      assert.throws(
        () => validateCommandTable({ version: 1, commands: [bad] }),
        (e: unknown) => e instanceof CommandTableError && (msg as RegExp).test(e.message),
        JSON.stringify(bad),
      );
    }
  });
});
