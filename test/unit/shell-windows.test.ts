// The examples of src/engine/shell/commands/windows.ts: the operand table's entries with `module: windows`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import assert from 'node:assert/strict';
import { psSpecProblems } from '../../src/engine/shell/commands/windows';
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: windows', () => {
  runOperandExamples('windows');

  describe('PowerShell parameter tables', () => {
    it('every cmdlet table names its parameters in lower case, each value, positional and alias one of them', () => {
      assert.deepEqual(psSpecProblems(), []);
    });
    it('refuses a parameter written with a capital (it would never match: `-CustomMethod POST` took POST for the URI)', () => {
      const spec = { params: ['uri', 'customMethod'], values: ['uri', 'custommethod'], positional: ['uri'] };
      assert.deepEqual(psSpecProblems({ 'invoke-webrequest': spec }), [
        'invoke-webrequest: parameter `customMethod` is not in lower case',
        'invoke-webrequest: `custommethod` is not one of its parameters',
      ]);
    });
    it('refuses a value, positional or alias that is not a parameter, and a positional that takes no value', () => {
      const spec = {
        params: ['name', 'force'],
        values: ['name', 'stream'],
        positional: ['name', 'force'],
        aliases: { cn: 'computername' },
      };
      assert.deepEqual(psSpecProblems({ 'get-thing': spec }), [
        'get-thing: `stream` is not one of its parameters',
        'get-thing: `computername` is not one of its parameters',
        'get-thing: positional `force` takes no value',
      ]);
    });
  });
});
