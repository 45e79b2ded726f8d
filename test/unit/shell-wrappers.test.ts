// The examples of src/engine/shell/commands/wrappers.ts: the operand table's entries with `module: wrappers`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: wrappers', () => {
  runOperandExamples('wrappers');
});
