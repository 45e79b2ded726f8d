// The examples of src/engine/shell/commands/windows.ts: the operand table's entries with `module: windows`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: windows', () => {
  runOperandExamples('windows');
});
