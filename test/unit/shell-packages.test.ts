// The examples of src/engine/shell/commands/packages.ts: the operand table's entries with `module: packages`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: packages', () => {
  runOperandExamples('packages');
});
