// The examples of src/engine/shell/commands/builtins.ts: the operand table's entries with `module: builtins`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: builtins', () => {
  runOperandExamples('builtins');
});
