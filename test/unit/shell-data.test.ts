// The data interpreter (src/engine/shell/data-handler.ts): the operand table's `handler: data` entries,
// each example run through analyzeShell with its exact effects (security/shell/operands/), and the
// interpreter's rules on entries the table does not have yet (opaque options, words that are not literal).
import assert from 'node:assert/strict';
import type { Inv } from '../../src/engine/shell/helpers';
import { dataHandler } from '../../src/engine/shell/data-handler';
import type { OperandEntry } from '../../src/engine/shell/operands';
import { literalWord, unknownWord, type WordValue } from '../../src/engine/shell/words';
import { runOperandExamples } from './helpers/operand-examples';
import { analyzeShell } from '../../src/engine/shell/analyze';
import { loadShellParser } from '../../src/node/shell-grammar';

describe('shell commands: data', () => {
  runOperandExamples('data');

  /** Runs `entry` on `args` and returns what it reported, in order. */
  function run(entry: OperandEntry, args: WordValue[]): string[] {
    const seen: string[] = [];
    const an = {
      read: (w: WordValue) => seen.push(`read ${w.text}${w.dynamic ? '$' : ''}`),
      write: (w: WordValue) => seen.push(`write ${w.text}${w.dynamic ? '$' : ''}`),
      del: (w: WordValue) => seen.push(`delete ${w.text}${w.dynamic ? '$' : ''}`),
      opaque: (why: string) => seen.push(`opaque ${why}`),
    };
    dataHandler(entry)({ an, cmd: 'tool', args, scope: {}, io: {} } as unknown as Inv);
    return seen;
  }
  const words = (...ts: string[]) => ts.map(literalWord);
  const dynamic = (text: string): WordValue => ({ ...unknownWord(text), text, prefix: '' });

  it('an opaque option makes the command opaque with its reason, and its value keeps its role', () => {
    const entry: OperandEntry = {
      names: ['tool'],
      handler: 'data',
      options: { long: ['filter'] },
      option_values: { '--filter': 'read' },
      opaque_options: { '--filter': 'runs a shell command on each part' },
      operands: 'write',
    };
    assert.deepEqual(run(entry, words('--filter=gzip', 'out')), [
      'opaque tool --filter: runs a shell command on each part',
      'read gzip',
      'write out',
    ]);
    assert.deepEqual(run(entry, words('out')), ['write out']);
  });

  it('roles by position: operands past the list are not files', () => {
    const entry: OperandEntry = { names: ['tool'], handler: 'data', operands: ['read', 'write'] };
    assert.deepEqual(run(entry, words('a', 'b', 'c')), ['read a', 'write b']);
  });

  it('`-` and `+N` are streams and offsets only when the entry says so, and only when literal', () => {
    const plain: OperandEntry = { names: ['tool'], handler: 'data', operands: 'delete' };
    assert.deepEqual(run(plain, [...words('--', '-', '+5')]), ['delete -', 'delete +5']);
    const stdio: OperandEntry = {
      names: ['tool'],
      handler: 'data',
      operands: 'read',
      option_values: { '-o': 'write', '-f': 'read' },
      options: { short: 'of' },
      dash_is_stdio: true,
      plus_operands: true,
    };
    assert.deepEqual(run(stdio, words('-o', '-', '-f', '-', '-', '+5', 'a')), ['write -', 'read a']);
    // A word that is not literal may name any file, whatever its known text is.
    assert.deepEqual(run(stdio, [literalWord('--'), dynamic('-'), dynamic('+5')]), ['read -$', 'read +5$']);
  });

  it("an entry's opaque reasons are its own sentences, said once (opaque, no_command_opaque, opaque_options)", async () => {
    const parser = await loadShellParser();
    const reasons = (run: string) => analyzeShell(parser, run, { cwd: '/w', home: '/home/u', platform: 'linux' }).opaqueReasons;
    assert.deepEqual(reasons('unshare -r'), [
      'unshare runs the command in new namespaces',
      'unshare with no command starts an interactive shell',
    ]);
    assert.deepEqual(reasons('firejail'), [
      'firejail runs the command in a sandbox whose mounts may map paths elsewhere',
      'firejail with no command starts an interactive shell',
    ]);
    assert.deepEqual(reasons('screen -X quit'), ['screen -X: sends commands to a running session']);
  });
});
