// The examples of src/engine/shell/commands/shells.ts: the operand table's entries with `module: shells`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: shells', () => {
  runOperandExamples('shells');
});
