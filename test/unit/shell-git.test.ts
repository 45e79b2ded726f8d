// The examples of src/engine/shell/commands/git.ts: the operand table's entries with `module: git`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: git', () => {
  runOperandExamples('git');
});
