// The examples of src/engine/shell/commands/find.ts: the operand table's entries with `module: find`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: find', () => {
  runOperandExamples('find');
});
