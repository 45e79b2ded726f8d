// The examples of src/engine/shell/commands/archives.ts: the operand table's entries with `module: archives`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: archives', () => {
  runOperandExamples('archives');
});
